/* The one wait loop: spin briefly, then sleep on this PE's doorbell futex,
 * waking at least every POLL_SECONDS, and at once when a signal arrives, to
 * look for an interrupt (Ctrl-C), dead peers and timeouts. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../core/error.h"
#include "../../core/interrupt.h"
#include "cpu.h"

#define POLL_SECONDS 0.1

double symmem__cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Returns 1 if a signal cut the sleep short (its handler has run). */
static int futex_wait(_Atomic uint32_t *word, uint32_t expected, double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    /* Not FUTEX_PRIVATE: the word lives in memory shared between processes.
     * A relative timeout makes the kernel return EINTR after a handled signal
     * even under SA_RESTART, so Ctrl-C is seen without waiting for the poll. */
    return syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, &ts, NULL, 0) != 0 &&
           errno == EINTR;
}

static void futex_wake_all(_Atomic uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void symmem__cpu_ring(cpu_t *cpu, int pe, cpu_wait_kind_t kind)
{
    cpu_pe_slot_t *slot = &cpu->ctl->slots[pe];
    /* seq_cst pairs with the waiter's sleepers increment: either we see it
     * and wake, or it sees our doorbell bump and does not sleep. */
    atomic_fetch_add_explicit(&slot->doorbell, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&slot->sleepers[kind], memory_order_seq_cst) != 0)
        futex_wake_all(&slot->doorbell);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* A dead peer, or an expired deadline, as an error naming what we wait for. */
static symmem_status_t check_failures(cpu_t *cpu, const char *call, cpu_pending_func_t pending,
                                      void *arg, double started, double deadline)
{
    /* Name the peer that died first: later deaths are often its echoes. */
    char how[256], first_how[256], waiting[512] = "";
    int first = -1;
    double first_when = 0, when;
    for (int pe = 0; pe < cpu->n; pe++) {
        if (pe == cpu->me || !symmem__cpu_peer_dead(cpu, pe, how, sizeof(how), &when)) continue;
        if (first < 0 || when < first_when) {
            first = pe;
            first_when = when;
            memcpy(first_how, how, sizeof(how));
        }
    }
    if (first >= 0) {
        if (pending) pending(arg, waiting, sizeof(waiting));
        return symmem__error(SYMMEM_ERR_PEER_DEAD, "%s: PE %d (pid %d) %s%s%s", call, first,
                             (int)cpu->ctl->slots[first].pid, first_how, waiting[0] ? "; " : "",
                             waiting);
    }
    if (deadline > 0 && symmem__cpu_now() > deadline) {
        if (pending) pending(arg, waiting, sizeof(waiting));
        return symmem__error(SYMMEM_ERR_TIMEOUT, "%s: timed out after %.1f s%s%s", call,
                             symmem__cpu_now() - started, waiting[0] ? "; " : "", waiting);
    }
    return SYMMEM_OK;
}

/* A wait that slept but ended soon after was most likely a hand-off lost to
 * the scheduler (the peer got no core while this PE spun, or this PE lost its
 * core when it slept): spinning longer keeps both PEs running, as MPI's
 * polling does. A long wait is a slow peer: spinning through it only burns
 * the core, so the spin goes back to SYMMEM_SPIN_US. */
#define SPIN_MAX_US 5000.0
/* This PE's spin in microseconds: at least SYMMEM_SPIN_US (0 there: none,
 * and no adapting either). */
static double adapted_spin_us(cpu_t *cpu)
{
    double spin = atomic_load_explicit(&cpu->spin_us, memory_order_relaxed);
    return spin > cpu->boot.spin_us ? spin : cpu->boot.spin_us;
}

static void adapt_spin(cpu_t *cpu, double waited)
{
    double spin = adapted_spin_us(cpu) * 2;
    if (spin > SPIN_MAX_US) spin = SPIN_MAX_US;
    if (waited >= 2 * SPIN_MAX_US * 1e-6) spin = cpu->boot.spin_us;
    atomic_store_explicit(&cpu->spin_us, spin, memory_order_relaxed);
}

symmem_status_t symmem__cpu_wait(cpu_t *cpu, const char *call, cpu_wait_kind_t kind,
                                 cpu_ready_func_t ready, cpu_pending_func_t pending,
                                 cpu_stuck_func_t stuck, void *arg, double deadline)
{
    if (ready(arg)) return SYMMEM_OK;
    double started = symmem__cpu_now();
    if (deadline <= 0 && cpu->boot.timeout > 0) deadline = started + cpu->boot.timeout;
    double spin_until = started + adapted_spin_us(cpu) * 1e-6;
    do {
        for (int i = 0; i < 64; i++) {
            if (ready(arg)) return SYMMEM_OK;
            cpu_relax();
        }
        /* With more PEs than cores, the PE we wait for may need our core. */
        if (cpu->oversubscribed) sched_yield();
    } while (symmem__cpu_now() < spin_until);

    cpu_pe_slot_t *me = &cpu->ctl->slots[cpu->me];
    /* Not at the first wake: a doorbell often wakes a wait that is nearly
     * done, and the checks read /proc and take Python's GIL. */
    double next_check = started + POLL_SECONDS;
    for (;;) {
        atomic_fetch_add_explicit(&me->sleepers[kind], 1, memory_order_seq_cst);
        uint32_t seq = atomic_load_explicit(&me->doorbell, memory_order_seq_cst);
        int done = ready(arg), signalled = 0;
        if (!done) signalled = futex_wait(&me->doorbell, seq, POLL_SECONDS);
        atomic_fetch_sub_explicit(&me->sleepers[kind], 1, memory_order_relaxed);
        if (done || ready(arg)) {
            adapt_spin(cpu, symmem__cpu_now() - started);
            return SYMMEM_OK;
        }
        double now = symmem__cpu_now();
        if (signalled || now >= next_check) {
            /* An interrupt first: after Ctrl-C the peers die too, and the
             * user asked to stop, not why a peer went away. */
            SYMMEM_CHECK(symmem__interrupted(call));
            /* The wait's own check before a dead peer: one that died while
             * waiting in a deadlock with us is named with its call. */
            if (stuck) SYMMEM_CHECK(stuck(arg));
            SYMMEM_CHECK(check_failures(cpu, call, pending, arg, started, deadline));
            next_check = now + POLL_SECONDS;
        }
    }
}
