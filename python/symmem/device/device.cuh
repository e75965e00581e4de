/*
 * symmem's device library: put, get, signals, waits, atomics and barriers
 * from inside CUDA kernels, on the gpu backend, when every PE's heap is
 * mapped into this GPU (one NVLink domain; a call that needs a PE on another
 * node fails, naming it). CUDA C with no #include, so
 * NVRTC compiles it as is: symmem.device.numba links it into Numba kernels,
 * and CUDA C or CuPy RawKernel code includes it as <symmem/device.cuh>.
 *
 * Every function takes the address of this process's device state block
 * first (symmem.device.state_address(); it never moves while the process
 * lives) and addresses as unsigned long long, so any language can call them.
 * Names: symmem_dev_<call>[_warp|_block]; the scoped forms are called by
 * every thread of the warp or block, with the same arguments.
 *
 * Memory model (PTX's; "sys" = every GPU and the host):
 * - put and p store through the peer's mapping with plain stores. They are
 *   complete (visible on the target) after quiet, a barrier, or the signal
 *   of a put_signal; a blocking put only means the source may be reused.
 * - quiet = fence.sc.sys after the scope's barrier: every earlier store of
 *   the scope is visible system-wide before any later one of this thread.
 * - fence = fence.acq_rel.sys: earlier stores are ordered before later ones
 *   (to every PE, which is stronger than NVSHMEM asks: per PE).
 * - put_signal: copy, the scope's barrier, then the leader's fence.acq_rel.sys
 *   and one relaxed system-scope store or add on the signal. The bar.sync
 *   puts every thread's copy before the leader's fence in causality order,
 *   so fence + signal form a release pattern over all of them.
 * - signal_wait / wait_until spin on ld.acquire.sys: each acquire pairs
 *   with the release fence before the signal (or flag) store that it reads
 *   (put_signal's and signal_op's fence.acq_rel.sys; a p of a flag after
 *   quiet or fence), so a PE that sees the signal sees the data.
 * - atomics are relaxed, at system scope (atom.sys), like NVSHMEM's.
 * - sync (a team, or all PEs = TEAM_WORLD): the scope's barrier, then the
 *   leader's fence.acq_rel.sys and a relaxed store of its epoch into every
 *   member's arrival slot; it waits with ld.acquire.sys for every slot to
 *   reach the epoch (each acquire pairs with that member's fence), then the
 *   scope's barrier again. barrier = quiet + sync.
 * - collectives move data between two syncs: the first says every member
 *   has entered (its dst may be written, its src is complete), the second
 *   that every copy is done. fcollect, alltoall and broadcast push into the
 *   members' dst (stores, which NVLink posts); reduce and reducescatter
 *   pull every member's src and combine in member order, so every PE gets
 *   the same bits. An in-place reduce (dst == src) syncs once more: each
 *   member reduces its share of the elements into its own array (only it
 *   reads that share), syncs, then copies the others' shares from theirs.
 * Waits look at the abort word every SYMMEM_DEV_SPINS spins and at
 * %globaltimer for SYMMEM_TIMEOUT: a dead peer or a timeout writes the
 * error record (the host prints it, naming the call and the PE) and traps,
 * so the kernel ends instead of hanging the GPU.
 */
#ifndef SYMMEM_DEVICE_CUH
#define SYMMEM_DEVICE_CUH

/* extern "C" __device__ for linking (symmem.device.numba); a header user
 * may define it as static __device__ __forceinline__ before the include. */
#ifndef SYMMEM_DEVICE_API
#define SYMMEM_DEVICE_API extern "C" __device__
#endif

typedef unsigned long long symmem_u64;

/* One team (src/device/state.h's symmem_device_team): n 0 if the handle
 * is no team of this PE. */
typedef struct {
    int n, me;           /* members; this PE's index among them */
    const int *members;  /* [n]: world PE of team PE i */
} symmem_device_team;

#define SYMMEM_DEV_MAX_TEAMS 64 /* SYMMEM_TEAM_MAX */
#define SYMMEM_DEV_MAGIC 0x3156454d4d4d5953ULL /* SYMMEM_DEVICE_STATE_MAGIC */

/* The device state block: src/device/state.h (layout version 3). */
typedef struct {
    symmem_u64 magic;
    unsigned int version, flags;
    int my_pe, n_pes;
    symmem_u64 heap_base, heap_size;
    const symmem_u64 *peer_base;   /* [n_pes]: PE pe's heap as mapped here */
    unsigned int abort_flag;       /* the host's copy; kernels read abort_word */
    int abort_pe;
    const volatile unsigned int *abort_word; /* {flag, pe}: set when a peer dies */
    symmem_u64 sync_base;          /* this PE's sync area (symmetric) */
    symmem_u64 timeout_ns;         /* SYMMEM_TIMEOUT; 0: none */
    symmem_u64 error;              /* the error record (host-mapped) */
    const symmem_device_team *teams; /* [SYMMEM_DEV_MAX_TEAMS], by handle */
} symmem_device_state;

/* The state a call's fast path reads, which the host copies into the
 * constant bank of each loaded module that links this library
 * (src/device/state.h's symmem_device_consts_t; the gpu backend writes it
 * at init, at each malloc and at finalize). A fence's or an acquire's
 * CCTL.IVALL empties L1: reading the state block through L1 cost a round
 * trip to L2 after each of them (0.1-0.3 us a call, measured), and the
 * constant cache keeps its lines. magic is 0 until the host writes it
 * (a module loaded where no one does) and after finalize: calls then take
 * the slow path, through the state block. */
#define SYMMEM_DEV_CONST_PEERS 1024
typedef struct {
    symmem_u64 magic;
    int my_pe, n_pes;
    symmem_u64 heap_base, heap_end; /* the symmetric heap so far */
    symmem_u64 sync_base;           /* this PE's sync area */
    int peers, unused;              /* delta's entries: min(n_pes, CONST_PEERS) */
    /* PE pe's copy of symmetric x is at x + delta[pe]; odd: not mapped */
    symmem_u64 delta[SYMMEM_DEV_CONST_PEERS];
} symmem_device_consts_t;

extern "C" {
__constant__ symmem_device_consts_t symmem_device_consts;
}

/* What a failed device call leaves for the host before it traps. */
typedef struct {
    unsigned int set;  /* 1 once written (first failure wins) */
    int what;          /* SYMMEM_DEV_ERR_* */
    int pe;            /* the PE named: the bad or dead one */
    int arg;           /* which argument (0-based), -1 none */
    symmem_u64 value;  /* the bad value */
    char call[32];     /* the device call */
} symmem_device_error;

