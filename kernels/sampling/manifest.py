"""Manifest of the sampling family: the kernels the planner routes the "sample" op to
(poot/jit/codegen/sampling.py). One row per committed asset: (asset name, source file in this folder,
entry function, destination[, targets]). The CPU kernel runs one lane a row; the GPU kernel a workgroup
of sample_rows.LANES lanes a row."""
MANIFEST = (
    ("sample_rows_cpu", "sample_rows.py", "sample_rows_cpu", "assets", ("cpu",)),
    ("sample_rows_gpu", "sample_rows.py", "sample_rows_gpu", "assets", ("ptx", "spirv", "amdgcn")),
)
