"""Finding a Vulkan GPU and opening it for compute (for poot.devices.vulkan), on the `vulkan` bindings
(cffi over the system's loader, libvulkan.so.1; `pip install 'poot[vulkan]'`).

The instance asks for Vulkan 1.3 (poot's SPIR-V is version 1.6). A physical device qualifies with API
1.3 and a compute queue; among those a discrete GPU is chosen first, then integrated, virtual, CPU
(Mesa's lavapipe: a real Vulkan device on machines without a GPU). POOT_VULKAN_DEVICE picks one by its
index in the loader's list or by a part of its name. The logical device enables every feature poot's
kernels can use that the device has (64-bit floats and ints, 16-bit floats and storage, 8/16-bit ints,
float atomics); `features` records which, and the device refuses a kernel needing one that is off.
POOT_VULKAN_VALIDATION=1 adds the Khronos validation layer (Debian: vulkan-validationlayers) and
collects its messages. The pipeline cache is kept on disk between processes (the last section).
"""
from __future__ import annotations

import logging
import os
import tempfile

from poot.errors import DeviceUnavailableError
from poot import env

log = logging.getLogger("poot.devices.vulkan")

# VkPhysicalDeviceType -> (rank: lower is chosen first, name)
DEVICE_TYPES = {2: (0, "discrete GPU"), 1: (1, "integrated GPU"), 3: (2, "virtual GPU"), 4: (3, "CPU"), 0: (4, "other")}
SUBGROUP_OPERATIONS = ("basic", "vote", "arithmetic", "ballot", "shuffle", "shuffle_relative", "clustered", "quad")
VALIDATION_LAYER = "VK_LAYER_KHRONOS_validation"
ATOMIC_FLOAT = "VK_EXT_shader_atomic_float"
# SPIR-V capability -> (the device feature it needs, what a user knows it as)
CAPABILITY_FEATURES = {9: ("shaderFloat16", "float16"), 10: ("shaderFloat64", "float64"),
                       11: ("shaderInt64", "int64"), 12: ("shaderBufferInt64Atomics", "int64 atomics"),
                       22: ("shaderInt16", "int16"), 39: ("shaderInt8", "int8"),
                       4433: ("storageBuffer16BitAccess", "16-bit values in buffers"),
                       4448: ("storageBuffer8BitAccess", "8-bit values in buffers"),
                       6033: ("shaderBufferFloat32AtomicAdd", "float32 atomic add"),
                       6034: ("shaderBufferFloat64AtomicAdd", "float64 atomic add")}
_CORE = ("shaderFloat64", "shaderInt64", "shaderInt16")
_V11 = ("storageBuffer16BitAccess",)
_V12 = ("shaderFloat16", "shaderInt8", "storageBuffer8BitAccess", "shaderBufferInt64Atomics")
_ATOMIC = ("shaderBufferFloat32AtomicAdd", "shaderBufferFloat64AtomicAdd")


def import_vulkan():
    try:
        import vulkan as vk
    except ImportError as e:
        raise DeviceUnavailableError(f"vulkan: the 'vulkan' package is not installed ({e}); "
                                     "pip install 'poot[vulkan]'") from None
    except OSError as e:                     # cffi could not open libvulkan.so.1
        raise DeviceUnavailableError(f"vulkan: no Vulkan loader here ({e}); on Debian/Ubuntu apt install "
                                     "libvulkan1, plus a driver (mesa-vulkan-drivers has lavapipe for CPUs)") from None
    return vk


