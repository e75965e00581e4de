/* The gpu backend's call pages (src/backends/gpu/call_page.c), which need
 * no GPU: three forked processes make their pages, map each other's
 * read-only, unlink them, then publish collectives and check what each
 * sees: a match, one not yet published, a mismatch (and its words), a
 * record gone from the ring, records read while rewritten (never torn), a
 * peer that called finalize() before or after entering a collective, one
 * waiting in a collective of another team, one ahead, one that destroyed
 * the team after entering the collective; PEs whose calls wait
 * for each other (a pair, a ring of three); and pages that are not call
 * pages are refused, a corrupt one read without harm. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/backends/gpu/call_page.h"
#include "../../src/core/peer_status.h"
#include "c_test.h"

#define N 3

static struct shared {
    pid_t pid[N];
    uint64_t start[N];
    _Atomic int arrived;
    _Atomic int stop;
    _Atomic long found[N]; /* records read while PE 1 rewrote them */
} *S;

static int me;

/* Every process arrives at its k-th barrier before any leaves it. */
static void barrier(void)
{
    static int round;
    round++;
    atomic_fetch_add(&S->arrived, 1);
    for (long spins = 0; atomic_load(&S->arrived) < round * N; spins++) {
        CHECK(spins < 3000000, "barrier %d: a process never came", round);
        usleep(10);
    }
}

static const int world[N] = {0, 1, 2};

static symmem_call_t reduce(uint64_t count, int handle)
{
    return symmem__call(SYMMEM_CALL_REDUCE, handle, count, SYMMEM_DTYPE_FLOAT32, SYMMEM_OP_SUM, 0);
}

static int verdict(gpu_calls_t *c, gpu_call_ref_t *ref, int check, int *n_p, int *culprit_p,
                   char *text, size_t size)
{
    symmem_call_t calls[GPU_CALL_MAX_PEERS + 1];
    int pes[GPU_CALL_MAX_PEERS + 1];
    int v = symmem__gpu_calls_verdict(c, ref, check, calls, pes, n_p, culprit_p);
    symmem__calls_group(calls, pes, *n_p, text, size);
    return v;
}