#define SYMMEM_DEV_ERR_BAD_PE 1
#define SYMMEM_DEV_ERR_NOT_SYMMETRIC 2
#define SYMMEM_DEV_ERR_PEER_DEAD 3
#define SYMMEM_DEV_ERR_TIMEOUT 4
#define SYMMEM_DEV_ERR_NOT_INITIALIZED 5
#define SYMMEM_DEV_ERR_NOT_CONTIGUOUS 6
#define SYMMEM_DEV_ERR_BAD_TEAM 7
#define SYMMEM_DEV_ERR_TOO_SMALL 8
#define SYMMEM_DEV_ERR_BAD_ROOT 9
#define SYMMEM_DEV_ERR_BAD_ARG 10
#define SYMMEM_DEV_ERR_UNREACHABLE 11
#define SYMMEM_DEV_ERR_OVERLAP 12

#define SYMMEM_DEV_SPINS 1024
#define SYMMEM_DEV_SIGNAL_SET 9
#define SYMMEM_DEV_SIGNAL_ADD 10
/* ComparisonType */
#define SYMMEM_DEV_CMP_EQ 0
#define SYMMEM_DEV_CMP_NE 1
#define SYMMEM_DEV_CMP_GT 2
#define SYMMEM_DEV_CMP_LE 3
#define SYMMEM_DEV_CMP_LT 4
#define SYMMEM_DEV_CMP_GE 5

#define SYMMEM__ST(st) ((const symmem_device_state *)(st))

/* ---- failing loudly ---- */

static __device__ __noinline__ void symmem__dev_fail(symmem_u64 st, const char *call, int what,
                                                     int pe, int arg, symmem_u64 value)
{
    symmem_device_error *e = (symmem_device_error *)SYMMEM__ST(st)->error;
    if (e != 0 && atomicCAS(&e->set, 0u, 2u) == 0u) {
        e->what = what;
        e->pe = pe;
        e->arg = arg;
        e->value = value;
        int i = 0;
        for (; i < 31 && call[i] != '\0'; i++) e->call[i] = call[i];
        e->call[i] = '\0';
        __threadfence_system(); /* the fields before set = 1, which the host polls */
        *(volatile unsigned int *)&e->set = 1u;
        __threadfence_system();
    }
    __trap();
}

/* ---- memory-model primitives ---- */

static __device__ __forceinline__ void symmem__fence_sc_sys(void)
{
    asm volatile("fence.sc.sys;" ::: "memory");
}

static __device__ __forceinline__ void symmem__fence_acq_rel_sys(void)
{
    asm volatile("fence.acq_rel.sys;" ::: "memory");
}

/* An acquire load at system scope of a 1, 2, 4 or 8-byte word. */
#define SYMMEM__LD_ACQUIRE(bits, type, reg)                                                    \
    static __device__ __forceinline__ type symmem__ld_acquire_u##bits(symmem_u64 addr)         \
    {                                                                                          \
        type v;                                                                                \
        asm volatile("ld.acquire.sys.global.u" #bits " %0, [%1];" : "=" reg(v) : "l"(addr)    \
                     : "memory");                                                              \
        return v;                                                                              \
    }
SYMMEM__LD_ACQUIRE(64, symmem_u64, "l")
SYMMEM__LD_ACQUIRE(32, unsigned int, "r")
SYMMEM__LD_ACQUIRE(16, unsigned short, "h")
SYMMEM__LD_ACQUIRE(8, unsigned short, "h") /* PTX has no 8-bit registers */

static __device__ __forceinline__ void symmem__st_relaxed_u64(symmem_u64 addr, symmem_u64 v)
{
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(addr), "l"(v) : "memory");
}

static __device__ __forceinline__ symmem_u64 symmem__globaltimer(void)
{
    symmem_u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* ---- the scopes: which lane of how many, and their barrier ---- */

#define SYMMEM__THREAD 0
#define SYMMEM__WARP 1
#define SYMMEM__BLOCK 2

static __device__ __forceinline__ unsigned int symmem__lane(int scope)
{
    if (scope == SYMMEM__WARP) return threadIdx.x & 31u; /* warps are made along x first */
    if (scope == SYMMEM__BLOCK)
        return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    return 0;
}

static __device__ __forceinline__ unsigned int symmem__lanes(int scope)
{
    if (scope == SYMMEM__WARP) return 32u;
    if (scope == SYMMEM__BLOCK) return blockDim.x * blockDim.y * blockDim.z;
    return 1u;
}

static __device__ __forceinline__ void symmem__scope_sync(int scope)
{
    if (scope == SYMMEM__WARP) __syncwarp();
    if (scope == SYMMEM__BLOCK) __syncthreads();
}

/* ---- reading the state block ---- */

/* A field of the state block, or of its peer and team tables, through the
 * read-only cache (ld.global.nc): they change only between kernels (the
 * host rewrites them). __ldg, not inline asm: the compiler knows it reads
 * memory, so it never hoists one above the check that makes its address
 * valid (it did hoist a pure asm load of a team entry above the branch
 * that skips teams: an illegal address). */
template <typename T> static __device__ __forceinline__ T symmem__ro(const T *p)
{
    union {
        T value;
        symmem_u64 u64;
        unsigned int u32;
    } v;
    if (sizeof(T) == 8)
        v.u64 = __ldg((const symmem_u64 *)p);
    else
        v.u32 = __ldg((const unsigned int *)p);
    return v.value;
}
#define SYMMEM__RO(st, field) symmem__ro(&SYMMEM__ST(st)->field)

/* ---- where a PE's copy is ---- */

static __device__ __forceinline__ void symmem__check_pe(symmem_u64 st, const char *call, int pe)
{
    if (SYMMEM__RO(st, magic) != SYMMEM_DEV_MAGIC)
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_NOT_INITIALIZED, SYMMEM__RO(st, my_pe), -1, 0);
    if (pe < 0 || pe >= SYMMEM__RO(st, n_pes))
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_BAD_PE, pe, -1, (symmem_u64)(long long)pe);
}

/* Where PE pe's heap is mapped here, unchecked (0: not mapped). */
static __device__ __forceinline__ symmem_u64 symmem__mapped(symmem_u64 st, int pe)
{
    return symmem__ro(&SYMMEM__RO(st, peer_base)[pe]);
}

/* Where PE pe's heap is mapped here; 0 (a PE on another node) fails. */
static __device__ __forceinline__ symmem_u64 symmem__peer_base(symmem_u64 st, const char *call,
                                                               int pe)
{
    symmem_u64 base = symmem__mapped(st, pe);
    if (base == 0) symmem__dev_fail(st, call, SYMMEM_DEV_ERR_UNREACHABLE, pe, -1, 0);
    return base;
}

/* symmem__remote's checks one by one, through the state block: each failure
 * named, and PEs past the constant peer table. */
static __device__ __noinline__ symmem_u64 symmem__remote_slow(symmem_u64 st, const char *call,
                                                              int arg, symmem_u64 addr,
                                                              symmem_u64 n, int pe)
{
    symmem__check_pe(st, call, pe);
    symmem_u64 base = SYMMEM__RO(st, heap_base), size = SYMMEM__RO(st, heap_size);
    symmem_u64 offset = addr - base;
    if (addr < base || offset > size || n > size - offset)
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_NOT_SYMMETRIC, pe, arg, addr);
    return symmem__peer_base(st, call, pe) + offset;
}

