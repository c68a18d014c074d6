"""Manifest of the contraction family: GEMV/GEMM bodies the planner claims for matmul hot paths.
One row per committed asset: (asset name, source file in this folder, entry function, destination[,
targets]): the tensor-core GEMMs are PTX only; LLVM's SPIR-V backend cannot yet lower gemm_f32's
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
)
# quantized GEMV (qgemv.py): one lane a row on the CPU, a workgroup a row on GPUs
MANIFEST += tuple((f"qgemv_{f}_{side}", "qgemv.py", f"qgemv_{f}_{side}", "assets", targets)
                  for f in ("int8", "q8_0", "q4_0")
                  for side, targets in (("cpu", ("cpu",)), ("gpu", ("ptx", "spirv", "amdgcn"))))
