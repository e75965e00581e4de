/* A pause that a stop ends at once: a thread that looks at something every
 * period (the device watch, device_state.c) waits here instead of sleeping,
 * so that the thread stopping it (finalize) need not wait out a period. */
#ifndef SYMMEM_GPU_PAUSE_H
#define SYMMEM_GPU_PAUSE_H

#include <pthread.h>

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* on CLOCK_MONOTONIC: a change of the wall clock changes no pause */
    int stopped;         /* under lock */
} gpu_pause_t;

/* 0, or non-zero where the system has no room for it. */
int symmem__pause_init(gpu_pause_t *p);
/* Waits ns nanoseconds or until symmem__pause_stop; 1 if stopped (now or
 * before), else 0. */
int symmem__pause_for(gpu_pause_t *p, long long ns);
/* Ends every pause now and every later one at once. */
void symmem__pause_stop(gpu_pause_t *p);
/* After the pausing thread has ended. */
void symmem__pause_destroy(gpu_pause_t *p);

#endif
