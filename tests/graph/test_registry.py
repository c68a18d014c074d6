"""The op registry is complete: once every layer is imported, each primitive carries every rule its
fusion class needs, or a declared reason for lacking one; and its declared facts agree with its
shape rule and its oracle."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import poot  # noqa: F401
import poot.fuse  # noqa: F401
import poot.jit.codegen  # noqa: F401
import poot.transforms  # noqa: F401
from poot import dtypes as dt
from poot.graph import OPS, Aval
from poot.graph.registry import REQUIRED_SLOTS, SLOTS, Fusion, OpDef, RegistryError, SlotView, declare, get
from poot.transforms.batching import BATCHING_RULES, UNBATCHABLE

NAMES = sorted(OPS)


def _has_rule_or_reason(op: OpDef, slot: str) -> bool:
    rule, why = getattr(op, slot), op.missing.get(slot)
    return (rule is not None) != (why is not None) and (rule is None or callable(rule)) \
        and (why is None or len(why) > 10)


@pytest.mark.parametrize("name", NAMES)
def test_every_op_has_every_rule_its_class_needs(name):
    op = OPS[name]
    assert op.name == name and isinstance(op.fusion, Fusion)
    assert callable(op.shape_rule) and callable(op.oracle), f"{name}: no shape rule or oracle"
    for slot in REQUIRED_SLOTS.get(op.fusion, ()):
        assert callable(getattr(op, slot)), f"{name} ({op.fusion.value}) has no {slot} rule"
    for slot in ("vjp", "jvp", "batch"):
        assert _has_rule_or_reason(op, slot), f"{name}: neither a {slot} rule nor a reason for none"
    if op.fusion.inline:   # read inside kernels: an index map, or a reason it is read otherwise
        assert _has_rule_or_reason(op, "access"), f"{name}: inline, but no access rule or reason"
    if op.fusion is Fusion.HOST:
        assert op.host is not None and op.host.name == name
    else:
        assert op.host is None


def test_every_slot_and_class_is_used():
    for slot in SLOTS:
        assert any(getattr(op, slot) is not None for op in OPS.values()), slot
    assert {op.fusion for op in OPS.values()} == set(Fusion)


@pytest.mark.parametrize("name", [n for n in NAMES if "params" not in
                                  inspect.signature(OPS[n].shape_rule).parameters])
def test_declared_params_are_the_shape_rules(name):
    op = OPS[name]
    sig = list(inspect.signature(op.shape_rule).parameters)[1:]
    assert tuple(sig) == op.params, f"{name}: declared {op.params}, its shape rule takes {sig}"


def _operands(op: OpDef):
    """The first dtype (float32, int32, bool) whose operands the op's shape rule accepts."""
    for d in (dt.float32, dt.int32, dt.bool_):
        avals = [Aval((3, 1), d)] + [Aval((1, 4), d)] * (op.arity - 1)
        try:
            return avals, op.shape_rule(avals)
        except poot.PootError:
            continue
    raise AssertionError(f"{op.name}: no dtype of float32, int32, bool is accepted")


@pytest.mark.parametrize("name", [n for n in NAMES if OPS[n].fusion is Fusion.ELEMENTWISE and not OPS[n].params])
def test_elementwise_arity_shape_and_oracle_agree(name):
    op = OPS[name]
    avals, out = _operands(op)
    assert out.shape == ((3, 1) if op.arity == 1 else (3, 4))   # NumPy broadcasting of the operands
    rng = np.random.default_rng(0)
    xs = [(rng.random(a.shape) * 3 + 0.5).astype(a.dtype.np) for a in avals]
    with np.errstate(all="ignore"):
        r = np.asarray(op.oracle(xs))
    assert r.shape == out.shape and r.dtype == out.dtype.np, f"{name}: oracle gives {r.dtype}{r.shape}"
    with pytest.raises((TypeError, ValueError)):     # one operand too many does not unpack
        op.shape_rule(avals + [avals[0]])


def test_planner_facts():
    assert {n for n in NAMES if OPS[n].fusion.opaque} >= {"matmul", "cumsum", "scatter", "cond", "sort"}
    assert OPS["exp"].cost > OPS["add"].cost > OPS["reshape"].cost == 0
    assert OPS["take"].fusion is Fusion.GATHER and OPS["take"].access is not None
    assert OPS["argmax"].fusion is Fusion.REDUCTION and OPS["argmax"].kind == "argreduce"


def test_tables_are_live_views_of_the_registry():
    assert set(BATCHING_RULES) == {n for n in NAMES if OPS[n].batch is not None}
    assert BATCHING_RULES["exp"] is OPS["exp"].batch
    assert dict(UNBATCHABLE) == {n: OPS[n].missing["batch"] for n in NAMES if "batch" in OPS[n].missing}
    assert "full" not in BATCHING_RULES and "nosuchop" not in BATCHING_RULES
    with pytest.raises(RegistryError, match="no rule slot named 'grad'"):
        SlotView("grad")


def test_misuse_is_named():
    with pytest.raises(RegistryError, match="'exp' is declared twice"):
        declare("exp", kind="elementwise", fusion=Fusion.ELEMENTWISE, arity=1,
                shape_rule=OPS["exp"].shape_rule, oracle=OPS["exp"].oracle)
    with pytest.raises(RegistryError, match="no primitive named 'expp'"):
        get("expp")
    scratch = OpDef("scratch", "elementwise", Fusion.ELEMENTWISE, 1, (), OPS["exp"].shape_rule,
                    OPS["exp"].oracle, 1)
    with pytest.raises(RegistryError, match="no rule slot named 'kri'"):
        scratch.register(kri=lambda *a: None)
    with pytest.raises(RegistryError, match="must be callable"):
        scratch.register(kir="exp")
    scratch.without(vjp="a scratch op for this test has no derivative")
    with pytest.raises(RegistryError, match="declared without one"):
        scratch.register(vjp=lambda *a: None)
    scratch.register(jvp=len)
    with pytest.raises(RegistryError, match="has a jvp rule"):
        scratch.without(jvp="too late: a rule is registered")
    with pytest.raises(RegistryError, match="needs a reason"):
        scratch.without(batch=" ")
    assert "scratch" not in OPS and scratch.rule("jvp") is len
