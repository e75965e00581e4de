/* The gpu backend's call pages: how PEs on one host see which collective
 * each of the others is in, and whether it has called finalize(), without a
 * GPU. NVSHMEM's collectives carry no fingerprint, so each PE publishes one
 * for every collective it enqueues in a page of shared memory of its own,
 * which every same-host peer maps read-only:
 *   /dev/shm/symmem-<uid>-gpu-<pid>-<start time>
 * made exclusively with mode 0600, filled before its name is handed out,
 * checked (owner, type, mode, size, magic) by each peer that opens it, and
 * unlinked once every PE has mapped the pages (init), so a running job has
 * no names in /dev/shm. Peers on other hosts have no page here: their calls
 * are not checked.
 *
 * Collectives are counted per team (collectives on different teams may
 * interleave): a member's k-th collective on a team must match every other
 * member's k-th on it. A page keeps the newest GPU_CALL_RING records; an
 * older one may be gone, and is then not checked.
 *
 * Nothing here calls CUDA or the core: tests/c/test_call_page.c runs it in
 * plain processes. A page read from a peer is never trusted beyond the
 * checks made when it was opened: every index taken from it is bounded, so
 * a corrupt page can cause a wrong verdict but no out-of-bounds access. */
#ifndef SYMMEM_GPU_CALL_PAGE_H
#define SYMMEM_GPU_CALL_PAGE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../core/calls.h"

#define GPU_CALL_PAGE_MAGIC 0x53594d4d47435032ULL /* "SYMMGCP2": this layout */
#define GPU_CALL_RING 16
#define GPU_CALL_TEAMS 64     /* team handles: SYMMEM_TEAM_MAX */
#define GPU_CALL_MAX_PEERS 64 /* same-host members a check compares */

enum { GPU_PE_RUNNING = 1, GPU_PE_FINALIZING = 2 };

/* One published collective. stamp is the page's publication number (never
 * reused), 0 while the record is being written: a seqlock, so that a
 * reader never compares a torn record. */
typedef struct {
    _Atomic uint64_t stamp;
    _Atomic uint64_t team_key;    /* calls.c's team key: handle and members */
    _Atomic uint64_t seq;         /* the k-th collective on that team, from 1 */
    _Atomic uint64_t what, count; /* the fingerprint, symmem_call_t */
} gpu_call_record_t;

typedef struct {
    uint64_t magic;
    uint64_t size;            /* sizeof(gpu_call_page_t) */
    _Atomic uint32_t state;   /* GPU_PE_*, FINALIZING set with release */
    _Atomic uint64_t blocked; /* stamp of the collective this PE waits for on the host; 0 */
    _Atomic uint64_t team_key[GPU_CALL_TEAMS];
    _Atomic uint64_t team_seq[GPU_CALL_TEAMS]; /* collectives published on the team */
    /* The team this PE last destroyed at each handle and how many
     * collectives it had published there: a peer still checking one of
     * them then knows that this PE entered it (its record is withdrawn). */
    _Atomic uint64_t retired_key[GPU_CALL_TEAMS];
    _Atomic uint64_t retired_seq[GPU_CALL_TEAMS];
    gpu_call_record_t ring[GPU_CALL_RING]; /* the record with stamp s at [s % RING] */
} gpu_call_page_t;

/* One collective of this PE, as the checks compare it. */
typedef struct {
    int handle;
    uint64_t team_key;
    uint64_t seq;
    uint64_t stamp;
    symmem_call_t call;
    int npeers;                    /* same-host members other than this PE */
    int peers[GPU_CALL_MAX_PEERS]; /* their world PE numbers */
} gpu_call_ref_t;

typedef struct {
    int n_pes, me;
    gpu_call_page_t *mine;
    const gpu_call_page_t **peers; /* [n_pes]: NULL for this PE and other hosts */
    char name[128];                /* this PE's page, "" once unlinked */
    uint64_t stamp;                /* publications so far */
    uint64_t team_key[GPU_CALL_TEAMS];
    uint64_t team_seq[GPU_CALL_TEAMS];
} gpu_calls_t;

/* The key of a team: equal on every member of it, different for another
 * team (another handle or other members). Never 0. */
uint64_t symmem__gpu_calls_team_key(int handle, const int *members, int n);

/* Creates this PE's page (start: this process's start time, for the name).
 * 0, or -1 with the reason in why (naming the file). */
