/* Device stores on the cpu backend wake a peer that sleeps in the C engine's
 * wait (wait_until, signal_wait): the same doorbell the host calls ring. */
#include "cpu_wake.h"

#include "../backends/cpu/cpu.h"
#include "../core/state.h"

void symmem__device_cpu_wake(int32_t pe)
{
    symmem_runtime_t *rt = &symmem__rt;
    /* Only the cpu engine sleeps on doorbells; pe was checked by the caller. */
    if (!rt->initialized || rt->ops != &symmem__cpu_backend_ops || pe < 0 || pe >= rt->n_pes)
        return;
    symmem__cpu_ring((cpu_t *)rt->be, pe, CPU_WAIT_DATA);
}
