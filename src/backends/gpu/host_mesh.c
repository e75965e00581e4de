/* The symmem engine's Unix sockets between the PEs of one host: see
 * host_mesh.h. */
#define _GNU_SOURCE /* struct ucred, MSG_CMSG_CLOEXEC */
#include "host_mesh.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define POLL_MS 20 /* how often a wait asks still_waiting */

struct mesh_kept {
    mesh_msg_t msg;
    int fd;
    mesh_kept_t *next;
};

static int fail(host_mesh_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(host_mesh_t *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->why, sizeof(m->why), fmt, ap);
    va_end(ap);
    return MESH_ERROR;
}

static int gone(host_mesh_t *m, int pe)
{
    m->culprit = pe;
    snprintf(m->why, sizeof(m->why), "PE %d closed its connection", pe);
    return MESH_GONE;
}

static uint64_t job_hash(const char *job)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a */
    for (const char *c = job; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    return h;
}

/* PE pe's name in the abstract namespace (a leading NUL): no file. */
static socklen_t address(struct sockaddr_un *a, uint64_t job, int pe)
{
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "symmem-%u-%016llx-pe%d",
                     (unsigned)geteuid(), (unsigned long long)job, pe);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static int new_socket(void)
{
    return socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
}

/* poll on fds[count] for their events, ms at most; asks still_waiting
 * first. 0 (fds may be ready), or MESH_STOPPED. */
static int wait_a_little(const mesh_wait_t *wait, struct pollfd *fds, int count, int ms)
{
    if (wait != NULL && wait->still_waiting(wait->arg) != 0) return MESH_STOPPED;
    poll(fds, (nfds_t)count, ms);
    return 0;
}

/* ---- one message ---- */

