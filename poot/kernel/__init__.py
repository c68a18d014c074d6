"""poot.kernel: `@poot.kernel` Python functions imported to KIR, emulated on NumPy, and launched.

Public names (re-exported from `poot`): kernel, device_fn, Context, In, Out, InOut, the index
intrinsics (thread_index, local_index, group_index, group_size, num_groups, each with _x/_y/_z),
workgroup_barrier, shared, atomic_add, no_contract_add, bitcast, fma, and the subgroup operations
shuffle, shuffle_xor, subgroup_sum, subgroup_max, subgroup_min, subgroup_size, lane_index, mma_m16n8k16, the
AMD matrix-core operations mfma_16x16x16 and wmma_16x16x16, and the 16-byte memory operations ldmatrix_x4,
ldmatrix_x4_trans, load_x4, store_x4, copy_async, copy_async_commit, copy_async_wait, and Hopper's warpgroup
products wgmma_m64n{64,128,256}k64 (and their _bt forms) with fence_proxy_async. See docs/kernels.md.
"""
from poot.kernel.api import Context, KernelFunction, kernel
from poot.kernel.importer import ImportedKernel, import_kernel
from poot.kernel.intrinsics import (BufferSpec, DeviceFunction, In, InOut, Out, atomic_add, bitcast, device_fn, fma,
                         group_index, group_index_x, group_index_y, group_index_z, group_size, group_size_x,
                         group_size_y, group_size_z, local_index, local_index_x, local_index_y,
                         local_index_z, math_op_of, no_contract_add, num_groups, num_groups_x, num_groups_y,
                         num_groups_z, register_math_function, shared, thread_index, thread_index_x,
                         thread_index_y, thread_index_z, workgroup_barrier)
from poot.kernel.intrinsics import (lane_index, mfma_16x16x16, mma_m16n8k16, shuffle, shuffle_xor, subgroup_max,
                                    subgroup_min, subgroup_size, subgroup_sum, wmma_16x16x16)
from poot.kernel.intrinsics import (copy_async, copy_async_commit, copy_async_wait, fast_exp2, ldmatrix_x4,
                                    ldmatrix_x4_trans, load_x4, store_x4)
from poot.kernel.intrinsics import (fence_proxy_async, wgmma_m64n64k64, wgmma_m64n64k64_bt, wgmma_m64n128k64,
                                    wgmma_m64n128k64_bt, wgmma_m64n256k64, wgmma_m64n256k64_bt)

__all__ = [
    "Context", "KernelFunction", "kernel", "ImportedKernel", "import_kernel", "BufferSpec", "DeviceFunction",
    "In", "InOut", "Out", "atomic_add", "bitcast", "device_fn", "fma", "group_index", "group_index_x",
    "group_index_y", "group_index_z", "group_size", "group_size_x", "group_size_y", "group_size_z",
    "local_index", "local_index_x", "local_index_y", "local_index_z", "math_op_of", "no_contract_add",
    "num_groups", "num_groups_x", "num_groups_y", "num_groups_z", "register_math_function", "shared",
    "thread_index", "thread_index_x", "thread_index_y", "thread_index_z", "workgroup_barrier",
    "shuffle", "shuffle_xor", "subgroup_sum", "subgroup_max", "subgroup_min", "subgroup_size", "lane_index",
    "mma_m16n8k16", "mfma_16x16x16", "wmma_16x16x16", "ldmatrix_x4", "ldmatrix_x4_trans", "load_x4", "store_x4",
    "copy_async", "copy_async_commit", "copy_async_wait", "fast_exp2", "wgmma_m64n64k64", "wgmma_m64n128k64",
    "wgmma_m64n256k64", "wgmma_m64n64k64_bt", "wgmma_m64n128k64_bt", "wgmma_m64n256k64_bt", "fence_proxy_async",
]

# The names `poot/__init__.py` re-exports as the kernel API.
PUBLIC = ("kernel", "device_fn", "Context", "In", "Out", "InOut", "thread_index", "thread_index_x",
          "thread_index_y", "thread_index_z", "local_index", "local_index_x", "local_index_y", "local_index_z",
          "group_index", "group_index_x", "group_index_y", "group_index_z", "group_size", "group_size_x",
          "group_size_y", "group_size_z", "num_groups", "num_groups_x", "num_groups_y", "num_groups_z",
          "workgroup_barrier", "shared", "atomic_add", "no_contract_add", "bitcast", "fma", "shuffle", "shuffle_xor",
          "subgroup_sum", "subgroup_max", "subgroup_min", "subgroup_size", "lane_index", "mma_m16n8k16",
          "mfma_16x16x16", "wmma_16x16x16", "ldmatrix_x4", "ldmatrix_x4_trans", "load_x4", "store_x4", "copy_async",
          "copy_async_commit", "copy_async_wait", "fast_exp2", "wgmma_m64n64k64", "wgmma_m64n128k64",
          "wgmma_m64n256k64", "wgmma_m64n64k64_bt", "wgmma_m64n128k64_bt", "wgmma_m64n256k64_bt", "fence_proxy_async")
