/* symmem's own collectives (kernels/reduce.cu, kernels/move.cu) on a
 * team whose members are all in this PE's NVLink domain, unless
 * SYMMEM_GPU_COLLECTIVES or SYMMEM_GPU_KERNELS asks for NVSHMEM's. NVRTC
 * compiles the kernels at their first use: the byte movers once, the
 * reduces for each dtype and op.
 *
 * Each team's flags live in the flag area (device_state.c makes it at init
 * and zeroes a team's part on every member before the team's first sync),
 * one part per team handle, so collectives on different teams may run at
 * once on different streams. Collectives on one team must be ordered on the
 * GPU, as NVSHMEM's must. The push reduces (SYMMEM_GPU_COLLECTIVES=
 * push_one_shot|push_two_shot) also use the team's part of the staging
 * buffer (device_state.c makes it, for the first SYMMEM_COLL_STAGED_TEAMS
 * handles); a team without one reduces by pulling.
 *
 * Every decision here is the same on every member: it depends on the call's
 * arguments, the team, the job's size and the environment alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "nvrtc.h"

#define MAX_PES SYMMEM_COLL_MAX_PES
#define THREADS SYMMEM_COLL_THREADS
/* The reduce's algorithms, in the order of its kernels in a module. */
enum { ONE_SHOT, TWO_SHOT, ONE_PHASE, PUSH_ONE_SHOT, PUSH_TWO_SHOT };

/* Which algorithm a reduce of this many bytes takes on a team of this
 * many PEs: the first row whose max_pes and max_bytes both hold. Measured
 * with
 *   python -m symmem.bench -n N --ops reduce \
 *       --libs symmem/one_shot,symmem/two_shot,symmem
 * (docs/benchmarks.md): the one-phase kernel (one crossing of NVLink, no
 * meetings) wins up to its 4 KiB limit at 2, 3 and 4 PEs. Above it, with
 * two PEs one-shot reads as many bytes as two-shot and meets once less,
 * and won at every size (2 x H200, 2026-11-23). One-shot reads n - 1
 * peers' whole buffers, two-shot only slices, so two-shot overtakes as the
 * size grows, sooner the more PEs (4 x H200, 2026-11-28): at 3 PEs one-shot
 * was faster up to 1 MiB (14.9 us against 16.8), two-shot from 4 MiB (32.1
 * against 34.7); at 4 PEs one-shot up to 256 KiB (10.8 against 14.4),
 * two-shot from 1 MiB (18.0 against 18.9). Each row splits the unmeasured
 * factor of four between. The rows for 5-8 PEs are not measured (no 8-GPU
 * machine lent): two-shot from 64 KiB, by the trend. */
static const struct {
    int max_pes;
    size_t max_bytes;
    int algorithm;
} reduce_table[] = {
    {2, SYMMEM_COLL_LL_MAX_BYTES, ONE_PHASE},
    {2, SIZE_MAX, ONE_SHOT},
    {3, SYMMEM_COLL_LL_MAX_BYTES, ONE_PHASE},
    {3, 2u << 20, ONE_SHOT},
    {3, SIZE_MAX, TWO_SHOT},
    {4, SYMMEM_COLL_LL_MAX_BYTES, ONE_PHASE},
    {4, 512u << 10, ONE_SHOT},
    {4, SIZE_MAX, TWO_SHOT},
    {MAX_PES, SYMMEM_COLL_LL_MAX_BYTES, ONE_PHASE},
    {MAX_PES, 64u << 10, ONE_SHOT},
    {MAX_PES, SIZE_MAX, TWO_SHOT},
};

/* The algorithm SYMMEM_GPU_COLLECTIVES and the table choose; the kernels'
 * own limits (reducescatter's part, packs, in place, staging) are applied
 * after. */
static int reduce_algorithm(gpu_t *g, int n, size_t bytes)
{
    if (g->collectives_mode == SYMMEM_GPU_COLLECTIVES_ONE_SHOT) return ONE_SHOT;
    if (g->collectives_mode == SYMMEM_GPU_COLLECTIVES_TWO_SHOT) return TWO_SHOT;
    if (g->collectives_mode == SYMMEM_GPU_COLLECTIVES_PUSH_ONE_SHOT) return PUSH_ONE_SHOT;
    if (g->collectives_mode == SYMMEM_GPU_COLLECTIVES_PUSH_TWO_SHOT) return PUSH_TWO_SHOT;
    for (size_t i = 0; i < sizeof(reduce_table) / sizeof(reduce_table[0]); i++)
        if (n <= reduce_table[i].max_pes && bytes <= reduce_table[i].max_bytes)
            return reduce_table[i].algorithm;
    return TWO_SHOT;
}

