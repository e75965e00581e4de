/* The symmem engine (engine.h): the backend's calls for the PEs of one
 * host with symmem's own means. The heap is vmm_heap.c's windows, so a
 * peer's copy of a symmetric address is a fixed distance away; the
 * exchange is the host mesh's allgather; a put or get is the copy engine's
 * copy through the peer mapping (cuMemcpyAsync), ordered by its stream, so
 * quiet and fence have nothing left to do; a wait on a stream is
 * kernels/signal_wait.cu; every collective is symmem's kernel
 * (own_collectives.c). Start and end are in symmem_start.c, teams in
 * symmem_teams.c, external memory in symmem_external.c. */
#include <stdio.h>
#include <string.h>

#include "gpu.h"
#include "symmem_engine.h"

/* ---- the heap ---- */

static void *sym_ptr(gpu_t *g, const void *ptr, int pe)
{
    symmem_engine_state_t *s = g->sym;
    uintptr_t at = symmem__vmm_translate(g, &s->heap, (uintptr_t)ptr, pe);
    for (const vmm_window_t *w = s->externals; at == 0 && w != NULL; w = w->next)
        at = symmem__vmm_translate(g, w, (uintptr_t)ptr, pe);
    return (void *)at;
}

/* The world's values, gathered on the host at once: finish reads them. */
static symmem_status_t sym_exchange_start(gpu_t *g, const char *call, int64_t value)
{
    return symmem__sym_allgather(g, call, NULL, 0, value, g->sym->exchanged);
}

static symmem_status_t sym_exchange_finish(gpu_t *g, const char *call, int64_t *values)
{
    (void)call;
    memcpy(values, g->sym->exchanged, sizeof(int64_t) * (size_t)g->boot.nranks);
    return SYMMEM_OK;
}

/* ---- one-sided calls: the copy engine, through the peer mapping ---- */

static int sym_put(gpu_t *g, void *dst, const void *src, size_t n, int pe, nv_stream_t s)
{
    return libs.cuMemcpyAsync((cu_deviceptr_t)sym_ptr(g, dst, pe), (cu_deviceptr_t)src, n, s);
}

static int sym_get(gpu_t *g, void *dst, const void *src, size_t n, int pe, nv_stream_t s)
{
    return libs.cuMemcpyAsync((cu_deviceptr_t)dst, (cu_deviceptr_t)sym_ptr(g, src, pe), n, s);
}

/* Copies on a stream complete, visibly, before the stream's next work. */
static void sym_quiet(gpu_t *g, nv_stream_t s)
{
    (void)g, (void)s;
}

/* Blocking puts have completed; nbi ones are ordered by the backend's stream. */
static void sym_fence(gpu_t *g)
{
    (void)g;
}

/* Where the put_signal kernel cannot copy (src on another GPU): the copy
 * engine copies, then the kernel signals (nbytes 0) after it on s. */
static symmem_status_t sym_put_signal(gpu_t *g, const char *call, void *dst, const void *src,
                                      size_t nbytes, uint64_t *sig, uint64_t value,
                                      symmem_signal_op_t op, int pe, int nbi, nv_stream_t s)
{
    (void)nbi;
    if (nbytes > 0) {
        cu_result_t rc = sym_put(g, dst, src, nbytes, pe, s);
        if (rc != 0) return symmem__gpu_cuda_error(call, "the copy before the signal", rc);
    }
    return symmem__gpu_kernel_put_signal(g, call, NULL, NULL, 0, sym_ptr(g, sig, pe), value, op, s);
}

static symmem_status_t sym_signal_wait(gpu_t *g, uint64_t *sig, symmem_cmp_t cmp, uint64_t value,
                                       nv_stream_t s)
{
    symmem_engine_state_t *st = g->sym;
    if (st->wait_module == NULL) {
        static const char *const names[] = {"signal_wait"};
        SYMMEM_CHECK(symmem__gpu_build_module(g, "signal_wait", symmem__gpu_kernel_signal_wait_cu,
                                              &st->wait_module, names, &st->wait_kernel, 1));
    }
    uint64_t state = g->state_block, at = (uintptr_t)sig;
    int how = (int)cmp;
    void *params[] = {&state, &at, &how, &value};
    cu_result_t rc = symmem__gpu_launch(st->wait_kernel, 1, 32, s, params);
    return rc == 0 ? SYMMEM_OK
                   : symmem__gpu_cuda_error("signal_wait", "launching the wait kernel", rc);
}

