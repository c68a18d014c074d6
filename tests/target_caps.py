"""Capabilities of the GPU targets tests compile for without such a device: what an H100 or H200
reports (ptx) and what an MI300X reports (amdgcn gfx942), by which the planner and the kernel
generators shape GPU kernels. Shared by the tests that check generated PTX assembles and AMDGCN links."""
from poot.devices.base import Capabilities

CUDA_CAPS = Capabilities(name="cuda:0", target="ptx", max_workgroup_size=1024, max_workgroups=(2**31 - 1, 65535, 65535),
                         shared_memory_bytes=48 * 1024, subgroup_size=32, cores=132)
ROCM_CAPS = Capabilities(name="rocm:0", target="amdgcn", compile_arch="gfx942", max_workgroup_size=1024,
                         max_workgroups=(2**31 - 1, 65535, 65535), shared_memory_bytes=64 * 1024, subgroup_size=64,
                         cores=304)
