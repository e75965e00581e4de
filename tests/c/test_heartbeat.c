/* The heartbeat between PEs on several hosts (src/core/heartbeat.c),
 * which needs no GPU: three forked processes play PEs 0, 1 and 2 over TCP
 * on this host, with a silence limit of 1 s. In each case every PE first
 * stays quiet for longer than the limit (the beats keep it so), then:
 *  - kill:    PE 1 is killed; PEs 0 and 2 learn that its connection closed
 *             (a stranger's connection with a wrong token changed nothing);
 *  - stop:    PE 1 is stopped (SIGSTOP); PEs 0 and 2 learn that it fell silent;
 *  - hub:     PE 0 is killed; PEs 1 and 2 learn that it closed;
 *  - goodbye: PE 1 and then PE 0 stop after saying goodbye; nobody is lost.
 * The four cases run at the same time, each with PEs of its own.
 * And PE 0, which holds a connection per PE, raises its limit on open files
 * where the hard limit allows, and fails naming `ulimit -n` where not. */
#include <arpa/inet.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/core/heartbeat.h"
#include "c_test.h"

#define N 3
#define LIMIT 1.0 /* seconds of silence */

enum { KILL, STOP, HUB, GOODBYE };
static const char *case_names[] = {"kill", "stop", "hub", "goodbye"};

static struct shared {
    heartbeat_hub_t hub;
    _Atomic int hub_ready, joined, quiet, done;
    int lost[N];
    char how[N][200];
} *S;

static int me;

static void wait_for(_Atomic int *counter, int value)
{
    for (long waited = 0; atomic_load(counter) < value; waited++) {
        CHECK(waited < 10000, "waited 10 s for a counter to reach %d", value);
        usleep(1000);
    }
}

/* A connection that claims to be PE 2 with a wrong token: PE 0 must drop it. */
static void stranger(const heartbeat_hub_t *hub)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in to = {
        .sin_family = AF_INET, .sin_port = htons(hub->port), .sin_addr.s_addr = hub->addrs[0]};
    CHECK(connect(fd, (struct sockaddr *)&to, sizeof(to)) == 0, "the stranger cannot connect");
    struct {
        uint32_t magic;
        int32_t pe;
        uint64_t token;
    } hello = {htonl(0x53594842u), (int32_t)htonl(2), hub->token + 1};
    CHECK(send(fd, &hello, sizeof(hello), 0) == (ssize_t)sizeof(hello), "stranger's hello");
    usleep(100000);
    close(fd);
}

/* Records the first PE this PE's heartbeat loses within 5 s (-1: none). */
static void await_loss(heartbeat_t *h, double seconds)
{
    S->lost[me] = -1;
    for (double waited = 0; waited < seconds && S->lost[me] < 0; waited += 0.01) {
        S->lost[me] = symmem__heartbeat_lost(h, S->how[me], sizeof(S->how[me]));
        usleep(10000);
    }
}

static void pe_main(int scenario)
{
    heartbeat_t h;
    char why[400] = "";
    if (me == 0) {
        CHECK(symmem__heartbeat_serve(&h, N, LIMIT, "", why, sizeof(why)) == 0, "%s", why);
        S->hub = h.hub;
        atomic_store(&S->hub_ready, 1);
    } else {
        wait_for(&S->hub_ready, 1);
        if (me == 1 && scenario == KILL) stranger(&S->hub);
        CHECK(symmem__heartbeat_join(&h, me, N, LIMIT, &S->hub, why, sizeof(why)) == 0, "%s", why);
    }
    atomic_fetch_add(&S->joined, 1);
    wait_for(&S->joined, N);
    usleep((useconds_t)(1.5 * LIMIT * 1e6));
    char how[200];
    CHECK(symmem__heartbeat_lost(&h, how, sizeof(how)) == -1, "lost a PE while all ran: %s", how);
    atomic_fetch_add(&S->quiet, 1);
    if (scenario == GOODBYE) {
        wait_for(&S->quiet, N);
        if (me == 1) {
            symmem__heartbeat_stop(&h, 1);
            exit(0);
        }
        await_loss(&h, 2.5 * LIMIT);
        if (me == 0) {
            symmem__heartbeat_stop(&h, 1);
            exit(0);
        }
        await_loss(&h, 2.5 * LIMIT);
    } else {
        await_loss(&h, 5.0); /* the parent strikes once every PE is quiet */
    }
    symmem__heartbeat_stop(&h, 1);
    exit(0);
}

