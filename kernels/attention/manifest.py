"""Manifest of the attention family: the flash kernels the planner routes the "attention" op to
(poot/jit/codegen/attention.py). One row per committed asset: (asset name, source file in this folder,
entry function, destination[, targets]). The tensor-core prefill (flash_tc.py, 16-bit dtypes, head dims 64
and 128) is PTX only (sm_80 and newer). The CPU kernel is a one-thread-per-workgroup loop nest (CPU
only); the prefill, decode and combine kernels are GPU-shaped (they also run on the CPU target, for the
import-and-run examples). LLVM's SPIR-V backend stops on the decode kernel ("Unsupported ptrcast
user"), so wgpu and Vulkan run decode shapes through the prefill kernel for now."""
MANIFEST = tuple(
    [(f"attention_cpu_{t}", "flash_cpu.py", f"attention_cpu_{t}", "assets", ("cpu",)) for t in ("f32", "f16", "bf16")]
    + [(f"attention_prefill_{t}", "flash_gpu.py", f"attention_prefill_{t}", "assets") for t in ("f32", "f16", "bf16")]
    + [(f"attention_decode_{t}", "flash_gpu.py", f"attention_decode_{t}", "assets", ("cpu", "ptx", "amdgcn"))
       for t in ("f32", "f16", "bf16")]
    + [(f"attention_combine_{t}", "flash_gpu.py", f"attention_combine_{t}", "assets") for t in ("f32", "f16", "bf16")]
    + [(f"attention_tc_{t}_d{d}", "flash_tc.py", f"attention_tc_{t}_d{d}", "assets", ("ptx",))
       for t in ("f16", "bf16") for d in (64, 128)]
)