/* Read on a stream of its own that waits for nothing else (a copy on the
 * legacy stream would wait for the program's kernels, a waiting one too). */
static symmem_status_t sym_signal_fetch(gpu_t *g, const uint64_t *sig, uint64_t *value_p)
{
    nv_stream_t peek = g->sym->peek;
    CU("signal_fetch",
       libs.cuMemcpyAsync((cu_deviceptr_t)value_p, (cu_deviceptr_t)sig, sizeof(*value_p), peek));
    CU("signal_fetch", libs.cuStreamSynchronize(peek));
    return SYMMEM_OK;
}

/* ---- collectives: symmem's kernels take every team of this engine (at
 * most SYMMEM_COLL_MAX_PES PEs, every heap mapped), so these are what they
 * turn down ---- */

static symmem_status_t sym_sync(gpu_t *g, const char *call, symmem_call_kind_t kind,
                                const symmem_team_view_t *team, nv_stream_t s)
{
    (void)g, (void)kind, (void)s;
    return ERROR(SYMMEM_ERR_BACKEND, "%s: no kernel of symmem's serves this team (%d members)",
                 call, team->n);
}

/* Nothing to reduce (every other reduce is symmem's kernels'). */
static symmem_status_t sym_reduce(gpu_t *g, int scatter, const symmem_team_view_t *team, void *dst,
                                  const void *src, size_t nelems, symmem_dtype_t dtype,
                                  symmem_reduce_op_t op, nv_stream_t s)
{
    (void)g, (void)team, (void)dst, (void)src, (void)dtype, (void)op, (void)s;
    if (nelems == 0) return SYMMEM_OK;
    return ERROR(SYMMEM_ERR_BACKEND, "%s: a buffer is not mapped on every member of the team",
                 scatter ? "reducescatter" : "reduce");
}

static symmem_status_t sym_move(gpu_t *g, const char *call, symmem_call_kind_t kind,
                                const symmem_team_view_t *team, void *dst, const void *src,
                                size_t nbytes, int root, nv_stream_t s)
{
    (void)g, (void)kind, (void)team, (void)dst, (void)src, (void)root, (void)s;
    if (nbytes == 0) return SYMMEM_OK;
    return ERROR(SYMMEM_ERR_BACKEND, "%s: a buffer is not mapped on every member of the team",
                 call);
}

const gpu_engine_t symmem__gpu_symmem_engine = {
    .name = "symmem",
    .nvshmem_device_state = 0,
    .start = symmem__sym_start,
    .stop = symmem__sym_stop,
    .final_barrier = symmem__sym_final_barrier,
    .version = symmem__sym_version,
    .alloc = symmem__vmm_heap_alloc,
    .release = symmem__vmm_heap_free,
    .ptr = sym_ptr,
    .exchange_start = sym_exchange_start,
    .exchange_finish = sym_exchange_finish,
    .put = sym_put,
    .get = sym_get,
    .put_nbi = sym_put,
    .get_nbi = sym_get,
    .quiet = sym_quiet,
    .fence = sym_fence,
    .put_signal = sym_put_signal,
    .signal_wait = sym_signal_wait,
    .signal_fetch = sym_signal_fetch,
    .sync = sym_sync,
    .reduce = sym_reduce,
    .move = sym_move,
    .predefined_teams = symmem__sym_predefined_teams,
    .split_strided = symmem__sym_split_strided,
    .split_2d = symmem__sym_split_2d,
    .team_init = symmem__sym_team_init,
    .team_destroy = symmem__sym_team_destroy,
    .team_meet = symmem__sym_team_meet,
    .register_external = symmem__sym_register_external,
    .unregister_external = symmem__sym_unregister_external,
};
