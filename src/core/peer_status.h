/* Is a process still alive, and what did the launcher say when it ended?
 * Both backends ask this while they wait, so a dead peer becomes an error. */
#ifndef SYMMEM_PEER_STATUS_H
#define SYMMEM_PEER_STATUS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* /proc/<pid>/stat read into text, from the field after the command name
 * (the state) on; NULL if the process cannot be read. */
const char *symmem__process_stat(pid_t pid, char *text, size_t size);

/* /proc/<pid>/stat's start time (clock ticks), 0 if the process is gone or a
 * zombie: with the pid, it names one process even after pid reuse. */
uint64_t symmem__process_start_time(pid_t pid);

/* Whether the process (pid, start_time) has ended. */
int symmem__process_gone(pid_t pid, uint64_t start_time);

/* The launcher's exit report for PE pe in status_dir ("" if none): a line
 * such as "was killed by signal 9", and when it was written. 0 if none. */
int symmem__exit_report(const char *status_dir, int pe, char *how, size_t how_size, double *when_p);

#endif
