"""Every primitive of the graph op table has both derivative rules or is declared without one, with
the reason (poot/transforms/nondiff.py)."""
from __future__ import annotations

from poot.graph import OPS
from poot.transforms.jvp_rules import JVP_RULES
from poot.transforms.nondiff import JVP_UNSUPPORTED, MULTI_RESULT, NON_DIFFERENTIABLE, VJP_UNSUPPORTED
from poot.transforms.vjp_rules import VJP_RULES


def test_every_primitive_is_covered():
    for mode, rules, unsupported in (("vjp", VJP_RULES, VJP_UNSUPPORTED),
                                     ("jvp", JVP_RULES, JVP_UNSUPPORTED)):
        missing = [op for op in OPS
                   if op not in rules and op not in NON_DIFFERENTIABLE and op not in unsupported]
        assert not missing, f"no {mode} rule and no declared reason for {missing}"


def test_declarations_are_consistent():
    for op, why in {**NON_DIFFERENTIABLE, **VJP_UNSUPPORTED, **JVP_UNSUPPORTED}.items():
        assert op in OPS, f"'{op}' is declared but is not a primitive"
        assert isinstance(why, str) and len(why) > 20, f"'{op}' needs a reason"
    for op in NON_DIFFERENTIABLE:
        assert op not in VJP_RULES and op not in JVP_RULES, f"'{op}' has rules and is declared without"
    for op in VJP_UNSUPPORTED:
        assert op not in VJP_RULES
    for op in JVP_UNSUPPORTED:
        assert op not in JVP_RULES
    assert set(VJP_RULES) <= set(OPS) and set(JVP_RULES) <= set(OPS)
    assert MULTI_RESULT <= set(OPS)


def test_rule_tables_are_plain_dicts_of_functions():
    for table in (VJP_RULES, JVP_RULES):
        assert type(table) is dict
        assert all(isinstance(k, str) and callable(v) for k, v in table.items())