/* Where PE pe's copy of the symmetric [addr, addr + n) is mapped here, in
 * *remote, and whether the constant state says so; no branch, so a caller
 * can check several addresses and branch once. */
static __device__ __forceinline__ int symmem__remote_fast(symmem_u64 addr, symmem_u64 n, int pe,
                                                          symmem_u64 *remote)
{
    const symmem_device_consts_t *c = &symmem_device_consts;
    unsigned int slot = (unsigned int)pe < SYMMEM_DEV_CONST_PEERS ? (unsigned int)pe : 0u;
    symmem_u64 delta = c->delta[slot], end = c->heap_end;
    *remote = addr + delta;
    return (c->magic == SYMMEM_DEV_MAGIC) & ((unsigned int)pe < (unsigned int)c->peers) &
           (addr >= c->heap_base) & (addr <= end) & (n <= end - addr) & ((delta & 1) == 0);
}

/* Where PE pe's copy of the symmetric [addr, addr + n) is mapped here. */
static __device__ __forceinline__ symmem_u64 symmem__remote(symmem_u64 st, const char *call,
                                                            int arg, symmem_u64 addr,
                                                            symmem_u64 n, int pe)
{
    symmem_u64 remote;
    if (!symmem__remote_fast(addr, n, pe, &remote))
        return symmem__remote_slow(st, call, arg, addr, n, pe);
    return remote;
}

/* ---- waiting ---- */

/* Called every SYMMEM_DEV_SPINS spins of a wait that started at t0. */
static __device__ __noinline__ void symmem__still_waiting(symmem_u64 st, const char *call,
                                                          symmem_u64 t0)
{
    const symmem_device_state *s = SYMMEM__ST(st);
    if (s->abort_word != 0 && s->abort_word[0] != 0u)
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_PEER_DEAD, (int)s->abort_word[1], -1, 0);
    if (s->timeout_ns != 0 && symmem__globaltimer() - t0 > s->timeout_ns)
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_TIMEOUT, s->my_pe, -1, s->timeout_ns);
}

template <typename T>
static __device__ __forceinline__ int symmem__compare(T v, int cmp, T x)
{
    switch (cmp) {
    case SYMMEM_DEV_CMP_EQ: return v == x;
    case SYMMEM_DEV_CMP_NE: return v != x;
    case SYMMEM_DEV_CMP_GT: return v > x;
    case SYMMEM_DEV_CMP_LE: return v <= x;
    case SYMMEM_DEV_CMP_LT: return v < x;
    default: return v >= x;
    }
}

/* The signal's value once it compares true; ld.acquire.sys pairs with the
 * writer's fence.acq_rel.sys before its signal store (put_signal, signal_op). */
SYMMEM_DEVICE_API symmem_u64 symmem_dev_signal_wait(symmem_u64 st, symmem_u64 sig, int cmp,
                                                    symmem_u64 value)
{
    symmem_u64 t0 = symmem__globaltimer();
    for (unsigned int spin = 1;; spin++) {
        symmem_u64 v = symmem__ld_acquire_u64(sig);
        if (symmem__compare<symmem_u64>(v, cmp, value)) return v;
        if (spin % SYMMEM_DEV_SPINS == 0) symmem__still_waiting(st, "signal_wait", t0);
    }
}

/* dtype: symmem_dtype_t's integer codes 1-8 (int8 ... uint64). */
SYMMEM_DEVICE_API int symmem_dev_wait_until(symmem_u64 st, symmem_u64 ivar, int dtype, int cmp,
                                            long long value)
{
    symmem_u64 t0 = symmem__globaltimer();
    for (unsigned int spin = 1;; spin++) {
        long long v;
        switch (dtype) { /* each acquire pairs with the flag's writer's fence */
        case 1: v = (signed char)symmem__ld_acquire_u8(ivar); break;
        case 2: v = (short)symmem__ld_acquire_u16(ivar); break;
        case 3: v = (int)symmem__ld_acquire_u32(ivar); break;
        case 5: v = (unsigned char)symmem__ld_acquire_u8(ivar); break;
        case 6: v = symmem__ld_acquire_u16(ivar); break;
        case 7: v = symmem__ld_acquire_u32(ivar); break;
        default: v = (long long)symmem__ld_acquire_u64(ivar);
        }
        int unsigned_type = dtype >= 5;
        if (unsigned_type ? symmem__compare<symmem_u64>((symmem_u64)v, cmp, (symmem_u64)value)
                          : symmem__compare<long long>(v, cmp, value))
            return 0;
        if (spin % SYMMEM_DEV_SPINS == 0) symmem__still_waiting(st, "wait_until", t0);
    }
}

/* ---- copies ---- */

/* This lane's share of copying n bytes, in the widest unit both addresses
 * and the length allow (16, 8, 4 bytes), then the leftover bytes. Where
 * dst and src are equally misaligned (a slice at the same offset of two
 * symmetric buffers, a grid's blocks each at its own offset), the bytes up
 * to their common boundary go first, so that the rest moves in wide units
 * (from 32 bytes: below, one narrower unit is cheaper than the bytes). */
template <int FLIGHT>
static __device__ __forceinline__ void symmem__copy_in_flight(symmem_u64 dst, symmem_u64 src,
                                                              symmem_u64 n, unsigned int lane,
                                                              unsigned int lanes)
{
    symmem_u64 apart = dst ^ src, head = 0;
    if (n >= 32) {
        if ((apart & 15) == 0) head = (0 - dst) & 15;
        else if ((apart & 7) == 0) head = (0 - dst) & 7;
        else if ((apart & 3) == 0) head = (0 - dst) & 3;
    }
    for (symmem_u64 i = lane; i < head; i += lanes)
        ((unsigned char *)dst)[i] = ((const unsigned char *)src)[i];
    dst += head;
    src += head;
    n -= head;
    symmem_u64 aligned = dst | src;
    symmem_u64 done = 0;
    if ((aligned & 15) == 0) {
        const uint4 *s = (const uint4 *)src;
        uint4 *d = (uint4 *)dst;
        symmem_u64 units = n / 16, i = lane;
        /* FLIGHT loads in flight before their stores: a lane waits for a
         * load's latency once per FLIGHT units, not once per unit. */
        for (; i + (FLIGHT - 1ull) * lanes < units; i += (symmem_u64)FLIGHT * lanes) {
            uint4 v[FLIGHT];
#pragma unroll
            for (int k = 0; k < FLIGHT; k++) v[k] = s[i + (symmem_u64)k * lanes];
#pragma unroll
            for (int k = 0; k < FLIGHT; k++) d[i + (symmem_u64)k * lanes] = v[k];
        }
        for (; i < units; i += lanes) d[i] = s[i];
        done = units * 16;
    } else if ((aligned & 7) == 0) {
        symmem_u64 units = n / 8;
        for (symmem_u64 i = lane; i < units; i += lanes)
            ((symmem_u64 *)dst)[i] = ((const symmem_u64 *)src)[i];
        done = units * 8;
    } else if ((aligned & 3) == 0) {
        symmem_u64 units = n / 4;
        for (symmem_u64 i = lane; i < units; i += lanes)
            ((unsigned int *)dst)[i] = ((const unsigned int *)src)[i];
        done = units * 4;
    }
    for (symmem_u64 i = done + lane; i < n; i += lanes)
        ((unsigned char *)dst)[i] = ((const unsigned char *)src)[i];
}

