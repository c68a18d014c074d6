"""The target registry (poot/jit/llvm/targets/__init__.py): each target's declared facts, the lookup from a
device's Capabilities, and that no code outside the registry compares target names as strings."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from poot.devices import Capabilities
from poot.errors import LoweringError
from poot.jit.llvm import compile as jit_compile
from poot.jit.llvm.targets import REGISTRY, BinaryFormat, KernelStyle, target_named, target_of

PACKAGE = Path(__file__).resolve().parents[2] / "poot"
REGISTRY_MODULE = PACKAGE / "jit" / "llvm" / "targets" / "__init__.py"

# name: (format, style, is_host, has_shuffles, has_mma, runs_gemm_assets, folds_grid, vector_store_bytes,
#        extension, default_arch, inspection_only, has a validator)
FACTS = {
    "cpu": (BinaryFormat.OBJECT_CODE, KernelStyle.CPU, True, False, False, False, False, 0, ".o", "", False, False),
    "ptx": (BinaryFormat.PTX_TEXT, KernelStyle.GPU, False, True, True, True, True, 16, ".ptx", "sm_80", False, True),
    "spirv": (BinaryFormat.SPIRV_WORDS, KernelStyle.GPU, False, True, False, False, True, 16, ".spv", "", False, True),
    "amdgcn": (BinaryFormat.HSACO, KernelStyle.GPU, False, True, False, True, True, 16, ".hsaco", "gfx90a", False,
               True),
    "llvm": (BinaryFormat.LLVM_IR_TEXT, KernelStyle.CPU, True, False, False, False, False, 0, ".ll", "", True, False),
}


@pytest.mark.parametrize("name", sorted(FACTS))
def test_each_target_declares_its_facts(name):
    t = target_named(name)
    got = (t.binary_format, t.style, t.is_host, t.has_shuffles, t.has_mma, t.runs_gemm_assets, t.folds_grid,
           t.vector_store_bytes, t.file_extension, t.default_arch, t.inspection_only, bool(t.validator))
    assert got == FACTS[name]
    assert t.name == name and t.max_workgroup_size == 1024
    assert t.binary_format.is_text == (name in ("ptx", "llvm"))
    assert jit_compile.Artifact(name, "k", "entry", b"", None).folds_grid == t.folds_grid   # what devices read


def test_the_registry_holds_exactly_the_compile_targets():
    assert set(REGISTRY) == set(FACTS)
    assert jit_compile.TARGETS == tuple(REGISTRY)


@pytest.mark.parametrize("name", ["cpu", "ptx", "spirv", "llvm"])
def test_the_lowering_hook_is_the_targets_class_and_is_made_once(name):
    t = target_named(name)
    low = t.lowering()
    assert low is t.lowering() is jit_compile.get_target(name)
    assert type(low).__name__ == t.lowering_class.rpartition(":")[2]
    assert low.max_workgroup_size == t.max_workgroup_size      # the class reads its limit from the registry


def test_a_device_finds_its_target_by_the_name_in_its_capabilities():
    assert target_of(Capabilities("cuda:0", "ptx")) is REGISTRY["ptx"]
    assert target_of(Capabilities("wgpu", "spirv")).style is KernelStyle.GPU
    with pytest.raises(LoweringError, match=r"unknown target 'metal'.*cpu, ptx, spirv, amdgcn"):
        target_of(Capabilities("x", "metal"))


def test_a_target_without_a_tool_says_so(tmp_path):
    path = tmp_path / "k.o"
    assert target_named("cpu").validate(path) == f"{path}: verified KIR (no external validator for target 'cpu')"


# --- no target name compared as a string outside the registry ----------------------------------------------
TARGET_ONLY_NAMES = {"ptx", "spirv", "amdgcn"}        # mean nothing but a target
SHARED_NAMES = {"cpu", "gpu", "llvm"}   # also device names, kernel styles, stages: flagged beside a target or style


def _strings(node) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_strings(e) for e in node.elts)) if node.elts else set()
    return set()


def _mentions_target(node) -> bool:
    return any((isinstance(n, ast.Attribute) and ("target" in n.attr or "style" in n.attr))
               or (isinstance(n, ast.Name) and ("target" in n.id or "style" in n.id)) for n in ast.walk(node))


def target_name_comparisons(tree: ast.AST) -> list[int]:
    """Lines comparing something with a target's name as a string literal."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        names = set().union(*(_strings(o) for o in operands))
        if names & TARGET_ONLY_NAMES or (names & SHARED_NAMES and any(_mentions_target(o) for o in operands)):
            lines.append(node.lineno)
    return sorted(lines)


def test_the_checker_sees_target_name_comparisons():
    tree = ast.parse('a = caps.target == "cpu"\nb = t in ("ptx", "amdgcn")\nc = style != "gpu" or x == "cpu"\n'
                     'd = "spirv" == art\ne = device.name == "cpu"\n')
    assert target_name_comparisons(tree) == [1, 2, 3, 4]
    assert target_name_comparisons(ast.parse('s = style == "cpu"\nif target == "llvm": pass')) == [1, 2]
    assert target_name_comparisons(ast.parse('s = stage == "llvm"')) == []


def test_no_target_name_is_compared_as_a_string_outside_the_registry():
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent)
        if path == REGISTRY_MODULE or rel.parts[1] in ("kernels", "assets"):
            continue
        bad += [f"{rel}:{line}" for line in target_name_comparisons(ast.parse(path.read_text(), str(path)))]
    assert not bad, "compare target names through poot.jit.llvm.targets instead:\n" + "\n".join(bad)