def create_instance(vk, messages: list):
    """The instance (Vulkan 1.3), with the validation layer and a messenger that appends its messages to
    `messages` when POOT_VULKAN_VALIDATION=1. Returns (instance, messenger or None)."""
    layers, extensions = [], []
    if env.switch("POOT_VULKAN_VALIDATION", False):
        available = {p.layerName for p in vk.vkEnumerateInstanceLayerProperties()}
        if VALIDATION_LAYER not in available:
            raise DeviceUnavailableError(f"vulkan: POOT_VULKAN_VALIDATION=1 but the {VALIDATION_LAYER} layer is not "
                                         "installed (Debian: apt install vulkan-validationlayers)")
        layers, extensions = [VALIDATION_LAYER], [vk.VK_EXT_DEBUG_UTILS_EXTENSION_NAME]
    app = vk.VkApplicationInfo(pApplicationName="poot", applicationVersion=1, pEngineName="poot", engineVersion=1,
                               apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))
    try:
        instance = vk.vkCreateInstance(vk.VkInstanceCreateInfo(
            pApplicationInfo=app, ppEnabledLayerNames=layers, ppEnabledExtensionNames=extensions), None)
    except vk.VkError as e:
        raise DeviceUnavailableError(f"vulkan: the loader could not create an instance ({type(e).__name__}); is a "
                                     "Vulkan driver installed? (mesa-vulkan-drivers has lavapipe for CPUs)") from None
    if not layers:
        return instance, None

    def collect(severity, kinds, data, user):
        text = vk.ffi.string(data.pMessage).decode(errors="replace")
        messages.append(text)
        log.warning("vulkan validation: %s", text)
        return 0
    create = vk.vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT")
    messenger = create(instance, vk.VkDebugUtilsMessengerCreateInfoEXT(
        messageSeverity=vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        messageType=vk.VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | vk.VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT,
        pfnUserCallback=collect), None)
    return instance, (messenger, collect)


def exchange_lanes(info: dict) -> int:
    """The lanes of a subgroup that exchange values by shuffles in compute shaders (Capabilities.subgroup_size):
    the device's subgroup size where it has shuffles there, else 1 (kernels combine through shared memory)."""
    ok = "shuffle" in info["subgroup_operations"] and info["subgroup_in_compute"]
    return info["subgroup_size"] if ok else 1


