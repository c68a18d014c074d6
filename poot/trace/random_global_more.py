"""NumPy's other global-state random functions (`np.random.binomial(10, 0.5, size=3)`,
`np.random.get_state()`...), drawn from the one module-wide Generator that seed/rand/randn use
(random_global.py), so NumPy scripts run with `import poot as np`.

Each is the Generator method of the same name, called on the global generator: the same numbers on
every device for a seed (not NumPy's numbers: poot's streams are counter-based Threefry). The state
is (seed, number of draws so far); get_state/set_state save and restore it, so a script that replays
a stretch of random numbers gets the same ones.
"""
from __future__ import annotations

import operator

from poot.errors import DomainError, api_boundary
from poot.trace import random_global
from poot.trace.random_generator import Generator
from poot.trace.random_global import get_state_generator

# the Generator methods NumPy's np.random also has as global-state functions (NumPy's signatures)
_DRAWS = ("binomial", "poisson", "gamma", "standard_gamma", "beta", "lognormal", "laplace", "logistic",
          "gumbel", "dirichlet", "multivariate_normal", "multinomial", "chisquare", "noncentral_chisquare",
          "f", "noncentral_f", "standard_t", "standard_cauchy", "standard_exponential", "pareto", "power",
          "rayleigh", "triangular", "wald", "weibull", "geometric", "negative_binomial", "vonmises",
          "logseries", "bytes")

__all__ = list(_DRAWS) + ["get_state", "set_state"]

_BIT_GENERATOR = "Threefry2x32"


def _global_draw(name: str):
    method = getattr(Generator, name)

    def draw(*args, **kwargs):
        random_global.refuse_key(name, args)
        return getattr(get_state_generator(), name)(*args, **kwargs)

    draw.__name__ = draw.__qualname__ = name
    draw.__doc__ = (f"NumPy's np.random.{name}, drawn from the global state (seed() sets it). "
                    f"{method.__doc__ or ''}").strip()
    return api_boundary(draw)


globals().update({_name: _global_draw(_name) for _name in _DRAWS})


@api_boundary
def get_state(legacy=True):
    """The global generator's state, to restore with set_state: ('Threefry2x32', seed, draws), or with
    legacy=False a dict {'bit_generator': 'Threefry2x32', 'state': {'seed':, 'draws':}} (NumPy's two
    forms, holding poot's counter-based state rather than Mersenne Twister keys)."""
    g = get_state_generator()
    if legacy:
        return (_BIT_GENERATOR, g._seed, g._count)
    return {"bit_generator": _BIT_GENERATOR, "state": {"seed": g._seed, "draws": g._count}}


@api_boundary
def set_state(state):
    """Restore a state get_state returned: the next draws repeat the ones that followed it."""
    if isinstance(state, dict) and state.get("bit_generator") == _BIT_GENERATOR:
        seed, draws = state["state"]["seed"], state["state"]["draws"]
    elif isinstance(state, tuple) and len(state) == 3 and state[0] == _BIT_GENERATOR:
        _, seed, draws = state
    else:
        kind = state.get("bit_generator") if isinstance(state, dict) else \
            state[0] if isinstance(state, tuple) and state else type(state).__name__
        raise DomainError(f"random.set_state: the state must be one pt.random.get_state() returned "
                          f"({_BIT_GENERATOR!r}, seed, draws), got a {kind!r} state; poot's streams are "
                          f"not NumPy's Mersenne Twister, so NumPy's states do not carry over")
    g = Generator(operator.index(seed))
    g._count = operator.index(draws)
    random_global._generator = g      # the generator the global-state functions draw from
