/* A fake libcuda.so.1 for testing poot's CUDA device on machines without a GPU (test_cuda_fake_driver.py).

   It implements, on host memory, the driver entry points poot/devices/cuda.py calls, with the real
   prototypes and struct layouts of cuda.h, and checks what a real driver would refuse (no current
   context on the calling thread, bad pool properties, blocks or grids over the limits, graph nodes not
   chained). Device memory is host memory; every operation runs at once. "Kernels" are chosen by the
   entry name in the PTX handed to cuModuleLoadData and run natively over the poot launch ABI:
     poot_test_add*    (a, b, c, meta, trap) c[i] = a[i] + b[i] (f32) for each thread of each live block
     poot_test_groups* (out, meta, trap)     out[block] = block + 1 for each live logical block
     poot_test_trap*   (x, y, meta, trap)    y[i] = x[i] * 2, or the trap word set (code 2) when x[i] < 0
     poot_test_fault*  (...)                 an asynchronous illegal address: the next waiting call returns 700
   where a block is live when its linear physical id is below the logical block count in meta. Other
   entries run as no-ops.
   Build: cc -shared -fPIC -I<cuda include> fake_libcuda.c -o libcuda.so.1 -ldl -lpthread */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 512
typedef struct { char name[128]; int kind, nparams; } Fn;      /* kind: 0 add, 1 groups, 2 trap, 3 fault, 4 other */
typedef struct { int memcpy; CUDA_KERNEL_NODE_PARAMS k; uint64_t args[16]; CUDA_MEMCPY3D c; } Node;
typedef struct { int n; Node nodes[MAXN]; } Graph;
typedef struct { int n; Node nodes[MAXN]; Graph *from; } Exec;

static __thread void *current;                  /* the context current on this thread */
static int ctx_token, stream_token, pool_token, event_token, sticky;
static size_t used, limit = 256u << 20;
static int counters[4];                           /* launches, graph launches, node updates, frees */
int fake_counter(int i) { return counters[i]; }
void fake_reset(void) { sticky = 0; }

#define NEED_CTX() do { if (sticky) return (CUresult)sticky; if (!current) return CUDA_ERROR_INVALID_CONTEXT; } while (0)

CUresult cuGetProcAddress(const char *sym, void **pfn, int v, cuuint64_t flags, CUdriverProcAddressQueryResult *st) {
    static const char *suffix[] = {"", "_v2", "_v3", "WithFlags"};
    char name[256];
    *pfn = NULL;
    for (int i = 0; i < 4 && !*pfn; i++) {
        snprintf(name, sizeof name, "%s%s", sym, suffix[i]);
        *pfn = dlsym(RTLD_DEFAULT, name);
    }
    if (st) *st = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
CUresult cuInit(unsigned f) {
    const char *d = getenv("FAKE_CUDA_DEVICES"), *m = getenv("FAKE_CUDA_MEMORY");
    if (m) limit = strtoull(m, NULL, 10);
    return d && atoi(d) == 0 ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}
CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
CUresult cuGetErrorName(CUresult e, const char **s) {
    *s = e == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : e == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : e == 1 ? "CUDA_ERROR_INVALID_VALUE"
       : e == 218 ? "CUDA_ERROR_INVALID_PTX" : e == 201 ? "CUDA_ERROR_INVALID_CONTEXT" : "CUDA_ERROR_OTHER";
    return CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult e, const char **s) { *s = "fake driver error"; return CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int i) { *d = i; return i == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }
CUresult cuDeviceGetName(char *name, int len, CUdevice d) { snprintf(name, len, "Fake H200"); return CUDA_SUCCESS; }
CUresult cuDeviceTotalMem(size_t *b, CUdevice d) { *b = limit; return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { *c = (CUcontext)&ctx_token; return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext c) { if (sticky) return (CUresult)sticky; current = c; return CUDA_SUCCESS; }
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50331648; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *v = getenv("FAKE_CUDA_NO_POOLS") ? 0 : 1; break;
    default: *v = 0;
    }
    return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream *s, unsigned f) { NEED_CTX(); *s = (CUstream)&stream_token; return CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream s) { NEED_CTX(); return CUDA_SUCCESS; }
