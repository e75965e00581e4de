/* The heartbeat of a job whose PEs span hosts (heartbeat.c). A PE on another
 * host cannot be checked by its pid, so every PE keeps a TCP connection to
 * PE 0, and a thread on each end beats over it once a second. A process that
 * dies closes its connection at once (the kernel does it); a host that dies
 * or a process that stops falls silent. PE 0 tells every PE which PE it lost,
 * and every PE counts PE 0 lost when its connection ends or falls silent.
 * A PE that finalizes says goodbye first, so its end is no death. Needs
 * nothing of CUDA: tests/c/test_heartbeat.c runs it on any machine. Compiled
 * into the gpu and mpi backends (their own shared objects), which both use it. */
#ifndef SYMMEM_HEARTBEAT_H
#define SYMMEM_HEARTBEAT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define HEARTBEAT_ADDRS 3

/* How the PEs reach PE 0, handed to them over the job's own agreement. */
typedef struct {
    uint32_t addrs[HEARTBEAT_ADDRS]; /* IPv4, network order, tried in turn; 0: none */
    uint16_t port;                   /* host order; 0: PE 0 has no heartbeat */
    uint64_t token;                  /* a random number each PE presents to PE 0 */
} heartbeat_hub_t;

typedef struct heartbeat_peer heartbeat_peer_t;

typedef struct {
    int me, n_pes;
    double silence_limit; /* seconds without a beat before a peer counts as lost; 0: never */
    heartbeat_hub_t hub;
    int listen_fd;           /* PE 0's; -1 elsewhere */
    heartbeat_peer_t *peers; /* PE 0: one per PE; elsewhere: [0] is PE 0 */
    int wake[2];             /* a pipe: a byte stops the thread */
    pthread_t thread;
    int running;
    _Atomic int lost_pe; /* the first PE lost; -1 while none */
    char how[200];       /* how it was lost: written before lost_pe */
} heartbeat_t;

/* PE 0: listens on the IPv4 addresses of this host (those of interfaces
 * named ifname..., NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME, where it is set) and
 * starts the thread; h->hub says how to reach it. 0, or -1 with why. */
int symmem__heartbeat_serve(heartbeat_t *h, int n_pes, double silence_limit, const char *ifname,
                            char *why, size_t why_size);
/* Every other PE: connects to PE 0 through hub and starts the thread. */
int symmem__heartbeat_join(heartbeat_t *h, int me, int n_pes, double silence_limit,
                           const heartbeat_hub_t *hub, char *why, size_t why_size);
/* The first PE lost, with how it ended in how; -1 while every PE runs. */
int symmem__heartbeat_lost(heartbeat_t *h, char *how, size_t how_size);
/* Ends the thread and the connections. finished: this PE ends on purpose
 * (every PE has reached finalize), which the others are told. */
void symmem__heartbeat_stop(heartbeat_t *h, int finished);

#endif
