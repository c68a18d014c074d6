"""`JVP_RULES`: the forward-mode rule of each differentiable primitive, by op name.

A single-result op's rule is `rule(primals, tangents, out, **params) -> tangent or None`: `primals`
the operands, `tangents` their tangents (None: zero; at least one is not), `out` the result. An op
of nondiff.MULTI_RESULT returns every result's tangent: `rule(primals, tangents, outs, **params)`,
`params` without `index`. A tangent has its result's shape; None means zero.
"""
from __future__ import annotations

from . import attention_rules, collectives, control_rules, elementwise_rules, host_rules, structural_rules

JVP_RULES: dict = {
    **elementwise_rules.JVP,
    **structural_rules.JVP,
    **control_rules.JVP,
    **host_rules.JVP,
    **attention_rules.JVP,
    **collectives.JVP,
}

# each rule is also the op's `jvp` rule in the op registry (poot/graph/registry.py)
from poot.graph import registry as _registry  # noqa: E402

for _name, _rule in JVP_RULES.items():
    _registry.get(_name).register(jvp=_rule)
