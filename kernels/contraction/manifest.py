"""Manifest of the contraction family: GEMV/GEMM bodies the planner claims for matmul hot paths.
One row per committed asset: (asset name, source file in this folder, entry function, destination[,
targets]): the tensor-core GEMMs are PTX only (the warpgroup ones sm_90a only), the AMD matrix-core GEMMs AMDGCN on the GPUs that have
their instructions (MFMA: CDNA, wave64; WMMA: RDNA3, wave32); LLVM's SPIR-V backend cannot yet lower gemm_f32's
shared-memory tiles ("Unimplemented implicit down-cast from load"), so wgpu and Vulkan keep the generic
matmul for float32."""
MANIFEST = (
    ("gemv_f32", "gemv_f32.py", "gemv_f32", "assets"),
    ("gemv_bf16", "gemv_bf16.py", "gemv_bf16", "assets"),
    ("gemm_f32", "gemm_f32.py", "gemm_f32", "assets", ("cpu", "ptx", "amdgcn")),
    ("gemm_bf16_tc", "gemm_bf16_tc.py", "gemm_bf16_tc", "assets", ("ptx",)),
    ("gemm_f16_tc", "gemm_bf16_tc.py", "gemm_f16_tc", "assets", ("ptx",)),
    ("gemm_bf16_async", "gemm_bf16_async.py", "gemm_bf16_async", "assets", ("ptx",)),
    ("gemm_f16_async", "gemm_bf16_async.py", "gemm_f16_async", "assets", ("ptx",)),
    ("gemm_bf16_async_wide", "gemm_bf16_async_wide.py", "gemm_bf16_async_wide", "assets", ("ptx",)),
    ("gemm_f16_async_wide", "gemm_bf16_async_wide.py", "gemm_f16_async_wide", "assets", ("ptx",)),
    ("gemm_bf16_wgmma", "gemm_bf16_wgmma.py", "gemm_bf16_wgmma", "assets", ("ptx@sm_90a",)),
    ("gemm_f16_wgmma", "gemm_bf16_wgmma.py", "gemm_f16_wgmma", "assets", ("ptx@sm_90a",)),
    ("gemm_bf16_mfma", "gemm_bf16_mfma.py", "gemm_bf16_mfma", "assets",
     ("amdgcn@gfx90a", "amdgcn@gfx942", "amdgcn@gfx950")),
    ("gemm_bf16_wmma", "gemm_bf16_wmma.py", "gemm_bf16_wmma", "assets",
     ("amdgcn@gfx1100", "amdgcn@gfx1101", "amdgcn@gfx1102", "amdgcn@gfx1103", "amdgcn@gfx1150", "amdgcn@gfx1151")),
)
# quantized GEMV (qgemv.py): one lane a row on the CPU, a workgroup a row on GPUs
MANIFEST += tuple((f"qgemv_{f}_{side}", "qgemv.py", f"qgemv_{f}_{side}", "assets", targets)
                  for f in ("int8", "q8_0", "q4_0")
                  for side, targets in (("cpu", ("cpu",)), ("gpu", ("ptx", "spirv", "amdgcn"))))
