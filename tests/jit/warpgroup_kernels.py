"""`@pt.kernel` tiles of the warpgroup product (pt.wgmma_m64n{64,128,256}k64[_bt]) for the tests: one
warpgroup stages A (64 x 64) and B (64 x n; for _bt, B^T as n x 64) of bf16 or f16 into shared memory in
the product's swizzled line layout, multiplies them onto C (64 x n, float32) and writes D. Each thread
holds n / 2 accumulators, which the kernel language spells as named locals, so the source is written out
here and imported."""
from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

_DIR = Path(tempfile.mkdtemp(prefix="poot_wgmma_kernels_"))


def source(n: int, dtype: str, name: str, a_at: int = 0, bt: bool = False) -> str:
    nc = n // 2
    cs = ", ".join(f"c{i}" for i in range(nc))
    lines = [
        "import poot as pt",
        "",
        "",
        "@pt.kernel(workgroup=(128, 1, 1))",
        f"def {name}(a: pt.In[pt.u32], b: pt.In[pt.u32], c: pt.In[pt.f32], d: pt.Out[pt.f32]):",
        f"    sa = pt.shared(pt.u32, {2048 + a_at})",
        f"    sb = pt.shared(pt.u32, {32 * n})",
        "    t = pt.local_index_x()",
        "    for i in range(pt.u32(16)):",              # A: 64 rows of 32 words, row m on line m
        "        w = t + 128 * i",
        "        r = w // 32",
        "        sa[r * 32 + (((w % 32) // 4) ^ (r % 8)) * 4 + w % 4] = a[w]",
        f"    for i in range(pt.u32({n // 4})):",
        "        w = t + 128 * i",
    ]
    if bt:          # B^T: n rows of 32 words, column j of B on line j
        lines += ["        r = w // 32",
                  "        sb[r * 32 + (((w % 32) // 4) ^ (r % 8)) * 4 + w % 4] = b[w]"]
    else:           # B: 64 rows of n / 2 words, B[k, 64 j ...] on line 64 j + k
        lines += [f"        cw = w % {n // 2}",
                  f"        line = 64 * (cw // 32) + w // {n // 2}",
                  "        sb[line * 32 + (((cw % 32) // 4) ^ (line % 8)) * 4 + cw % 4] = b[w]"]
    lines += [
        "    pt.fence_proxy_async()",
        "    pt.workgroup_barrier()",
        "    row = 16 * (t // 32) + (t % 32) // 4",
        "    col = 2 * (t % 4)",
    ]
    where = [f"({'row' if i % 4 < 2 else 'row + 8'}) * {n} + col + {8 * (i // 4) + i % 2}" for i in range(nc)]
    lines += [f"    c{i} = c[{at}]" for i, at in enumerate(where)]
    lines.append(f"    {cs} = pt.wgmma_m64n{n}k64{'_bt' if bt else ''}(pt.{dtype}, sa, {a_at}, sb, 0, {cs})")
    lines += [f"    d[{at}] = c{i}" for i, at in enumerate(where)]
    return "\n".join(lines) + "\n"


def tile_kernel(n: int, dtype: str = "bfloat16", a_at: int = 0, bt: bool = False):
    """The tile kernel for B of n columns and operands of `dtype` ('bfloat16' or 'float16'), reading A from
    word `a_at` of its shared array (0 where A was staged; another value tests the refusals); with `bt` its
    b argument is B^T (n x 64) and the product is the _bt form."""
    name = f"wgmma_tile_{dtype}_{n}_{a_at}{'_bt' if bt else ''}"
    path = _DIR / f"{name}.py"
    if not path.exists():
        path.write_text(source(n, dtype, name, a_at, bt))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)
