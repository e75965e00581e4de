/* One-sided copies: put and get (blocking or nbi) through the engine's
 * copies on a stream (NVSHMEM's on-stream forms, or the copy engine's through
 * the peer mapping), host memory on the private side staged through the
 * scratch buffer; quiet and fence. */
#include "gpu.h"

/* put (is_put) or get; host memory on the private side goes through scratch. */
static symmem_status_t copy(gpu_t *g, const char *call, int is_put, gpu_copy_func_t *func,
                            void *dst, const void *src, size_t nbytes, int pe,
                            symmem_stream_t stream)
{
    scope_t scope;
    nv_stream_t s;
    int blocking;
    SYMMEM_CHECK(symmem__gpu_begin(g, call, SYMMEM_CALL_NONE, stream, &scope, &s, &blocking));
    const void *private_side = is_put ? src : dst;
    symmem_status_t status = SYMMEM_OK;
    if (symmem__gpu_is_device_memory(g, private_side)) {
        cu_result_t rc = func(g, dst, src, nbytes, pe, s);
        if (rc != 0)
            return symmem__gpu_leave(g, scope, symmem__gpu_cuda_error(call, "the copy", rc));
        if (blocking) {
            g->engine->quiet(g, s);
            status = symmem__gpu_drain(g, call);
        }
        return symmem__gpu_leave(g, scope, status);
    }
    /* Host memory: one staged chunk at a time, each completed before the next. */
    for (size_t done = 0; done < nbytes && status == SYMMEM_OK; done += GPU_SCRATCH_BYTES) {
        size_t n = nbytes - done < GPU_SCRATCH_BYTES ? nbytes - done : GPU_SCRATCH_BYTES;
        void *scratch = (void *)g->scratch;
        cu_result_t rc = 0;
        if (is_put) {
            rc = libs.cuMemcpy(g->scratch, (cu_deviceptr_t)((const char *)src + done), n);
            if (rc == 0) rc = libs.cuStreamSynchronize((nv_stream_t)0);
            if (rc == 0) rc = func(g, (char *)dst + done, scratch, n, pe, s);
        } else {
            rc = func(g, scratch, (const char *)src + done, n, pe, s);
        }
        if (rc != 0) {
            status = symmem__gpu_cuda_error(call, "staging host memory", rc);
            break;
        }
        g->engine->quiet(g, s);
        if (s == g->stream) {
            status = symmem__gpu_drain(g, call);
        } else if ((rc = libs.cuStreamSynchronize(s)) != 0) {
            status = symmem__gpu_cuda_error(call, "cuStreamSynchronize", rc);
        }
        if (status == SYMMEM_OK && !is_put &&
            (rc = libs.cuMemcpy((cu_deviceptr_t)((char *)dst + done), g->scratch, n)) != 0)
            status = symmem__gpu_cuda_error(call, "copying to host memory", rc);
    }
    return symmem__gpu_leave(g, scope, status);
}

symmem_status_t symmem__gpu_put(gpu_t *g, void *dst, const void *src, size_t n, int pe,
                                symmem_stream_t stream)
{
    return copy(g, "put", 1, g->engine->put, dst, src, n, pe, stream);
}

symmem_status_t symmem__gpu_get(gpu_t *g, void *dst, const void *src, size_t n, int pe,
                                symmem_stream_t stream)
{
    return copy(g, "get", 0, g->engine->get, dst, src, n, pe, stream);
}

symmem_status_t symmem__gpu_put_nbi(gpu_t *g, void *dst, const void *src, size_t n, int pe,
                                    symmem_stream_t stream)
{
    return copy(g, "put_nbi", 1, g->engine->put_nbi, dst, src, n, pe, stream);
}

symmem_status_t symmem__gpu_get_nbi(gpu_t *g, void *dst, const void *src, size_t n, int pe,
                                    symmem_stream_t stream)
{
    return copy(g, "get_nbi", 0, g->engine->get_nbi, dst, src, n, pe, stream);
}

/* quiet, and fence on a stream (named call in errors) */
static symmem_status_t quiet(gpu_t *g, const char *call, symmem_stream_t stream)
{
    scope_t scope;
    nv_stream_t s;
    int blocking;
    SYMMEM_CHECK(symmem__gpu_begin(g, call, SYMMEM_CALL_NONE, stream, &scope, &s, &blocking));
    g->engine->quiet(g, s);
    symmem_status_t status = blocking ? symmem__gpu_drain(g, call) : SYMMEM_OK;
    return symmem__gpu_leave(g, scope, status);
}

symmem_status_t symmem__gpu_quiet(gpu_t *g, symmem_stream_t stream)
{
    return quiet(g, "quiet", stream);
}

/* On a stream, the stream's quiet: NVSHMEM has no fence on a stream, and its
 * host fence does not order puts the stream has not run yet. (The symmem
 * engine's copies are ordered by their stream.) */
symmem_status_t symmem__gpu_fence(gpu_t *g, symmem_stream_t stream)
{
    if (stream != SYMMEM_STREAM_NONE) return quiet(g, "fence", stream);
    scope_t scope = symmem__gpu_enter(g);
    g->engine->fence(g);
    return symmem__gpu_leave(g, scope, SYMMEM_OK);
}
