"""Manifest of the attention family: the flash kernels the planner routes the "attention" op to
(poot/jit/codegen/attention.py). One row per committed asset: (asset name, source file in this folder,
entry function, destination[, targets]). The tensor-core prefill (flash_tc.py, 16-bit dtypes, head dims 64
and 128) is PTX only (sm_80 and newer); on sm_90 the planner takes its Hopper form (flash_wg.py, sm_90a
only) instead. The decode kernels (flash_decode.py, head dims up to 128 and up to 256) and their combine (flash_gpu.py) reduce across a warp's lanes with subgroup operations: they build
for PTX, AMDGCN and SPIR-V, and run where the device's subgroups exchange 32 lanes (Vulkan on NVIDIA GPUs,
not lavapipe's 8-lane subgroups nor wgpu, which enables no subgroup operations); other SPIR-V devices run
decode shapes through flash_simt.py's split decode and combine (shared-memory reductions), the CPU
through attention_cpu_<T>. The CPU kernel is a one-thread-per-workgroup loop nest (CPU only); the prefill
kernel is GPU-shaped (it also runs on the CPU target, for the import-and-run examples)."""
MANIFEST = tuple(
    [(f"attention_cpu_{t}", "flash_cpu.py", f"attention_cpu_{t}", "assets", ("cpu",)) for t in ("f32", "f16", "bf16")]
    + [(f"attention_prefill_{t}", "flash_gpu.py", f"attention_prefill_{t}", "assets") for t in ("f32", "f16", "bf16")]
    + [(f"attention_decode_{t}_d{d}", "flash_decode.py", f"attention_decode_{t}_d{d}", "assets",
        ("ptx", "amdgcn", "spirv")) for t in ("f32", "f16", "bf16") for d in (128, 256)]
    + [(f"attention_combine_{t}", "flash_gpu.py", f"attention_combine_{t}", "assets", ("ptx", "amdgcn", "spirv"))
       for t in ("f32", "f16", "bf16")]
    + [(f"attention_tc_{t}_d{d}", "flash_tc.py", f"attention_tc_{t}_d{d}", "assets", ("ptx",))
       for t in ("f16", "bf16") for d in (64, 128)]
    + [(f"attention_wg_{t}_d{d}", "flash_wg.py", f"attention_wg_{t}_d{d}", "assets", ("ptx@sm_90a",))
       for t in ("f16", "bf16") for d in (64, 128)]
    + [(f"attention_{part}_simt_{t}", "flash_simt.py", f"attention_{part}_simt_{t}", "assets",
        ("spirv", "ptx", "amdgcn")) for part in ("decode", "combine") for t in ("f32", "f16", "bf16")]
)
