/* Every documented error of the C API returns its status and a message. */
#include <string.h>

#include "c_test.h"

static void expect_message(const char *needle)
{
    if (strstr(symmem_last_error(), needle) == NULL) {
        fprintf(stderr, "expected the message to mention '%s', got '%s'\n", needle,
                symmem_last_error());
        exit(1);
    }
}

int main(void)
{
    void *p;
    FAILS(symmem_malloc(8, &p), SYMMEM_ERR_NOT_INITIALIZED);
    expect_message("not initialized");
    OK(symmem_init());
    OK(symmem_init()); /* twice is harmless */
    int me = symmem_my_pe(), n = symmem_n_pes();
    char *buf;
    OK(symmem_malloc(64, (void **)&buf));
    char local[128];

    FAILS(symmem_put(buf, local, 8, n, SYMMEM_STREAM_NONE), SYMMEM_ERR_INVALID);
    expect_message("pe=");
    if (n == 1) expect_message("(this is a world of 1 PE: start N PEs with python -m symmem.run");
    FAILS(symmem_put(buf, local, 8, -1, SYMMEM_STREAM_NONE), SYMMEM_ERR_INVALID);
    FAILS(symmem_put(local, buf, 8, 0, SYMMEM_STREAM_NONE), SYMMEM_ERR_NOT_SYMMETRIC);
    expect_message("dst");
    FAILS(symmem_put(buf, local, 65, 0, SYMMEM_STREAM_NONE), SYMMEM_ERR_NOT_SYMMETRIC);
    expect_message("past the end");
    FAILS(symmem_get(local, local, 8, 0, SYMMEM_STREAM_NONE), SYMMEM_ERR_NOT_SYMMETRIC);
    expect_message("src");
    FAILS(symmem_signal_op((uint64_t *)(buf + 4), 1, SYMMEM_SIGNAL_SET, 0, SYMMEM_STREAM_NONE),
          SYMMEM_ERR_INVALID);
    expect_message("aligned");
    FAILS(symmem_signal_op((uint64_t *)buf, 1, (symmem_signal_op_t)3, 0, SYMMEM_STREAM_NONE),
          SYMMEM_ERR_INVALID);
    FAILS(symmem_signal_wait_until((uint64_t *)buf, (symmem_cmp_t)9, 0, SYMMEM_STREAM_NONE, NULL),
          SYMMEM_ERR_INVALID);
    FAILS(symmem_wait_until(buf, SYMMEM_DTYPE_FLOAT32, SYMMEM_CMP_EQ, 0), SYMMEM_ERR_INVALID);

    /* A collective's dst and src may not overlap; reduce may run in place. */
    FAILS(symmem_fcollect(SYMMEM_TEAM_WORLD, buf, buf + 4, 8, SYMMEM_STREAM_NONE),
          SYMMEM_ERR_INVALID);
    expect_message("overlap");
    FAILS(symmem_reduce(SYMMEM_TEAM_WORLD, buf, buf + 8, 4, SYMMEM_DTYPE_INT32, SYMMEM_OP_SUM,
                        SYMMEM_STREAM_NONE),
          SYMMEM_ERR_INVALID);
    OK(symmem_reduce(SYMMEM_TEAM_WORLD, buf, buf, 4, SYMMEM_DTYPE_INT32, SYMMEM_OP_SUM,
                     SYMMEM_STREAM_NONE));
    /* A count whose bytes pass 2**64 is refused; wrapped around, it passed
     * the buffer checks with a few bytes. */
    size_t quarter = ((size_t)1 << 62) + 1; /* 4 bytes each: 2**64 + 4, 4 once wrapped */
    FAILS(symmem_reduce(SYMMEM_TEAM_WORLD, buf, buf, quarter, SYMMEM_DTYPE_INT32, SYMMEM_OP_SUM,
                        SYMMEM_STREAM_NONE),
          SYMMEM_ERR_INVALID);
    expect_message("reduce: nelems=4611686018427387905 times 4 (bytes per element) is more "
                   "than 2**64 bytes");
    FAILS(symmem_reducescatter(SYMMEM_TEAM_WORLD, buf, buf + 32, quarter, SYMMEM_DTYPE_INT32,
                               SYMMEM_OP_SUM, SYMMEM_STREAM_NONE),
          SYMMEM_ERR_INVALID);
    expect_message("reducescatter: nelems=4611686018427387905 times 4");
    size_t huge = ((size_t)1 << 63) + 1; /* 2**64 + 2 for two PEs */
    if (n > 1) {
        FAILS(symmem_alltoall(SYMMEM_TEAM_WORLD, buf, buf + 32, huge, SYMMEM_STREAM_NONE),
              SYMMEM_ERR_INVALID);
        expect_message("alltoall: nbytes=9223372036854775809 times");
        FAILS(symmem_fcollect(SYMMEM_TEAM_WORLD, buf, buf + 32, huge, SYMMEM_STREAM_NONE),
              SYMMEM_ERR_INVALID);
        expect_message("fcollect: nbytes=9223372036854775809 times");
    }

    /* PEs asking for different sizes all get MISMATCH and the heap is intact. */
    if (n > 1) {
        FAILS(symmem_malloc(me == 0 ? 128 : 256, &p), SYMMEM_ERR_MISMATCH);
        expect_message("size must be the same");
    }
    FAILS(symmem_malloc((size_t)1 << 62, &p), SYMMEM_ERR_NO_MEMORY);

    /* Double free and use after free. */
    OK(symmem_free(buf));
    FAILS(symmem_free(buf), SYMMEM_ERR_NOT_SYMMETRIC);
    expect_message("freed");
    FAILS(symmem_put(buf, local, 8, 0, SYMMEM_STREAM_NONE), SYMMEM_ERR_NOT_SYMMETRIC);

    OK(symmem_finalize());
    OK(symmem_finalize()); /* twice is harmless */
    FAILS(symmem_barrier_all(SYMMEM_STREAM_NONE), SYMMEM_ERR_NOT_INITIALIZED);
    printf("test_errors: ok on PE %d of %d\n", me, n);
    return 0;
}
