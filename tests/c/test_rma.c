/* put, get, put_signal/signal_wait and barrier_all between all PEs, with
 * every received value checked. Run at 1..4 PEs. */
#include <string.h>

#include "c_test.h"

#define N 1000

int main(void)
{
    OK(symmem_init());
    int me = symmem_my_pe(), n = symmem_n_pes();
    int *data, *got;
    uint64_t *sig;
    OK(symmem_malloc(N * sizeof(int), (void **)&data));
    OK(symmem_malloc(N * sizeof(int), (void **)&got));
    OK(symmem_malloc(sizeof(uint64_t), (void **)&sig));
    *sig = 0;
    for (int i = 0; i < N; i++) data[i] = me * 100000 + i;
    OK(symmem_barrier_all(SYMMEM_STREAM_NONE));

    /* put my data into the next PE's got[] */
    int next = (me + 1) % n, prev = (me - 1 + n) % n;
    OK(symmem_put(got, data, N * sizeof(int), next, SYMMEM_STREAM_NONE));
    OK(symmem_barrier_all(SYMMEM_STREAM_NONE));
    for (int i = 0; i < N; i++) EXPECT_EQ(prev * 100000 + i, got[i]);

    /* get the previous PE's data */
    int local[N];
    OK(symmem_get(local, data, N * sizeof(int), prev, SYMMEM_STREAM_NONE));
    for (int i = 0; i < N; i++) EXPECT_EQ(prev * 100000 + i, local[i]);
    OK(symmem_barrier_all(SYMMEM_STREAM_NONE));

    /* put_signal to the next PE, wait for mine from the previous one */
    for (int i = 0; i < N; i++) data[i] = -(me + 1) * i;
    OK(symmem_put_signal(got, data, N * sizeof(int), sig, 1, SYMMEM_SIGNAL_ADD, next,
                         SYMMEM_STREAM_NONE));
    uint64_t value = 0;
    OK(symmem_signal_wait_until(sig, SYMMEM_CMP_GE, 1, SYMMEM_STREAM_NONE, &value));
    EXPECT_EQ(1, value);
    for (int i = 0; i < N; i++) EXPECT_EQ(-(prev + 1) * i, got[i]);

    /* every PE adds 1 to PE 0's signal */
    OK(symmem_barrier_all(SYMMEM_STREAM_NONE));
    OK(symmem_signal_op(sig, 1, SYMMEM_SIGNAL_ADD, 0, SYMMEM_STREAM_NONE));
    if (me == 0) {
        OK(symmem_signal_wait_until(sig, SYMMEM_CMP_EQ, 1 + (uint64_t)n, SYMMEM_STREAM_NONE, NULL));
        OK(symmem_signal_fetch(sig, &value));
        EXPECT_EQ(1 + n, value);
    }

    /* data, fence, flag: the flag's waiter sees the data (both fence forms) */
    for (int round = 1; round <= 2; round++) {
        OK(symmem_barrier_all(SYMMEM_STREAM_NONE));
        for (int i = 0; i < N; i++) data[i] = round * 1000000 + me * 1000 + i;
        OK(symmem_put(got, data, N * sizeof(int), next, SYMMEM_STREAM_NONE));
        OK(round == 1 ? symmem_fence() : symmem_fence_on_stream(SYMMEM_STREAM_NONE));
        OK(symmem_signal_op(sig, (uint64_t)(100 + round), SYMMEM_SIGNAL_SET, next,
                            SYMMEM_STREAM_NONE));
        OK(symmem_signal_wait_until(sig, SYMMEM_CMP_EQ, (uint64_t)(100 + round), SYMMEM_STREAM_NONE,
                                    NULL));
        for (int i = 0; i < N; i++) EXPECT_EQ(round * 1000000 + prev * 1000 + i, got[i]);
    }
    for (int i = 0; i < N; i++) data[i] = -(me + 1) * i;

    /* symmem_ptr gives a direct view of the peer's copy */
    OK(symmem_barrier_all(SYMMEM_STREAM_NONE));
    int *peer = symmem_ptr(data, next);
    if (peer == NULL) {
        fprintf(stderr, "symmem_ptr returned NULL\n");
        return 1;
    }
    EXPECT_EQ(-(next + 1) * 7, peer[7]);

    OK(symmem_free(sig));
    OK(symmem_free(got));
    OK(symmem_free(data));
    OK(symmem_finalize());
    printf("test_rma: ok on PE %d of %d\n", me, n);
    return 0;
}