/* put and get: eight 16-byte loads in flight a lane (56 registers). */
static __device__ __forceinline__ void symmem__copy(symmem_u64 dst, symmem_u64 src, symmem_u64 n,
                                                    unsigned int lane, unsigned int lanes)
{
    symmem__copy_in_flight<8>(dst, src, n, lane, lanes);
}

/* The collectives' copies, four in flight: their loops keep more live, and
 * a kernel calling them must stay within 64 registers to launch 1024
 * threads a block. */
static __device__ __forceinline__ void symmem__copy_small(symmem_u64 dst, symmem_u64 src,
                                                          symmem_u64 n, unsigned int lane,
                                                          unsigned int lanes)
{
    symmem__copy_in_flight<4>(dst, src, n, lane, lanes);
}

/* A thread's put of one aligned 4- or 8-byte word (a flag, a count, a
 * scalar) loads it before the address checks' branch: its round trip to L2
 * (after a fence it misses L1) then overlaps the checks, where a load in
 * the copy would wait for them first (with the checks reading the state
 * block, measured: 0.2 us a ping-pong). */
static __device__ __forceinline__ int symmem__one_word(int scope, symmem_u64 dst, symmem_u64 src,
                                                       symmem_u64 n)
{
    return scope == SYMMEM__THREAD && (n == 8 || n == 4) && ((dst | src) & (n - 1)) == 0;
}
static __device__ __forceinline__ symmem_u64 symmem__load_word(symmem_u64 src, symmem_u64 n)
{
    return n == 8 ? *(const symmem_u64 *)src : *(const unsigned int *)src;
}
/* The copy of a put whose source word (if one_word) is already loaded. */
static __device__ __forceinline__ void symmem__put_to(int scope, symmem_u64 remote,
                                                      symmem_u64 src, symmem_u64 n,
                                                      int one_word, symmem_u64 word)
{
    if (one_word && n == 8) *(symmem_u64 *)remote = word;
    else if (one_word) *(unsigned int *)remote = (unsigned int)word;
    else symmem__copy(remote, src, n, symmem__lane(scope), symmem__lanes(scope));
    symmem__scope_sync(scope); /* the scope returns together: every copy issued */
}

static __device__ __forceinline__ void symmem__put(symmem_u64 st, const char *call, int scope,
                                                   symmem_u64 dst, symmem_u64 src, symmem_u64 n,
                                                   int pe)
{
    int one_word = symmem__one_word(scope, dst, src, n);
    symmem_u64 word = one_word ? symmem__load_word(src, n) : 0;
    symmem__put_to(scope, symmem__remote(st, call, 0, dst, n, pe), src, n, one_word, word);
}

static __device__ __forceinline__ void symmem__get(symmem_u64 st, const char *call, int scope,
                                                   symmem_u64 dst, symmem_u64 src, symmem_u64 n,
                                                   int pe)
{
    symmem_u64 remote = symmem__remote(st, call, 1, src, n, pe);
    symmem__copy(dst, remote, n, symmem__lane(scope), symmem__lanes(scope));
    symmem__scope_sync(scope); /* every lane's loads done: dst is complete for the scope */
}

#define SYMMEM__COPY_API(name, fn, scope)                                                    \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st, symmem_u64 dst, symmem_u64 src,  \
                                            symmem_u64 nbytes, int pe)                      \
    {                                                                                        \
        fn(st, #name, scope, dst, src, nbytes, pe);                                          \
        return 0;                                                                            \
    }

/* nbi forms are the blocking ones: a store through the mapping is issued
 * when it returns, and quiet completes both alike. */
SYMMEM__COPY_API(put, symmem__put, SYMMEM__THREAD)
SYMMEM__COPY_API(put_warp, symmem__put, SYMMEM__WARP)
SYMMEM__COPY_API(put_block, symmem__put, SYMMEM__BLOCK)
SYMMEM__COPY_API(get, symmem__get, SYMMEM__THREAD)
SYMMEM__COPY_API(get_warp, symmem__get, SYMMEM__WARP)
SYMMEM__COPY_API(get_block, symmem__get, SYMMEM__BLOCK)

/* p of a 1, 2, 4 or 8-byte value (its bits). */
SYMMEM_DEVICE_API int symmem_dev_p(symmem_u64 st, symmem_u64 dst, symmem_u64 bits, int width,
                                   int pe)
{
    symmem_u64 remote = symmem__remote(st, "p", 0, dst, (symmem_u64)width, pe);
    switch (width) {
    case 1: *(unsigned char *)remote = (unsigned char)bits; break;
    case 2: *(unsigned short *)remote = (unsigned short)bits; break;
    case 4: *(unsigned int *)remote = (unsigned int)bits; break;
    default: *(symmem_u64 *)remote = bits;
    }
    return 0;
}

/* g: the bits of a 1, 2, 4 or 8-byte value; volatile, so a loop of g on a
 * flag reads memory every time. */
SYMMEM_DEVICE_API symmem_u64 symmem_dev_g(symmem_u64 st, symmem_u64 src, int width, int pe)
{
    symmem_u64 remote = symmem__remote(st, "g", 0, src, (symmem_u64)width, pe);
    switch (width) {
    case 1: return *(const volatile unsigned char *)remote;
    case 2: return *(const volatile unsigned short *)remote;
    case 4: return *(const volatile unsigned int *)remote;
    default: return *(const volatile symmem_u64 *)remote;
    }
}

SYMMEM_DEVICE_API int symmem_dev_quiet(symmem_u64 st)
{
    (void)st;
    symmem__fence_sc_sys();
    return 0;
}

SYMMEM_DEVICE_API int symmem_dev_fence(symmem_u64 st)
{
    (void)st;
    symmem__fence_acq_rel_sys();
    return 0;
}

/* ---- signals ---- */

/* The release that signal_wait's acquire pairs with: fence.acq_rel.sys and
 * the relaxed update form a release pattern, ordering every earlier store
 * of this thread (and, after the scope's barrier, of the scope) before the
 * signal update. */
static __device__ __forceinline__ void symmem__signal(symmem_u64 remote_sig, symmem_u64 value,
                                                      int op)
{
    symmem__fence_acq_rel_sys();
    if (op == SYMMEM_DEV_SIGNAL_ADD)
        asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" ::"l"(remote_sig), "l"(value)
                     : "memory");
    else
        symmem__st_relaxed_u64(remote_sig, value);
}