int symmem__gpu_calls_create(gpu_calls_t *c, int n_pes, int me, uint64_t start, char *why,
                             size_t why_size);
/* Maps PE pe's page read-only after checking it; 0 or -1 with why. */
int symmem__gpu_calls_open_peer(gpu_calls_t *c, int pe, pid_t pid, uint64_t start, char *why,
                                size_t why_size);
/* Removes this PE's page's name (the mapping stays). */
void symmem__gpu_calls_unlink(gpu_calls_t *c);
/* Unmaps every page and unlinks this PE's if still named. */
void symmem__gpu_calls_free(gpu_calls_t *c);

/* Makes handle name the team of these members (init: the predefined teams;
 * a split or team_init: the new team), its count starting from 0. */
void symmem__gpu_calls_set_team(gpu_calls_t *c, int handle, const int *members, int n);
/* Publishes this PE's next collective on the team into ref (members: the
 * team's world PEs); ref->peers gets the same-host members to compare. */
void symmem__gpu_calls_publish(gpu_calls_t *c, int handle, const int *members, int n,
                               symmem_call_t call, gpu_call_ref_t *ref);
/* Takes back ref, this PE's newest collective on its team, which raised
 * before it was launched (peers then never see this PE ahead of them). */
void symmem__gpu_calls_unpublish(gpu_calls_t *c, const gpu_call_ref_t *ref);
/* A team destroyed: its count starts afresh and its records are withdrawn;
 * the page keeps its key and count as the handle's retired team, so that
 * find tells a peer that this PE entered those collectives (GONE), never
 * that it has not yet (NOT_YET, which finalize() would take for leaving). */
void symmem__gpu_calls_forget_team(gpu_calls_t *c, int handle);

enum { GPU_RECORD_FOUND, GPU_RECORD_NOT_YET, GPU_RECORD_GONE };
/* PE pe's record of its seq-th collective on the team (handle, key); pe
 * may be this PE. GONE: pe published it but the record is no longer there
 * (overwritten in the ring, or the team destroyed since). */
int symmem__gpu_calls_find(const gpu_calls_t *c, int pe, int handle, uint64_t team_key,
                           uint64_t seq, symmem_call_t *call_p);

enum { GPU_VERDICT_MATCH, GPU_VERDICT_WAITING, GPU_VERDICT_MISMATCH, GPU_VERDICT_LEFT };
/* Compares ref with every peer's record of it: MISMATCH if one published
 * another fingerprint (only if check), else LEFT if one called finalize()
 * without having entered this collective (*culprit_p names it), else
 * WAITING if one has not published yet, else MATCH. calls/pes get this PE's
 * and every published peer's fingerprint (*n_p of them, for messages);
 * records gone from a ring count as matching. */
int symmem__gpu_calls_verdict(const gpu_calls_t *c, const gpu_call_ref_t *ref, int check,
                              symmem_call_t *calls, int *pes, int *n_p, int *culprit_p);

uint32_t symmem__gpu_calls_state(const gpu_calls_t *c, int pe);
void symmem__gpu_calls_set_state(gpu_calls_t *c, uint32_t state);
/* Says (stamp) or unsays (0) that this PE waits on the host for a collective. */
void symmem__gpu_calls_set_blocked(gpu_calls_t *c, uint64_t stamp);
/* 1 if PE pe waits on the host in a collective of a team this PE belongs
 * to that this PE has not entered yet (so it waits for this PE): its
 * fingerprint in *call_p. */
int symmem__gpu_calls_waits_for_me(const gpu_calls_t *c, int pe, symmem_call_t *call_p);
/* 1 if PE pe has published more collectives than this PE on a team both
 * are in (this PE, finalizing, will never enter them): the first of those
 * in *call_p (kind 0 if its record is gone). */
int symmem__gpu_calls_ahead(const gpu_calls_t *c, int pe, symmem_call_t *call_p);

/* A cycle of same-host PEs through this one, each waiting on the GPU for
 * the next (it has published more collectives than the next on a team both
 * are in; the last waits for this PE): its length (at most max), with the
 * PEs in pes (this PE first) and the call each waits in in calls (kind 0 if
 * its record is gone); 0 if there is none. PEs finalizing take no part. */
int symmem__gpu_calls_cycle(const gpu_calls_t *c, int *pes, symmem_call_t *calls, int max);
/* A number that changes whenever a PE of this host publishes (or takes
 * back) a collective. */
uint64_t symmem__gpu_calls_progress(const gpu_calls_t *c);

#endif
