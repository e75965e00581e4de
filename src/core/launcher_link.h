/* A PE dies with the launcher that started it. python -m symmem.run exports
 * SYMMEM_LAUNCHER=<pid>:<start time> to its PEs; a PE calls this as early as
 * it can (the extension at import, symmem_init for C programs). */
#ifndef SYMMEM_CORE_LAUNCHER_LINK_H
#define SYMMEM_CORE_LAUNCHER_LINK_H

/* A child of the launcher asks the kernel for SIGKILL when the launcher ends
 * (PR_SET_PDEATHSIG). A process that finds the launcher already gone (it
 * died before this ran) kills itself now. Does nothing without the variable,
 * or in a process the PE started while the launcher lives. */
void symmem__launcher_link(void);

#endif