static void run(void)
{
    gpu_calls_t c;
    char why[400], text[768], path[200];
    S->pid[me] = getpid();
    S->start[me] = symmem__process_start_time(getpid());
    CHECK(symmem__gpu_calls_create(&c, N, me, S->start[me], why, sizeof(why)) == 0, "%s", why);
    snprintf(path, sizeof(path), "/dev/shm/symmem-%u-gpu-%ld-%llu", (unsigned)geteuid(),
             (long)getpid(), (unsigned long long)S->start[me]);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "%s: mode %o", path,
          (unsigned)st.st_mode);
    barrier();
    for (int pe = 0; pe < N; pe++)
        if (pe != me)
            CHECK(symmem__gpu_calls_open_peer(&c, pe, S->pid[pe], S->start[pe], why, sizeof(why)) ==
                      0,
                  "%s", why);
    barrier();
    symmem__gpu_calls_unlink(&c);
    CHECK(access(path, F_OK) != 0 && errno == ENOENT, "%s is still there", path);
    symmem__gpu_calls_set_team(&c, 0, world, N);
    int n, culprit;
    gpu_call_ref_t ref, refs[N];

    /* A: not yet published, then a match */
    symmem_call_t barrier_all = symmem__call(SYMMEM_CALL_BARRIER_ALL, 0, 0, 0, 0, 0);
    if (me == 0) {
        symmem__gpu_calls_publish(&c, 0, world, N, barrier_all, &ref);
        CHECK(ref.seq == 1 && ref.npeers == 2, "seq %llu, %d peers", (unsigned long long)ref.seq,
              ref.npeers);
        CHECK(verdict(&c, &ref, 1, &n, &culprit, text, sizeof(text)) == GPU_VERDICT_WAITING, "%s",
              text);
    }
    barrier();
    if (me != 0) symmem__gpu_calls_publish(&c, 0, world, N, barrier_all, &ref);
    barrier();
    CHECK(verdict(&c, &ref, 1, &n, &culprit, text, sizeof(text)) == GPU_VERDICT_MATCH, "%s", text);
    CHECK(n == N && strcmp(text, "PEs 0, 1, 2 called barrier_all") == 0, "%d: %s", n, text);

    /* B: PE 1 reduces 4 elements, the others 8: a mismatch on every PE */
    symmem__gpu_calls_publish(&c, 0, world, N, reduce(me == 1 ? 4 : 8, 0), &ref);
    barrier();
    CHECK(verdict(&c, &ref, 1, &n, &culprit, text, sizeof(text)) == GPU_VERDICT_MISMATCH, "%s",
          text);
    CHECK(strcmp(text, "PEs 0, 2 called reduce(sum, float32, 8 elements, team WORLD), PE 1 "
                       "called reduce(sum, float32, 4 elements, team WORLD)") == 0,
          "%s", text);
    CHECK(verdict(&c, &ref, 0, &n, &culprit, text, sizeof(text)) == GPU_VERDICT_MATCH,
          "SYMMEM_CHECK=0: %s", text);
    barrier();

    /* C: PE 1 runs 20 collectives ahead; its 3rd on WORLD is gone from the ring */
    uint64_t key = symmem__gpu_calls_team_key(0, world, N);
    if (me == 1)
        for (int i = 0; i < 20; i++) symmem__gpu_calls_publish(&c, 0, world, N, barrier_all, &ref);
    barrier();
    if (me != 1) {
        symmem_call_t got;
        CHECK(symmem__gpu_calls_find(&c, 1, 0, key, 3, &got) == GPU_RECORD_GONE, "seq 3");
        CHECK(symmem__gpu_calls_find(&c, 1, 0, key, 22, &got) == GPU_RECORD_FOUND &&
                  symmem__call_same(&got, &barrier_all),
              "seq 22");
        CHECK(symmem__gpu_calls_find(&c, 1, 0, key, 23, &got) == GPU_RECORD_NOT_YET, "seq 23");
        /* a gone record counts as matching, never as a mismatch */
        ref.seq = 3;
        CHECK(verdict(&c, &ref, 1, &n, &culprit, text, sizeof(text)) != GPU_VERDICT_MISMATCH, "%s",
              text);
        /* the first one this PE never entered (seq 3) is gone: named "a collective" */
        CHECK(symmem__gpu_calls_ahead(&c, 1, &got) && got.what == 0, "PE 1 is ahead on WORLD");
    }
    barrier();

    /* D: records read while PE 1 rewrites them are never torn; a record left
     * half-written is never compared */
    static const int team7[N] = {0, 1, 2};
    symmem__gpu_calls_set_team(&c, 7, team7, N);
    uint64_t key7 = symmem__gpu_calls_team_key(7, team7, N);
    if (me == 1) {
        /* until each reader has read records while they were rewritten
         * (the readers may start late on a busy machine) */
        for (uint64_t i = 1;
             i <= 200000 || atomic_load(&S->found[0]) < 1000 || atomic_load(&S->found[2]) < 1000;
             i++) {
            CHECK(i < 2000000000, "the readers never read");
            symmem_call_t call = symmem__call(SYMMEM_CALL_FCOLLECT, 7, i * 3, 0, 0, 0);
            symmem__gpu_calls_publish(&c, 7, team7, N, call, &ref);
        }
        atomic_store(&S->stop, 1);
    } else {
        long found = 0;
        while (!atomic_load(&S->stop)) {
            uint64_t latest = atomic_load(&c.peers[1]->team_seq[7]);
            for (uint64_t seq = latest > 20 ? latest - 20 : 1; seq <= latest + 1; seq++) {
                symmem_call_t got;
                if (symmem__gpu_calls_find(&c, 1, 7, key7, seq, &got) != GPU_RECORD_FOUND) continue;
                atomic_store(&S->found[me], ++found);
                CHECK(got.count == seq * 3 && (got.what & 0xff) == SYMMEM_CALL_FCOLLECT,
                      "torn: seq %llu has count %llu", (unsigned long long)seq,
                      (unsigned long long)got.count);
            }
        }
        CHECK(found > 0, "no record read while PE 1 wrote");
    }
    barrier();
    if (me == 1) { /* a writer stopped between withdrawing its newest record and rewriting it */
        gpu_call_record_t *r = &c.mine->ring[c.stamp % GPU_CALL_RING];
        atomic_store(&r->stamp, 0);
        atomic_store(&r->what, 12345);
    }
    barrier();
    if (me != 1) {
        gpu_call_ref_t mine = {.handle = 7,
                               .team_key = key7,
                               .seq = 200000,
                               .npeers = 1,
                               .peers = {1},
                               .call = symmem__call(SYMMEM_CALL_FCOLLECT, 7, 600000, 0, 0, 0)};
        CHECK(verdict(&c, &mine, 1, &n, &culprit, text, sizeof(text)) == GPU_VERDICT_MATCH &&
                  n == 1,
              "%s", text);
    }
    barrier();

    /* E: PE 2 enters a collective, then finalizes; PE 1 finalizes without */
    static const int team8[N] = {0, 1, 2};
    symmem__gpu_calls_set_team(&c, 8, team8, N);
    if (me == 2) symmem__gpu_calls_publish(&c, 8, team8, N, reduce(8, 8), &refs[2]);
    if (me != 0) symmem__gpu_calls_set_state(&c, GPU_PE_FINALIZING);
    barrier();
    if (me == 0) {
        symmem__gpu_calls_publish(&c, 8, team8, N, reduce(8, 8), &ref);
        CHECK(verdict(&c, &ref, 1, &n, &culprit, text, sizeof(text)) == GPU_VERDICT_LEFT &&
                  culprit == 1,
              "culprit %d: %s", culprit, text);
        CHECK(symmem__gpu_calls_state(&c, 2) == GPU_PE_FINALIZING &&
                  symmem__gpu_calls_state(&c, 1) == GPU_PE_FINALIZING,
              "states");
    }
    barrier();

    /* F: PE 1 waits on the host in a barrier of team 9, which PE 0 has not
     * entered: it waits for PE 0; once PE 0 enters it, no longer */
    static const int team9[2] = {0, 1};
    symmem__gpu_calls_set_team(&c, 9, team9, 2);
    symmem_call_t b9 = symmem__call(SYMMEM_CALL_BARRIER, 9, 0, 0, 0, 0);
    if (me == 1) {
        symmem__gpu_calls_publish(&c, 9, team9, 2, b9, &ref);
        symmem__gpu_calls_set_blocked(&c, ref.stamp);
    }
    barrier();
    if (me == 0) {
        symmem_call_t got;
        CHECK(symmem__gpu_calls_waits_for_me(&c, 1, &got) && symmem__call_same(&got, &b9),
              "PE 1 waits for PE 0");
        CHECK(!symmem__gpu_calls_waits_for_me(&c, 2, &got), "PE 2 waits for nobody");
        symmem__gpu_calls_publish(&c, 9, team9, 2, b9, &ref);
        CHECK(!symmem__gpu_calls_waits_for_me(&c, 1, &got), "PE 0 entered it");
    }
    barrier();

    /* H: collectives that wait for each other (symmem__gpu_calls_cycle) */
    for (int h = 0; h <= 9; h++) symmem__gpu_calls_forget_team(&c, h);
    symmem__gpu_calls_set_state(&c, GPU_PE_RUNNING);
    static const int pair01[2] = {0, 1}, pair12[2] = {1, 2}, pair20[2] = {2, 0};
    if (me != 2) { /* two teams of the same PEs, made on their members as a split makes them */
        symmem__gpu_calls_set_team(&c, 10, pair01, 2);
        symmem__gpu_calls_set_team(&c, 11, pair01, 2);
    }
    barrier();
    int cycle[N];
    symmem_call_t waiting_in[N];
    CHECK(symmem__gpu_calls_cycle(&c, cycle, waiting_in, N) == 0, "a cycle before any call");
    uint64_t progress = symmem__gpu_calls_progress(&c);
    barrier();
    /* PE 0 enters team 10's, PE 1 team 11's: each waits for the other; PE 2 is not in it */
    if (me == 0) symmem__gpu_calls_publish(&c, 10, pair01, 2, reduce(8, 10), &ref);
    if (me == 1) symmem__gpu_calls_publish(&c, 11, pair01, 2, reduce(4, 11), &ref);
    barrier();
    CHECK(symmem__gpu_calls_progress(&c) != progress, "progress unchanged by two calls");
    int len = symmem__gpu_calls_cycle(&c, cycle, waiting_in, N);
    if (me == 2) {
        CHECK(len == 0, "PE 2 is in a cycle of %d", len);
    } else {
        CHECK(len == 2 && cycle[0] == me && cycle[1] == 1 - me, "cycle of %d: %d %d", len, cycle[0],
              cycle[1]);
        symmem_call_t want0 = reduce(8, 10), want1 = reduce(4, 11);
        CHECK(symmem__call_same(&waiting_in[0], me == 0 ? &want0 : &want1) &&
                  symmem__call_same(&waiting_in[1], me == 0 ? &want1 : &want0),
              "the calls each waits in");
    }
    barrier();
    /* PE 1 makes team 10's call too: PE 0 waits for nobody now */
    if (me == 1) symmem__gpu_calls_publish(&c, 10, pair01, 2, reduce(8, 10), &ref);
    barrier();
    CHECK(symmem__gpu_calls_cycle(&c, cycle, waiting_in, N) == 0, "a cycle after the call");
    if (me == 0) symmem__gpu_calls_publish(&c, 11, pair01, 2, reduce(4, 11), &ref);
    barrier();
    /* a ring of three pair teams, each PE in the next's: a cycle of 3 through every PE */
    const int *pairs[N] = {pair01, pair12, pair20};
    for (int k = 0; k < N; k++) /* on its members, as a split makes it */
        if (pairs[k][0] == me || pairs[k][1] == me)
            symmem__gpu_calls_set_team(&c, 12 + k, pairs[k], 2);
    barrier();
    symmem__gpu_calls_publish(&c, 12 + me, pairs[me], 2, reduce(8, 12 + me), &ref);
    barrier();
    len = symmem__gpu_calls_cycle(&c, cycle, waiting_in, N);
    CHECK(len == 3 && cycle[0] == me && cycle[1] == (me + 1) % N && cycle[2] == (me + 2) % N,
          "ring: cycle of %d", len);
    barrier();
    /* one of them finalizing breaks it (finalize has checks of its own) */
    if (me == 2) symmem__gpu_calls_set_state(&c, GPU_PE_FINALIZING);
    barrier();
    if (me != 2)
        CHECK(symmem__gpu_calls_cycle(&c, cycle, waiting_in, N) == 0, "ring with "
                                                                      "PE 2 finalizing");
    barrier();

    /* I: a team destroyed before a peer checked its last call (issue 34):
     * every PE makes a collective on team 20; PEs 1 and 2 destroy the team
     * and call finalize() before PE 0 looks. They entered it: PE 0's check
     * is a match, never "PE k has called finalize() and left the job". */
    symmem__gpu_calls_set_state(&c, GPU_PE_RUNNING);
    static const int team20[N] = {0, 1, 2};
    symmem__gpu_calls_set_team(&c, 20, team20, N);
    uint64_t key20 = symmem__gpu_calls_team_key(20, team20, N);
    barrier();
    symmem__gpu_calls_publish(&c, 20, team20, N, reduce(8, 20), &ref);
    if (me != 0) {
        symmem__gpu_calls_forget_team(&c, 20);
        symmem__gpu_calls_set_state(&c, GPU_PE_FINALIZING);
    }
    barrier();
    if (me == 0) {
        symmem_call_t got;
        CHECK(symmem__gpu_calls_find(&c, 1, 20, key20, 1, &got) == GPU_RECORD_GONE,
              "a destroyed team's published call");
        CHECK(symmem__gpu_calls_find(&c, 1, 20, key20, 2, &got) == GPU_RECORD_NOT_YET,
              "a call after the destroyed team's last");
        CHECK(verdict(&c, &ref, 1, &n, &culprit, text, sizeof(text)) == GPU_VERDICT_MATCH,
              "culprit %d: %s", culprit, text);
        /* one more on the team, which PEs 1 and 2 never entered: they left */
        symmem__gpu_calls_publish(&c, 20, team20, N, reduce(8, 20), &ref);
        CHECK(verdict(&c, &ref, 1, &n, &culprit, text, sizeof(text)) == GPU_VERDICT_LEFT &&
                  culprit == 1,
              "culprit %d: %s", culprit, text);
        symmem__gpu_calls_forget_team(&c, 20);
    }
    barrier();
    if (me != 0) { /* a new team at the handle keeps the retired one findable */
        static const int pair12b[2] = {1, 2};
        symmem__gpu_calls_set_team(&c, 20, pair12b, 2);
        symmem__gpu_calls_publish(&c, 20, pair12b, 2, reduce(4, 20), &ref);
    }
    barrier();
    if (me == 0) {
        symmem_call_t got;
        CHECK(symmem__gpu_calls_find(&c, 2, 20, key20, 1, &got) == GPU_RECORD_GONE,
              "the retired team under a new one");
    }
    barrier();

    /* G: pages that are not call pages are refused; a corrupt one does no harm */
    if (me == 0) {
        char bad[200];
        /* No real pid, and one per run: the C tests run side by side. */
        pid_t fake = (pid_t)(900000000 + getpid() % 90000000);
        snprintf(bad, sizeof(bad), "/dev/shm/symmem-%u-gpu-%ld-1", (unsigned)geteuid(), (long)fake);
        gpu_calls_t other;
        CHECK(symmem__gpu_calls_create(&other, 2, 0, S->start[0] + 1, why, sizeof(why)) == 0, "%s",
              why);
        struct {
            const char *what;
            int mode;
            size_t size;
            uint64_t magic;
        } cases[] = {
            {"not the size of a call page", 0600, 64, GPU_CALL_PAGE_MAGIC},
            {"open to other users", 0644, sizeof(gpu_call_page_t), GPU_CALL_PAGE_MAGIC},
            {"magic", 0600, sizeof(gpu_call_page_t), 42},
            {"Too many levels of symbolic links", -1, 0, 0},
        };
        for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
            unlink(bad);
            if (cases[k].mode < 0) {
                CHECK(symlink(path, bad) == 0, "symlink: %s", strerror(errno));
            } else {
                int fd = open(bad, O_RDWR | O_CREAT | O_EXCL, 0600);
                CHECK(fd >= 0 && fchmod(fd, (mode_t)cases[k].mode) == 0 &&
                          ftruncate(fd, (off_t)cases[k].size) == 0,
                      "%s", strerror(errno));
                if (cases[k].size >= sizeof(uint64_t))
                    CHECK(pwrite(fd, &cases[k].magic, 8, 0) == 8, "write");
                close(fd);
            }
            why[0] = '\0';
            CHECK(symmem__gpu_calls_open_peer(&other, 1, fake, 1, why, sizeof(why)) != 0 &&
                      strstr(why, cases[k].what) && strstr(why, bad),
                  "case %zu: %s", k, why);
        }
        /* a page in the right form with nonsense inside */
        unlink(bad);
        gpu_call_page_t junk;
        memset(&junk, 0xff, sizeof(junk));
        junk.magic = GPU_CALL_PAGE_MAGIC;
        junk.size = sizeof(junk);
        int fd = open(bad, O_RDWR | O_CREAT | O_EXCL, 0600);
        CHECK(fd >= 0 && write(fd, &junk, sizeof(junk)) == (ssize_t)sizeof(junk), "junk");
        close(fd);
        CHECK(symmem__gpu_calls_open_peer(&other, 1, fake, 1, why, sizeof(why)) == 0, "%s", why);
        unlink(bad);
        symmem__gpu_calls_set_team(&other, 0, world, 2);
        symmem_call_t got;
        (void)symmem__gpu_calls_waits_for_me(&other, 1, &got);
        (void)symmem__gpu_calls_ahead(&other, 1, &got);
        (void)symmem__gpu_calls_state(&other, 1);
        symmem__gpu_calls_publish(&other, 0, world, 2, barrier_all, &ref);
        CHECK(verdict(&other, &ref, 1, &n, &culprit, text, sizeof(text)) >= 0, "%s", text);
        symmem__gpu_calls_free(&other);
    }
    barrier();
    symmem__gpu_calls_free(&c);
}

int main(void)
{
    S = mmap(NULL, sizeof(*S), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (S == MAP_FAILED) return 1;
    memset(S, 0, sizeof(*S));
    pid_t kids[N - 1];
    for (int i = 1; i < N; i++) {
        kids[i - 1] = fork();
        if (kids[i - 1] == 0) {
            me = i;
            run();
            _exit(0);
        }
    }
    me = 0;
    run();
    int failed = 0;
    for (int i = 0; i < N - 1; i++) {
        int status = 0;
        waitpid(kids[i], &status, 0);
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    if (failed)
        fprintf(stderr, "a process of the test failed\n");
    else
        printf("call pages: every case passed\n");
    return failed;
}
