/* Is a peer still alive? A waiter asks this a few times a second, so that a
 * dead peer turns into an error instead of a hang. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu.h"

/* Field 22 of /proc/<pid>/stat (start time in clock ticks); 0 if gone.
 * *state_p gets field 3 (R, S, Z, ...). */
static uint64_t read_stat(pid_t pid, char *state_p)
{
    char path[64], text[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) return 0;
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    /* The command name may hold spaces and parentheses: skip to the last ')'. */
    char *p = strrchr(text, ')');
    if (p == NULL) return 0;
    char state = 0;
    unsigned long long start = 0;
    if (sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
                      "%*d %llu",
               &state, &start) != 2)
        return 0;
    if (state_p) *state_p = state;
    return start;
}

uint64_t cpu_process_start_time(pid_t pid) { return read_stat(pid, NULL); }

/* How the launcher saw PE pe end, if it told us. */
/* The launcher's report: how it ended, and when (the file's mtime). */
static int read_exit_report(cpu_t *cpu, int pe, char *how, size_t how_size, double *when_p)
{
    if (cpu->boot.status_dir[0] == '\0') return 0;
    char path[512];
    snprintf(path, sizeof(path), "%s/%d", cpu->boot.status_dir, pe);
    FILE *f = fopen(path, "r");
    if (f == NULL) return 0;
    int ok = fgets(how, (int)how_size, f) != NULL;
    struct stat st;
    if (ok && fstat(fileno(f), &st) == 0)
        *when_p = (double)st.st_mtim.tv_sec + 1e-9 * (double)st.st_mtim.tv_nsec;
    fclose(f);
    if (ok) how[strcspn(how, "\n")] = '\0';
    return ok;
}

int cpu_peer_dead(cpu_t *cpu, int pe, char *how, size_t how_size, double *when_p)
{
    *when_p = 1e300; /* unknown: after every known death */
    cpu_pe_slot_t *slot = &cpu->ctl->slots[pe];
    uint32_t pe_state = atomic_load_explicit(&slot->state, memory_order_acquire);
    if (pe_state == PE_ABSENT) return 0;
    pid_t pid = slot->pid;
    char state = 0;
    uint64_t start = read_stat(pid, &state);
    int gone = (kill(pid, 0) != 0 && errno == ESRCH) || start == 0 ||
               start != slot->start_time || state == 'Z' || state == 'X';
    if (!gone) return 0;
    if (pe_state == PE_FINALIZED) {
        snprintf(how, how_size, "called finalize() and exited");
        return 1;
    }
    /* The launcher writes its report right after reaping: give it a moment. */
    for (int i = 0; i < 20; i++) {
        if (read_exit_report(cpu, pe, how, how_size, when_p)) return 1;
        if (cpu->boot.status_dir[0] == '\0') break;
        usleep(10000);
    }
    snprintf(how, how_size, "is gone (pid %ld is no longer running)", (long)pid);
    return 1;
}