SYMMEM_DEVICE_API int symmem_dev_signal_op(symmem_u64 st, symmem_u64 sig, symmem_u64 value,
                                           int op, int pe)
{
    symmem__signal(symmem__remote(st, "signal_op", 0, sig, 8, pe), value, op);
    return 0;
}

static __device__ __forceinline__ void symmem__put_signal(symmem_u64 st, const char *call,
                                                          int scope, symmem_u64 dst,
                                                          symmem_u64 src, symmem_u64 n,
                                                          symmem_u64 sig, symmem_u64 value,
                                                          int op, int pe)
{
    /* both addresses checked before one branch */
    int one_word = symmem__one_word(scope, dst, src, n);
    symmem_u64 word = one_word ? symmem__load_word(src, n) : 0, remote_dst, remote_sig;
    if (!(symmem__remote_fast(dst, n, pe, &remote_dst) &
          symmem__remote_fast(sig, 8, pe, &remote_sig))) {
        remote_dst = symmem__remote_slow(st, call, 0, dst, n, pe);
        remote_sig = symmem__remote_slow(st, call, 2, sig, 8, pe);
    }
    symmem__put_to(scope, remote_dst, src, n, one_word, word); /* every copy issued */
    if (symmem__lane(scope) == 0) symmem__signal(remote_sig, value, op);
    symmem__scope_sync(scope);
}

#define SYMMEM__PUT_SIGNAL_API(name, scope)                                                   \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st, symmem_u64 dst, symmem_u64 src,   \
                                            symmem_u64 nbytes, symmem_u64 sig,               \
                                            symmem_u64 value, int op, int pe)                \
    {                                                                                         \
        symmem__put_signal(st, #name, scope, dst, src, nbytes, sig, value, op, pe);           \
        return 0;                                                                             \
    }

SYMMEM__PUT_SIGNAL_API(put_signal, SYMMEM__THREAD)
SYMMEM__PUT_SIGNAL_API(put_signal_warp, SYMMEM__WARP)
SYMMEM__PUT_SIGNAL_API(put_signal_block, SYMMEM__BLOCK)

/* ---- atomics: relaxed, system scope, on PE pe's copy ---- */

/* op: 0 fetch, 1 set, 2 swap, 3 compare_swap, 4 fetch_add, 5 fetch_and,
 * 6 fetch_or, 7 fetch_xor, 8 fetch_add of a float (width 4) or double
 * (width 8) (inc and the non-fetch forms are these with the result
 * ignored). Values travel as their bits; returns the old value's bits. */
SYMMEM_DEVICE_API symmem_u64 symmem_dev_atomic64(symmem_u64 st, symmem_u64 dest, int op,
                                                 symmem_u64 value, symmem_u64 cond, int pe)
{
    symmem_u64 a = symmem__remote(st, "atomic", 0, dest, 8, pe), old = 0;
    switch (op) {
    case 0: asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(old) : "l"(a) : "memory"); break;
    case 1: symmem__st_relaxed_u64(a, value); break;
    case 2: asm volatile("atom.relaxed.sys.global.exch.b64 %0, [%1], %2;" : "=l"(old) : "l"(a), "l"(value) : "memory"); break;
    case 3: asm volatile("atom.relaxed.sys.global.cas.b64 %0, [%1], %2, %3;" : "=l"(old) : "l"(a), "l"(cond), "l"(value) : "memory"); break;
    case 4: asm volatile("atom.relaxed.sys.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(a), "l"(value) : "memory"); break;
    case 5: asm volatile("atom.relaxed.sys.global.and.b64 %0, [%1], %2;" : "=l"(old) : "l"(a), "l"(value) : "memory"); break;
    case 6: asm volatile("atom.relaxed.sys.global.or.b64 %0, [%1], %2;" : "=l"(old) : "l"(a), "l"(value) : "memory"); break;
    case 7: asm volatile("atom.relaxed.sys.global.xor.b64 %0, [%1], %2;" : "=l"(old) : "l"(a), "l"(value) : "memory"); break;
    default: asm volatile("atom.relaxed.sys.global.add.f64 %0, [%1], %2;" : "=l"(old) : "l"(a), "l"(value) : "memory");
    }
    return old;
}

SYMMEM_DEVICE_API unsigned int symmem_dev_atomic32(symmem_u64 st, symmem_u64 dest, int op,
                                                   unsigned int value, unsigned int cond, int pe)
{
    symmem_u64 a = symmem__remote(st, "atomic", 0, dest, 4, pe);
    unsigned int old = 0;
    switch (op) {
    case 0: asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(old) : "l"(a) : "memory"); break;
    case 1: asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(a), "r"(value) : "memory"); break;
    case 2: asm volatile("atom.relaxed.sys.global.exch.b32 %0, [%1], %2;" : "=r"(old) : "l"(a), "r"(value) : "memory"); break;
    case 3: asm volatile("atom.relaxed.sys.global.cas.b32 %0, [%1], %2, %3;" : "=r"(old) : "l"(a), "r"(cond), "r"(value) : "memory"); break;
    case 4: asm volatile("atom.relaxed.sys.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(a), "r"(value) : "memory"); break;
    case 5: asm volatile("atom.relaxed.sys.global.and.b32 %0, [%1], %2;" : "=r"(old) : "l"(a), "r"(value) : "memory"); break;
    case 6: asm volatile("atom.relaxed.sys.global.or.b32 %0, [%1], %2;" : "=r"(old) : "l"(a), "r"(value) : "memory"); break;
    case 7: asm volatile("atom.relaxed.sys.global.xor.b32 %0, [%1], %2;" : "=r"(old) : "l"(a), "r"(value) : "memory"); break;
    default: asm volatile("atom.relaxed.sys.global.add.f32 %0, [%1], %2;" : "=r"(old) : "l"(a), "r"(value) : "memory");
    }
    return old;
}

/* ---- teams: sync and barrier ---- */

/* Team team's entry, or 0 where it is no team of this PE. */
static __device__ __forceinline__ const symmem_device_team *symmem__team_or_0(symmem_u64 st,
                                                                              int team)
{
    const symmem_device_team *teams = SYMMEM__RO(st, teams);
    if (team < 0 || team >= SYMMEM_DEV_MAX_TEAMS || teams == 0) return 0;
    return symmem__ro(&teams[team].n) > 0 ? &teams[team] : 0;
}

/* Team team's entry; a handle that is no team of this PE fails. */
static __device__ __forceinline__ const symmem_device_team *symmem__team(symmem_u64 st,
                                                                         const char *call,
                                                                         int team)
{
    int me = SYMMEM__RO(st, my_pe);
    symmem__check_pe(st, call, me);
    const symmem_device_team *t = symmem__team_or_0(st, team);
    if (t == 0 || symmem__ro(&t->me) < 0)
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_BAD_TEAM, me, 0, (symmem_u64)(long long)team);
    return t;
}

