/* The symmem engine's wires between the PEs of one host: a Unix socket
 * between every pair of PEs, made at init, over which they exchange small
 * values and hand each other file descriptors (the heap's CUDA memory,
 * exported). Sockets in Linux's abstract namespace, named by the job, need
 * no file and vanish with their process; each connection is checked
 * (SO_PEERCRED: this user) and introduced (the job, the PE, the job's size)
 * before it is used. SOCK_SEQPACKET keeps each message whole.
 *
 * A PE's messages reach a peer in the order it sent them. Messages that
 * arrive before they are asked for (a team_init request from a PE this one
 * is not waiting for) are kept per peer until asked for.
 *
 * Every wait polls its sockets and asks the caller's still_waiting a few
 * times a second (dead peers, SYMMEM_TIMEOUT, Ctrl-C); a peer whose socket
 * closes has gone. Nothing here calls CUDA or the core:
 * tests/c/test_host_mesh.c runs it in plain processes. */
#ifndef SYMMEM_GPU_HOST_MESH_H
#define SYMMEM_GPU_HOST_MESH_H

#include <stddef.h>
#include <stdint.h>

/* What a message is, and what its key holds. */
enum {
    MESH_HELLO = 1,    /* key: the job's hash; value: n, pid */
    MESH_EXCHANGE = 2, /* key: the sender's count of exchanges with this PE */
    MESH_HEAP_FD = 3,  /* key: the heap's chunk; value: offset, size, 0 (or -1: failed) */
    MESH_TEAM_INIT = 4 /* key: the team's key; value: index, npes, handles in use */
};

typedef struct {
    uint32_t kind; /* MESH_* */
    int32_t from;  /* the sender's PE */
    uint64_t key;
    int64_t value[3];
} mesh_msg_t;

/* Returns of the calls below, besides 0. */
enum {
    MESH_ERROR = -1,   /* a system or protocol error: m->why says which */
    MESH_GONE = -2,    /* PE m->culprit closed its end (it exited or failed) */
    MESH_STOPPED = -3, /* still_waiting asked to stop (its error is the caller's) */
};

typedef struct {
    /* Asked while a call waits, at least every 20 ms: 0 to go on. */
    int (*still_waiting)(void *arg);
    void *arg;
} mesh_wait_t;

typedef struct mesh_kept mesh_kept_t;

typedef struct {
    int n, me;
    int *fds;           /* [n]: the socket to each peer; -1 for this PE */
    uint64_t *sent;     /* [n]: MESH_EXCHANGE messages sent to each peer */
    uint64_t *got;      /* [n]: ... and taken from each */
    mesh_kept_t **kept; /* [n]: messages read but not yet asked for */
    int culprit;        /* MESH_GONE's PE */
    char why[300];      /* MESH_ERROR's reason */
} host_mesh_t;

/* Connects this PE (me of n) with every other PE of the job named job
 * (the same text on every PE, unique on the host). */
int symmem__mesh_open(host_mesh_t *m, const char *job, int me, int n, const mesh_wait_t *wait);
void symmem__mesh_close(host_mesh_t *m);

/* Sends msg (msg->from set here) to PE pe, with the file descriptor fd
 * unless fd is -1 (the receiver gets a copy; fd stays open here). */
int symmem__mesh_send(host_mesh_t *m, int pe, mesh_msg_t *msg, int fd, const mesh_wait_t *wait);
/* The next message of kind and key from PE pe (pe -1: from any peer), and
 * in *fd_p the descriptor it carried (-1: none; fd_p NULL closes it). */
int symmem__mesh_recv(host_mesh_t *m, int pe, uint32_t kind, uint64_t key, mesh_msg_t *msg,
                      int *fd_p, const mesh_wait_t *wait);

/* Every member's value on every member: members[count] are PEs in any
 * order, this PE among them; values[i] is members[i]'s. */
int symmem__mesh_allgather(host_mesh_t *m, const int *members, int count, int64_t value,
                           int64_t *values, const mesh_wait_t *wait);

#endif
