"""cov's fweights and aweights stay lazy, so weights traced by @pt.jit work (they were read back with
.numpy(), a TracerError inside jit that did not mention cov)."""
import numpy as np
import pytest

import poot as pt

_KWARGS = [{}, {"fweights": True}, {"aweights": True}, {"fweights": True, "aweights": True},
           {"aweights": True, "ddof": 0}, {"aweights": True, "bias": True}]


@pytest.mark.parametrize("kw", _KWARGS, ids=lambda k: "-".join(k) or "plain")
def test_weighted_cov_matches_numpy_eager_and_jitted(device, kw):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 10))
    weights = {"fweights": rng.integers(1, 4, 10), "aweights": rng.random(10)}
    np_kw = {k: (weights[k] if k in weights else v) for k, v in kw.items()}
    want = np.cov(x, **np_kw)
    given = {k: pt.asarray(weights[k]) for k in kw if k in weights}
    rest = {k: v for k, v in kw.items() if k not in weights}
    np.testing.assert_allclose(pt.cov(pt.asarray(x), **given, **rest).numpy(), want, rtol=1e-10)
    jitted = pt.jit(lambda x, **w: pt.cov(x, **w, **rest))
    np.testing.assert_allclose(jitted(pt.asarray(x), **given).numpy(), want, rtol=1e-10)


def test_fractional_fweights_are_refused():
    x = np.ones((2, 4))
    with pytest.raises(pt.DTypeError, match="fweights must be integer"):
        pt.cov(pt.asarray(x), fweights=pt.asarray([1.0, 2.5, 1.0, 1.0]))
    with pytest.raises(pt.ShapeError, match="incompatible numbers of samples and weights"):
        pt.cov(pt.asarray(x), aweights=np.ones(3))