/* Team team's part of the sync area (symmetric; zeroed on every member
 * before the team is used): word 0 is how many syncs this PE finished on
 * the team (written only by its syncing thread), word 1 + i the last epoch
 * team PE i announced here. One thread calls it. */
static __device__ __noinline__ void symmem__team_sync(symmem_u64 st, const char *call, int team)
{
    const symmem_device_consts_t *c = &symmem_device_consts;
    /* The world from the constant state: no load before the arrivals waits
     * for L2 (the caller's fence emptied L1). */
    int world = team == 0 && c->magic == SYMMEM_DEV_MAGIC && c->peers == c->n_pes;
    const symmem_device_team *t = world ? 0 : symmem__team(st, call, team);
    int n = world ? c->n_pes : symmem__ro(&t->n);
    symmem_u64 area = world ? c->sync_base
                            : SYMMEM__RO(st, sync_base) +
                                  8ull * (symmem_u64)(SYMMEM__RO(st, n_pes) + 1) * (symmem_u64)team;
    symmem_u64 *mine = (symmem_u64 *)area;
    symmem_u64 epoch = mine[0] + 1;
    mine[0] = epoch;
    symmem__fence_acq_rel_sys(); /* this PE's earlier stores before its arrival */
    symmem_u64 slot = area + 8ull * (symmem_u64)(1 + (world ? c->my_pe : symmem__ro(&t->me)));
    for (int i = 0; i < n; i++) {
        symmem_u64 to;
        if (world) {
            symmem_u64 delta = c->delta[i];
            if (delta & 1) symmem__dev_fail(st, call, SYMMEM_DEV_ERR_UNREACHABLE, i, -1, 0);
            to = slot + delta;
        } else {
            int pe = symmem__ro(&symmem__ro(&t->members)[i]);
            to = symmem__peer_base(st, call, pe) + (slot - SYMMEM__RO(st, heap_base));
        }
        symmem__st_relaxed_u64(to, epoch);
    }
    symmem_u64 t0 = symmem__globaltimer();
    for (int i = 0; i < n; i++) {
        symmem_u64 at = area + 8ull * (symmem_u64)(1 + i);
        /* acquire: pairs with team PE i's fence before its arrival store */
        for (unsigned int spin = 1; symmem__ld_acquire_u64(at) < epoch; spin++)
            if (spin % SYMMEM_DEV_SPINS == 0) symmem__still_waiting(st, call, t0);
    }
}

static __device__ __forceinline__ void symmem__team_barrier(symmem_u64 st, const char *call,
                                                            int scope, int team, int quiet)
{
    symmem__scope_sync(scope); /* every lane's stores before the leader's fence */
    if (symmem__lane(scope) == 0) {
        if (quiet) symmem__fence_sc_sys();
        symmem__team_sync(st, call, team);
    }
    symmem__scope_sync(scope); /* every lane after the leader's acquires */
}

#define SYMMEM__SYNC_API(name, scope, quiet)                       \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st)         \
    {                                                              \
        symmem__team_barrier(st, #name, scope, 0, quiet);          \
        return 0;                                                  \
    }

SYMMEM__SYNC_API(barrier_all, SYMMEM__THREAD, 1)
SYMMEM__SYNC_API(barrier_all_warp, SYMMEM__WARP, 1)
SYMMEM__SYNC_API(barrier_all_block, SYMMEM__BLOCK, 1)
SYMMEM__SYNC_API(sync_all, SYMMEM__THREAD, 0)
SYMMEM__SYNC_API(sync_all_warp, SYMMEM__WARP, 0)
SYMMEM__SYNC_API(sync_all_block, SYMMEM__BLOCK, 0)

#define SYMMEM__TEAM_SYNC_API(name, scope, quiet)                      \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st, int team)   \
    {                                                                  \
        symmem__team_barrier(st, #name, scope, team, quiet);           \
        return 0;                                                      \
    }

SYMMEM__TEAM_SYNC_API(barrier, SYMMEM__THREAD, 1)
SYMMEM__TEAM_SYNC_API(barrier_warp, SYMMEM__WARP, 1)
SYMMEM__TEAM_SYNC_API(barrier_block, SYMMEM__BLOCK, 1)
SYMMEM__TEAM_SYNC_API(sync, SYMMEM__THREAD, 0)
SYMMEM__TEAM_SYNC_API(sync_warp, SYMMEM__WARP, 0)
SYMMEM__TEAM_SYNC_API(sync_block, SYMMEM__BLOCK, 0)

/* -1 where team is no team of this PE, as NVSHMEM's. */
SYMMEM_DEVICE_API int symmem_dev_team_my_pe(symmem_u64 st, int team)
{
    const symmem_device_team *t = symmem__team_or_0(st, team);
    return t != 0 ? symmem__ro(&t->me) : -1;
}

SYMMEM_DEVICE_API int symmem_dev_team_n_pes(symmem_u64 st, int team)
{
    const symmem_device_team *t = symmem__team_or_0(st, team);
    return t != 0 ? symmem__ro(&t->n) : -1;
}

/* ---- collectives that move bytes: push into the members' dst ---- */

/* kind: which of the three. Every lane of the scope calls it. */
#define SYMMEM__FCOLLECT 0
#define SYMMEM__ALLTOALL 1
#define SYMMEM__BROADCAST 2

static __device__ __forceinline__ void symmem__push(symmem_u64 st, const char *call, int scope,
                                                    int kind, int team, symmem_u64 dst,
                                                    symmem_u64 src, symmem_u64 nbytes, int root)
{
    const symmem_device_team *t = symmem__team(st, call, team);
    int n = symmem__ro(&t->n), me = symmem__ro(&t->me);
    const int *members = symmem__ro(&t->members);
    if (kind == SYMMEM__BROADCAST && (root < 0 || root >= n))
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_BAD_ROOT, n, 3, (symmem_u64)(long long)root);
    symmem_u64 span = kind == SYMMEM__BROADCAST ? nbytes : nbytes * (symmem_u64)n;
    symmem__remote(st, call, 1, dst, span, SYMMEM__RO(st, my_pe)); /* dst is symmetric */
    symmem__team_barrier(st, call, scope, team, 0); /* every member's dst is free */
    unsigned int lane = symmem__lane(scope), lanes = symmem__lanes(scope);
    if (kind != SYMMEM__BROADCAST || me == root) {
        for (int k = 0; k < n; k++) {
            int i = (me + k) % n; /* members start at different peers */
            symmem_u64 at = dst, from = src;
            if (kind == SYMMEM__FCOLLECT) at += nbytes * (symmem_u64)me;
            if (kind == SYMMEM__ALLTOALL) {
                at += nbytes * (symmem_u64)me;
                from += nbytes * (symmem_u64)i;
            }
            symmem_u64 remote = symmem__remote(st, call, 1, at, nbytes, members[i]);
            symmem__copy_small(remote, from, nbytes, lane, lanes);
        }
    }
    symmem__team_barrier(st, call, scope, team, 1); /* every copy is visible */
}

#define SYMMEM__PUSH_API(name, kind, scope)                                                      \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st, int team, symmem_u64 dst,            \
                                            symmem_u64 src, symmem_u64 nbytes, int root)        \
    {                                                                                            \
        symmem__push(st, #name, scope, kind, team, dst, src, nbytes, root);                      \
        return 0;                                                                                \
    }

SYMMEM__PUSH_API(fcollect, SYMMEM__FCOLLECT, SYMMEM__THREAD)
SYMMEM__PUSH_API(fcollect_warp, SYMMEM__FCOLLECT, SYMMEM__WARP)
SYMMEM__PUSH_API(fcollect_block, SYMMEM__FCOLLECT, SYMMEM__BLOCK)
SYMMEM__PUSH_API(alltoall, SYMMEM__ALLTOALL, SYMMEM__THREAD)
SYMMEM__PUSH_API(alltoall_warp, SYMMEM__ALLTOALL, SYMMEM__WARP)
SYMMEM__PUSH_API(alltoall_block, SYMMEM__ALLTOALL, SYMMEM__BLOCK)
SYMMEM__PUSH_API(broadcast, SYMMEM__BROADCAST, SYMMEM__THREAD)
SYMMEM__PUSH_API(broadcast_warp, SYMMEM__BROADCAST, SYMMEM__WARP)
SYMMEM__PUSH_API(broadcast_block, SYMMEM__BROADCAST, SYMMEM__BLOCK)

/* ---- reductions: pull every member's src, combine in member order ---- */

/* How an element type is combined: in A (float for the 16-bit floats). */
template <typename T> struct symmem__num {
    typedef T A;
    static __device__ __forceinline__ A widen(T v) { return v; }
    static __device__ __forceinline__ T narrow(A a) { return a; }
};
struct symmem__half { unsigned short bits; };
struct symmem__bhalf { unsigned short bits; };
template <> struct symmem__num<symmem__half> {
    typedef float A;
    static __device__ __forceinline__ A widen(symmem__half v)
    {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));
        return f;
    }
    static __device__ __forceinline__ symmem__half narrow(A a)
    {
        symmem__half v;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(v.bits) : "f"(a));
        return v;
    }
};
template <> struct symmem__num<symmem__bhalf> {
    typedef float A;
    static __device__ __forceinline__ A widen(symmem__bhalf v)
    {
        return __uint_as_float((unsigned int)v.bits << 16); /* exact */
    }
    static __device__ __forceinline__ symmem__bhalf narrow(A a)
    {
        symmem__bhalf v;
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(v.bits) : "f"(a));
        return v;
    }
};

