/*
 * The cpu engine: one process per PE on one host. Each PE's symmetric heap is
 * a shared-memory file that every PE maps, so put and get are copies into or
 * out of a peer's mapping. A control segment holds one slot per PE:
 * liveness, the doorbell that wakes sleeping waiters, barrier epochs and
 * collective agreement. The names (control.c, segment.c):
 *   /dev/shm/symmem-<uid>-<job>-ctl               the control segment
 *   /dev/shm/symmem-<uid>-<job>-<nonce>-heap<pe>  PE pe's heap
 * where nonce is a random number the control segment's maker chose. Every
 * file is created exclusively with mode 0600 and, before it is mapped,
 * checked to be ours, private, a regular file and of the right size. All
 * names are unlinked once every PE has mapped them; a job killed before
 * that leaves files the next job of the same name recognises as stale
 * (every process recorded in the control segment is gone) and removes.
 */
#ifndef SYMMEM_CPU_H
#define SYMMEM_CPU_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../core/backend.h"
#include "../../core/bootstrap.h"
#include "../../core/calls.h" /* symmem_call_t: a collective's fingerprint */
#include "../../core/heap_alloc.h"

#define CPU_CTL_MAGIC 0x53594d4d454d4333ULL /* "SYMMEMC3": this layout */
#define CPU_CACHELINE 64
#define CPU_BARRIER_CHANNELS 64 /* channel 0: TEAM_WORLD */

/* PE_FINALIZED: the PE has entered finalize() and takes part in no more
 * collectives. PE_FAILED: the PE claimed its slot, then failed to start. */
enum { PE_ABSENT = 0, PE_JOINED = 1, PE_FINALIZED = 2, PE_FAILED = 3 };

/* What a PE publishes for one collective agreement (malloc, free, ...). */
typedef struct {
    uint64_t seq;   /* which agreement this is, counted from 1 */
    uint64_t value; /* the argument every PE must agree on */
} cpu_agree_t;

/* One PE's state on one barrier channel, a cache line of its own: a peer
 * that sees the epoch finds the fingerprint on the same line. */
typedef struct {
    alignas(CPU_CACHELINE) _Atomic uint64_t epoch; /* barriers arrived at */
    symmem_call_t call[2];                         /* the fingerprint of barrier e, at [e % 2] */
} cpu_channel_t;

/* The crossed check (crossed.c) covers jobs of up to this many PEs. */
#define CPU_CROSSED_MAX_PES 1024

/* The barrier a PE has waited in for a poll or more, for the crossed check:
 * written only by its PE (crossed.c), read by the others as a seqlock on
 * seq. While seq is up, the PE's epochs do not change. */
typedef struct {
    alignas(CPU_CACHELINE) _Atomic uint64_t seq; /* 0: none; else the wait's number */
    _Atomic uint64_t raised;      /* == seq: it raised a crossed mismatch from that wait */
    _Atomic uint64_t epoch;       /* the epoch it waits for on channel */
    _Atomic uint64_t what, count; /* its fingerprint (symmem_call_t) */
    _Atomic int32_t channel;
    _Atomic uint64_t members[CPU_CROSSED_MAX_PES / 64]; /* bit pe: PE pe is in the team */
} cpu_blocked_t;

/* One PE's slot in the control segment. Fields written by others sit on
 * their own cache lines so that waking and arriving do not false-share. */
typedef struct {
    _Atomic uint32_t state; /* PE_*; set with release after start_time and host */
    /* 0 until a process claims the slot by compare-and-swap from 0 to its
     * pid; only the winner then writes start_time and host. */
    _Atomic int32_t pid;
    _Atomic uint64_t start_time; /* /proc/<pid>/stat field 22, against pid reuse */
    char host[64];
    alignas(CPU_CACHELINE) _Atomic uint32_t doorbell; /* bumped by every waker */
    _Atomic uint32_t sleepers[2]; /* waiters in futex_wait, by cpu_wait_kind_t */
    cpu_channel_t channel[CPU_BARRIER_CHANNELS];
    /* double-buffered by seq, one pair per channel: only that channel's team reads it */
    alignas(CPU_CACHELINE) cpu_agree_t agree[CPU_BARRIER_CHANNELS][2];
    /* team_init's rendezvous: what this PE asks for (key last, with release) */
    alignas(CPU_CACHELINE) _Atomic uint64_t init_key; /* 0: not in team_init */
    int32_t init_npes;
    int32_t init_index;
    uint64_t init_done_before;  /* init_done when this request was made */
    uint64_t init_channels;     /* channels_in_use */
    uint64_t init_max_epoch;    /* the largest of its barrier counts */
    uint64_t init_max_seq;      /* the largest of its agreement counts */
    _Atomic uint64_t init_done; /* team_inits this PE has finished */
    cpu_blocked_t blocked;
} cpu_pe_slot_t;