static int run_case(int scenario)
{
    memset(S, 0, sizeof(*S));
    for (int pe = 0; pe < N; pe++) S->lost[pe] = -1;
    fflush(stdout); /* or the children print it again */
    pid_t pids[N];
    for (int pe = 0; pe < N; pe++) {
        pids[pe] = fork();
        if (pids[pe] == 0) {
            me = pe;
            pe_main(scenario);
        }
    }
    me = -1;
    wait_for(&S->quiet, N);
    int victim = scenario == HUB ? 0 : 1;
    if (scenario == KILL || scenario == HUB) kill(pids[victim], SIGKILL);
    if (scenario == STOP) kill(pids[victim], SIGSTOP);
    int failed = 0;
    for (int pe = 0; pe < N; pe++) {
        if (scenario == STOP && pe == victim) continue;
        int status = 0;
        waitpid(pids[pe], &status, 0);
        int killed = scenario != GOODBYE && pe == victim;
        if (!killed && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) failed = 1;
    }
    if (scenario == STOP) {
        kill(pids[victim], SIGKILL);
        waitpid(pids[victim], NULL, 0);
    }
    const char *words = scenario == STOP ? "fell silent" : "heartbeat connection to PE";
    for (int pe = 0; pe < N; pe++) {
        if (scenario == GOODBYE) {
            if (S->lost[pe] != -1) {
                fprintf(stderr, "goodbye: PE %d lost PE %d: %s\n", pe, S->lost[pe], S->how[pe]);
                failed = 1;
            }
            continue;
        }
        if (pe == victim) continue;
        if (S->lost[pe] != victim || strstr(S->how[pe], words) == NULL) {
            fprintf(stderr, "%s: PE %d lost PE %d (%s), expected PE %d (%s)\n",
                    case_names[scenario], pe, S->lost[pe], S->how[pe], victim, words);
            failed = 1;
        }
    }
    printf("%s %s: PE 2 says PE %d %s\n", failed ? "FAIL" : "ok", case_names[scenario], S->lost[2],
           S->lost[2] >= 0 ? S->how[2] : "(none lost)");
    return failed;
}

/* In a child: PE 0 of 3 PEs under a soft limit of 64 open files and the
 * given hard one. */
static int serve_under_file_limit(rlim_t hard, char *why, size_t why_size)
{
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit files = {64, hard};
        heartbeat_t h;
        char text[400] = "";
        int rc = setrlimit(RLIMIT_NOFILE, &files) == 0
                     ? symmem__heartbeat_serve(&h, N, LIMIT, "", text, sizeof(text))
                     : -2;
        if (rc == 0) {
            getrlimit(RLIMIT_NOFILE, &files);
            snprintf(text, sizeof(text), "soft limit now %llu", (unsigned long long)files.rlim_cur);
            symmem__heartbeat_stop(&h, 1);
        }
        (void)!write(pipe_fds[1], text, strlen(text) + 1);
        _exit(rc == 0 ? 0 : 1);
    }
    close(pipe_fds[1]);
    ssize_t got = read(pipe_fds[0], why, why_size - 1);
    why[got > 0 ? got : 0] = '\0';
    close(pipe_fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int check_file_limits(void)
{
    char why[400];
    int failed = 0;
    struct rlimit files;
    getrlimit(RLIMIT_NOFILE, &files);
    if (files.rlim_max >= 1024) { /* room to raise the soft limit to N + 256 */
        int rc = serve_under_file_limit(files.rlim_max, why, sizeof(why));
        if (rc != 0 || strstr(why, "soft limit now 259") == NULL) {
            fprintf(stderr, "file limit: serve under a soft limit of 64: rc %d, %s\n", rc, why);
            failed = 1;
        }
    }
    int rc = serve_under_file_limit(64, why, sizeof(why));
    if (rc != 1 || strstr(why, "ulimit -n") == NULL || strstr(why, "at least 259") == NULL) {
        fprintf(stderr, "file limit: serve under a hard limit of 64: rc %d, %s\n", rc, why);
        failed = 1;
    }
    printf("%s file limit: %s\n", failed ? "FAIL" : "ok", why);
    return failed;
}

/* The four cases run at once, each in a process of its own (with its own
 * shared block and PEs): each spends its time waiting out the silence limit. */
int main(void)
{
    int failed = check_file_limits();
    pid_t cases[GOODBYE + 1];
    fflush(stdout); /* or the children print it again */
    for (int scenario = KILL; scenario <= GOODBYE; scenario++) {
        cases[scenario] = fork();
        if (cases[scenario] == 0) {
            S = mmap(NULL, sizeof(*S), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
            if (S == MAP_FAILED) _exit(1);
            int case_failed = run_case(scenario);
            fflush(stdout);
            exit(case_failed);
        }
    }
    for (int scenario = KILL; scenario <= GOODBYE; scenario++) {
        int status = 0;
        if (cases[scenario] < 0 || waitpid(cases[scenario], &status, 0) != cases[scenario] ||
            !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "%s: the case failed or did not finish (status %d)\n",
                    case_names[scenario], status);
            failed = 1;
        }
    }
    return failed;
}