/* op: symmem_reduce_op_t (0 sum, 1 min, 2 max, 3 prod, 4 and, 5 or, 6 xor). */
template <typename A> static __device__ __forceinline__ A symmem__combine(int op, A a, A b)
{
    switch (op) {
    case 0: return a + b;
    case 1: return b < a ? b : a;
    case 2: return a < b ? b : a;
    case 3: return a * b;
    case 4: return a & b;
    case 5: return a | b;
    default: return a ^ b;
    }
}
template <typename A> static __device__ __forceinline__ A symmem__combine_float(int op, A a, A b)
{
    switch (op) {
    case 0: return a + b;
    case 1: return b < a ? b : a;
    case 2: return a < b ? b : a;
    default: return a * b; /* the bitwise ops take integers only */
    }
}
template <> __device__ __forceinline__ float symmem__combine<float>(int op, float a, float b)
{
    return symmem__combine_float<float>(op, a, b);
}
template <> __device__ __forceinline__ double symmem__combine<double>(int op, double a, double b)
{
    return symmem__combine_float<double>(op, a, b);
}

/* Element i of the reduction over every member's copy of from (symmetric). */
template <typename T>
static __device__ __forceinline__ typename symmem__num<T>::A
symmem__reduced(symmem_u64 st, const symmem_device_team *t, symmem_u64 offset,
                symmem_u64 i, int op)
{
    typedef symmem__num<T> N;
    const int *members = symmem__ro(&t->members);
    typename N::A acc = N::widen(((const T *)(symmem__mapped(st, symmem__ro(&members[0])) + offset))[i]);
    for (int r = 1, n = symmem__ro(&t->n); r < n; r++)
        acc = symmem__combine(op, acc, N::widen(((const T *)(symmem__mapped(st, symmem__ro(&members[r])) +
                                                             offset))[i]));
    return acc;
}

/* dst[i] = the reduction over every member's copy of from[i], for first <=
 * i < first + count (dst and from: element addresses of the same index). */
template <typename T>
static __device__ __noinline__ void symmem__reduce_typed(symmem_u64 st,
                                                         const symmem_device_team *t,
                                                         symmem_u64 dst, symmem_u64 from,
                                                         symmem_u64 first, symmem_u64 count,
                                                         int op, unsigned int lane,
                                                         unsigned int lanes)
{
    typedef symmem__num<T> N;
    symmem_u64 offset = from - SYMMEM__RO(st, heap_base);
    T *out = (T *)dst;
    for (symmem_u64 i = first + lane; i < first + count; i += lanes)
        out[i] = N::narrow(symmem__reduced<T>(st, t, offset, i, op));
}

/* Bytes of symmem_dtype_t's element (0 bool ... 12 float64), 0 if none. */
static __device__ __forceinline__ symmem_u64 symmem__dtype_size(int dtype)
{
    switch (dtype) {
    case 0: case 1: case 5: return 1;
    case 2: case 6: case 9: case 10: return 2;
    case 3: case 7: case 11: return 4;
    case 4: case 8: case 12: return 8;
    default: return 0;
    }
}

static __device__ __forceinline__ void symmem__reduce_range(symmem_u64 st,
                                                            const symmem_device_team *t,
                                                            int dtype, symmem_u64 dst,
                                                            symmem_u64 from, symmem_u64 first,
                                                            symmem_u64 count, int op, int scope)
{
    unsigned int lane = symmem__lane(scope), lanes = symmem__lanes(scope);
#define SYMMEM__REDUCE_AS(T) symmem__reduce_typed<T>(st, t, dst, from, first, count, op, lane, lanes)
    switch (dtype) {
    case 0: case 5: SYMMEM__REDUCE_AS(unsigned char); break;
    case 1: SYMMEM__REDUCE_AS(signed char); break;
    case 2: SYMMEM__REDUCE_AS(short); break;
    case 6: SYMMEM__REDUCE_AS(unsigned short); break;
    case 3: SYMMEM__REDUCE_AS(int); break;
    case 7: SYMMEM__REDUCE_AS(unsigned int); break;
    case 4: SYMMEM__REDUCE_AS(long long); break;
    case 8: SYMMEM__REDUCE_AS(symmem_u64); break;
    case 9: SYMMEM__REDUCE_AS(symmem__half); break;
    case 10: SYMMEM__REDUCE_AS(symmem__bhalf); break;
    case 11: SYMMEM__REDUCE_AS(float); break;
    default: SYMMEM__REDUCE_AS(double);
    }
#undef SYMMEM__REDUCE_AS
}

