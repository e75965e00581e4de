/* Is a peer still alive? A waiter asks this a few times a second, so that a
 * dead peer turns into an error instead of a hang. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cpu.h"
#include "../../core/peer_status.h"

int symmem__cpu_peer_dead(cpu_t *cpu, int pe, char *how, size_t how_size, double *when_p)
{
    *when_p = 1e300; /* unknown: after every known death */
    cpu_pe_slot_t *slot = &cpu->ctl->slots[pe];
    uint32_t pe_state = atomic_load_explicit(&slot->state, memory_order_acquire);
    if (pe_state == PE_ABSENT) return 0;
    pid_t pid = slot->pid;
    if (!symmem__process_gone(pid, slot->start_time)) return 0;
    if (pe_state == PE_FINALIZED) {
        snprintf(how, how_size, "called finalize() and exited");
        return 1;
    }
    /* The launcher writes its report right after reaping: give it a moment. */
    for (int i = 0; i < 20; i++) {
        if (symmem__exit_report(cpu->boot.status_dir, pe, how, how_size, when_p)) return 1;
        if (cpu->boot.status_dir[0] == '\0') break;
        usleep(10000);
    }
    snprintf(how, how_size, "is gone (pid %ld is no longer running)", (long)pid);
    return 1;
}
