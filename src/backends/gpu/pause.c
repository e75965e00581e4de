/* pause.h: a timed wait on a condition, so that a stop wakes the sleeper. */
#include "pause.h"

#include <time.h>

int symmem__pause_init(gpu_pause_t *p)
{
    pthread_condattr_t clock;
    if (pthread_condattr_init(&clock) != 0) return -1;
    int rc = pthread_condattr_setclock(&clock, CLOCK_MONOTONIC);
    if (rc == 0) rc = pthread_cond_init(&p->wake, &clock);
    pthread_condattr_destroy(&clock);
    if (rc != 0) return -1;
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        pthread_cond_destroy(&p->wake);
        return -1;
    }
    p->stopped = 0;
    return 0;
}

int symmem__pause_for(gpu_pause_t *p, long long ns)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    long long at = (long long)until.tv_nsec + ns;
    until.tv_sec += (time_t)(at / 1000000000LL);
    until.tv_nsec = (long)(at % 1000000000LL);
    pthread_mutex_lock(&p->lock);
    /* 0: signalled, or a spurious wake-up, so wait on unless stopped;
     * ETIMEDOUT: the period is over */
    while (!p->stopped && pthread_cond_timedwait(&p->wake, &p->lock, &until) == 0);
    int stopped = p->stopped;
    pthread_mutex_unlock(&p->lock);
    return stopped;
}

void symmem__pause_stop(gpu_pause_t *p)
{
    pthread_mutex_lock(&p->lock);
    p->stopped = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

void symmem__pause_destroy(gpu_pause_t *p)
{
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
}