/* reduce (scatter 0): dst[i] = op over members of src[i], i < nelems;
 * reducescatter (scatter 1): the same of src[me * nelems + i]. In place
 * (reduce with dst == src), every member first reduces its own share of the
 * elements into its array (only it reads that share), then, after a sync,
 * copies the others' shares from their arrays: nobody overwrites what
 * another member has yet to read. */
static __device__ __noinline__ void symmem__reduce(symmem_u64 st, const char *call, int scope,
                                                   int team, symmem_u64 dst, symmem_u64 src,
                                                   symmem_u64 nelems, int dtype, int op,
                                                   int scatter)
{
    const symmem_device_team *t = symmem__team(st, call, team);
    int me = SYMMEM__ST(st)->my_pe;
    symmem_u64 size = symmem__dtype_size(dtype);
    if (size == 0) symmem__dev_fail(st, call, SYMMEM_DEV_ERR_BAD_ARG, me, 5, (symmem_u64)dtype);
    if (op < 0 || op > 6 || (op > 3 && dtype >= 9))
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_BAD_ARG, me, 6, (symmem_u64)(long long)op);
    symmem_u64 bytes = nelems * size, read = bytes * (symmem_u64)(scatter ? t->n : 1);
    symmem__remote(st, call, 2, src, read, me); /* src is symmetric */
    for (int i = 0; i < t->n; i++) symmem__peer_base(st, call, t->members[i]);
    symmem_u64 from = src + (scatter ? bytes * (symmem_u64)t->me : 0);
    int overlap = dst < src + read && src < dst + bytes;
    /* Allowed overlaps: reduce exactly in place; reducescatter into this
     * member's own part of src (nobody else reads it). */
    if (overlap && dst != from) symmem__dev_fail(st, call, SYMMEM_DEV_ERR_OVERLAP, me, 1, dst);
    if (dtype == 0) op = op == 0 || op == 2 ? 5 : op == 1 || op == 3 ? 4 : op; /* bool: or, and */
    symmem__team_barrier(st, call, scope, team, 0); /* every member's src is complete */
    if (!overlap || scatter) {
        symmem__reduce_range(st, t, dtype, dst, from, 0, nelems, op, scope);
    } else {
        symmem_u64 share = (nelems + (symmem_u64)t->n - 1) / (symmem_u64)t->n;
        symmem_u64 first = share * (symmem_u64)t->me;
        symmem_u64 count = first < nelems ? (nelems - first < share ? nelems - first : share) : 0;
        symmem__reduce_range(st, t, dtype, dst, from, first, count, op, scope);
        symmem__team_barrier(st, call, scope, team, 0); /* every share is final */
        unsigned int lane = symmem__lane(scope), lanes = symmem__lanes(scope);
        for (int k = 1; k < t->n; k++) {
            int i = (t->me + k) % t->n;
            symmem_u64 at = share * (symmem_u64)i, n = at < nelems ? nelems - at : 0;
            n = (n < share ? n : share) * size;
            symmem_u64 theirs = symmem__remote(st, call, 1, dst + at * size, n, t->members[i]);
            symmem__copy_small(dst + at * size, theirs, n, lane, lanes);
        }
    }
    symmem__team_barrier(st, call, scope, team, 0); /* nobody reads src any more */
}

#define SYMMEM__REDUCE_API(name, scope, scatter)                                                 \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st, int team, symmem_u64 dst,            \
                                            symmem_u64 src, symmem_u64 nelems, int dtype,       \
                                            int op)                                             \
    {                                                                                            \
        symmem__reduce(st, #name, scope, team, dst, src, nelems, dtype, op, scatter);            \
        return 0;                                                                                \
    }

SYMMEM__REDUCE_API(reduce, SYMMEM__THREAD, 0)
SYMMEM__REDUCE_API(reduce_warp, SYMMEM__WARP, 0)
SYMMEM__REDUCE_API(reduce_block, SYMMEM__BLOCK, 0)
SYMMEM__REDUCE_API(reducescatter, SYMMEM__THREAD, 1)
SYMMEM__REDUCE_API(reducescatter_warp, SYMMEM__WARP, 1)
SYMMEM__REDUCE_API(reducescatter_block, SYMMEM__BLOCK, 1)

/* Where PE pe's copy of the symmetric addr is mapped here (get_peer_array). */
SYMMEM_DEVICE_API symmem_u64 symmem_dev_ptr(symmem_u64 st, symmem_u64 addr, symmem_u64 nbytes,
                                            int pe)
{
    return symmem__remote(st, "get_peer_array", 0, addr, nbytes, pe);
}

/* For language bindings that check an argument's size at run time. */
SYMMEM_DEVICE_API int symmem_dev_too_small(symmem_u64 st, int arg, symmem_u64 needed)
{
    symmem__dev_fail(st, "a device collective", SYMMEM_DEV_ERR_TOO_SMALL,
                     SYMMEM__ST(st)->my_pe, arg, needed);
    return 0;
}

/* For language bindings: p, g, a signal or an atomic on an empty array,
 * whose first element (the address the call would act on) is not its own. */
SYMMEM_DEVICE_API int symmem_dev_empty(symmem_u64 st, int arg, symmem_u64 itemsize)
{
    symmem__dev_fail(st, "p, g, a signal or an atomic", SYMMEM_DEV_ERR_TOO_SMALL,
                     SYMMEM__ST(st)->my_pe, arg, itemsize);
    return 0;
}

/* For language bindings that find a strided view only at run time. */
SYMMEM_DEVICE_API int symmem_dev_not_contiguous(symmem_u64 st, int arg, symmem_u64 stride)
{
    symmem__dev_fail(st, "a device copy", SYMMEM_DEV_ERR_NOT_CONTIGUOUS,
                     SYMMEM__ST(st)->my_pe, arg, stride);
    return 0;
}

SYMMEM_DEVICE_API int symmem_dev_my_pe(symmem_u64 st)
{
    const symmem_device_consts_t *c = &symmem_device_consts;
    return c->magic == SYMMEM_DEV_MAGIC ? c->my_pe : SYMMEM__RO(st, my_pe);
}
SYMMEM_DEVICE_API int symmem_dev_n_pes(symmem_u64 st)
{
    const symmem_device_consts_t *c = &symmem_device_consts;
    return c->magic == SYMMEM_DEV_MAGIC ? c->n_pes : SYMMEM__RO(st, n_pes);
}

#endif
