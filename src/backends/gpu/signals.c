/* Signals and waits: put_signal and signal_op (symmem's kernels within the
 * NVLink domain, the engine's beyond it or when SYMMEM_GPU_KERNELS=nvshmem),
 * signal_wait_until and signal_fetch (the engine's), and test / wait_until,
 * which read one element from the host. */
#include <stdio.h>
#include <unistd.h>

#include "gpu.h"

/* put_signal (or, with nbytes 0, signal_op) by symmem's kernels, to the
 * peer addresses of dst and sig: one block that copies and signals, or for
 * large messages a grid that copies and then one block that signals. */
/* kernels/put_signal.ptx, which the driver compiles at the first put_signal
 * or signal_op (not at init), and the largest grid: two blocks an SM. */
static symmem_status_t put_signal_module(gpu_t *g, const char *call)
{
    if (g->put_signal != NULL) return SYMMEM_OK;
    int sms = 0;
    cu_result_t rc =
        libs.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, g->cu_device);
    g->max_blocks = rc == 0 && sms > 0 ? 2 * (unsigned)sms : 64;
    void *module = NULL;
    CU(call, libs.cuModuleLoadData(&module, symmem__gpu_kernel_put_signal_ptx));
    static const int widths[] = {1, 4, 8, 16};
    for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
        char name[32];
        snprintf(name, sizeof(name), "put_signal_%d", widths[i]);
        if ((rc = libs.cuModuleGetFunction(&g->put_signal_kernels[widths[i]], module, name)) != 0) {
            libs.cuModuleUnload(module);
            return symmem__gpu_cuda_error(call, name, rc);
        }
    }
    g->put_signal = module;
    return SYMMEM_OK;
}

symmem_status_t symmem__gpu_kernel_put_signal(gpu_t *g, const char *call, void *peer_dst,
                                              const void *src, size_t nbytes, uint64_t *peer_sig,
                                              uint64_t value, symmem_signal_op_t op, nv_stream_t s)
{
    SYMMEM_CHECK(put_signal_module(g, call));
    int width = symmem__gpu_put_signal_width(peer_dst, src, nbytes);
    size_t elements = nbytes / (size_t)width;
    uint64_t from = (uintptr_t)src, to = (uintptr_t)peer_dst, n = nbytes;
    uint64_t sig = (uintptr_t)peer_sig, none = 0;
    unsigned add = op == SYMMEM_SIGNAL_ADD;
    void *copy_and_signal[] = {&from, &to, &n, &sig, &value, &add};
    cu_result_t rc;
    if (nbytes <= GPU_PUT_SIGNAL_ONE_BLOCK_BYTES) {
        size_t threads = elements >= 1024 ? 1024 : elements <= 32 ? 32 : (elements + 31) / 32 * 32;
        rc = symmem__gpu_launch(g->put_signal_kernels[width], 1, threads, s, copy_and_signal);
    } else {
        /* 256 threads a block, about 4 elements a thread */
        size_t blocks = (elements + 1023) / 1024;
        if (blocks > g->max_blocks) blocks = g->max_blocks;
        void *copy[] = {&from, &to, &n, &none, &value, &add};
        void *signal[] = {&from, &to, &none, &sig, &value, &add};
        rc = symmem__gpu_launch(g->put_signal_kernels[width], blocks, 256, s, copy);
        if (rc == 0) rc = symmem__gpu_launch(g->put_signal_kernels[1], 1, 32, s, signal);
    }
    return rc == 0 ? SYMMEM_OK : symmem__gpu_cuda_error(call, "launching put_signal's kernel", rc);
}

symmem_status_t symmem__gpu_put_signal(gpu_t *g, void *dst, const void *src, size_t nbytes,
                                       uint64_t *sig, uint64_t value, symmem_signal_op_t op, int pe,
                                       int nbi, symmem_stream_t stream)
{
    const char *call = nbytes ? "put_signal" : "signal_op";
    scope_t scope;
    nv_stream_t s;
    int blocking;
    SYMMEM_CHECK(symmem__gpu_begin(g, call, SYMMEM_CALL_NONE, stream, &scope, &s, &blocking));
    if (nbytes > 0 && !symmem__gpu_is_device_memory(g, src))
        return symmem__gpu_leave(g, scope,
                                 ERROR(SYMMEM_ERR_INVALID,
                                       "%s: src %p is host memory; the gpu backend needs device "
                                       "memory (a CuPy array or a torch CUDA tensor) for "
                                       "put_signal",
                                       call, src));
    /* Within the NVLink domain our kernel beats NVSHMEM's (kernels/put_signal.ptx). */
    uint64_t *peer_sig = g->engine->ptr(g, sig, pe);
    void *peer_dst = nbytes ? g->engine->ptr(g, dst, pe) : NULL;
    symmem_status_t status = SYMMEM_OK;
    if (!g->nvshmem_kernels && peer_sig != NULL &&
        (nbytes == 0 || (peer_dst != NULL && symmem__gpu_is_on_this_gpu(g, src)))) {
        status =
            symmem__gpu_kernel_put_signal(g, call, peer_dst, src, nbytes, peer_sig, value, op, s);
    } else {
        status = g->engine->put_signal(g, call, dst, src, nbytes, sig, value, op, pe, nbi, s);
        if (blocking && status == SYMMEM_OK) g->engine->quiet(g, s);
    }
    if (blocking && status == SYMMEM_OK) status = symmem__gpu_drain(g, call);
    return symmem__gpu_leave(g, scope, status);
}

