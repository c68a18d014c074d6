"""Early exits -- break, continue and return inside branches and nested loops -- on every device, against
`kernel.emulate`. On the SPIR-V devices (wgpu over naga, raw Vulkan) they are spelled with flags before
lowering (poot/jit/llvm/targets/spirv/loops.py, spirv_returns.py): LLVM's SPIR-V structurizer turned a loop
left from inside a selection into SPIR-V that naga and Vulkan drivers refuse, which `spirv-val` took.

Hand-written shapes, then a family of kernels generated from seeds: random nestings of if/else, counted
loops (up, down, signed, strided), while loops (conditional and `while True`), with data-dependent
breaks, continues and returns, stores before exits and updates after them."""
from __future__ import annotations

import importlib.util
import random
import shutil
import subprocess

import numpy as np
import pytest

import poot as pt
from poot import devices
from poot.errors import DeviceUnavailableError

DEVICES = ["cpu", "wgpu", "vulkan", "cuda"]
N_THREADS = 48                      # one workgroup of 64 with a tail of threads that return at once


@pytest.fixture(params=DEVICES, scope="module")
def dev(request):
    try:
        devices.get(request.param)
    except DeviceUnavailableError as e:
        pytest.skip(f"device '{request.param}' is unavailable here: {e}")
    return request.param


def _run_against_emulation(kernel, dev, args, threads=(64, 1, 1)):
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel.emulate(*want, threads=threads)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel.launch(pt.Context(dev), *got, threads=threads)
    for w, g in zip(want, got):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w, err_msg=f"{kernel.kir.name} on {dev}")
    return want


# --- hand-written shapes -----------------------------------------------------------------------------
@pt.kernel
def first_neg(x: pt.In[pt.f32], out: pt.Out[pt.i32]):
    if pt.thread_index() == 0:
        out[0] = -1
        for k in range(len(x)):
            if x[k] < 0.0:
                out[0] = pt.i32(k)
                break


@pt.kernel
def first_neg_per_thread(x: pt.In[pt.f32], out: pt.Out[pt.i32]):
    """Each thread scans from its own start; the break is in a branch with a store, a continue before it."""
    i = pt.thread_index()
    if i < len(out):
        out[i] = -1
        for k in range(i, len(x)):
            if x[k] == 0.0:
                continue
            if x[k] < 0.0:
                out[i] = pt.i32(k)
                break


@pt.kernel
def nested_search(x: pt.In[pt.u32], out: pt.Out[pt.u32]):
    """Break out of the inner loop from an else branch; the outer loop breaks on a flag the inner set;
    a return from inside both loops."""
    i = pt.thread_index()
    if i >= len(out):
        return
    hits = pt.u32(0)
    for a in range(pt.u32(6)):
        found = False
        for b in range(pt.u32(7), pt.u32(0), -2):
            v = x[(i * 5 + a * 7 + b) % len(x)]
            if v % 3 == 0:
                hits += 1
            else:
                if v % 7 == 1:
                    found = True
                    break
                hits += 2
            if v == 97:
                out[i] = 9999
                return
        if found:
            if a % 2 == 0:
                continue
            break
        hits += 10
    out[i] = hits


@pt.kernel
def while_exits(x: pt.In[pt.u32], out: pt.Out[pt.u32]):
    """`while True` left by a break in a nested if, a conditional while with a continue and a break
    in both branches of an if, a signed strided loop."""
    i = pt.thread_index()
    if i < len(out):
        acc = pt.u32(1)
        w = pt.u32(0)
        while True:
            w += 1
            if w > 9:
                break
            v = x[(i + w * 3) % len(x)]
            if v % 4 == 0:
                if v % 8 == 0:
                    break
                continue
            acc = acc * 3 + v
        t = pt.u32(0)
        while t < 8 and acc % 5 != 0:
            t += 1
            if x[(i * 7 + t) % len(x)] % 3 == 1:
                continue
            if acc % 2 == 0:
                acc += t
                break
            else:
                acc = acc * 7 + t
                break
        for s in range(pt.i32(9), pt.i32(-12), -4):
            if x[pt.u32(s + 20 + pt.i32(i)) % len(x)] % 6 == 0:
                break
            acc += pt.u32(s + 100)
        out[i] = acc


