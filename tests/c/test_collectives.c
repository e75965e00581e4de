/* Collectives and atomics through the C API, every value checked: reduce
 * (sum over the world, in place, and over a strided team), fcollect,
 * broadcast from every root, alltoall, and a fetch_add hammer from every PE
 * on one counter (exact total, every ticket handed out once). Run at 1..4 PEs. */
#include <string.h>

#include "c_test.h"

#define N 1000      /* elements per reduce / block */
#define HITS 200000 /* fetch_adds per PE (enough for the PEs to overlap) */

int main(void)
{
    OK(symmem_init());
    int me = symmem_my_pe(), n = symmem_n_pes();
    const symmem_stream_t S = SYMMEM_STREAM_NONE;
    int64_t *src, *dst, *all, *counter, *tickets, *gathered;
    double *dsrc, *ddst;
    OK(symmem_malloc(N * sizeof(int64_t), (void **)&src));
    OK(symmem_malloc(N * sizeof(int64_t), (void **)&dst));
    OK(symmem_malloc((size_t)n * N * sizeof(int64_t), (void **)&all));
    OK(symmem_malloc(N * sizeof(double), (void **)&dsrc));
    OK(symmem_malloc(N * sizeof(double), (void **)&ddst));
    OK(symmem_malloc(sizeof(int64_t), (void **)&counter));
    OK(symmem_malloc(HITS * sizeof(int64_t), (void **)&tickets));
    OK(symmem_malloc((size_t)n * HITS * sizeof(int64_t), (void **)&gathered));

    /* reduce sum over the world: int64 and double, then in place */
    for (int i = 0; i < N; i++) {
        src[i] = (int64_t)i * 1000 + me;
        dsrc[i] = 0.5 * i + me;
    }
    OK(symmem_reduce(SYMMEM_TEAM_WORLD, dst, src, N, SYMMEM_DTYPE_INT64, SYMMEM_OP_SUM, S));
    OK(symmem_reduce(SYMMEM_TEAM_WORLD, ddst, dsrc, N, SYMMEM_DTYPE_FLOAT64, SYMMEM_OP_SUM, S));
    long long pe_sum = (long long)n * (n - 1) / 2;
    for (int i = 0; i < N; i++) {
        EXPECT_EQ((long long)i * 1000 * n + pe_sum, dst[i]);
        EXPECT_EQ(src[i], (int64_t)i * 1000 + me); /* src untouched */
        if (ddst[i] != 0.5 * i * n + (double)pe_sum) {
            fprintf(stderr, "pe %d: double reduce [%d]: expected %g, got %g\n", me, i,
                    0.5 * i * n + (double)pe_sum, ddst[i]);
            return 1;
        }
    }
    OK(symmem_reduce(SYMMEM_TEAM_WORLD, src, src, N, SYMMEM_DTYPE_INT64, SYMMEM_OP_MAX, S));
    for (int i = 0; i < N; i++) EXPECT_EQ((int64_t)i * 1000 + n - 1, src[i]);

    /* signed sum and prod wrap as in NumPy (no undefined behaviour: make
     * test-sanitize runs this under UBSan): every PE gives INT64_MAX, then 3 */
    for (int i = 0; i < N; i++) src[i] = INT64_MAX;
    OK(symmem_reduce(SYMMEM_TEAM_WORLD, dst, src, N, SYMMEM_DTYPE_INT64, SYMMEM_OP_SUM, S));
    EXPECT_EQ((int64_t)((uint64_t)INT64_MAX * (uint64_t)n), dst[N - 1]);
    for (int i = 0; i < N; i++) src[i] = 3;
    OK(symmem_reduce(SYMMEM_TEAM_WORLD, dst, src, N, SYMMEM_DTYPE_INT64, SYMMEM_OP_PROD, S));
    uint64_t power = 1;
    for (int pe = 0; pe < n; pe++) power *= 3;
    EXPECT_EQ((int64_t)power, dst[0]);
    int32_t *small = (int32_t *)all;
    for (int i = 0; i < N; i++) small[i] = INT32_MAX;
    OK(symmem_reduce(SYMMEM_TEAM_WORLD, small + N, small, N, SYMMEM_DTYPE_INT32, SYMMEM_OP_SUM, S));
    EXPECT_EQ((int32_t)((uint32_t)INT32_MAX * (uint32_t)n), small[N + 7]);

    /* reduce over the odd PEs (1, 3, ...): a strided team */
    symmem_team_t odd = SYMMEM_TEAM_INVALID;
    if (n > 1) {
        OK(symmem_team_split_strided(SYMMEM_TEAM_WORLD, 1, 2, n / 2, &odd));
        EXPECT_EQ(me % 2 ? 0 : 1, odd == SYMMEM_TEAM_INVALID);
    }
    if (odd != SYMMEM_TEAM_INVALID) {
        EXPECT_EQ(n / 2, symmem_team_n_pes(odd));
        EXPECT_EQ(me / 2, symmem_team_my_pe(odd));
        for (int i = 0; i < N; i++) src[i] = i + me;
        OK(symmem_reduce(odd, dst, src, N, SYMMEM_DTYPE_INT64, SYMMEM_OP_SUM, S));
        long long odd_sum = 0;
        for (int pe = 1; pe < n; pe += 2) odd_sum += pe;
        for (int i = 0; i < N; i++) EXPECT_EQ((long long)i * (n / 2) + odd_sum, dst[i]);
        OK(symmem_team_destroy(odd));
    }
    OK(symmem_barrier_all(S));

    /* fcollect: my N elements land in block me of everyone's all[] */
    for (int i = 0; i < N; i++) src[i] = (int64_t)me * 100000 + i;
    OK(symmem_fcollect(SYMMEM_TEAM_WORLD, all, src, N * sizeof(int64_t), S));
    for (int pe = 0; pe < n; pe++)
        for (int i = 0; i < N; i++) EXPECT_EQ((int64_t)pe * 100000 + i, all[pe * N + i]);

    /* broadcast from every root */
    for (int root = 0; root < n; root++) {
        for (int i = 0; i < N; i++) {
            src[i] = (int64_t)(me + 1) * 7 + i * 3 + root;
            dst[i] = -1;
        }
        OK(symmem_broadcast(SYMMEM_TEAM_WORLD, dst, src, N * sizeof(int64_t), root, S));
        for (int i = 0; i < N; i++) EXPECT_EQ((int64_t)(root + 1) * 7 + i * 3 + root, dst[i]);
    }
    FAILS(symmem_broadcast(SYMMEM_TEAM_WORLD, dst, src, 8, n, S), SYMMEM_ERR_INVALID);

    /* alltoall: block j of my src goes to PE j's block me */
    int block = N / n;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < block; i++) src[j * block + i] = (int64_t)me * 1000000 + j * 1000 + i;
    OK(symmem_alltoall(SYMMEM_TEAM_WORLD, all, src, (size_t)block * sizeof(int64_t), S));
    for (int j = 0; j < n; j++)
        for (int i = 0; i < block; i++)
            EXPECT_EQ((int64_t)j * 1000000 + me * 1000 + i, all[j * block + i]);

    /* a reduce with a bitwise op on doubles is refused on this PE alone */
    FAILS(symmem_reduce(SYMMEM_TEAM_WORLD, ddst, dsrc, N, SYMMEM_DTYPE_FLOAT64, SYMMEM_OP_AND, S),
          SYMMEM_ERR_INVALID);
    if (strstr(symmem_last_error(), "reduce") == NULL) {
        fprintf(stderr, "pe %d: message does not name reduce: %s\n", me, symmem_last_error());
        return 1;
    }

    /* fetch_add hammer: every PE adds 1 to PE 0's counter HITS times */
    *counter = 0;
    OK(symmem_barrier_all(S));
    for (int k = 0; k < HITS; k++) {
        uint64_t old = 0;
        OK(symmem_atomic(SYMMEM_ATOMIC_FETCH_ADD, counter, SYMMEM_DTYPE_INT64, 1, 0, 0, &old));
        tickets[k] = (int64_t)old;
        if (k > 0 && tickets[k] <= tickets[k - 1]) EXPECT_EQ(tickets[k - 1] + 1, tickets[k]);
    }
    OK(symmem_barrier_all(S));
    uint64_t total = 0;
    OK(symmem_atomic(SYMMEM_ATOMIC_FETCH, counter, SYMMEM_DTYPE_INT64, 0, 0, 0, &total));
    EXPECT_EQ((long long)n * HITS, total);
    if (me == 0) EXPECT_EQ((long long)n * HITS, *counter);
    /* every ticket 0 .. n*HITS-1 was handed out exactly once */
    OK(symmem_fcollect(SYMMEM_TEAM_WORLD, gathered, tickets, HITS * sizeof(int64_t), S));
    char *seen = calloc((size_t)n * HITS, 1);
    if (seen == NULL) return 1;
    for (long k = 0; k < (long)n * HITS; k++) {
        int64_t t = gathered[k];
        if (t < 0 || t >= (int64_t)n * HITS || seen[t]) {
            fprintf(stderr, "pe %d: ticket %lld out of range or handed out twice\n", me,
                    (long long)t);
            return 1;
        }
        seen[t] = 1;
    }
    free(seen);
    /* compare_swap: exactly one PE wins */
    *counter = 0;
    OK(symmem_barrier_all(S));
    uint64_t old = 99;
    OK(symmem_atomic(SYMMEM_ATOMIC_COMPARE_SWAP, counter, SYMMEM_DTYPE_INT64, (uint64_t)me + 1, 0,
                     0, &old));
    tickets[0] = old == 0;
    OK(symmem_fcollect(SYMMEM_TEAM_WORLD, gathered, tickets, sizeof(int64_t), S));
    int winners = 0;
    for (int pe = 0; pe < n; pe++) winners += (int)gathered[pe];
    EXPECT_EQ(1, winners);

    /* team_init: the world in reverse order; an all-gather over it lands in
     * reverse PE order */
    symmem_team_t reversed;
    OK(symmem_team_init(42, n, n - 1 - me, &reversed));
    EXPECT_EQ(n - 1 - me, symmem_team_my_pe(reversed));
    EXPECT_EQ(n - 1, symmem_team_world_pe(reversed, 0));
    tickets[0] = me;
    OK(symmem_fcollect(reversed, gathered, tickets, sizeof(int64_t), S));
    for (int i = 0; i < n; i++) EXPECT_EQ(n - 1 - i, gathered[i]);
    OK(symmem_team_destroy(reversed));
    FAILS(symmem_team_init(42, n, n, &reversed), SYMMEM_ERR_INVALID);

    OK(symmem_free(gathered));
    OK(symmem_free(tickets));
    OK(symmem_free(counter));
    OK(symmem_free(ddst));
    OK(symmem_free(dsrc));
    OK(symmem_free(all));
    OK(symmem_free(dst));
    OK(symmem_free(src));
    OK(symmem_finalize());
    printf("test_collectives: ok on PE %d of %d\n", me, n);
    return 0;
}
