#include "peer_status.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

const char *symmem__process_stat(pid_t pid, char *text, size_t size)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) return NULL;
    size_t n = fread(text, 1, size - 1, f);
    fclose(f);
    text[n] = '\0';
    /* The command name may hold spaces and parentheses: skip to the last ')'. */
    char *p = strrchr(text, ')');
    return p == NULL || p[1] == '\0' ? NULL : p + 2;
}

uint64_t symmem__process_start_time(pid_t pid)
{
    char text[1024];
    const char *fields = symmem__process_stat(pid, text, sizeof(text));
    char state = 0;
    unsigned long long start = 0;
    if (fields == NULL ||
        sscanf(fields,
               "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
               "%*d %*d %llu",
               &state, &start) != 2)
        return 0;
    return state == 'Z' || state == 'X' ? 0 : start;
}

int symmem__process_gone(pid_t pid, uint64_t start_time)
{
    if (kill(pid, 0) != 0 && errno == ESRCH) return 1;
    return symmem__process_start_time(pid) != start_time;
}

int symmem__exit_report(const char *status_dir, int pe, char *how, size_t how_size, double *when_p)
{
    if (status_dir == NULL || status_dir[0] == '\0') return 0;
    char path[512];
    snprintf(path, sizeof(path), "%s/%d", status_dir, pe);
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
