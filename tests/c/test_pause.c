/* The pause of src/backends/gpu/pause.c, which needs no GPU:
 *  - a pause nobody stops lasts its period and says it was not stopped;
 *  - a stop ends a pause of an hour that another thread is in (were it a
 *    sleep, this test would wait the hour; run_c_tests.py's limit ends it);
 *  - after a stop, every later pause ends at once and says so. */
#include <pthread.h>
#include <time.h>

#include "../../src/backends/gpu/pause.h"
#include "c_test.h"

#define HOUR_NS (3600LL * 1000000000LL)

static int me = 0; /* c_test.h's CHECK names the process: one here */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *pause_an_hour(void *arg)
{
    static int stopped;
    stopped = symmem__pause_for(arg, HOUR_NS);
    return &stopped;
}

int main(void)
{
    gpu_pause_t p;
    CHECK(symmem__pause_init(&p) == 0, "pause_init failed");

    double begun = now();
    CHECK(symmem__pause_for(&p, 30000000LL) == 0, "a 30 ms pause said it was stopped");
    CHECK(now() - begun >= 0.029, "a 30 ms pause ended after %.4f s", now() - begun);
    /* a period whose end carries into the next second */
    CHECK(symmem__pause_for(&p, 1000000000LL - 1) == 0, "a 1 s pause said it was stopped");

    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, pause_an_hour, &p) == 0, "pthread_create failed");
    struct timespec little = {0, 20000000}; /* let it begin its pause (or not: either way) */
    nanosleep(&little, NULL);
    symmem__pause_stop(&p);
    void *result;
    pthread_join(thread, &result);
    CHECK(*(int *)result == 1, "the stopped pause said it was not stopped");

    CHECK(symmem__pause_for(&p, HOUR_NS) == 1, "a pause after the stop said it was not stopped");
    symmem__pause_destroy(&p);
    printf("test_pause: OK\n");
    return 0;
}
