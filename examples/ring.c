/* The put ring from C: each PE puts its rank into the next PE's slot and
 * signals it; build with `make` and run with
 *     python -m symmem.run -n 4 build/examples/ring */
#include <stdio.h>

#include "symmem/symmem.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        if ((call) != SYMMEM_OK) {                                                                 \
            fprintf(stderr, "%s failed: %s\n", #call, symmem_last_error());                        \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void)
{
    CHECK(symmem_init());
    int me = symmem_my_pe(), n = symmem_n_pes();
    int *received;
    uint64_t *arrived;
    CHECK(symmem_malloc(sizeof(int), (void **)&received));
    CHECK(symmem_malloc(sizeof(uint64_t), (void **)&arrived));
    *arrived = 0;
    CHECK(symmem_barrier_all(SYMMEM_STREAM_NONE));

    int next = (me + 1) % n;
    CHECK(symmem_put_signal(received, &me, sizeof(me), arrived, 1, SYMMEM_SIGNAL_SET, next,
                            SYMMEM_STREAM_NONE));
    CHECK(symmem_signal_wait_until(arrived, SYMMEM_CMP_EQ, 1, SYMMEM_STREAM_NONE, NULL));
    printf("PE %d of %d received %d from PE %d\n", me, n, *received, (me - 1 + n) % n);

    CHECK(symmem_free(arrived));
    CHECK(symmem_free(received));
    CHECK(symmem_finalize());
    return 0;
}