CUresult cuMemGetInfo(size_t *f, size_t *t) { NEED_CTX(); *f = limit - used; *t = limit; return CUDA_SUCCESS; }

/* memory: a 256-byte header before each block holds its size */
static CUresult dev_alloc(CUdeviceptr *p, size_t n) {
    NEED_CTX();
    if (n == 0) return CUDA_ERROR_INVALID_VALUE;
    if (used + n > limit) return CUDA_ERROR_OUT_OF_MEMORY;
    char *b = aligned_alloc(256, 256 + ((n + 255) & ~(size_t)255));
    *(size_t *)b = n;
    used += n;
    *p = (CUdeviceptr)(b + 256);
    return CUDA_SUCCESS;
}
static CUresult dev_free(CUdeviceptr p) {
    NEED_CTX();
    char *b = (char *)p - 256;
    used -= *(size_t *)b;
    counters[3]++;
    free(b);
    return CUDA_SUCCESS;
}
CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *p) {
    NEED_CTX();
    if (p->allocType != CU_MEM_ALLOCATION_TYPE_PINNED || p->location.type != CU_MEM_LOCATION_TYPE_DEVICE || p->location.id)
        return CUDA_ERROR_INVALID_VALUE;
    *pool = (CUmemoryPool)&pool_token;
    return CUDA_SUCCESS;
}
CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void *v) {
    return a == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD && *(cuuint64_t *)v == ~(cuuint64_t)0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep) { NEED_CTX(); return CUDA_SUCCESS; }
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s) {
    return pool == (CUmemoryPool)&pool_token && s == (CUstream)&stream_token ? dev_alloc(p, n) : CUDA_ERROR_INVALID_HANDLE;
}
CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) { return dev_free(p); }
CUresult cuMemAlloc(CUdeviceptr *p, size_t n) { return dev_alloc(p, n); }
CUresult cuMemFree(CUdeviceptr p) { return dev_free(p); }
CUresult cuMemHostAlloc(void **p, size_t n, unsigned f) { NEED_CTX(); *p = malloc(n); return CUDA_SUCCESS; }
CUresult cuMemFreeHost(void *p) { free(p); return CUDA_SUCCESS; }
/* mapped host memory: device memory is host memory here, so the device address is the host one */
CUresult cuMemHostGetDevicePointer(CUdeviceptr *d, void *h, unsigned f) { NEED_CTX(); *d = (CUdeviceptr)h; return CUDA_SUCCESS; }
CUresult cuEventCreate(CUevent *e, unsigned f) { NEED_CTX(); *e = (CUevent)&event_token; return CUDA_SUCCESS; }
CUresult cuEventRecord(CUevent e, CUstream s) { NEED_CTX(); return CUDA_SUCCESS; }
CUresult cuEventSynchronize(CUevent e) { NEED_CTX(); return CUDA_SUCCESS; }
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { NEED_CTX(); *ms = 1.0f; return CUDA_SUCCESS; }
CUresult cuMemcpyHtoDAsync(CUdeviceptr d, const void *h, size_t n, CUstream s) { NEED_CTX(); memcpy((void *)d, h, n); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoHAsync(void *h, CUdeviceptr d, size_t n, CUstream s) { NEED_CTX(); memcpy(h, (void *)d, n); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { NEED_CTX(); memmove((void *)d, (void *)s, n); return CUDA_SUCCESS; }

/* modules and functions */
CUresult cuModuleLoadData(CUmodule *m, const void *image) {
    NEED_CTX();
    if (!strstr(image, ".version") || strstr(image, "INVALID")) return CUDA_ERROR_INVALID_PTX;
    *m = (CUmodule)strdup(image);
    return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    NEED_CTX();
    char key[160];
    snprintf(key, sizeof key, ".entry %s(", name);
    const char *at = strstr((const char *)m, key);
    if (!at) return CUDA_ERROR_NOT_FOUND;
    Fn *fn = calloc(1, sizeof(Fn));
    snprintf(fn->name, sizeof fn->name, "%s", name);
    static const char *kinds[] = {"poot_test_add", "poot_test_groups", "poot_test_trap", "poot_test_fault"};
    for (fn->kind = 0; fn->kind < 4 && strncmp(name, kinds[fn->kind], strlen(kinds[fn->kind])); fn->kind++) {}
    for (const char *p = strstr(at, ".param"), *end = strchr(at, ')'); p && p < end; p = strstr(p + 1, ".param")) fn->nparams++;
    *f = (CUfunction)fn;
    return CUDA_SUCCESS;
}
CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f) {
    *v = a == CU_FUNC_ATTRIBUTE_NUM_REGS ? 40 : a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
         ? (strstr(((Fn *)f)->name, "heavy") ? 256 : 1024) : 0;
    return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) { return CUDA_SUCCESS; }

static CUresult run(Fn *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, uint64_t *a) {
    if ((uint64_t)bx * by * bz > 1024 || bz > 64 || gy > 65535 || gz > 65535 || !gx || !gy || !gz) return CUDA_ERROR_INVALID_VALUE;
    uint64_t blocks = (uint64_t)gx * gy * gz;
    counters[0]++;
    if (fn->kind == 3) { sticky = 700; return CUDA_SUCCESS; }
    if (fn->kind == 4) return CUDA_SUCCESS;
    int nb = fn->nparams - 2;                                        /* kernel buffers before meta, trap */
    uint32_t *meta = (uint32_t *)a[nb], *trap = (uint32_t *)a[nb + 1];
    uint64_t logical = (uint64_t)meta[nb] * meta[nb + 1] * meta[nb + 2];
    for (uint64_t L = 0; L < blocks && L < logical; L++) {
        if (fn->kind == 1) { if (L < meta[0]) ((uint32_t *)a[0])[L] = (uint32_t)L + 1; continue; }
        for (uint64_t t = 0; t < bx; t++) {
            uint64_t i = L * bx + t;
            if (fn->kind == 0 && i < meta[2]) ((float *)a[2])[i] = ((float *)a[0])[i] + ((float *)a[1])[i];
            if (fn->kind == 2 && i < meta[1]) {
                float x = ((float *)a[0])[i];
                if (x >= 0) ((float *)a[1])[i] = 2 * x;
                else if (!trap[0]) { trap[0] = 2; trap[1] = meta[nb + 3]; }
            }
        }
    }
    return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream s, void **params, void **extra) {
    NEED_CTX();
    if (s != (CUstream)&stream_token || extra) return CUDA_ERROR_INVALID_VALUE;
    uint64_t args[16];
    if (((Fn *)f)->nparams > 16) return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < ((Fn *)f)->nparams; i++) args[i] = *(uint64_t *)params[i];
    return run((Fn *)f, gx, gy, gz, bx, by, bz, args);
}

