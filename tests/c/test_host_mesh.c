/* The symmem engine's host mesh (src/backends/gpu/host_mesh.c), which needs
 * no GPU: four forked processes, started in a scrambled order, connect as
 * PEs of one job; each allgathers over the world and over a subset, hands
 * every other a file descriptor (a memfd with its number in it) and reads
 * each one it gets; team_init-style requests to every PE, of which only
 * some are awaited, are kept and found later; a second job of the same
 * size and user on the host never mixes with the first; a second process
 * that claims a PE already taken is refused; a peer that exits ends a wait with
 * MESH_GONE naming it, and still_waiting stops a wait with MESH_STOPPED. */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/backends/gpu/host_mesh.h"
#include "c_test.h"

#define N 4

static int me;
static char job[64], other_job[64];
static _Atomic int *survivors_done; /* shared: the PEs that saw PE 3 gone */

/* Gives up after 30 s, so that a broken mesh fails instead of hanging. */
static double started;
static int patience(void *arg)
{
    (void)arg;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec - started > 30.0;
}
static const mesh_wait_t wait30 = {patience, NULL};

static int stop_at_once(void *arg)
{
    return ++*(int *)arg > 3; /* a few polls, then stop */
}

static void open_mesh(host_mesh_t *m, const char *name)
{
    int rc = symmem__mesh_open(m, name, me, N, &wait30);
    CHECK(rc == 0, "open: %d (%s)", rc, m->why);
}

static void allgathers(host_mesh_t *m)
{
    int world[N], count = 0;
    for (int pe = N - 1; pe >= 0; pe--) world[count++] = pe; /* any order */
    for (int round = 0; round < 50; round++) {
        int64_t values[N];
        int rc = symmem__mesh_allgather(m, world, N, 1000 * round + me, values, &wait30);
        CHECK(rc == 0, "allgather %d: %d (%s)", round, rc, m->why);
        for (int i = 0; i < N; i++)
            CHECK(values[i] == 1000 * round + world[i], "round %d: value %d is %lld", round, i,
                  (long long)values[i]);
    }
    /* the even PEs alone, while the odd ones exchange among themselves */
    int team[2] = {me % 2, me % 2 + 2};
    int64_t values[2];
    int rc = symmem__mesh_allgather(m, team, 2, -me, values, &wait30);
    CHECK(rc == 0 && values[0] == -team[0] && values[1] == -team[1], "team: %d (%s)", rc, m->why);
}

static void descriptors(host_mesh_t *m)
{
    int fd = memfd_create("mesh-test", MFD_CLOEXEC);
    CHECK(fd >= 0 && write(fd, &me, sizeof(me)) == (ssize_t)sizeof(me), "memfd");
    for (int pe = 0; pe < N; pe++) {
        if (pe == me) continue;
        mesh_msg_t msg = {.kind = MESH_HEAP_FD, .key = 7, .value = {me, 2 * me}};
        int rc = symmem__mesh_send(m, pe, &msg, fd, &wait30);
        CHECK(rc == 0, "send the fd to %d: %d (%s)", pe, rc, m->why);
    }
    close(fd); /* the receivers hold copies */
    for (int pe = N - 1; pe >= 0; pe--) {
        if (pe == me) continue;
        mesh_msg_t msg;
        int got = -1, value = -1;
        int rc = symmem__mesh_recv(m, pe, MESH_HEAP_FD, 7, &msg, &got, &wait30);
        CHECK(rc == 0 && got >= 0, "recv the fd of %d: %d (%s)", pe, rc, m->why);
        CHECK(pread(got, &value, sizeof(value), 0) == (ssize_t)sizeof(value) && value == pe,
              "PE %d's memfd holds %d", pe, value);
        CHECK(msg.from == pe && msg.value[0] == pe && msg.value[1] == 2 * pe, "PE %d's message",
              pe);
        close(got);
    }
}

/* Every PE asks every other to join team 0x77 (index me); the odd PEs also
 * ask for team 0x55, for which nobody waits until later. */