/* The kernels' argument block (symmem/device_layout.h). */
typedef symmem_coll_args_t args_t;

/* ---- teams ---- */

void symmem__gpu_own_team_set(gpu_t *g, int handle, const int *members, int n)
{
    own_team_t *t = &g->own_teams[handle];
    memset(t, 0, sizeof(*t));
    /* the test hook holds on some PEs only: all members must decide alike */
    if (g->own_flags == NULL || n > MAX_PES || g->unmapped_pe >= 0 ||
        symmem__gpu_core->env_string("SYMMEM_GPU_UNMAPPED_PE")[0] != '\0')
        return;
    t->part = (uintptr_t)g->own_flags + (size_t)handle * SYMMEM_COLL_TEAM_FLAG_BYTES;
    for (int i = 0; i < n; i++) {
        void *there = g->engine->ptr(g, (const void *)t->part, members[i]);
        if (there == NULL) return; /* on another node: every member sees one */
        t->flags[i] = (uint64_t)(uintptr_t)there;
    }
    t->usable = 1;
    /* staging: the same handles and sizes on every member, so all or none */
    if (g->stage_area == NULL || handle >= SYMMEM_COLL_STAGED_TEAMS) return;
    const char *stage = (const char *)g->stage_area + (size_t)handle * g->stage_bytes;
    for (int i = 0; i < n; i++) {
        void *there = g->engine->ptr(g, stage, members[i]);
        if (there == NULL) return;
        t->stage[i] = (uint64_t)(uintptr_t)there;
    }
    t->staged = 1;
}

/* Where member i of team maps symmetric addr here; 0 where it does not. */
static uint64_t on_member(gpu_t *g, const symmem_team_view_t *team, const void *addr, int i)
{
    const own_team_t *t = &g->own_teams[team->channel];
    uintptr_t a = (uintptr_t)addr;
    if (a < g->heap_lo || a >= g->heap_hi) /* registered external memory */
        return (uint64_t)(uintptr_t)g->engine->ptr(g, addr, team->members[i]);
    return t->flags[i] + (uint64_t)(a - t->part); /* both engines map each heap whole */
}

int symmem__gpu_own_takes(gpu_t *g, const symmem_team_view_t *team, const void *a, const void *b)
{
    if (g->collectives_mode == SYMMEM_GPU_COLLECTIVES_NVSHMEM || g->nvshmem_kernels ||
        team->channel < 0 || team->channel >= SYMMEM_TEAM_MAX ||
        !g->own_teams[team->channel].usable)
        return 0;
    for (int i = 0; i < team->n; i++)
        if ((a != NULL && on_member(g, team, a, i) == 0) ||
            (b != NULL && on_member(g, team, b, i) == 0))
            return 0;
    return 1;
}

/* ---- kernels ---- */

symmem_status_t symmem__gpu_build_module(gpu_t *g, const char *call, const char *source,
                                         void **module_p, const char *const *names, void **kernels,
                                         int count)
{
    char arch[32], why[2048];
    symmem__gpu_arch_option(g, arch, sizeof(arch));
    const char *options[] = {arch, "-std=c++17"};
    char *ptx = NULL;
    if (symmem__gpu_nvrtc_compile(symmem__gpu_core, source, "symmem_collectives.cu", options, 2,
                                  &ptx, why, sizeof(why)) != 0)
        return ERROR(SYMMEM_ERR_UNSUPPORTED,
                     "%s: symmem's collective kernels need NVRTC "
                     "(or set SYMMEM_GPU_COLLECTIVES=nvshmem): %s",
                     call, why);
    cu_result_t rc = libs.cuModuleLoadData(module_p, ptx);
    free(ptx);
    for (int k = 0; k < count && rc == 0; k++)
        rc = libs.cuModuleGetFunction(&kernels[k], *module_p, names[k]);
    return rc == 0 ? SYMMEM_OK : symmem__gpu_cuda_error(call, "loading symmem's kernels", rc);
}