/* graphs: nodes copy their parameters; an executable graph copies the graph's nodes */
CUresult cuGraphCreate(CUgraph *g, unsigned f) { NEED_CTX(); *g = (CUgraph)calloc(1, sizeof(Graph)); return CUDA_SUCCESS; }
static CUresult add_node(CUgraphNode *out, Graph *g, const CUgraphNode *deps, size_t nd, Node **node) {
    NEED_CTX();
    if (g->n == MAXN) return CUDA_ERROR_OUT_OF_MEMORY;
    if (g->n == 0 ? nd != 0 : (nd != 1 || deps[0] != (CUgraphNode)(intptr_t)g->n)) return CUDA_ERROR_INVALID_VALUE;
    *node = &g->nodes[g->n++];
    *out = (CUgraphNode)(intptr_t)g->n;                                 /* handle = 1-based index */
    return CUDA_SUCCESS;
}
static CUresult set_kernel(Node *n, const CUDA_KERNEL_NODE_PARAMS *p) {
    if (!p->func || !p->kernelParams || p->extra || ((Fn *)p->func)->nparams > 16) return CUDA_ERROR_INVALID_VALUE;
    n->memcpy = 0;
    n->k = *p;
    for (int i = 0; i < ((Fn *)p->func)->nparams; i++) n->args[i] = *(uint64_t *)p->kernelParams[i];
    n->k.kernelParams = NULL;
    return CUDA_SUCCESS;
}
static CUresult set_copy(Node *n, const CUDA_MEMCPY3D *c) {
    if (c->srcMemoryType != CU_MEMORYTYPE_DEVICE || c->dstMemoryType != CU_MEMORYTYPE_DEVICE || c->Height != 1
        || c->Depth != 1 || c->srcPitch < c->WidthInBytes || c->dstPitch < c->WidthInBytes) return CUDA_ERROR_INVALID_VALUE;
    n->memcpy = 1;
    n->c = *c;
    return CUDA_SUCCESS;
}
CUresult cuGraphAddKernelNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd, const CUDA_KERNEL_NODE_PARAMS *p) {
    Node *n;
    CUresult r = add_node(out, (Graph *)g, deps, nd, &n);
    return r ? r : set_kernel(n, p);
}
CUresult cuGraphAddMemcpyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd, const CUDA_MEMCPY3D *c, CUcontext ctx) {
    Node *n;
    CUresult r = add_node(out, (Graph *)g, deps, nd, &n);
    return r ? r : ctx != (CUcontext)&ctx_token ? CUDA_ERROR_INVALID_CONTEXT : set_copy(n, c);
}
CUresult cuGraphInstantiate(CUgraphExec *e, CUgraph g, unsigned long long flags) {
    NEED_CTX();
    Exec *x = calloc(1, sizeof(Exec));
    x->n = ((Graph *)g)->n;
    x->from = (Graph *)g;
    memcpy(x->nodes, ((Graph *)g)->nodes, sizeof x->nodes);
    *e = (CUgraphExec)x;
    return CUDA_SUCCESS;
}
static Node *exec_node(CUgraphExec e, CUgraphNode h) {
    intptr_t i = (intptr_t)h;
    return i >= 1 && i <= ((Exec *)e)->n ? &((Exec *)e)->nodes[i - 1] : NULL;
}
CUresult cuGraphExecKernelNodeSetParams(CUgraphExec e, CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS *p) {
    NEED_CTX();
    Node *n = exec_node(e, h);
    counters[2]++;
    return n && !n->memcpy ? set_kernel(n, p) : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec e, CUgraphNode h, const CUDA_MEMCPY3D *c, CUcontext ctx) {
    NEED_CTX();
    Node *n = exec_node(e, h);
    counters[2]++;
    return n && n->memcpy ? set_copy(n, c) : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuGraphLaunch(CUgraphExec e, CUstream s) {
    NEED_CTX();
    Exec *x = (Exec *)e;
    counters[1]++;
    for (int i = 0; i < x->n; i++) {
        Node *n = &x->nodes[i];
        if (n->memcpy) { memmove((void *)n->c.dstDevice, (void *)n->c.srcDevice, n->c.WidthInBytes); continue; }
        CUDA_KERNEL_NODE_PARAMS *k = &n->k;
        CUresult r = run((Fn *)k->func, k->gridDimX, k->gridDimY, k->gridDimZ, k->blockDimX, k->blockDimY, k->blockDimZ, n->args);
        if (r) return r;
    }
    return CUDA_SUCCESS;
}
CUresult cuGraphExecDestroy(CUgraphExec e) { free(e); return CUDA_SUCCESS; }
CUresult cuGraphDestroy(CUgraph g) { free(g); return CUDA_SUCCESS; }