def describe_physical_device(vk, pd) -> dict:
    """What poot needs to know of one physical device: name, type, versions, limits, subgroups,
    features, extensions, memory types and its compute queue family."""
    subgroup = vk.VkPhysicalDeviceSubgroupProperties(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES)
    ids = vk.VkPhysicalDeviceIDProperties(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES, pNext=subgroup)
    props2 = vk.VkPhysicalDeviceProperties2(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, pNext=ids)
    vk.vkGetPhysicalDeviceProperties2(pd, props2)
    p, lim = props2.properties, props2.properties.limits
    extensions = {e.extensionName for e in vk.vkEnumerateDeviceExtensionProperties(pd, None)}
    atomic = vk.VkPhysicalDeviceShaderAtomicFloatFeaturesEXT(
        sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT)
    v12 = vk.VkPhysicalDeviceVulkan12Features(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                              pNext=atomic if ATOMIC_FLOAT in extensions else None)
    v11 = vk.VkPhysicalDeviceVulkan11Features(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, pNext=v12)
    feats2 = vk.VkPhysicalDeviceFeatures2(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, pNext=v11)
    vk.vkGetPhysicalDeviceFeatures2(pd, feats2)
    features = {f for f in _CORE if getattr(feats2.features, f)} | {f for f in _V11 if getattr(v11, f)}
    features |= {f for f in _V12 if getattr(v12, f)}
    if ATOMIC_FLOAT in extensions:
        features |= {f for f in _ATOMIC if getattr(atomic, f)}
    families = vk.vkGetPhysicalDeviceQueueFamilyProperties(pd)
    compute = [i for i, q in enumerate(families) if q.queueFlags & vk.VK_QUEUE_COMPUTE_BIT]
    # a compute-only family (an async compute engine) is the GPU's own for compute work; else any
    queue = min(compute, key=lambda i: (bool(families[i].queueFlags & vk.VK_QUEUE_GRAPHICS_BIT), i)) if compute else None
    mem = vk.vkGetPhysicalDeviceMemoryProperties(pd)
    api = p.apiVersion
    return {
        "name": vk.ffi.string(p.deviceName).decode() if not isinstance(p.deviceName, str) else p.deviceName,
        "type": DEVICE_TYPES.get(p.deviceType, DEVICE_TYPES[0])[1], "rank": DEVICE_TYPES.get(p.deviceType, (4,))[0],
        "api": (vk.VK_VERSION_MAJOR(api), vk.VK_VERSION_MINOR(api), vk.VK_VERSION_PATCH(api)),
        "driver_version": p.driverVersion, "vendor_id": p.vendorID, "device_id": p.deviceID,
        "pipeline_cache_uuid": bytes(p.pipelineCacheUUID).hex(),
        "max_workgroups": tuple(lim.maxComputeWorkGroupCount),
        "max_workgroup_size": lim.maxComputeWorkGroupInvocations,
        "max_workgroup_dims": tuple(lim.maxComputeWorkGroupSize),
        "max_storage_buffer_range": lim.maxStorageBufferRange,
        "shared_memory_bytes": lim.maxComputeSharedMemorySize,
        "max_storage_buffers": min(lim.maxPerStageDescriptorStorageBuffers, lim.maxDescriptorSetStorageBuffers),
        "min_storage_offset_alignment": lim.minStorageBufferOffsetAlignment,
        "timestamp_period_ns": lim.timestampPeriod,
        "timestamp_bits": families[queue].timestampValidBits if queue is not None else 0,
        "subgroup_size": subgroup.subgroupSize,
        "subgroup_operations": [n for b, n in enumerate(SUBGROUP_OPERATIONS) if subgroup.supportedOperations >> b & 1],
        "subgroup_in_compute": bool(subgroup.supportedStages & vk.VK_SHADER_STAGE_COMPUTE_BIT),
        "features": features, "extensions": extensions, "queue_family": queue,
        "memory_types": [(mem.memoryTypes[i].propertyFlags, mem.memoryTypes[i].heapIndex)
                         for i in range(mem.memoryTypeCount)],
        "heaps": [(mem.memoryHeaps[i].size, mem.memoryHeaps[i].flags) for i in range(mem.memoryHeapCount)],
    }


def pick_physical_device(vk, instance):
    """(physical device, its description, its index in the loader's list): see the module docstring."""
    try:
        found = vk.vkEnumeratePhysicalDevices(instance)
    except vk.VkError as e:
        raise DeviceUnavailableError(f"vulkan: the loader could not list devices ({type(e).__name__})") from None
    seen = [(i, pd, describe_physical_device(vk, pd)) for i, pd in enumerate(found)]
    if not seen:
        raise DeviceUnavailableError("vulkan: the Vulkan loader finds no device; without a GPU install Mesa's "
                                     "lavapipe (apt install mesa-vulkan-drivers)")
    usable = [s for s in seen if s[2]["api"][:2] >= (1, 3) and s[2]["queue_family"] is not None]
    if not usable:
        listed = ", ".join(f"{d['name']} (Vulkan {d['api'][0]}.{d['api'][1]})" for _, _, d in seen)
        raise DeviceUnavailableError(f"vulkan: no device with Vulkan 1.3 and a compute queue (poot's SPIR-V is "
                                     f"version 1.6); found {listed}")
    want = os.environ.get("POOT_VULKAN_DEVICE", "").strip()
    if want:
        named = [s for s in usable if (want.isdigit() and s[0] == int(want)) or want.lower() in s[2]["name"].lower()]
        if not named:
            listed = ", ".join(f"{i}: {d['name']}" for i, _, d in usable)
            raise DeviceUnavailableError(f"vulkan: no device matches POOT_VULKAN_DEVICE={want!r} (usable: {listed})")
        usable = named
    index, pd, info = min(usable, key=lambda s: (s[2]["rank"], s[0]))
    return pd, info, index