int symmem__mesh_send(host_mesh_t *m, int pe, mesh_msg_t *msg, int fd, const mesh_wait_t *wait)
{
    msg->from = m->me;
    struct iovec iov = {msg, sizeof(*msg)};
    union { /* aligned room for one SCM_RIGHTS descriptor */
        char bytes[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&control, 0, sizeof(control));
        h.msg_control = control.bytes;
        h.msg_controllen = sizeof(control.bytes);
        struct cmsghdr *c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    for (;;) {
        ssize_t sent = sendmsg(m->fds[pe], &h, MSG_NOSIGNAL);
        if (sent == (ssize_t)sizeof(*msg)) return 0;
        if (sent < 0 && (errno == EPIPE || errno == ECONNRESET)) return gone(m, pe);
        if (sent >= 0 || (errno != EAGAIN && errno != EINTR))
            return fail(m, "cannot send to PE %d: %s", pe, sent < 0 ? strerror(errno) : "short");
        struct pollfd p = {m->fds[pe], POLLOUT, 0};
        if (wait_a_little(wait, &p, 1, POLL_MS) != 0) return MESH_STOPPED;
    }
}

/* Reads one message from PE pe's socket into *k (k->fd: what it carried,
 * or -1); 1 when there was none to read. */
static int read_one(host_mesh_t *m, int pe, mesh_kept_t *k)
{
    union {
        char bytes[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct iovec iov = {&k->msg, sizeof(k->msg)};
    struct msghdr h = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = control.bytes,
                       .msg_controllen = sizeof(control.bytes)};
    ssize_t got = recvmsg(m->fds[pe], &h, MSG_CMSG_CLOEXEC);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return 1;
    if (got < 0 && errno == ECONNRESET) return gone(m, pe);
    if (got < 0) return fail(m, "cannot read from PE %d: %s", pe, strerror(errno));
    if (got == 0) return gone(m, pe);
    k->fd = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c != NULL; c = CMSG_NXTHDR(&h, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len >= CMSG_LEN(sizeof(int)))
            memcpy(&k->fd, CMSG_DATA(c), sizeof(int));
    if (got != (ssize_t)sizeof(k->msg) || (h.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
        k->msg.from != pe) {
        if (k->fd >= 0) close(k->fd);
        return fail(m, "PE %d sent a message this PE cannot read (%zd bytes, from %d)", pe, got,
                    (int)k->msg.from);
    }
    return 0;
}

static int matches(const mesh_msg_t *msg, uint32_t kind, uint64_t key)
{
    return msg->kind == kind && msg->key == key;
}

/* Takes a kept message of kind and key from PE pe (pe -1: any). */
static int take_kept(host_mesh_t *m, int pe, uint32_t kind, uint64_t key, mesh_kept_t *out)
{
    for (int q = pe < 0 ? 0 : pe; q < (pe < 0 ? m->n : pe + 1); q++)
        for (mesh_kept_t **at = &m->kept[q]; *at != NULL; at = &(*at)->next)
            if (matches(&(*at)->msg, kind, key)) {
                mesh_kept_t *k = *at;
                *out = *k;
                *at = k->next;
                free(k);
                return 1;
            }
    return 0;
}

static int keep(host_mesh_t *m, int pe, const mesh_kept_t *k)
{
    mesh_kept_t *copy = malloc(sizeof(*copy));
    if (copy == NULL) return fail(m, "out of host memory");
    *copy = *k;
    copy->next = NULL;
    mesh_kept_t **at = &m->kept[pe];
    while (*at != NULL) at = &(*at)->next; /* in the order they came */
    *at = copy;
    return 0;
}

int symmem__mesh_recv(host_mesh_t *m, int pe, uint32_t kind, uint64_t key, mesh_msg_t *msg,
                      int *fd_p, const mesh_wait_t *wait)
{
    mesh_kept_t k;
    int found = take_kept(m, pe, kind, key, &k);
    struct pollfd polls[m->n];
    int peers[m->n], count = 0;
    for (int q = 0; q < m->n; q++)
        if (q != m->me && (pe < 0 || q == pe)) {
            polls[count] = (struct pollfd){m->fds[q], POLLIN, 0};
            peers[count++] = q;
        }
    while (!found) {
        /* everything each socket holds now, keeping what is not asked for */
        for (int i = 0; i < count && !found; i++) {
            int rc;
            while (!found && (rc = read_one(m, peers[i], &k)) == 0) {
                if (matches(&k.msg, kind, key)) {
                    found = 1;
                } else if ((rc = keep(m, peers[i], &k)) != 0) {
                    if (k.fd >= 0) close(k.fd);
                    return rc;
                }
            }
            if (!found && rc < 0) return rc;
        }
        if (!found && wait_a_little(wait, polls, count, POLL_MS) != 0) return MESH_STOPPED;
    }
    *msg = k.msg;
    if (fd_p != NULL)
        *fd_p = k.fd;
    else if (k.fd >= 0)
        close(k.fd);
    return 0;
}

/* ---- many ---- */

int symmem__mesh_allgather(host_mesh_t *m, const int *members, int count, int64_t value,
                           int64_t *values, const mesh_wait_t *wait)
{
    for (int i = 0; i < count; i++) {
        if (members[i] == m->me) continue;
        mesh_msg_t msg = {.kind = MESH_EXCHANGE, .key = m->sent[members[i]]++, .value = {value}};
        int rc = symmem__mesh_send(m, members[i], &msg, -1, wait);
        if (rc != 0) return rc;
    }
    for (int i = 0; i < count; i++) {
        int pe = members[i];
        if (pe == m->me) {
            values[i] = value;
            continue;
        }
        mesh_msg_t msg;
        int rc = symmem__mesh_recv(m, pe, MESH_EXCHANGE, m->got[pe], &msg, NULL, wait);
        if (rc != 0) return rc;
        m->got[pe]++;
        values[i] = msg.value[0];
    }
    return 0;
}

/* ---- the connections ---- */

/* Connects to PE pe (which may not listen yet) and introduces this PE. */
static int connect_to(host_mesh_t *m, uint64_t job, int pe, const mesh_wait_t *wait)
{
    struct sockaddr_un a;
    socklen_t length = address(&a, job, pe);
    for (int tries = 0;;) {
        int fd = new_socket();
        if (fd < 0) return fail(m, "cannot make a socket: %s", strerror(errno));
        if (connect(fd, (struct sockaddr *)&a, length) == 0 || errno == EINPROGRESS) {
            m->fds[pe] = fd;
            break;
        }
        int error = errno;
        close(fd);
        /* not listening yet (ECONNREFUSED), or its backlog is full */
        if (error != ECONNREFUSED && error != EAGAIN && error != ENOENT && error != EINTR)
            return fail(m, "cannot connect to PE %d (@%s): %s", pe, a.sun_path + 1,
                        strerror(error));
        /* PEs start within milliseconds of each other: retry soon */
        if (wait_a_little(wait, NULL, 0, tries++ < 200 ? 1 : POLL_MS) != 0) return MESH_STOPPED;
    }
    mesh_msg_t hello = {.kind = MESH_HELLO, .key = job, .value = {m->n, (int64_t)getpid()}};
    return symmem__mesh_send(m, pe, &hello, -1, wait);
}

/* Accepts one connection and checks who it is: 1 for a PE above this one,
 * 0 for a stranger (closed; accept again), or a MESH_ error. */
static int accept_one(host_mesh_t *m, int listener, uint64_t job, const mesh_wait_t *wait)
{
    int fd;
    while ((fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) < 0) {
        if (errno != EAGAIN && errno != EINTR)
            return fail(m, "cannot accept a connection: %s", strerror(errno));
        struct pollfd p = {listener, POLLIN, 0};
        if (wait_a_little(wait, &p, 1, POLL_MS) != 0) return MESH_STOPPED;
    }
    struct ucred who;
    socklen_t size = sizeof(who);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &who, &size) != 0 || who.uid != geteuid()) {
        close(fd); /* another user's process: never one of ours */
        return 0;
    }
    /* its hello comes first: read it as from whichever PE it says */
    mesh_kept_t k;
    struct pollfd p = {fd, POLLIN, 0};
    for (;;) {
        ssize_t got = recv(fd, &k.msg, sizeof(k.msg), 0);
        if (got == (ssize_t)sizeof(k.msg)) break;
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR) || got > 0) {
            close(fd);
            return 0; /* it went away before saying who it is */
        }
        if (wait_a_little(wait, &p, 1, POLL_MS) != 0) {
            close(fd);
            return MESH_STOPPED;
        }
    }
    int pe = k.msg.from;
    if (k.msg.kind != MESH_HELLO || k.msg.key != job) {
        close(fd);
        return 0;
    }
    if (k.msg.value[0] != m->n) {
        close(fd);
        return fail(m, "PE %d (pid %lld) of this job says the job has %lld PEs, this PE %d", pe,
                    (long long)k.msg.value[1], (long long)k.msg.value[0], m->n);
    }
    if (pe <= m->me || pe >= m->n || m->fds[pe] >= 0) {
        close(fd);
        return fail(m,
                    "a second process (pid %lld, pid %d by its credentials) claims to be PE %d "
                    "of this job",
                    (long long)k.msg.value[1], (int)who.pid, pe);
    }
    m->fds[pe] = fd;
    return 1;
}