@pt.kernel
def exits_around_barrier(x: pt.In[pt.u32], out: pt.Out[pt.u32]):
    """Uniform exits (they depend on workgroup-uniform data only) with a barrier in the loop."""
    sh = pt.shared(pt.u32, 64)
    li = pt.local_index()
    total = pt.u32(0)
    for r in range(pt.u32(8)):
        if x[r] == 0:
            continue
        if x[r] > 90:
            break
        sh[li] = x[(li + r) % len(x)]
        pt.workgroup_barrier()
        total += sh[(li + 1) % 64]
        pt.workgroup_barrier()
    out[pt.thread_index()] = total


SHAPES = [first_neg, first_neg_per_thread, nested_search, while_exits, exits_around_barrier]


@pytest.mark.parametrize("kernel", SHAPES, ids=lambda k: k.__name__)
def test_hand_written_exits(kernel, dev):
    rng = np.random.default_rng(7)
    if kernel is first_neg or kernel is first_neg_per_thread:
        x = rng.standard_normal(80).astype(np.float32) + 1.5
        x[rng.integers(0, 80, 10)] = 0.0
        _run_against_emulation(kernel, dev, [x, np.zeros(N_THREADS, np.int32)])
        x[:] = np.abs(x)                                        # no negative: every loop runs out
        _run_against_emulation(kernel, dev, [x, np.zeros(N_THREADS, np.int32)])
        return
    x = rng.integers(0, 100, 90).astype(np.uint32)
    n = 64 if kernel is exits_around_barrier else N_THREADS
    for data in (x, x * 0 + 3, x * 0):
        _run_against_emulation(kernel, dev, [data, np.full(n, 12345, np.uint32)])


# --- generated kernels -------------------------------------------------------------------------------
class _Gen:
    """Python source of one kernel: nested if/else and loops with data-dependent exits. Every thread
    hashes what it does into `acc` and counts its steps in `cnt`, so a wrong exit shows in the output."""

    def __init__(self, seed: int, name: str, max_depth: int = 3):
        self.rng, self.name, self.max_depth = random.Random(seed), name, max_depth
        self.n = 0

    def fresh(self, hint: str) -> str:
        self.n += 1
        return f"{hint}{self.n}"

    def index(self, terms) -> str:
        r = self.rng
        parts = [f"i * {r.randrange(1, 6)}"] + [f"{t} * {r.randrange(1, 8)}" for t in terms]
        return f"({' + '.join(parts)} + {r.randrange(50)}) % len(x)"

    def cond(self, terms) -> str:
        r = self.rng
        m = r.choice([2, 3, 4, 5, 7])
        return f"x[{self.index(terms)}] % {m} == {r.randrange(m)}"

    def update(self, terms) -> list[str]:
        r = self.rng
        k = r.randrange(3)
        if k == 0:
            return [f"acc = acc * {r.choice([3, 5, 31])} + x[{self.index(terms)}]", "cnt += 1"]
        if k == 1:
            return [f"acc ^= x[{self.index(terms)}] + {r.randrange(1, 9)}", "cnt += 1"]
        return ["out[2 * i] = acc", "cnt += 1"]

    def exit(self, loops: int) -> str:
        kinds = ["return"] + (["break", "continue", "break", "continue"] if loops else [])
        return self.rng.choice(kinds)

    def block(self, depth: int, terms: list[str], loops: int, size: int) -> list[str]:
        r = self.rng
        out: list[str] = []
        for _ in range(size):
            k = r.random()
            if k < 0.3 or depth >= self.max_depth:
                out += self.update(terms)
                if r.random() < 0.35:                       # a guarded exit, maybe after a store
                    body = (self.update(terms) if r.random() < 0.5 else []) + [self.exit(loops)]
                    out += [f"if {self.cond(terms)}:"] + ["    " + s for s in body]
            elif k < 0.55:
                out += [f"if {self.cond(terms)}:"] + self.indent(self.branch(depth, terms, loops))
                if r.random() < 0.6:
                    out += ["else:"] + self.indent(self.branch(depth, terms, loops))
            else:
                out += self.loop(depth, terms, loops)
        return out

    def branch(self, depth: int, terms, loops: int) -> list[str]:
        body = self.block(depth + 1, terms, loops, self.rng.randrange(1, 3))
        if self.rng.random() < 0.3:                          # an exit ending the branch
            body.append(self.exit(loops))
        return body

    def loop(self, depth: int, terms: list[str], loops: int) -> list[str]:
        r = self.rng
        shape = r.choice(["up", "down", "signed", "step", "while", "while_true"])
        inner = lambda extra: self.indent(self.block(depth + 1, terms + extra, loops + 1, r.randrange(1, 4)))
        if shape in ("up", "down", "step"):
            v = self.fresh("k")
            rng_ = {"up": f"range(pt.u32({r.randrange(4)}), pt.u32({r.randrange(3, 7)}))",
                    "down": f"range(pt.u32({r.randrange(4, 8)}), pt.u32({r.randrange(2)}), -{r.randrange(1, 3)})",
                    "step": f"range(pt.u32({r.randrange(3)}), pt.u32({r.randrange(5, 11)}), {r.randrange(2, 4)})"}
            return [f"for {v} in {rng_[shape]}:"] + inner([v])
        if shape == "signed":
            v = self.fresh("s")
            return [f"for {v} in range(pt.i32({r.randrange(-5, 2)}), pt.i32({r.randrange(2, 6)})):"] + \
                inner([f"pt.u32({v} + 8)"])
        w = self.fresh("w")
        bound = r.randrange(3, 7)
        if shape == "while":
            return [f"{w} = pt.u32(0)", f"while {w} < {bound}:", f"    {w} += 1"] + inner([w])
        return [f"{w} = pt.u32(0)", "while True:", f"    {w} += 1", f"    if {w} > {bound}:", "        break"] + \
            inner([w])

    @staticmethod
    def indent(lines: list[str]) -> list[str]:
        return ["    " + s for s in lines]

    def source(self) -> str:
        body = ["i = pt.thread_index()", "if i >= len(out) // 2:", "    return",
                "acc = pt.u32(1)", "cnt = pt.u32(0)"]
        body += self.loop(0, [], 0) + self.block(0, [], 0, self.rng.randrange(1, 3))
        body += ["out[2 * i] = acc", "out[2 * i + 1] = cnt"]
        return (f"@pt.kernel\ndef {self.name}(x: pt.In[pt.u32], out: pt.Out[pt.u32]):\n"
                + "\n".join("    " + s for s in body) + "\n")