def open_device(vk, pd, info):
    """The logical device with one compute queue and every feature of `info["features"]` enabled."""
    f = info["features"]
    atomic = None
    extensions = []
    if f & set(_ATOMIC):
        extensions.append(ATOMIC_FLOAT)
        atomic = vk.VkPhysicalDeviceShaderAtomicFloatFeaturesEXT(
            sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT,
            **{k: 1 for k in _ATOMIC if k in f})
    v12 = vk.VkPhysicalDeviceVulkan12Features(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                              pNext=atomic, **{k: 1 for k in _V12 if k in f})
    v11 = vk.VkPhysicalDeviceVulkan11Features(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                              pNext=v12, **{k: 1 for k in _V11 if k in f})
    core = vk.VkPhysicalDeviceFeatures(**{k: 1 for k in _CORE if k in f})
    feats2 = vk.VkPhysicalDeviceFeatures2(sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, pNext=v11,
                                          features=core)
    queue_info = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=info["queue_family"], queueCount=1,
                                            pQueuePriorities=[1.0])
    try:
        device = vk.vkCreateDevice(pd, vk.VkDeviceCreateInfo(pNext=feats2, pQueueCreateInfos=[queue_info],
                                                             ppEnabledExtensionNames=extensions), None)
    except vk.VkError as e:
        raise DeviceUnavailableError(f"vulkan: '{info['name']}' refused a device ({type(e).__name__})") from None
    return device, vk.vkGetDeviceQueue(device, info["queue_family"], 0)


# --- the pipeline cache on disk --------------------------------------------------------------------
def pipeline_cache_path(info: dict) -> str | None:
    """Where the pipeline cache of this device and driver lives: POOT_CACHE_DIR (default ~/.cache/poot)
    /vulkan/<vendor>-<device>-<pipeline cache UUID>-<driver>.pipelines; None when POOT_DISK_CACHE=0.
    (The same folder rules as poot.jit.llvm.cache, which `poot cache clear` follows to remove it.)"""
    if not env.switch("POOT_DISK_CACHE", True):
        return None
    root = os.environ.get("POOT_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "poot")
    return os.path.join(root, "vulkan", f"{info['vendor_id']:04x}-{info['device_id']:04x}-"
                                        f"{info['pipeline_cache_uuid']}-{info['driver_version']}.pipelines")


def open_pipeline_cache(vk, device, path: str | None):
    """A VkPipelineCache seeded with the file at `path` when there is one the driver takes."""
    data = b""
    if path and os.path.isfile(path):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            log.warning("vulkan: cannot read the pipeline cache %s: %s", path, e)
    if data:
        initial = vk.ffi.from_buffer(data)
        try:
            return vk.vkCreatePipelineCache(device, vk.VkPipelineCacheCreateInfo(
                initialDataSize=len(data), pInitialData=vk.ffi.cast("void*", initial)), None)
        except vk.VkError:              # a cache the driver cannot take: start empty
            pass
    return vk.vkCreatePipelineCache(device, vk.VkPipelineCacheCreateInfo(), None)


def save_pipeline_cache(vk, device, cache, path: str) -> str | None:
    """Write `cache` to `path` atomically (a temporary file renamed into place); None if it cannot."""
    size = vk.ffi.new("size_t*")
    vk.lib.vkGetPipelineCacheData(device, cache, size, vk.ffi.NULL)
    blob = vk.ffi.new("char[]", size[0])
    vk.lib.vkGetPipelineCacheData(device, cache, size, blob)
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
        with os.fdopen(fd, "wb") as f:
            f.write(bytes(vk.ffi.buffer(blob, size[0])))
        os.replace(tmp, path)
    except OSError as e:
        log.warning("vulkan: cannot write the pipeline cache %s: %s", path, e)
        return None
    return path


__all__ = ["import_vulkan", "create_instance", "pick_physical_device", "open_device", "describe_physical_device",
           "pipeline_cache_path", "open_pipeline_cache", "save_pipeline_cache", "CAPABILITY_FEATURES", "exchange_lanes"]
