"""`VJP_RULES`: the reverse-mode rule of each differentiable primitive, by op name.

A single-result op's rule is `rule(ct, primals, out, **params) -> [cotangent or None per operand]`:
`ct` is the result's cotangent, `primals` the operands and `out` the result (Arrays), `params` the
equation's parameters. An op of nondiff.MULTI_RESULT takes every result's cotangent (None: zero)
and every result: `rule(cts, primals, outs, **params)`, `params` without `index`. A cotangent has
its operand's shape; None means zero. Rules are poot computations, so what they record is lazy,
fused, differentiable again and runs on any device.
"""
from __future__ import annotations

from . import attention_rules, collectives, control_rules, elementwise_rules, host_rules, structural_rules

VJP_RULES: dict = {
    **elementwise_rules.VJP,
    **structural_rules.VJP,
    **control_rules.VJP,
    **host_rules.VJP,
    **attention_rules.VJP,
    **collectives.VJP,
}

# each rule is also the op's `vjp` rule in the op registry (poot/graph/registry.py)
from poot.graph import registry as _registry  # noqa: E402

for _name, _rule in VJP_RULES.items():
    _registry.get(_name).register(vjp=_rule)