#define CPU_NONCE_SIZE 40 /* 32 hex digits, NUL-padded */
#define CPU_KEY_SIZE 64

/* Written once by its maker into zero-filled pages, before the name exists. */
typedef struct {
    uint64_t magic;
    int32_t nranks;
    int32_t maker_pid;         /* the PE that made the segment: it is live while */
    uint64_t maker_start_time; /* this process or any slot's owner runs */
    uint64_t heap_size;
    char nonce[CPU_NONCE_SIZE];                   /* random; part of the heap files' names */
    char key[CPU_KEY_SIZE];                       /* the job's identity (symmem_job_identity_t) */
    alignas(CPU_CACHELINE) cpu_pe_slot_t slots[]; /* nranks of them */
} cpu_ctl_t;

struct symmem_backend {
    symmem_bootstrap_t boot;
    int me;
    int n;
    int oversubscribed; /* more PEs than cores: waiters yield while they spin */
    /* this PE's spin before sleeping now (wait.c adapts it; threads that wait
     * at once may each update it: a hint, relaxed) */
    _Atomic double spin_us;
    cpu_ctl_t *ctl;
    size_t ctl_size;
    int ctl_fd;   /* open during init only */
    int claimed;  /* we won our slot in ctl */
    char **heaps; /* heaps[pe]: where PE pe's heap is mapped here */
    size_t heap_size;
    int heap_fd;                          /* our own heap file, for fallocate */
    uint64_t epoch[CPU_BARRIER_CHANNELS]; /* our count of barriers per channel */
    uint64_t agree_seq[CPU_BARRIER_CHANNELS];
    uint64_t channels_in_use; /* bit c: a team of ours synchronises on channel c */
    int no_check;             /* SYMMEM_CHECK=0: barriers carry no fingerprint */
    uint64_t blocked_seq;     /* records of ours in slot.blocked so far */
    int ncrossed;             /* after a crossed mismatch: the other PEs of the cycle, */
    int *crossed_pes;         /* [n], and the numbers of their waits that we saw */
    uint64_t *crossed_seqs;   /* [n] */
    int *world_members;       /* 0..n-1 */
    symmem_team_view_t world;
    void *allocator; /* symmem_heap_allocator_t */
};

typedef symmem_backend_t cpu_t;

/* ---- segment.c: shared-memory files ---- */
/* /dev/shm/symmem-<uid>-<job>-<what> (nonce NULL) or -<nonce>-<what><pe>. */
void symmem__cpu_segment_name(char *out, size_t size, const char *job, const char *nonce,
                              const char *what, int pe);
/* Opens an existing segment for reading and writing without following a
 * symbolic link, and checks that it is ours, private (no group or other
 * access), a regular file with one name and, if size > 0, exactly size bytes;
 * what names it in messages. SYMMEM_ERR_BOOTSTRAP otherwise. With missing_p,
 * a file that does not exist sets *missing_p = 1 instead of failing. */
symmem_status_t symmem__cpu_segment_open(const char *name, const char *what, size_t size, int *fd_p,
                                         int *missing_p);
/* Whether name still names the file open as fd. */
int symmem__cpu_segment_named(int fd, const char *name);
symmem_status_t symmem__cpu_heap_create(cpu_t *cpu);
symmem_status_t symmem__cpu_heap_map_peer(cpu_t *cpu, int pe);
/* Unlinks our heap's name; PE 0, if it holds its slot, also every other
 * heap's and the control segment's; and so does any PE holding its slot
 * whose init failed (failed = 1): the job cannot start, and the PEs that
 * would have removed them (PE 0 among them) may never come. */
