"""One case per construct the kernel importer refuses: each raises poot.KernelImportError with its
stable code `kernel-import::<what>`, the file:line:col of the offending construct, and the source
line with a caret under it."""
from __future__ import annotations

import importlib.util
import itertools
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

import poot as pt
from poot.kernel.diagnostics import CODES

HEADER = '''\
import math
import numpy as np
import poot as pt

TABLE = [0, 1]
COUNTER = 0


class Config:
    width = 4


CONFIG = Config()


def helper(v):
    return v


@pt.device_fn
def forever(v):
    return forever(v)


@pt.kernel
def k(a: pt.In[pt.f32], b: pt.InOut[pt.i32], c: pt.Out[pt.f32]):
    i = pt.thread_index()
'''

# (code, kernel body lines, where: (substring, nth line holding it))
CASES = [
    ("list", "x = [1, 2]", "[1, 2]"),
    ("dict", "x = {1: 2}", "{1: 2}"),
    ("set", "x = {1, 2}", "{1, 2}"),
    ("comprehension", "x = [j for j in range(3)]", "[j for"),
    ("comprehension", "x = (j for j in range(3))", "(j for"),
    ("tuple", "x = (1, 2)", "(1, 2)"),
    ("string", 'x = "text"', '"text"'),
    ("string", 'c[i] = 1.0\n"a string statement"', '"a string'),
    ("fstring", 'assert i < 10, f"bad {i}"', 'f"bad'),
    ("try", "try:\n    c[i] = 1.0\nexcept Exception:\n    pass", "try:"),
    ("with", "with open('f') as f:\n    pass", "with open"),
    ("yield", "yield i", "yield i"),
    ("lambda", "f = lambda v: v", "lambda v"),
    ("recursion", "k(a, b, c)", "k(a, b, c)"),
    ("recursion", "x = forever(1)", ("forever(v)", 1, "whole file")),
    ("unsupported-call", "print(i)", "print(i)"),
    ("unsupported-call", "x = math.exp(1.0)", "math.exp"),
    ("unsupported-call", "x = np.sqrt(c[i])", "np.sqrt"),
    ("unsupported-call", "x = helper(i)", "helper(i)"),
    ("unsupported-call", "x = int(i)", "int(i)"),
    ("unsupported-call", "x = float(c[i])", "float(c[i])"),
    ("bad-intrinsic-call", 'x = float("lots")', 'float("lots")'),
    ("global-mutation", "global COUNTER\nCOUNTER = 1", "global COUNTER"),
    ("global-mutation", "TABLE[0] = 1", "TABLE[0]"),
    ("global-mutation", "CONFIG.width = 2", "CONFIG.width"),
    ("unsupported-attribute", "n = c.shape", "c.shape"),
    ("unsupported-attribute", "n = CONFIG.width", "CONFIG.width"),
    ("unsupported-attribute", "n = i.real", "i.real"),
    ("buffer-slice", "x = a[1:3]", "1:3"),
    ("multi-index", "x = a[i, 0]", "i, 0"),
    ("negative-index", "x = a[-1]", "-1"),
    ("buffer-as-value", "x = a + 1.0", "a + 1.0"),
    ("write-to-input", "a[i] = 1.0", "a[i]"),
    ("write-to-input", "a[i] += 1.0", "a[i]"),
    ("write-to-input", "pt.atomic_add(a, 0, 1.0)", "pt.atomic_add"),
    ("divergent-barrier", "if i < 10:\n    pt.workgroup_barrier()", "pt.workgroup_barrier"),
    ("divergent-barrier", "if i == 3:\n    return\npt.workgroup_barrier()", "pt.workgroup_barrier"),
    ("divergent-barrier", "for j in range(i):\n    pt.workgroup_barrier()", "pt.workgroup_barrier"),
    ("ambiguous-types", "x = c[i] + i", "c[i] + i"),
    ("ambiguous-types", "x = b[i] < i", "b[i] < i"),
    ("ambiguous-types", "x = i * 0.5", "0.5"),
    ("ambiguous-types", "c[i] = b[i]", ("c[i]", 0)),
    ("type-change", "x = pt.f32(1.0)\nx = pt.f64(2.0)", "x = pt.f64"),
    ("type-change", "c[i] = pt.f64(1.0)", "c[i]"),
    ("literal-out-of-range", "x = pt.u8(1) + 300", "300"),
    ("literal-out-of-range", "b[i] = 2**40", "2**40"),
    ("literal-out-of-range", "c[i] = a[i] + 1e40", "1e40"),
    ("literal-out-of-range", "c[i] = a[i] - 10**39", "10**39"),
    ("literal-out-of-range", "x = 1e39", "1e39"),
    ("literal-out-of-range", "x = pt.f16(1.0) * 65520.0", "65520.0"),
    ("literal-out-of-range", "x = pt.bf16(1.0) + 3.4e38", "3.4e38"),
    ("literal-out-of-range", "c[i] = a[i] * 10**400", "10**400"),
    ("int-true-division", "x = i / 2", "i / 2"),
    ("invalid-operand", "x = c[i] << 2", "c[i] << 2"),
    ("invalid-operand", "x = pt.sqrt(i)", "pt.sqrt(i)"),
    ("invalid-operand", "x = c[i] // 2.0", "c[i] // 2.0"),
    ("invalid-operand", "x = c[2.5]", "2.5"),
    ("unsupported-operator", "x = i is i", "i is i"),
    ("unsupported-operator", "x = b[i] ** 2", "b[i] ** 2"),
    ("constant-error", "x = 1 // 0", "1 // 0"),
    ("undefined-name", "x = nonexistent + 1", "nonexistent"),
    ("unbound-local", "if i < 3:\n    y = 1.0\nc[i] = y", ("y", 1)),
    ("assign-to-parameter", "a = 1.0", "a = 1.0"),
    ("range", "for j in a:\n    pass", "a:"),
    ("range", "for j in range(0, 10, i):\n    pass", "i):"),
    ("loop-variable", "for j in range(3):\n    j = 2", "j = 2"),
    ("loop-variable", "for j in range(3):\n    pass\nc[i] = pt.f32(j)", ("j)", 0)),
    ("loop-else", "for j in range(3):\n    pass\nelse:\n    pass", ("pass", 1)),
    ("return-value", "return 1", "return 1"),
    ("shared-declaration", "s = pt.shared(pt.f32, i)", ("i)", 0)),
    ("shared-declaration", "x = pt.shared(pt.f32, 4) + 1", "pt.shared(pt.f32, 4)"),
    ("shared-too-large", "s = pt.shared(pt.f32, 2**30)", "pt.shared(pt.f32, 2**30)"),
    ("shared-too-large", "s = pt.shared(pt.f64, 2**28)\nt = pt.shared(pt.u8, 1)", "pt.shared(pt.f64"),
    ("bad-intrinsic-call", "x = pt.thread_index(5)", "5"),
    ("bad-intrinsic-call", "x = pt.workgroup_barrier()", "pt.workgroup_barrier()"),
    ("bad-intrinsic-call", "x = pt.bitcast(i, 32)", "32"),
    ("nested-definition", "def inner():\n    pass", "def inner"),
    ("import", "import os", "import os"),
    ("raise", "raise ValueError()", "raise"),
    ("del", "x = 1\ndel x", "del x"),
    ("unsupported-syntax", "if (y := i) > 2:\n    pass", "y := i"),
    ("unsupported-value", "x = None", "None"),
    ("unsupported-value", "x = pt.thread_index", "pt.thread_index"),
]

