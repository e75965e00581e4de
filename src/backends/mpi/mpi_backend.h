/* The mpi backend: symmem's model on MPI-3 one-sided communication, for CPU
 * jobs whose PEs span hosts. Built as its own shared object against the MPI
 * that mpicc (or SYMMEM_MPICC) finds at build time, and loaded at run time
 * by src/core/gpu_loader.c (SYMMEM_MPI_BACKEND_LIB).
 *
 * The symmetric heap is one MPI window of SYMMEM_SYMMETRIC_SIZE bytes per PE,
 * locked once for the whole job (MPI_Win_lock_all, a passive-target epoch):
 * put and get are MPI_Put and MPI_Get, quiet is MPI_Win_flush_all, the
 * atomics and signals are MPI's accumulate operations, which are atomic
 * with each other. PEs of one node (MPI_Comm_split_type SHARED) also map
 * each other's heaps (MPI_Win_allocate_shared), so that peer views and
 * same-node copies are loads and stores; SYMMEM_ONE_HOST_PER_PE=1 takes
 * every PE for one on a host of its own (no shared window).
 *
 * Teams are communicators; collectives are MPI's non-blocking ones, polled
 * (progress.c) so that every wait watches SYMMEM_TIMEOUT, Ctrl-C and the
 * liveness of the peers (liveness.c), and each first meets the team's
 * members with its fingerprint (meet.c; malloc, free and the team calls
 * too), so PEs in different collectives raise. Reductions are symmem's
 * own (node_collectives.c, exchange.c, rma_reduce.c), in the members'
 * order (docs/reproducibility.md), never MPI's.
 *
 * finalize() is no collective another can match: a PE entering it tells the
 * others (departures.c), and a collective waiting for it raises, as its
 * finalize() does, each naming the other.
 *
 * The files stand in floors, each calling only those below it (no circle):
 * failure.c (errors, the job lost) at the bottom; liveness.c, departures.c;
 * progress.c (every wait); helper.c (blocking MPI calls, bounded), peers.c,
 * calls.c; comms.c, flush.c, node.c, exchange.c; meet.c (a team's
 * meeting), rma.c, signals.c, atomics.c; node_collectives.c, rma_reduce.c,
 * team_init.c; collectives.c, teams.c, heap.c; start.c; ops.c (the table). */
#ifndef SYMMEM_MPI_BACKEND_H
#define SYMMEM_MPI_BACKEND_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../core/backend.h"
#include "../../core/calls.h"
#include "../../core/error.h" /* SYMMEM_CHECK; messages go through MPI_CORE->error */
#include "../../core/heap_alloc.h"
#include "../../core/heartbeat.h"

typedef struct symmem_backend mpi_t;
typedef struct mpi_helper mpi_helper_t; /* helper.c */
typedef struct mpi_notice mpi_notice_t; /* departures.c */

/* What this PE knows of finalize() calls (departures.c). */
typedef struct {
    /* Meetings (waits for every member: meet.c's, and MPI's collectives)
     * this PE completed on each channel since its team was made: the same
     * count on every member, as they make the same collectives. */
    uint64_t met[SYMMEM_TEAM_MAX];
    const symmem_team_view_t *team;    /* the meeting this PE waits in; NULL: none */
    symmem_call_t call;                /* its collective */
    mpi_notice_t *in;                  /* the notice being received: MPI's while in_req is posted */
    MPI_Request in_req;                /* MPI_REQUEST_NULL: none posted */
    uint64_t (*left)[SYMMEM_TEAM_MAX]; /* by PE, once one left: its met then; NULL: none */
    int *left_order;                   /* by PE: 0, or 1 + how many had left before it */
    int left_n;                        /* PEs that have left */
    int stuck_pe;             /* a PE that raised as this one left while it waited, or -1 */
    symmem_call_t stuck_call; /* the collective it was in */
    int stuck_said;        /* finalize() raised for one, or this PE raised for a leaver: no more */
    mpi_notice_t *out;     /* this PE's own notice, once it has left; NULL: not yet */
    MPI_Request *out_reqs; /* its sends, one to each other PE */
} mpi_departures_t;

