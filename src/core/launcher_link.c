#include "launcher_link.h"

#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "env.h"
#include "peer_status.h"

static void end_with_launcher(long long pid)
{
    fprintf(stderr, "symmem: the launcher (pid %lld) has ended; this PE (pid %ld) ends with it\n",
            pid, (long)getpid());
    kill(getpid(), SIGKILL);
}

void symmem__launcher_link(void)
{
    long long pid;
    unsigned long long start;
    char extra;
    const char *text = symmem__env_string("SYMMEM_LAUNCHER");
    if (sscanf(text, "%lld:%llu%c", &pid, &start, &extra) != 2 || pid <= 1 || start == 0) return;
    if (getppid() == (pid_t)pid) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* Had it died before the prctl, we would have been re-parented and
         * no signal would come: look again. */
        if (getppid() != (pid_t)pid) end_with_launcher(pid);
        return;
    }
    /* Not its child: re-parented after its death, or a process a PE started. */
    if (symmem__process_gone((pid_t)pid, (uint64_t)start)) end_with_launcher(pid);
}