_count = itertools.count()


def load(tmp_path: Path, source: str):
    path = tmp_path / f"kern_{next(_count)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, module


def expected_location(source: str, where, start: int | None = None) -> tuple[int, int]:
    """(line, col) of the nth line holding a substring: of the kernel body, or of the whole file."""
    sub, nth = (where, 0) if isinstance(where, str) else where[:2]
    lines = source.splitlines()
    if start is None:
        start = 0 if isinstance(where, tuple) and len(where) == 3 else HEADER.count("\n")
    hits = [(n, line.index(sub)) for n, line in enumerate(lines, 1) if n > start and sub in line]
    return hits[nth]


@pytest.mark.parametrize("code, body, where", CASES, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(CASES)])
def test_refused_construct_is_named_and_located(tmp_path, code, body, where):
    source = HEADER + textwrap.indent(body, "    ") + "\n"
    path, module = load(tmp_path, source)
    with pytest.raises(pt.KernelImportError) as info:
        module.k.kir
    e = info.value
    line, col = expected_location(source, where)
    assert e.code == f"kernel-import::{code}", str(e)
    assert (e.file, e.line, e.col) == (str(path), line, col), str(e)
    text = str(e)
    assert text.startswith(f"{path}:{line}:{col}: error[kernel-import::{code}]: ")
    src_line, caret = text.splitlines()[1:3]
    assert src_line.strip() == source.splitlines()[line - 1].strip()
    assert caret.index("^") - 4 == col