symmem_status_t symmem__gpu_signal_wait_until(gpu_t *g, uint64_t *sig, symmem_cmp_t cmp,
                                              uint64_t value, symmem_stream_t stream,
                                              uint64_t *value_p)
{
    scope_t scope;
    nv_stream_t s;
    int blocking;
    SYMMEM_CHECK(
        symmem__gpu_begin(g, "signal_wait", SYMMEM_CALL_NONE, stream, &scope, &s, &blocking));
    symmem_status_t status = g->engine->signal_wait(g, sig, cmp, value, s);
    if (blocking && status == SYMMEM_OK) {
        status = symmem__gpu_drain(g, "signal_wait");
        if (status == SYMMEM_OK && value_p) status = g->engine->signal_fetch(g, sig, value_p);
    }
    return symmem__gpu_leave(g, scope, status);
}

symmem_status_t symmem__gpu_signal_fetch(gpu_t *g, const uint64_t *sig, uint64_t *value_p)
{
    scope_t scope = symmem__gpu_enter(g);
    return symmem__gpu_leave(g, scope, g->engine->signal_fetch(g, sig, value_p));
}

/* Reads one element of device memory into a host int64/uint64 comparison. */
static symmem_status_t element_holds(gpu_t *g, const void *ivar, symmem_dtype_t dtype,
                                     symmem_cmp_t cmp, int64_t value, int *holds_p)
{
    (void)g;
    union {
        int8_t i8;
        int16_t i16;
        int32_t i32;
        int64_t i64;
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
    } v;
    size_t size = symmem__dtype_bytes(dtype);
    CU("test", libs.cuMemcpy((cu_deviceptr_t)&v, (cu_deviceptr_t)ivar, size));
    int is_signed = symmem__dtype_is_signed(dtype);
    long double a = 0, b = is_signed ? (long double)value : (long double)(uint64_t)value;
    switch (dtype) {
    case SYMMEM_DTYPE_INT8: a = v.i8; break;
    case SYMMEM_DTYPE_INT16: a = v.i16; break;
    case SYMMEM_DTYPE_INT32: a = v.i32; break;
    case SYMMEM_DTYPE_INT64: a = v.i64; break;
    case SYMMEM_DTYPE_UINT8: a = v.u8; break;
    case SYMMEM_DTYPE_UINT16: a = v.u16; break;
    case SYMMEM_DTYPE_UINT32: a = v.u32; break;
    default: a = v.u64; break;
    }
    SYMMEM__COMPARE_AS(long double, a, cmp, b, holds_p);
    return SYMMEM_OK;
}

symmem_status_t symmem__gpu_test(gpu_t *g, void *ivar, symmem_dtype_t dtype, symmem_cmp_t cmp,
                                 int64_t value, int *result_p)
{
    scope_t scope = symmem__gpu_enter(g);
    return symmem__gpu_leave(g, scope, element_holds(g, ivar, dtype, cmp, value, result_p));
}

symmem_status_t symmem__gpu_wait_until(gpu_t *g, void *ivar, symmem_dtype_t dtype, symmem_cmp_t cmp,
                                       int64_t value)
{
    /* Polls from the host: NVSHMEM's typed waits exist only on a stream. */
    scope_t scope = symmem__gpu_enter(g);
    double started = symmem__gpu_now(), next_check = started + 0.1;
    int holds = 0;
    symmem_status_t status;
    unsigned pause = 1;
    while ((status = element_holds(g, ivar, dtype, cmp, value, &holds)) == SYMMEM_OK && !holds) {
        status = symmem__gpu_still_waiting(g, "wait_until", "the value to satisfy the comparison",
                                           started, &next_check);
        if (status != SYMMEM_OK) break;
        usleep(pause);
        if (pause < 1000) pause *= 2;
    }
    return symmem__gpu_leave(g, scope, status);
}