static symmem_status_t build_reduce(gpu_t *g, const char *call, symmem_dtype_t dtype,
                                    symmem_reduce_op_t op)
{
    size_t size = strlen(symmem__gpu_kernel_reduce_cu) + 128; /* and the two defines */
    char *source = malloc(size);
    if (source == NULL) return ERROR(SYMMEM_ERR_NO_MEMORY, "%s: out of host memory", call);
    symmem_status_t status;
    if (symmem__gpu_reduce_cu(dtype, op, source, size) != 0) {
        status = ERROR(SYMMEM_ERR_BACKEND, "%s: no kernel source for dtype %d, op %d", call,
                       (int)dtype, (int)op);
    } else {
        static const char *const names[] = {"one_shot", "two_shot", "ll_reduce", "push_one_shot",
                                            "push_two_shot"};
        status = symmem__gpu_build_module(g, call, source, &g->reduce_kernels[dtype][op].module,
                                          names, g->reduce_kernels[dtype][op].kernels, 5);
    }
    free(source);
    return status;
}

static symmem_status_t build_move(gpu_t *g, const char *call)
{
    static const char *const names[] = {"move16", "move8", "move4", "move2", "move1", "sync_only",
                                        "push16", "push8", "push4", "push2", "push1"};
    return symmem__gpu_build_module(g, call, symmem__gpu_kernel_move_cu, &g->move_module, names,
                                    g->move_kernels, 11);
}

/* Grid of a kernel whose threads each take one of units: the same on every
 * member, as the kernels need. */
static unsigned grid(size_t units)
{
    size_t blocks = (units + THREADS - 1) / THREADS;
    if (blocks < 1) blocks = 1;
    return blocks > SYMMEM_COLL_MAX_BLOCKS ? SYMMEM_COLL_MAX_BLOCKS : (unsigned)blocks;
}

/* The arguments every kernel takes: the team, its flags, where src and dst
 * are on each member. */
static args_t common(gpu_t *g, const char *call, const symmem_team_view_t *team, void *dst,
                     const void *src)
{
    const own_team_t *t = &g->own_teams[team->channel];
    args_t a = {
        .mine = t->part, .timeout_ns = g->device_state.timeout_ns, .n = team->n, .me = team->me};
    a.abort_word = g->device_abort_word;
    a.error = g->device_error;
    strncpy(a.call, call, sizeof(a.call) - 1);
    for (int i = 0; i < team->n; i++) {
        a.flags.p[i] = t->flags[i];
        if (src != NULL) a.src.p[i] = on_member(g, team, src, i);
        if (dst != NULL) a.dst.p[i] = on_member(g, team, dst, i);
    }
    return a;
}

static symmem_status_t launch(const char *call, void *kernel, unsigned blocks, args_t *a,
                              nv_stream_t s)
{
    void *params[] = {a};
    cu_result_t rc = symmem__gpu_launch(kernel, blocks, THREADS, s, params);
    return rc == 0 ? SYMMEM_OK : symmem__gpu_cuda_error(call, "launching symmem's kernel", rc);
}

/* ---- the collectives ---- */

static int overlap(const void *dst, const void *src, size_t bytes)
{
    uintptr_t s_lo = (uintptr_t)src, d_lo = (uintptr_t)dst;
    return s_lo < d_lo + bytes && d_lo < s_lo + bytes;
}

/* The one-phase reduce sends each member the same data: not reducescatter. */
static int one_phase(gpu_t *g, int n, int scatter, size_t bytes)
{
    return !scatter && reduce_algorithm(g, n, bytes) == ONE_PHASE;
}

int symmem__gpu_own_reduce_takes(gpu_t *g, int scatter, const symmem_team_view_t *team,
                                 const void *dst, const void *src, size_t nelems,
                                 symmem_dtype_t dtype)
{
    if (!symmem__gpu_own_takes(g, team, dst, src)) return 0;
    size_t bytes = nelems * symmem__dtype_bytes(dtype);
    /* in place needs two-shot, whose slices are 16-byte packs */
    return !overlap(dst, src, bytes) || ((uintptr_t)src | (uintptr_t)dst) % 16 == 0 ||
           one_phase(g, team->n, scatter, bytes);
}

/* The push reduces (kernels/push_one_shot.cuh, push_two_shot.cuh; the
 * reducescatter is push_two_shot's first half): whether they take the call,
 * and the grid and slot they run it with. They need the team's staging,
 * 16-byte packs in src and dst (reducescatter: parts of whole packs) and
 * dst either src (reducescatter: this PE's part of it) or apart from it.
 * A grid of one block per THREADS packs a block reduces, at most
 * SYMMEM_GPU_PUSH_BLOCKS; a block's slot is its share of the whole
 * buffer where the staging half holds that, else what the half holds (the
 * kernels then take rounds). */
