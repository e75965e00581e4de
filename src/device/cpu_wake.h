/* Waking a peer after a device store (cpu backend); see cpu_wake.c. */
#ifndef SYMMEM_DEVICE_CPU_WAKE_H
#define SYMMEM_DEVICE_CPU_WAKE_H

#include <stdint.h>

/* Call after the store (release) that a waiter on PE pe may be watching. */
void symmem__device_cpu_wake(int32_t pe);

#endif