SEEDS = list(range(12))


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The generated kernels, written to a module (the importer reads a kernel's source file)."""
    src = "import poot as pt\n\n\n" + "\n\n".join(_Gen(s, f"exits_{s}").source() for s in SEEDS)
    path = tmp_path_factory.mktemp("loop_exits") / "generated_exits.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("generated_exits", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_exits(generated, seed, dev):
    kernel = getattr(generated, f"exits_{seed}")
    x = np.random.default_rng(seed).integers(0, 1000, 64).astype(np.uint32)
    _run_against_emulation(kernel, dev, [x, np.full(2 * N_THREADS, 7, np.uint32)])


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_exits_are_valid_vulkan_spirv(generated, seed):
    """The rewritten KIR verifies, and both SPIR-V consumers' modules pass `spirv-val`."""
    from poot.jit.llvm.compile import compile_kernel
    from poot.jit.kir.verify import verify
    from poot.jit.kir.model import Break, Continue, Return
    from poot.jit.llvm.targets.spirv.loops import eliminate_loop_exits
    from poot.jit.llvm.targets.spirv.returns import eliminate_returns
    from poot.jit.llvm.targets.spirv.lowering import walk

    kir = getattr(generated, f"exits_{seed}").kir
    rewritten = eliminate_loop_exits(eliminate_returns(kir))
    verify(rewritten)
    assert not any(isinstance(n, (Break, Continue, Return)) for n in walk(rewritten.body))
    if shutil.which("spirv-val") is None:
        pytest.skip("spirv-val is not installed (Debian: spirv-tools)")
    for arch in (None, "vulkan1.3"):
        spv = compile_kernel(kir, "spirv", arch=arch).data
        r = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", "-"], input=spv, capture_output=True)
        assert r.returncode == 0, f"{kir.name} ({arch}): {r.stderr.decode()}{r.stdout.decode()}"