/* The liveness of the other PEs (peers.c gathers it, liveness.c checks it). */
typedef struct {
    pid_t *pids;            /* 0 for a PE on another host */
    uint64_t *starts;       /* against pid reuse */
    char status_dir[256];   /* the launcher's exit reports, "" if none */
    heartbeat_t *heartbeat; /* where a PE is on another host; else NULL */
} mpi_peers_t;

struct symmem_backend {
    symmem_bootstrap_t boot;
    int me, n;
    MPI_Comm world; /* a duplicate of the communicator the PEs are */
    MPI_Comm node;  /* the PEs that share this PE's memory (itself alone under
                                   SYMMEM_ONE_HOST_PER_PE) */
    int *node_pes;  /* world PE of each node member */
    int node_n;
    int *local_rank; /* each PE's number on its node */
    size_t heap_size;
    char *base;         /* this PE's heap: aligned to MPI_HEAP_ALIGN */
    MPI_Aint *skew;     /* skew[pe]: where PE pe's heap starts in its part of win */
    char **peer;        /* where this process maps PE pe's heap; NULL: not on this node */
    MPI_Win win;        /* the RMA window over every PE's heap, locked for all */
    MPI_Win shared_win; /* the node's shared window where it is not win; else MPI_WIN_NULL */
    symmem_heap_allocator_t *alloc;
    MPI_Comm teams[SYMMEM_TEAM_MAX]; /* by handle; MPI_COMM_NULL where free */
    mpi_peers_t peers;
    int check_calls;               /* SYMMEM_CHECK: compare fingerprints before each collective */
    int started_mpi;               /* MPI_Init was ours: finalized at exit */
    int finished;                  /* every PE reached finalize (prepare_finalize) */
    symmem_status_t finish_status; /* prepare_finalize's failure, finalize's to return */
    int lost;                      /* a PE died: finalize skips MPI's collective teardown */
    int dirty; /* RMA issued since the last flush: the PE, MPI_DIRTY_MANY, or -1 */
    struct {
        uint64_t key, uses;
    } *team_keys; /* team_init's keys (team_init.c) */
    int team_keys_n;
    uint64_t node_epoch[SYMMEM_TEAM_MAX]; /* this PE's node barriers, by channel (node.c) */
    char *node_tmp;                       /* MPI_NODE_TMP_BYTES for node reductions */
    char *exchange;                       /* exchange.c's messages, NULL until the first */
    char *rma_tmp;                        /* rma_reduce.c's buffers, rma_tmp_bytes of them */
    size_t rma_tmp_bytes;
    mpi_helper_t *helper; /* the thread that makes blocking MPI calls; NULL: none */
    int flush_mode;       /* SYMMEM_MPI_FLUSH_THREAD (flush.c) */
    mpi_departures_t departures;
};

#define MPI_DIRTY_MANY (-2) /* m->dirty: RMA to more than one PE */

/* The core's services (ops.c). */
extern const symmem_core_services_t *symmem__mpi_core;
#define MPI_CORE symmem__mpi_core

/* ---- failure.c: the bottom; every file reports through it ---- */
/* SYMMEM_ERR_BACKEND naming call and what MPI said; for an rc != MPI_SUCCESS. */
symmem_status_t symmem__mpi_failed(int rc, const char *call, const char *what);
/* A PE died or a wait failed: neither finalize nor the exit waits on MPI. */
void symmem__mpi_lost(mpi_t *m);
/* Whether any runtime of this process was lost (the exit skips MPI_Finalize). */
int symmem__mpi_job_lost(void);
#define MPI_TRY(call, what, expr)                                                                  \
    do {                                                                                           \
        int mpi_rc_ = (expr);                                                                      \
        if (mpi_rc_ != MPI_SUCCESS) return symmem__mpi_failed(mpi_rc_, call, what);                \
    } while (0)

/* ---- departures.c: finalize() among the collectives ---- */
/* Receives the others' notices from now on (collective: init). */
symmem_status_t symmem__mpi_departures_start(mpi_t *m);
void symmem__mpi_departures_stop(mpi_t *m);
/* A meeting of team (for collective call) waits from begin to end: begin
 * fails where this PE has left; end counts it where status is OK. */
symmem_status_t symmem__mpi_meeting_begin(mpi_t *m, const symmem_team_view_t *team,
                                          symmem_call_t call);
