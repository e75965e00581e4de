/* The heartbeat of a job whose PEs span hosts: see heartbeat.h. */
#define _GNU_SOURCE
#include "heartbeat.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HELLO_MAGIC 0x53594842u /* "SYHB" */
#define CONNECT_SECONDS 5.0     /* per address PE 0 listens on */
#define HELLO_SECONDS 2.0       /* for a new connection to say who it is */

/* What a connection carries after the hello: records of two 32-bit words
 * in network order, a kind and a PE. */
enum { BEAT = 1, BYE = 2, LOST_CLOSED = 3, LOST_SILENT = 4 };

/* A peer's connection, as this end sees it. */
enum { WAITING, CONNECTED, FINISHED, LOST };

struct heartbeat_peer {
    int fd; /* -1: none */
    int state;
    double last_heard;
    uint8_t partial[8]; /* a record read in part */
    int npartial;
};

typedef struct {
    uint32_t magic;
    int32_t pe;
    uint64_t token;
} hello_t;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void send_record(int fd, uint32_t kind, int pe)
{
    uint32_t record[2] = {htonl(kind), htonl((uint32_t)pe)};
    (void)send(fd, record, sizeof(record), MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void describe(char *how, size_t size, int kind, int observer, double limit)
{
    if (kind == LOST_CLOSED)
        snprintf(how, size,
                 "ended without finalize: its heartbeat connection to PE %d closed "
                 "(the process died or exited)",
                 observer);
    else
        snprintf(how, size,
                 "fell silent: PE %d heard no heartbeat from it for %.0f s (its "
                 "host or the network is down, or the process is stopped)",
                 observer, limit);
}

/* Only the heartbeat's thread writes: how first, then lost_pe with release,
 * which pairs with the acquire in symmem__heartbeat_lost. */
static void record_lost(heartbeat_t *h, int pe, const char *how)
{
    if (atomic_load_explicit(&h->lost_pe, memory_order_relaxed) >= 0) return;
    snprintf(h->how, sizeof(h->how), "%s", how);
    atomic_store_explicit(&h->lost_pe, pe, memory_order_release);
}

static void close_peer(heartbeat_peer_t *peer, int state)
{
    if (peer->fd >= 0) close(peer->fd);
    peer->fd = -1;
    peer->state = state;
}

/* This end lost peer p (PE 0 on any PE but PE 0); PE 0 tells the others. */
static void lose(heartbeat_t *h, int p, int kind)
{
    char how[sizeof(h->how)];
    close_peer(&h->peers[p], LOST);
    describe(how, sizeof(how), kind, h->me, h->silence_limit);
    record_lost(h, p, how);
    for (int q = 0; h->me == 0 && q < h->n_pes; q++)
        if (h->peers[q].state == CONNECTED && h->peers[q].fd >= 0)
            send_record(h->peers[q].fd, (uint32_t)kind, p);
}

static void take_record(heartbeat_t *h, int p, const uint8_t bytes[8])
{
    uint32_t word[2];
    memcpy(word, bytes, sizeof(word));
    uint32_t kind = ntohl(word[0]);
    int pe = (int)ntohl(word[1]);
    char how[sizeof(h->how)];
    if (kind == BYE) {
        close_peer(&h->peers[p], FINISHED);
    } else if ((kind == LOST_CLOSED || kind == LOST_SILENT) && h->me != 0 && pe > 0 &&
               pe < h->n_pes && pe != h->me) {
        describe(how, sizeof(how), (int)kind, 0, h->silence_limit); /* PE 0 saw it */
        record_lost(h, pe, how);
    }
}

static void read_from(heartbeat_t *h, int p)
{
    heartbeat_peer_t *peer = &h->peers[p];
    uint8_t buf[256];
    ssize_t got = recv(peer->fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (got <= 0) {
        lose(h, p, LOST_CLOSED); /* a peer that said goodbye is closed already */
        return;
    }
    peer->last_heard = now();
    for (ssize_t i = 0; i < got && peer->state == CONNECTED; i++) {
        peer->partial[peer->npartial++] = buf[i];
        if (peer->npartial == (int)sizeof(peer->partial)) {
            peer->npartial = 0;
            take_record(h, p, peer->partial);
        }
    }
}

/* Reads exactly size bytes from fd within seconds; 0 on success. */
static int read_within(int fd, void *out, size_t size, double seconds)
{
    size_t have = 0;
    double until = now() + seconds;
    while (have < size) {
        struct pollfd p = {fd, POLLIN, 0};
        int left_ms = (int)((until - now()) * 1e3);
        if (left_ms <= 0 || poll(&p, 1, left_ms) <= 0) return -1;
        ssize_t got = recv(fd, (char *)out + have, size - have, MSG_DONTWAIT);
        if (got <= 0 && !(got < 0 && (errno == EAGAIN || errno == EINTR))) return -1;
        if (got > 0) have += (size_t)got;
    }
    return 0;
}

/* PE 0: a PE connects and presents the hub's token; anything else is
 * closed unheard. */
static void accept_one(heartbeat_t *h)
{
    int fd = accept4(h->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    hello_t hello;
    int pe = -1;
    if (read_within(fd, &hello, sizeof(hello), HELLO_SECONDS) == 0 &&
        ntohl(hello.magic) == HELLO_MAGIC && hello.token == h->hub.token)
        pe = (int)ntohl((uint32_t)hello.pe);
    if (pe < 1 || pe >= h->n_pes || h->peers[pe].state != WAITING) {
        close(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    h->peers[pe].fd = fd;
    h->peers[pe].state = CONNECTED;
    h->peers[pe].last_heard = now();
}

static void *run(void *arg)
{
    heartbeat_t *h = arg;
    int hub = h->me == 0, npeers = hub ? h->n_pes : 1;
    double limit = h->silence_limit > 0 ? h->silence_limit : 1e300; /* 0: never */
    double interval = limit / 4 < 1.0 ? limit / 4 : 1.0;
    double next_beat = 0;
    struct pollfd fds[npeers + 2];
    int who[npeers + 2];
    for (;;) {
        int k = 0;
        fds[k++] = (struct pollfd){h->wake[0], POLLIN, 0};
        if (hub) fds[k++] = (struct pollfd){h->listen_fd, POLLIN, 0};
        int first = k;
        for (int p = hub ? 1 : 0; p < npeers; p++)
            if (h->peers[p].state == CONNECTED) {
                who[k] = p;
                fds[k++] = (struct pollfd){h->peers[p].fd, POLLIN, 0};
            }
        if (poll(fds, (nfds_t)k, 100) < 0 && errno != EINTR) break;
        if (fds[0].revents) break;
        if (hub && (fds[1].revents & POLLIN)) accept_one(h);
        for (int i = first; i < k; i++)
            if (fds[i].revents && h->peers[who[i]].state == CONNECTED) read_from(h, who[i]);
        double t = now();
        for (int p = hub ? 1 : 0; p < npeers; p++) {
            heartbeat_peer_t *peer = &h->peers[p];
            if ((peer->state == WAITING || peer->state == CONNECTED) &&
                t - peer->last_heard > limit)
                lose(h, p, LOST_SILENT);
            else if (peer->state == CONNECTED && t >= next_beat)
                send_record(peer->fd, BEAT, h->me);
        }
        if (t >= next_beat) next_beat = t + interval;
    }
    return NULL;
}

static int fail(heartbeat_t *h, char *why, size_t why_size, const char *what)
{
    if (what != NULL) snprintf(why, why_size, "%s: %s", what, strerror(errno));
    symmem__heartbeat_stop(h, 0);
    return -1;
}

static int begin(heartbeat_t *h, int me, int n_pes, double silence_limit)
{
    memset(h, 0, sizeof(*h));
    h->me = me;
    h->n_pes = n_pes;
    h->silence_limit = silence_limit;
    h->listen_fd = h->wake[0] = h->wake[1] = -1;
    atomic_init(&h->lost_pe, -1);
    h->peers = calloc((size_t)(me == 0 ? n_pes : 1), sizeof(*h->peers));
    if (h->peers == NULL || pipe2(h->wake, O_CLOEXEC) != 0) return -1;
    double t = now();
    for (int p = 0; p < (me == 0 ? n_pes : 1); p++)
        h->peers[p] = (heartbeat_peer_t){.fd = -1, .state = WAITING, .last_heard = t};
    return 0;
}

static int start_thread(heartbeat_t *h, char *why, size_t why_size)
{
    int rc = pthread_create(&h->thread, NULL, run, h);
    if (rc != 0) {
        errno = rc;
        return fail(h, why, why_size, "cannot start the heartbeat's thread");
    }
    h->running = 1;
    return 0;
}

/* Up to HEARTBEAT_ADDRS IPv4 addresses of this host's interfaces that are
 * up, not loopback, and named ifname... where ifname is set; 127.0.0.1
 * where there is none and no ifname was asked for. */
static int local_addrs(const char *ifname, uint32_t addrs[HEARTBEAT_ADDRS], char *why,
                       size_t why_size)
{
    struct ifaddrs *list = NULL;
    int n = 0;
    if (getifaddrs(&list) == 0)
        for (struct ifaddrs *a = list; a != NULL && n < HEARTBEAT_ADDRS; a = a->ifa_next) {
            if (a->ifa_addr == NULL || a->ifa_addr->sa_family != AF_INET ||
                !(a->ifa_flags & IFF_UP) || (a->ifa_flags & IFF_LOOPBACK) ||
                (ifname[0] != '\0' && strncmp(a->ifa_name, ifname, strlen(ifname)) != 0))
                continue;
            addrs[n++] = ((struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr;
        }
    freeifaddrs(list);
    if (n == 0 && ifname[0] != '\0') {
        snprintf(why, why_size,
                 "no interface named %s... has an IPv4 address "
                 "(NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME)",
                 ifname);
        return -1;
    }
    if (n == 0) addrs[0] = htonl(INADDR_LOOPBACK);
    return 0;
}

/* PE 0 holds a connection per PE: raises the soft limit on open files
 * towards the hard one where that is too few (1024 by default). */
static int enough_files(int n_pes, char *why, size_t why_size)
{
    struct rlimit files;
    rlim_t needed = (rlim_t)n_pes + 256; /* and what the program opens itself */
    if (getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur >= needed) return 0;
    files.rlim_cur =
        files.rlim_max == RLIM_INFINITY || files.rlim_max >= needed ? needed : files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
    if (files.rlim_cur >= needed) return 0;
    snprintf(why, why_size,
             "PE 0 keeps a heartbeat connection to each of %d PEs, but may open "
             "only %llu files (ulimit -n; the hard limit); raise it to at least %llu",
             n_pes, (unsigned long long)files.rlim_cur, (unsigned long long)needed);
    return -1;
}

int symmem__heartbeat_serve(heartbeat_t *h, int n_pes, double silence_limit, const char *ifname,
                            char *why, size_t why_size)
{
    if (begin(h, 0, n_pes, silence_limit) != 0)
        return fail(h, why, why_size, "cannot start the heartbeat");
    if (enough_files(n_pes, why, why_size) != 0) return fail(h, why, why_size, NULL);
    if (local_addrs(ifname, h->hub.addrs, why, why_size) != 0) return fail(h, why, why_size, NULL);
    if (getrandom(&h->hub.token, sizeof(h->hub.token), 0) != sizeof(h->hub.token))
        return fail(h, why, why_size, "cannot draw the heartbeat's token (getrandom)");
    h->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in any = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t len = sizeof(any);
    if (h->listen_fd < 0 || bind(h->listen_fd, (struct sockaddr *)&any, sizeof(any)) != 0 ||
        listen(h->listen_fd, n_pes) != 0 ||
        getsockname(h->listen_fd, (struct sockaddr *)&any, &len) != 0)
        return fail(h, why, why_size, "cannot listen for the heartbeat (a TCP port)");
    h->hub.port = ntohs(any.sin_port);
    h->peers[0].state = CONNECTED; /* this PE */
    return start_thread(h, why, why_size);
}

/* A connected socket to addr:port, or -1 (errno says why) after seconds. */
static int connect_within(uint32_t addr, uint16_t port, double seconds)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in to = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = addr};
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0 && errno != EINPROGRESS) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    struct pollfd p = {fd, POLLOUT, 0};
    int error = 0;
    socklen_t len = sizeof(error);
    int ready = poll(&p, 1, (int)(seconds * 1e3));
    if (ready > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0)
        return fd;
    close(fd);
    errno = ready == 0 ? ETIMEDOUT : error;
    return -1;
}

int symmem__heartbeat_join(heartbeat_t *h, int me, int n_pes, double silence_limit,
                           const heartbeat_hub_t *hub, char *why, size_t why_size)
{
    if (begin(h, me, n_pes, silence_limit) != 0)
        return fail(h, why, why_size, "cannot start the heartbeat");
    h->hub = *hub;
    int fd = -1, tried = 0;
    char where[3 * 24] = "";
    for (int i = 0; i < HEARTBEAT_ADDRS && hub->addrs[i] != 0 && fd < 0; i++) {
        char text[INET_ADDRSTRLEN];
        struct in_addr addr = {hub->addrs[i]};
        inet_ntop(AF_INET, &addr, text, sizeof(text));
        tried += snprintf(where + tried, sizeof(where) - (size_t)tried, "%s%s:%u",
                          tried ? ", " : "", text, hub->port);
        fd = connect_within(hub->addrs[i], hub->port, CONNECT_SECONDS);
    }
    if (fd < 0) {
        snprintf(why, why_size,
                 "cannot reach PE 0's heartbeat at %s (%s); set "
                 "NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME to the interface the hosts reach each "
                 "other on",
                 where, strerror(errno));
        return fail(h, why, why_size, NULL);
    }
    hello_t hello = {htonl(HELLO_MAGIC), (int32_t)htonl((uint32_t)me), hub->token};
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    h->peers[0] = (heartbeat_peer_t){.fd = fd, .state = CONNECTED, .last_heard = now()};
    if (send(fd, &hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello))
        return fail(h, why, why_size, "cannot greet PE 0's heartbeat");
    return start_thread(h, why, why_size);
}

int symmem__heartbeat_lost(heartbeat_t *h, char *how, size_t how_size)
{
    int pe = atomic_load_explicit(&h->lost_pe, memory_order_acquire);
    if (pe >= 0) snprintf(how, how_size, "%s", h->how);
    return pe;
}

void symmem__heartbeat_stop(heartbeat_t *h, int finished)
{
    if (h->running) {
        (void)!write(h->wake[1], "", 1);
        pthread_join(h->thread, NULL);
        h->running = 0;
    }
    for (int p = 0; h->peers != NULL && p < (h->me == 0 ? h->n_pes : 1); p++) {
        if (h->peers[p].fd < 0) continue;
        if (finished) send_record(h->peers[p].fd, BYE, h->me);
        close(h->peers[p].fd);
    }
    free(h->peers);
    h->peers = NULL;
    if (h->listen_fd >= 0) close(h->listen_fd);
    if (h->wake[0] >= 0) close(h->wake[0]);
    if (h->wake[1] >= 0) close(h->wake[1]);
    h->listen_fd = h->wake[0] = h->wake[1] = -1;
}