static void team_requests(host_mesh_t *m)
{
    for (int pe = 0; pe < N; pe++) {
        if (pe == me) continue;
        if (me % 2) {
            mesh_msg_t later = {.kind = MESH_TEAM_INIT, .key = 0x55, .value = {me, 2}};
            CHECK(symmem__mesh_send(m, pe, &later, -1, &wait30) == 0, "send: %s", m->why);
        }
        mesh_msg_t msg = {.kind = MESH_TEAM_INIT, .key = 0x77, .value = {me, N}};
        CHECK(symmem__mesh_send(m, pe, &msg, -1, &wait30) == 0, "send: %s", m->why);
    }
    int seen[N] = {0};
    for (int k = 0; k < N - 1; k++) {
        mesh_msg_t msg;
        int rc = symmem__mesh_recv(m, -1, MESH_TEAM_INIT, 0x77, &msg, NULL, &wait30);
        CHECK(rc == 0 && msg.value[0] == msg.from && !seen[msg.from] && msg.from != me,
              "request %d: rc %d from %d", k, rc, (int)msg.from);
        seen[msg.from] = 1;
    }
    /* an exchange after them still pairs up */
    int world[N] = {0, 1, 2, 3};
    int64_t values[N];
    CHECK(symmem__mesh_allgather(m, world, N, me, values, &wait30) == 0, "%s", m->why);
    if (me % 2) { /* the odd PEs now find each other's kept 0x55 request */
        mesh_msg_t msg;
        int rc = symmem__mesh_recv(m, -1, MESH_TEAM_INIT, 0x55, &msg, NULL, &wait30);
        CHECK(rc == 0 && msg.from % 2 == 1 && msg.from != me, "0x55: rc %d from %d", rc,
              (int)msg.from);
    }
}

static void gone_and_stopped(host_mesh_t *m)
{
    int world[N] = {0, 1, 2, 3};
    int64_t values[N];
    /* nobody sends this: still_waiting ends the wait */
    int polls = 0;
    mesh_wait_t impatient = {stop_at_once, &polls};
    mesh_msg_t msg;
    int rc = symmem__mesh_recv(m, (me + 1) % N, MESH_TEAM_INIT, 0x99, &msg, NULL, &impatient);
    CHECK(rc == MESH_STOPPED, "rc %d", rc);
    CHECK(symmem__mesh_allgather(m, world, N, me, values, &wait30) == 0, "%s", m->why);
    if (me == 3) _exit(0); /* leaves without a word */
    rc = symmem__mesh_allgather(m, world, N, me, values, &wait30);
    CHECK(rc == MESH_GONE && m->culprit == 3, "after PE 3 left: rc %d, culprit %d", rc, m->culprit);
    /* the survivors leave together, so none sees another leave first */
    atomic_fetch_add(survivors_done, 1);
    for (int spins = 0; atomic_load(survivors_done) < N - 1; spins++) {
        CHECK(spins < 300000, "the other survivors never came");
        usleep(100);
    }
}

static int child(int pe)
{
    me = pe;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    started = t.tv_sec + 1e-9 * t.tv_nsec;
    usleep((useconds_t)((N - pe) * 20000)); /* the higher PEs first */
    host_mesh_t m, other;
    open_mesh(&m, job);
    open_mesh(&other, other_job); /* a second job beside it */
    allgathers(&m);
    allgathers(&other);
    descriptors(&m);
    team_requests(&m);
    symmem__mesh_close(&other);
    gone_and_stopped(&m);
    symmem__mesh_close(&m);
    return 0;
}

/* Two processes that both claim PE 0 of one job: the second is refused
 * while the first waits for its peer. */
static int duplicate_is_refused(void)
{
    char dup[64];
    snprintf(dup, sizeof(dup), "test-mesh-dup-%d", (int)getpid());
    me = 0;
    pid_t first = fork();
    if (first == 0) {
        host_mesh_t m;
        started = 1e18; /* waits until killed */
        symmem__mesh_open(&m, dup, 0, 2, &wait30);
        _exit(1);
    }
    usleep(200000); /* it has bound its name by now */
    host_mesh_t m;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    started = t.tv_sec + 1e-9 * t.tv_nsec;
    int rc = symmem__mesh_open(&m, dup, 0, 2, &wait30);
    kill(first, SIGKILL);
    waitpid(first, NULL, 0);
    CHECK(rc == MESH_ERROR && strstr(m.why, "already is PE 0") != NULL, "rc %d: %s", rc, m.why);
    return 0;
}

int main(void)
{
    snprintf(job, sizeof(job), "test-mesh-%d", (int)getpid());
    snprintf(other_job, sizeof(other_job), "test-mesh-other-%d", (int)getpid());
    survivors_done = mmap(NULL, sizeof(*survivors_done), PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (survivors_done == MAP_FAILED) return 1;
    pid_t pids[N];
    for (int pe = 0; pe < N; pe++) {
        pids[pe] = fork();
        if (pids[pe] == 0) _exit(child(pe));
    }
    int failed = 0;
    for (int pe = 0; pe < N; pe++) {
        int status = 0;
        waitpid(pids[pe], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "PE %d failed (status %d)\n", pe, status);
            failed = 1;
        }
    }
    if (!failed) failed = duplicate_is_refused();
    if (!failed) printf("host mesh: OK\n");
    return failed;
}