static void free_kept(mesh_kept_t *k)
{
    while (k != NULL) {
        mesh_kept_t *next = k->next;
        if (k->fd >= 0) close(k->fd);
        free(k);
        k = next;
    }
}

void symmem__mesh_close(host_mesh_t *m)
{
    for (int pe = 0; pe < m->n; pe++) {
        if (m->fds != NULL && m->fds[pe] >= 0) close(m->fds[pe]);
        if (m->kept != NULL) free_kept(m->kept[pe]);
    }
    free(m->fds);
    free(m->sent);
    free(m->got);
    free(m->kept);
    m->fds = NULL;
    m->sent = m->got = NULL;
    m->kept = NULL;
}

int symmem__mesh_open(host_mesh_t *m, const char *job, int me, int n, const mesh_wait_t *wait)
{
    memset(m, 0, sizeof(*m));
    m->n = n;
    m->me = me;
    m->culprit = -1;
    m->fds = malloc(sizeof(int) * (size_t)n);
    m->sent = calloc((size_t)n, sizeof(uint64_t));
    m->got = calloc((size_t)n, sizeof(uint64_t));
    m->kept = calloc((size_t)n, sizeof(mesh_kept_t *));
    if (m->fds == NULL || m->sent == NULL || m->got == NULL || m->kept == NULL) {
        symmem__mesh_close(m);
        return fail(m, "out of host memory");
    }
    for (int pe = 0; pe < n; pe++) m->fds[pe] = -1;
    uint64_t hash = job_hash(job);
    int listener = -1, rc = 0;
    if (me < n - 1) { /* PEs above this one connect to it */
        struct sockaddr_un a;
        socklen_t length = address(&a, hash, me);
        listener = new_socket();
        if (listener < 0) {
            rc = fail(m, "cannot make a socket: %s", strerror(errno));
        } else if (bind(listener, (struct sockaddr *)&a, length) != 0) {
            rc = errno == EADDRINUSE
                     ? fail(m,
                            "another process of this user already is PE %d of job %s (it "
                            "holds @%s)",
                            me, job, a.sun_path + 1)
                     : fail(m, "cannot bind @%s: %s", a.sun_path + 1, strerror(errno));
        } else if (listen(listener, n) != 0) {
            rc = fail(m, "cannot listen on @%s: %s", a.sun_path + 1, strerror(errno));
        }
    }
    /* Connecting needs no accept on the other side (the backlog holds it),
     * so every PE connects down first and then accepts from above. */
    for (int pe = 0; pe < me && rc == 0; pe++) rc = connect_to(m, hash, pe, wait);
    for (int accepted = 0; accepted < n - 1 - me && rc == 0;) {
        int got = accept_one(m, listener, hash, wait);
        if (got > 0)
            accepted++;
        else
            rc = got;
    }
    if (listener >= 0) close(listener); /* the name goes with it */
    if (rc != 0) {
        int culprit = m->culprit;
        char why[sizeof(m->why)];
        memcpy(why, m->why, sizeof(why));
        symmem__mesh_close(m);
        m->culprit = culprit;
        memcpy(m->why, why, sizeof(why));
    }
    return rc;
}