def test_every_code_has_a_case_or_a_dedicated_test():
    covered = {c for c, _, _ in CASES} | {"no-source", "bad-signature", "missing-annotation", "bad-annotation",
                                          "bad-kernel-config"}
    assert set(CODES) - covered == set()


def test_codes_are_documented():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "kernels.md").read_text()
    missing = [c for c in CODES if f"kernel-import::{c}" not in doc]
    assert not missing, f"docs/kernels.md does not list {missing}"


@pytest.mark.parametrize("signature, code, where", [
    ("def k(a: pt.In[pt.f32], *rest):", "bad-signature", "def k"),
    ("def k(a: pt.In[pt.f32], n: pt.u32 = 3):", "bad-signature", "def k"),
    ("def k(a: pt.In[pt.f32], c):", "missing-annotation", "c)"),
    ("def k(a: pt.In[pt.f32], c: int):", "bad-annotation", "c: int"),
    ("def k(a: pt.In[pt.f32], c: pt.In):", "bad-annotation", "c: pt.In"),
])
def test_bad_signatures_are_refused(tmp_path, signature, code, where):
    source = "import poot as pt\n\n\n@pt.kernel\n" + signature + "\n    pass\n"
    path, module = load(tmp_path, source)
    with pytest.raises(pt.KernelImportError) as info:
        module.k.kir
    assert info.value.code == f"kernel-import::{code}"
    assert (info.value.line, info.value.col) == expected_location(source, where, start=0)


def test_kernel_without_readable_source_is_refused():
    namespace = {"pt": pt}
    exec("def k(c: pt.Out[pt.f32]):\n    c[0] = 1.0\n", namespace)
    with pytest.raises(pt.KernelImportError) as info:
        pt.kernel(namespace["k"]).kir
    assert info.value.code == "kernel-import::no-source"


def test_bad_workgroup_is_refused_at_decoration():
    with pytest.raises(pt.KernelImportError) as info:
        @pt.kernel(workgroup=(0, 1, 1))
        def k(c: pt.Out[pt.f32]):
            c[0] = 1.0
    assert info.value.code == "kernel-import::bad-kernel-config"
    assert re.search(r"zero extent", str(info.value))


def test_diagnostic_in_a_device_function_points_into_it(tmp_path):
    source = ("import poot as pt\n\n\n@pt.device_fn\ndef bad(v):\n    return [v]\n\n\n@pt.kernel\n"
              "def k(c: pt.Out[pt.f32]):\n    c[0] = bad(1.0)\n")
    path, module = load(tmp_path, source)
    with pytest.raises(pt.KernelImportError) as info:
        module.k.kir
    assert info.value.code == "kernel-import::list"
    assert (info.value.line, info.value.col) == (6, 11)