void symmem__mpi_meeting_end(mpi_t *m, symmem_status_t status);
/* Between a wait's polls: SYMMEM_ERR_PEER_DEAD naming call where the
 * meeting waits for a member that left before it (which is told). */
symmem_status_t symmem__mpi_departures_check(mpi_t *m, const char *call);
/* Tells every other PE that this one has entered finalize() (once). */
symmem_status_t symmem__mpi_leave(mpi_t *m);
/* Whether every PE has left (and heard so), or one raised waiting for this
 * one; then symmem__mpi_left_error says which. */
int symmem__mpi_all_left(mpi_t *m);
symmem_status_t symmem__mpi_left_error(mpi_t *m, const char *call);

/* ---- start.c: init, finalize ---- */
symmem_status_t symmem__mpi_init(const symmem_bootstrap_t *boot, symmem_backend_t **be_p);
/* Every PE meets in finalize(), which no collective matches: fails (the
 * runtime stays) where a PE waited in a collective for this one instead;
 * finalize returns any other failure of it, after letting go. */
symmem_status_t symmem__mpi_prepare_finalize(symmem_backend_t *be);
symmem_status_t symmem__mpi_finalize(symmem_backend_t *be);
int symmem__mpi_can_run(const symmem_bootstrap_t *boot, char *why, size_t why_size);
void symmem__mpi_library_version(symmem_backend_t *be, char *text, size_t size);

/* ---- heap.c: the windows, malloc and free ---- */
symmem_status_t symmem__mpi_heap_create(mpi_t *m);
void symmem__mpi_heap_destroy(mpi_t *m);
symmem_status_t symmem__mpi_malloc(symmem_backend_t *be, size_t size, size_t alignment,
                                   void **ptr_p);
symmem_status_t symmem__mpi_free(symmem_backend_t *be, void *ptr);
void symmem__mpi_heap_range(symmem_backend_t *be, uintptr_t *start_p, size_t *size_p);
/* Every PE's heap starts at a multiple of this, so one offset is aligned on all. */
#define MPI_HEAP_ALIGN ((size_t)2 << 20)
/* team_init's rendezvous table, past the end of every PE's heap (PE 0's is
 * used): a count, then this many entries of two words. */
#define MPI_RENDEZVOUS_ENTRIES 4096
#define MPI_RENDEZVOUS_BYTES ((size_t)8 + 16 * MPI_RENDEZVOUS_ENTRIES)
/* One PE's state on one team channel of the node path (node.c), a cache
 * line of its own: a member that sees the epoch finds the fingerprint on
 * the same line. */
typedef struct {
    _Alignas(64) _Atomic uint64_t epoch; /* node barriers arrived at */
    symmem_call_t call[2];               /* the fingerprint of barrier e, at [e % 2] */
} mpi_node_channel_t;
#define MPI_NODE_CTL_BYTES (sizeof(mpi_node_channel_t) * SYMMEM_TEAM_MAX)
/* Where a PE's channels start, from its heap: past the rendezvous table. */
static inline size_t mpi_node_ctl_offset(const mpi_t *m)
{
    return (m->heap_size + MPI_RENDEZVOUS_BYTES + 63) & ~(size_t)63;
}
/* What each PE's part of the window holds beyond its heap: room to align
 * the heap, the rendezvous table, then the node path's channels. */
#define MPI_WINDOW_EXTRA                                                                           \
    ((MPI_Aint)(MPI_HEAP_ALIGN + MPI_RENDEZVOUS_BYTES + 64 + MPI_NODE_CTL_BYTES))
/* Where this process maps symmetric address ptr on PE pe; NULL: not on this node. */
static inline void *mpi_ptr(const mpi_t *m, const void *ptr, int pe)
{
    if (pe == m->me) return (void *)ptr;
    return m->peer[pe] != NULL ? m->peer[pe] + ((const char *)ptr - m->base) : NULL;
}
/* The displacement of symmetric address sym in PE pe's part of the window. */
static inline MPI_Aint mpi_disp(const mpi_t *m, const void *sym, int pe)
{
    return (MPI_Aint)((const char *)sym - m->base) + m->skew[pe];
}

