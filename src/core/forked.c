/* The fork check of forked.h. */
#include "forked.h"

#include <pthread.h>
#include <unistd.h>

#include "device_state.h"
#include "error.h"
#include "state.h"

static pid_t init_pid;       /* the process that called init() */
static int forked_from = -1; /* in a child forked after init(): the parent's PE */

/* Runs in the child of every fork() of this process (and of its children,
 * which inherit the handler). It changes only the child's own copy of the
 * runtime: the parent's shared segments are not touched. */
static void on_fork_child(void)
{
    if (!symmem__rt.initialized) return; /* before init or after finalize: free to init */
    forked_from = symmem__rt.my_pe;
    symmem__rt.initialized = 0;
    symmem__rt.my_pe = symmem__rt.n_pes = -1;
    symmem__error_set_pe(-1);
    symmem__device_state_disown(); /* njit device code checks the state block */
}

static void register_handler(void)
{
    pthread_atfork(NULL, NULL, on_fork_child);
}

void symmem__forked_arm(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_handler);
    init_pid = getpid();
}

symmem_status_t symmem__check_not_forked(const char *call)
{
    if (forked_from < 0) return SYMMEM_OK;
    return symmem__error(SYMMEM_ERR_FORKED,
                         "%s: this process (pid %ld) was forked from PE %d (pid %ld) after "
                         "init(); symmem's calls belong to the process that called init(): "
                         "a forked child is no PE (call symmem in the parent only, or start "
                         "more PEs with python -m symmem.run -n N)",
                         call, (long)getpid(), forked_from, (long)init_pid);
}