void symmem__cpu_segments_unlink(cpu_t *cpu, int failed);
/* Replaces every mapping with private zero pages, so stale views never fault. */
void symmem__cpu_segments_retire(cpu_t *cpu);
/* Commits [offset, offset+size) of our heap; SYMMEM_ERR_NO_MEMORY if /dev/shm is full. */
symmem_status_t symmem__cpu_heap_commit(cpu_t *cpu, size_t offset, size_t size);
void symmem__cpu_heap_release(cpu_t *cpu, size_t offset, size_t size);

/* ---- control.c: the control segment ---- */
/* How long init waits for every PE to start where SYMMEM_TIMEOUT is unset. */
#define CPU_INIT_TIMEOUT_SECONDS 120.0
/* Joins the job's control segment, making it if there is none and replacing
 * it if it is stale; refuses one of another job (a different key), with
 * another number of PEs or heap size, or that fails the checks of
 * symmem__cpu_segment_open. A full /dev/shm is SYMMEM_ERR_NO_MEMORY. Waits
 * for no other PE, so no deadline bounds it (SYMMEM_TIMEOUT bounds waits). */
symmem_status_t symmem__cpu_ctl_join(cpu_t *cpu, const symmem_job_identity_t *id);
/* Claims our slot (pid by compare-and-swap, then start time and host); fails
 * naming the process that holds it. Does not publish the state. */
symmem_status_t symmem__cpu_slot_claim(cpu_t *cpu);
/* Publishes our slot's state (PE_JOINED or PE_FAILED) and wakes the others. */
void symmem__cpu_slot_publish(cpu_t *cpu, uint32_t state);
/* Waits until every PE has published its slot; fails if one failed to
 * start or is on another host. */
symmem_status_t symmem__cpu_slots_wait_joined(cpu_t *cpu, double deadline);
/* The last error, a timeout in init's start-up, with the bound that expired
 * (SYMMEM_TIMEOUT, or init's own) and what to do. */
symmem_status_t symmem__cpu_start_up_timed_out(cpu_t *cpu);

/* ---- peers.c: is a peer alive? ---- */
/* 1 if PE pe is gone; how it ended goes into how, and when (wall clock, from
 * the launcher's report; huge if unknown) into *when_p. */
int symmem__cpu_peer_dead(cpu_t *cpu, int pe, char *how, size_t how_size, double *when_p);

/* ---- wait.c: doorbells and the one wait loop ---- */
double symmem__cpu_now(void);
/* What a sleeping PE waits for: its peers (barriers, start-up), or data
 * (signal_wait, wait_until). A put wakes only data waiters, so puts to a PE
 * that sleeps in a barrier cost no system call. */
typedef enum { CPU_WAIT_PEERS = 0, CPU_WAIT_DATA = 1 } cpu_wait_kind_t;
/* Wakes PE pe if it sleeps in a wait of this kind (call after the store it
 * waits for). */
void symmem__cpu_ring(cpu_t *cpu, int pe, cpu_wait_kind_t kind);
typedef int (*cpu_ready_func_t)(void *arg);
/* Lists, into out, the PEs still awaited (for messages). */
typedef void (*cpu_pending_func_t)(void *arg, char *out, size_t size);
/* A check a wait makes at each poll, besides its own: a status to end it with. */
typedef symmem_status_t (*cpu_stuck_func_t)(void *arg);
/* Waits until ready(arg). Fails with PEER_DEAD when a peer dies or TIMEOUT
 * when SYMMEM_TIMEOUT (or deadline, if > 0) passes; call names the caller.
 * stuck (may be NULL) runs at every poll, before those checks. */
symmem_status_t symmem__cpu_wait(cpu_t *cpu, const char *call, cpu_wait_kind_t kind,
                                 cpu_ready_func_t ready, cpu_pending_func_t pending,
                                 cpu_stuck_func_t stuck, void *arg, double deadline);

/* ---- barrier.c: barriers, agreement, finalize's rendezvous ---- */
/* The fingerprint of a collective on team (dtype, op, root: 0 where the call
 * has none). */
static inline symmem_call_t cpu_call(symmem_call_kind_t kind, const symmem_team_view_t *team,
                                     uint64_t count, int dtype, int op, int root)
{
    return symmem__call(kind, team->channel, count, dtype, op, root);
}
/* Waits until every member of the team arrives on its channel, each with the
 * same fingerprint: else SYMMEM_ERR_MISMATCH on every member, naming what
 * each called; SYMMEM_ERR_PEER_DEAD at once if a member has entered
 * finalize() instead. */