/* ---- helper.c: blocking MPI calls, bounded ---- */
symmem_status_t symmem__mpi_helper_start(mpi_t *m);
void symmem__mpi_helper_stop(mpi_t *m);
/* A blocking MPI call as a job: its arguments and outputs in one struct of
 * at most MPI_JOB_BYTES (no pointer into the caller's stack); MPI's rc. */
typedef int mpi_job_func_t(void *job);
#define MPI_JOB_BYTES 128
/* Runs run(job) on the helper thread, polled as every wait, and copies the
 * job back once done (directly where there is no helper). Fails naming call
 * and what (PE pe, -1: none) with a dead PE, the time limit, or MPI's rc.
 * sleep: the caller sleeps until the helper wakes it (a long call, whose
 * core then goes to the work), else it polls (a short one). */
symmem_status_t symmem__mpi_blocking(mpi_t *m, const char *call, const char *what, int pe,
                                     mpi_job_func_t *run, void *job, size_t size, int sleep);
/* Fails naming an earlier call that never completed, if one did not. */
symmem_status_t symmem__mpi_helper_check(const mpi_t *m, const char *call);

/* ---- comms.c: communicators, bounded ---- */
symmem_status_t symmem__mpi_comm_dup(mpi_t *m, const char *call, MPI_Comm comm, MPI_Comm *out_p);
symmem_status_t symmem__mpi_comm_split(mpi_t *m, const char *call, MPI_Comm comm, int color,
                                       int key, MPI_Comm *out_p);
/* MPI_Comm_split_type SHARED: the PEs of this node. */
symmem_status_t symmem__mpi_comm_split_shared(mpi_t *m, const char *call, MPI_Comm comm, int key,
                                              MPI_Comm *out_p);
symmem_status_t symmem__mpi_comm_create_group(mpi_t *m, const char *call, MPI_Comm comm,
                                              MPI_Group group, int tag, MPI_Comm *out_p);

/* ---- flush.c: remote completion, bounded ---- */
symmem_status_t symmem__mpi_flush_init(mpi_t *m);
/* MPI_Win_flush of pe (-1: MPI_Win_flush_all), polled as every wait where
 * it leaves the node; fails naming call with a dead PE or the time limit. */
symmem_status_t symmem__mpi_flush(mpi_t *m, const char *call, int pe);
/* MPI_Win_flush_local of pe (the origin's buffers reusable), the same way. */
symmem_status_t symmem__mpi_flush_local(mpi_t *m, const char *call, int pe);

/* ---- rma.c ---- */
symmem_copy_func_t symmem__mpi_put, symmem__mpi_get, symmem__mpi_put_nbi, symmem__mpi_get_nbi;
symmem_status_t symmem__mpi_quiet(symmem_backend_t *be, symmem_stream_t stream);
symmem_status_t symmem__mpi_fence(symmem_backend_t *be, symmem_stream_t stream);

/* ---- signals.c: put_signal, waits on local memory ---- */
symmem_status_t symmem__mpi_put_signal(symmem_backend_t *be, void *dst, const void *src,
                                       size_t nbytes, uint64_t *sig, uint64_t value,
                                       symmem_signal_op_t op, int pe, int nbi,
                                       symmem_stream_t stream);
symmem_status_t symmem__mpi_signal_wait_until(symmem_backend_t *be, uint64_t *sig, symmem_cmp_t cmp,
                                              uint64_t value, symmem_stream_t stream,
                                              uint64_t *value_p);
symmem_status_t symmem__mpi_signal_fetch(symmem_backend_t *be, const uint64_t *sig,
                                         uint64_t *value_p);
symmem_status_t symmem__mpi_wait_until(symmem_backend_t *be, void *ivar, symmem_dtype_t dtype,
                                       symmem_cmp_t cmp, int64_t value);
symmem_status_t symmem__mpi_test(symmem_backend_t *be, void *ivar, symmem_dtype_t dtype,
                                 symmem_cmp_t cmp, int64_t value, int *result_p);

/* ---- atomics.c ---- */
symmem_atomic_func_t symmem__mpi_atomic;

/* ---- progress.c: every blocking wait ---- */
double symmem__mpi_now(void);
/* Polls ready(m, arg) until it returns 1, and fails with a dead peer,
 * SYMMEM_TIMEOUT or an interrupt, naming call. drive: also drive MPI's
 * progress between polls (a wait on memory that other PEs' RMA writes;
 * one whose ready() tests requests drives it itself). */
