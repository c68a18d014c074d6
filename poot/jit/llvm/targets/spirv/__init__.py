"""The SPIR-V target (wgpu and raw Vulkan): the lowering (target.py, lowering.py), its workarounds
(loops.py, returns.py, widen.py, intrinsics.py), the post-passes for naga and Vulkan (naga.py, vulkan.py)
and the out-of-process LLVM worker (worker.py)."""