SHARED_SOURCE = """import poot as pt

N = {n}


@pt.kernel(workgroup=(64, 1, 1))
def mirror(x: pt.In[pt.f32], y: pt.Out[pt.f32]):
    t = pt.shared(pt.u32, 64)
    s = pt.shared(pt.f32, N)
    l = pt.local_index_x()
    i = pt.thread_index()
    s[l] = x[i]
    s[N - 1 - l] = x[i] + 1.0
    t[l] = l
    pt.workgroup_barrier()
    y[i] = s[l] + s[N - 1 - l] + pt.f32(t[63 - l])
"""


def test_shared_memory_past_the_device_limit_is_refused_at_launch(tmp_path, device):
    """8 MiB of shared memory overflowed the CPU thread's stack (a segfault); past a GPU's limit it is
    undefined or a crash: every device refuses it before compiling, naming the kernel, its arrays, the
    bytes asked and the device's limit, at the largest array's declaration."""
    from poot.kernel.shared_memory import device_limit

    if device == "oracle":
        pytest.skip("the oracle runs no kernels")
    ctx = pt.Context(device)
    limit, _ = device_limit(ctx.device.caps)
    n = 1 << 21
    assert limit < 4 * n
    path, module = load(tmp_path, SHARED_SOURCE.format(n=n))
    x, y = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    with pytest.raises(pt.KernelImportError) as info:
        module.mirror(ctx, x, y)
    e = info.value
    assert e.code == "kernel-import::shared-too-large"
    assert (e.file, e.line) == (str(path), SHARED_SOURCE.splitlines().index("    s = pt.shared(pt.f32, N)") + 1)
    assert re.search(rf"kernel 'mirror': shared arrays 't' \(64 x uint32\), 's' \(2,097,152 x float32\) take "
                     rf"8,388,864 bytes per workgroup; device '{re.escape(ctx.device.name)}' allows at most "
                     rf"{limit:,} bytes", str(e)), str(e)
    # within the limit the same kernel runs (the bound itself included: 16-byte padded arrays)
    n = (limit - 256) // 4
    path, module = load(tmp_path, SHARED_SOURCE.format(n=n))
    module.mirror(ctx, x, y)
    np.testing.assert_array_equal(y, 2 * x + 1 + (63 - np.arange(64)))


def test_device_shared_limits():
    """The CPU's is a fixed 1 MiB (its stack); CUDA's the opt-in maximum, which the dynamic shared block
    of a kernel past 48 KiB is raised to; other GPUs' their Capabilities."""
    from poot.devices.base import Capabilities
    from poot.kernel.shared_memory import CPU_SHARED_BYTES, device_limit

    assert device_limit(Capabilities("cpu", "cpu"))[0] == CPU_SHARED_BYTES == 1 << 20
    h100 = Capabilities("cuda:0", "ptx", shared_memory_bytes=48 << 10, extra={"shared_memory_optin": 227 << 10})
    assert device_limit(h100)[0] == 227 << 10
    assert device_limit(Capabilities("cuda:0", "ptx", shared_memory_bytes=48 << 10))[0] == 48 << 10
    assert device_limit(Capabilities("wgpu", "spirv", shared_memory_bytes=16384))[0] == 16384


@pytest.mark.parametrize("workgroup, message", [((64.5,), "must be integers"), ((64, 1.0), "must be integers"),
                                                ((2048,), "2048 threads; the limit is 1024"),
                                                ((64, 32, 1), "2048 threads")])
def test_workgroup_that_is_not_integers_or_too_large_is_refused_at_decoration(workgroup, message):
    """int() would truncate 64.5 to 64 without a word, and an oversized workgroup failed only at
    verification: both are bad kernel configurations, named at the decorator."""
    with pytest.raises(pt.KernelImportError) as info:
        @pt.kernel(workgroup=workgroup)
        def k(c: pt.Out[pt.f32]):
            c[0] = 1.0
    assert info.value.code == "kernel-import::bad-kernel-config"
    assert message in str(info.value)