typedef int mpi_ready_func_t(mpi_t *m, void *arg);
symmem_status_t symmem__mpi_poll(mpi_t *m, const char *call, mpi_ready_func_t *ready, void *arg,
                                 int drive);
/* Between a wait's polls, every MPI_CHECK_SECONDS: Ctrl-C, the peers'
 * liveness and SYMMEM_TIMEOUT (counted from started), each an error
 * naming call. */
#define MPI_CHECK_SECONDS 0.02 /* liveness checks read /proc */
symmem_status_t symmem__mpi_still_waiting(mpi_t *m, const char *call, double started);
/* Waits for req to complete, the same way. */
symmem_status_t symmem__mpi_wait(mpi_t *m, const char *call, MPI_Request *req);
/* Waits for count requests the same way; where MPI failed one, returns
 * SYMMEM_OK with *rc_p MPI's code (the caller says what failed), else
 * leaves *rc_p MPI_SUCCESS. */
symmem_status_t symmem__mpi_wait_all(mpi_t *m, const char *call, MPI_Request *reqs, int count,
                                     int *rc_p);

/* ---- peers.c: what liveness.c watches, learnt at init (collective) ---- */
symmem_status_t symmem__mpi_peers_init(mpi_t *m);
void symmem__mpi_peers_free(mpi_t *m);
/* The heartbeat to PE 0 where a PE is on another host (collective);
 * stop: finished says every PE has reached finalize. */
symmem_status_t symmem__mpi_heartbeat_start(mpi_t *m);
void symmem__mpi_heartbeat_stop(mpi_t *m, int finished);

/* ---- liveness.c ---- */
/* SYMMEM_ERR_PEER_DEAD naming call and the first PE found dead; else OK.
 * Before peers_init, the launcher's exit reports only. */
symmem_status_t symmem__mpi_peers_check(mpi_t *m, const char *call);

/* ---- calls.c: fingerprints compared before a collective ---- */
/* Every member of team made call (compared on its communicator, a
 * meeting), else SYMMEM_ERR_MISMATCH on every member naming what each
 * called. Skipped where SYMMEM_CHECK=0 unless always. */
symmem_status_t symmem__mpi_check_call(mpi_t *m, const symmem_team_view_t *team, symmem_call_t call,
                                       int always);
/* "reduce": the collective a fingerprint names. */
const char *symmem__mpi_call_name(symmem_call_t call);
/* The world PE of member i of team. */
static inline int mpi_member(const symmem_team_view_t *team, int i)
{
    return team->members ? team->members[i] : i;
}
/* The fingerprint of a collective on team. */
static inline symmem_call_t mpi_call(symmem_call_kind_t kind, const symmem_team_view_t *team,
                                     uint64_t count, int dtype, int op, int root)
{
    return symmem__call(kind, team->channel, count, dtype, op, root);
}

/* ---- node.c: barriers among PEs of one node, over the shared window ---- */
/* Whether every member of team maps every other's heap (the node path). */
int symmem__mpi_on_node(const mpi_t *m, const symmem_team_view_t *team);
/* The members of a new team (comm) raise their epochs on its channel to a
 * common base (collective). */
symmem_status_t symmem__mpi_node_channel_open(mpi_t *m, const char *call, MPI_Comm comm,
                                              int channel);
/* Every member of team arrived with the same fingerprint, else
 * SYMMEM_ERR_MISMATCH on every member naming what each called. */
symmem_status_t symmem__mpi_node_barrier(mpi_t *m, const symmem_team_view_t *team,
                                         symmem_call_t call);

/* ---- node_collectives.c: the collectives of the node path ---- */
#define MPI_NODE_TMP_BYTES (64 * 1024)
symmem_status_t symmem__mpi_node_reduce(mpi_t *m, const symmem_team_view_t *team, void *dst,
                                        const void *src, size_t nelems, symmem_dtype_t dtype,
                                        symmem_reduce_op_t op);
symmem_status_t symmem__mpi_node_reducescatter(mpi_t *m, const symmem_team_view_t *team, void *dst,
                                               const void *src, size_t nelems, symmem_dtype_t dtype,
                                               symmem_reduce_op_t op);