static int push_takes(gpu_t *g, const own_team_t *t, int scatter, const args_t *a, const void *dst,
                      const void *src, size_t bytes)
{
    size_t whole = scatter ? bytes * (size_t)a->n : bytes;
    const char *own_part = (const char *)src + (scatter ? bytes * (size_t)a->me : 0);
    return t->staged && g->stage_bytes / 2 >= (size_t)a->n * 16 && a->packed &&
           (!scatter || bytes % 16 == 0) &&
           ((const void *)own_part == dst || !overlap(dst, src, whole));
}

static symmem_status_t push_reduce(gpu_t *g, const char *call, void *kernel, int two_shot,
                                   const own_team_t *t, args_t *a, size_t bytes, nv_stream_t s)
{
    size_t n = (size_t)a->n, shares = a->scatter || !two_shot ? 1 : n; /* slots a block fills */
    size_t packs = (bytes + 15) / 16, reduced = (packs + shares - 1) / shares;
    size_t blocks = (reduced + THREADS - 1) / THREADS, half = g->stage_bytes / 2;
    if (blocks < 1) blocks = 1;
    if (blocks > g->push_blocks) blocks = g->push_blocks;
    while (blocks > 1 && half / (blocks * n) < 16) blocks /= 2;
    size_t fits = half / (blocks * n) / 16 * 16;
    size_t share = (bytes + blocks * shares - 1) / (blocks * shares);
    share = share < 16 ? 16 : (share + 15) / 16 * 16;
    a->stage_half = half;
    a->slot = share < fits ? share : fits;
    for (size_t i = 0; i < n; i++) a->stage.p[i] = t->stage[i];
    return launch(call, kernel, (unsigned)blocks, a, s);
}

/* A reduce whose dst overlaps src where they are not 16-byte aligned (no
 * kernel of ours reduces that in place): one-shot into a buffer of this
 * PE's own, then copied over dst. One-shot's last meeting means that no
 * member still reads this PE's src once the kernel is done. The buffer is
 * stream-ordered, so that a graph captures it too. */
symmem_status_t symmem__gpu_own_reduce_staged(gpu_t *g, int scatter, const symmem_team_view_t *team,
                                              void *dst, const void *src, size_t nelems,
                                              symmem_dtype_t dtype, symmem_reduce_op_t op,
                                              nv_stream_t s)
{
    const char *call = scatter ? "reducescatter" : "reduce";
    if (g->reduce_kernels[dtype][op].module == NULL) SYMMEM_CHECK(build_reduce(g, call, dtype, op));
    size_t bytes = nelems * symmem__dtype_bytes(dtype);
    cu_deviceptr_t own = 0;
    CU(call, libs.cuMemAllocAsync(&own, bytes, s));
    args_t a = common(g, call, team, NULL, src);
    a.dst.p[team->me] = own; /* the only dst one-shot writes */
    a.count = nelems;
    if (scatter) /* this PE's part of every member's src */
        for (int i = 0; i < team->n; i++) a.src.p[i] += (uint64_t)(bytes * (size_t)team->me);
    a.packed = (a.src.p[team->me] | own) % 16 == 0;
    symmem_status_t status = launch(call, g->reduce_kernels[dtype][op].kernels[ONE_SHOT],
                                    grid((bytes + 15) / 16), &a, s);
    cu_result_t rc =
        status == SYMMEM_OK ? libs.cuMemcpyAsync((cu_deviceptr_t)dst, own, bytes, s) : 0;
    libs.cuMemFreeAsync(own, s);
    if (rc != 0) status = symmem__gpu_cuda_error(call, "copying the reduced data over dst", rc);
    return status;
}