symmem_status_t symmem__cpu_barrier(cpu_t *cpu, const symmem_team_view_t *team, symmem_call_t call);
symmem_status_t symmem__cpu_barrier_world(cpu_t *cpu, symmem_call_kind_t kind);
/* Every member publishes value in step (1, 2, ...) of the collective kind;
 * values_p[i] gets member i's value. */
symmem_status_t symmem__cpu_agree(cpu_t *cpu, symmem_call_kind_t kind, int step,
                                  const symmem_team_view_t *team, uint64_t value,
                                  uint64_t *values_p);
/* finalize's rendezvous: marks this PE PE_FINALIZED (so that peers in a
 * collective raise at once) and waits until every PE has done so. */
symmem_status_t symmem__cpu_leave(cpu_t *cpu);

/* ---- crossed.c: PEs waiting for each other in barriers of different teams ---- */
/* Publishes that this PE waits in a barrier (channel, epoch, fingerprint,
 * the team's members); cleared by symmem__cpu_blocked_clear. */
void symmem__cpu_blocked_publish(cpu_t *cpu, int channel, uint64_t epoch, symmem_call_t call,
                                 const int *members, int count);
void symmem__cpu_blocked_clear(cpu_t *cpu);
/* Looks for a deadlock of published barrier waits through this PE (each
 * waiting for the next to arrive on its team's channel), complete (none of
 * its PEs waits for another PE) or, after 10 polls of this wait (polls: how
 * many it has made), as it is. Then SYMMEM_ERR_MISMATCH naming each PE of
 * it and its call; our arrival is taken back and our record stays up
 * (marked raised) until symmem__cpu_crossed_settle. */
symmem_status_t symmem__cpu_crossed_check(cpu_t *cpu, const char *call, int polls);
/* Before this PE's next step after a crossed mismatch: waits until the other
 * PEs of the cycle have raised it too (or left their waits), then takes our
 * record down. Nothing to do (and no cost) otherwise. */
symmem_status_t symmem__cpu_crossed_settle(cpu_t *cpu, const char *call);

/* ---- teams.c, collectives.c, atomics.c: the slots of the same names ---- */
symmem_team_split_strided_func_t symmem__cpu_team_split_strided;
symmem_team_split_2d_func_t symmem__cpu_team_split_2d;
symmem_team_destroy_func_t symmem__cpu_team_destroy;
symmem_team_init_func_t symmem__cpu_team_init;
symmem_team_sync_func_t symmem__cpu_team_barrier, symmem__cpu_team_sync;
symmem_reduce_func_t symmem__cpu_reduce, symmem__cpu_reducescatter;
symmem_move_func_t symmem__cpu_alltoall, symmem__cpu_fcollect;
symmem_broadcast_func_t symmem__cpu_broadcast;
symmem_atomic_func_t symmem__cpu_atomic;

/* ---- copy.c ---- */
/* memcpy, or cache-bypassing stores when the whole transfer (total bytes, of
 * which this is n) is at least SYMMEM_NT_COPY_MIN. dst and src don't overlap. */
void symmem__cpu_copy(void *dst, const void *src, size_t n, size_t total);
size_t symmem__cpu_streaming_threshold(void);

/* The synchronisation channel of a team: the predefined teams of every PE
 * share channel 0, the one-PE ones channel 1 (only their member reads it),
 * and a split team uses its handle. */
static inline int cpu_channel(const symmem_team_view_t *team)
{
    switch (team->channel) {
    case SYMMEM_TEAM_SAME_MYPE_NODE:
    case SYMMEM_TEAM_SAME_GPU: return 1;
    case SYMMEM_TEAM_WORLD:
    case SYMMEM_TEAM_SHARED:
    case SYMMEM_TEAM_NODE:
    case SYMMEM_TEAM_GPU_LEADERS: return 0;
    default: return team->channel;
    }
}

/* Where this process sees PE pe's copy of our symmetric address ptr. */
static inline char *cpu_peer(cpu_t *cpu, const void *ptr, int pe)
{
    return cpu->heaps[pe] + ((const char *)ptr - cpu->heaps[cpu->me]);
}

#endif