symmem_status_t symmem__mpi_node_move(mpi_t *m, const symmem_team_view_t *team,
                                      symmem_call_kind_t kind, void *dst, const void *src,
                                      size_t nbytes);
symmem_status_t symmem__mpi_node_broadcast(mpi_t *m, const symmem_team_view_t *team, void *dst,
                                           const void *src, size_t nbytes, int root);

/* ---- exchange.c: fingerprints (and small reductions) in one exchange ---- */
#define MPI_EXCHANGE_MAX_PES 8       /* teams up to this size exchange */
#define MPI_EXCHANGE_DATA (8 * 1024) /* the most data bytes a message carries */
int symmem__mpi_exchange_fits(const symmem_team_view_t *team);
/* Sends every other member of team call's fingerprint and bytes of data,
 * and receives theirs: SYMMEM_ERR_MISMATCH on every member naming what
 * each called where they differ (SYMMEM_CHECK on). *slots_p: member i's
 * data at i * (16 + MPI_EXCHANGE_DATA), valid until the next exchange. */
symmem_status_t symmem__mpi_exchange(mpi_t *m, const symmem_team_view_t *team, symmem_call_t call,
                                     const void *data, size_t bytes, const char **slots_p);
/* reduce of bytes <= MPI_EXCHANGE_DATA (nelems elements) by one exchange. */
symmem_status_t symmem__mpi_exchange_reduce(mpi_t *m, const symmem_team_view_t *team, void *dst,
                                            const void *src, size_t nelems, size_t bytes,
                                            symmem_dtype_t dtype, symmem_reduce_op_t op);

/* ---- meet.c: a team's meeting, which every collective call makes first ---- */
/* Every member of team arrives with fingerprint call: over the node's
 * shared window (node.c), by one exchange (small teams), else on the
 * team's communicator, comparing the fingerprints where compare (else a
 * barrier). Any two collective calls on a team meet so, and raise
 * SYMMEM_ERR_MISMATCH where they differ, never wait apart. */
symmem_status_t symmem__mpi_meet(mpi_t *m, const symmem_team_view_t *team, symmem_call_t call,
                                 int compare);
/* MPI_Ibarrier on comm, polled (no meeting: all are in one call already). */
symmem_status_t symmem__mpi_comm_barrier(mpi_t *m, const char *call, MPI_Comm comm);
/* TEAM_WORLD's view, in *view. */
const symmem_team_view_t *symmem__mpi_world_view(const mpi_t *m, symmem_team_view_t *view);

/* ---- rma_reduce.c: reductions across hosts by MPI_Rget ---- */
/* reduce (scatter 0) or reducescatter (1) of nelems elements: a reduce-
 * scatter by MPI_Rget, then for reduce an all-gather by MPI_Rget, with the
 * fingerprint check at the first of their meetings. dst and src symmetric. */
symmem_status_t symmem__mpi_rma_reduce(mpi_t *m, const symmem_team_view_t *team, void *dst,
                                       const void *src, size_t nelems, symmem_dtype_t dtype,
                                       symmem_reduce_op_t op, int scatter);

/* ---- teams.c ---- */
symmem_status_t symmem__mpi_teams_init(mpi_t *m);
void symmem__mpi_teams_free(mpi_t *m);
symmem_team_split_strided_func_t symmem__mpi_team_split_strided;
symmem_team_split_2d_func_t symmem__mpi_team_split_2d;
symmem_team_destroy_func_t symmem__mpi_team_destroy;
symmem_team_init_func_t symmem__mpi_team_init; /* team_init.c */
symmem_predefined_team_func_t symmem__mpi_predefined_team;

/* ---- collectives.c: barriers and data collectives ---- */
symmem_world_sync_func_t symmem__mpi_barrier_all, symmem__mpi_sync_all;
symmem_team_sync_func_t symmem__mpi_barrier, symmem__mpi_sync;
symmem_reduce_func_t symmem__mpi_reduce, symmem__mpi_reducescatter;
symmem_move_func_t symmem__mpi_alltoall, symmem__mpi_fcollect;
symmem_broadcast_func_t symmem__mpi_broadcast;

#endif