symmem_status_t symmem__gpu_own_reduce(gpu_t *g, int scatter, const symmem_team_view_t *team,
                                       void *dst, const void *src, size_t nelems,
                                       symmem_dtype_t dtype, symmem_reduce_op_t op, nv_stream_t s)
{
    const char *call = scatter ? "reducescatter" : "reduce";
    if (g->reduce_kernels[dtype][op].module == NULL) SYMMEM_CHECK(build_reduce(g, call, dtype, op));
    int n = team->n;
    args_t a = common(g, call, team, dst, src);
    size_t bytes = nelems * symmem__dtype_bytes(dtype);
    a.count = nelems;
    a.packed = (a.src.p[team->me] | a.dst.p[team->me]) % 16 == 0;
    int algorithm = reduce_algorithm(g, n, bytes);
    const own_team_t *t = &g->own_teams[team->channel];
    if ((algorithm == PUSH_ONE_SHOT || algorithm == PUSH_TWO_SHOT) &&
        push_takes(g, t, scatter, &a, dst, src, bytes)) {
        /* reducescatter: push_two_shot's first half, src whole */
        int two_shot = scatter || algorithm == PUSH_TWO_SHOT;
        a.scatter = scatter;
        return push_reduce(
            g, call, g->reduce_kernels[dtype][op].kernels[two_shot ? PUSH_TWO_SHOT : PUSH_ONE_SHOT],
            two_shot, t, &a, bytes, s);
    }
    if (scatter) /* this PE's part of every member's src */
        for (int i = 0; i < n; i++) a.src.p[i] += (uint64_t)(bytes * (size_t)team->me);
    a.packed = (a.src.p[team->me] | a.dst.p[team->me]) % 16 == 0;
    if (one_phase(g, n, scatter, bytes))
        return launch(call, g->reduce_kernels[dtype][op].kernels[ONE_PHASE], 1, &a, s);
    /* reducescatter reduces only this PE's part: one-shot's work (and so
     * does a push reduce the staging does not take) */
    int one_shot = scatter || algorithm != TWO_SHOT;
    if (!a.packed) one_shot = 1; /* two-shot's slices are packs */
    if (overlap(dst, src, bytes) && !scatter)
        one_shot = 0; /* one-shot writes dst while the others read src */
    size_t packs = bytes / 16;
    unsigned blocks = grid(one_shot ? packs : (packs + (size_t)n - 1) / (size_t)n);
    return launch(call, g->reduce_kernels[dtype][op].kernels[one_shot ? ONE_SHOT : TWO_SHOT],
                  blocks, &a, s);
}

/* kind: SYMMEM_CALL_ALLTOALL, _FCOLLECT or _BROADCAST. */
symmem_status_t symmem__gpu_own_move(gpu_t *g, const char *call, symmem_call_kind_t kind,
                                     const symmem_team_view_t *team, void *dst, const void *src,
                                     size_t nbytes, int root, nv_stream_t s)
{
    if (g->move_module == NULL) SYMMEM_CHECK(build_move(g, call));
    args_t a = common(g, call, team, dst, src);
    a.count = nbytes;
    int broadcast = kind == SYMMEM_CALL_BROADCAST;
    a.first = broadcast ? root : team->me;
    a.pieces = broadcast ? 1 : team->n;
    a.src_step = kind == SYMMEM_CALL_ALLTOALL ? nbytes : 0;
    a.dst_step = broadcast ? 0 : nbytes;
    /* the widest unit that the piece and every address allow; the same on
     * every member for symmetric buffers */
    uint64_t bits = nbytes | a.src.p[team->me] | a.dst.p[team->me];
    int width = bits % 16 == 0 ? 0 : bits % 8 == 0 ? 1 : bits % 4 == 0 ? 2 : bits % 2 == 0 ? 3 : 4;
    unsigned blocks = grid(nbytes >> (4 - width));
    /* the push collectives push fcollect and alltoall too (kernels/move.cu) */
    int push = !broadcast && (g->collectives_mode == SYMMEM_GPU_COLLECTIVES_PUSH_ONE_SHOT ||
                              g->collectives_mode == SYMMEM_GPU_COLLECTIVES_PUSH_TWO_SHOT);
    return launch(call, g->move_kernels[push ? 6 + width : width], blocks, &a, s);
}

/* barrier and sync: one block meets. */
symmem_status_t symmem__gpu_own_sync(gpu_t *g, const char *call, const symmem_team_view_t *team,
                                     nv_stream_t s)
{
    if (g->move_module == NULL) SYMMEM_CHECK(build_move(g, call));
    args_t a = common(g, call, team, NULL, NULL);
    return launch(call, g->move_kernels[5], 1, &a, s);
}

void symmem__gpu_own_unload(gpu_t *g)
{
    for (int d = 0; d < SYMMEM_DTYPE_COUNT; d++)
        for (int o = 0; o < SYMMEM_OP_COUNT; o++)
            if (g->reduce_kernels[d][o].module != NULL)
                libs.cuModuleUnload(g->reduce_kernels[d][o].module);
    memset(g->reduce_kernels, 0, sizeof(g->reduce_kernels));
    if (g->move_module != NULL) libs.cuModuleUnload(g->move_module);
    g->move_module = NULL;
    memset(g->own_teams, 0, sizeof(g->own_teams));
    g->own_flags = NULL; /* part of the sync area, which finalize frees */
}
