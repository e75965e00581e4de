/* Which peers of a gpu job still run: learned once at init, asked a few
 * times a second while a PE waits on the GPU, so that a peer that died
 * turns the wait into an error instead of a hang. A peer on this host is
 * checked by its pid, one on another host by the heartbeat. */
#ifndef SYMMEM_GPU_PEER_WATCH_H
#define SYMMEM_GPU_PEER_WATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../core/backend.h"
#include "../../core/heartbeat.h"

typedef struct {
    int n_pes, me;
    pid_t *pids;          /* 0 for a peer on another host: only its exit report tells */
    uint64_t *starts;     /* against pid reuse */
    char status_dir[256]; /* the launcher's exit reports, "" if none */
    int elsewhere;        /* how many PEs are on other hosts */
    heartbeat_t *remote;  /* their heartbeat, once it runs; else NULL */
} peer_watch_t;

/* What this PE tells the others: (host, pid) in one int64, then its start
 * time. host: the bootstrap's name for this PE's host. */
int64_t symmem__gpu_peer_watch_host_pid(const char *host);
int64_t symmem__gpu_peer_watch_start_time(const symmem_core_services_t *core);

/* From every PE's two values; 0, or -1 when out of memory. */
int symmem__gpu_peer_watch_init(peer_watch_t *w, int n_pes, int me, const int64_t *host_pids,
                                const int64_t *starts, const char *status_dir);
void symmem__gpu_peer_watch_free(peer_watch_t *w);
/* The first PE found dead, with how it ended in how; -1 if all run. */
int symmem__gpu_peer_watch_find_dead(const peer_watch_t *w, const symmem_core_services_t *core,
                                     char *how, size_t how_size);

#endif
