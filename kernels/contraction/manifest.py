"""Manifest of the contraction family: GEMV/GEMM bodies the planner claims for matmul hot paths.
One row per committed asset: (asset name, source file in this folder, entry function, destination)."""
MANIFEST = (
    ("gemv_f32", "gemv_f32.py", "gemv_f32", "assets"),
    ("gemv_bf16", "gemv_bf16.py", "gemv_bf16", "assets"),
)
