/* Who this PE is and how it finds its peers: from the launcher's, torchrun's,
 * mpirun's or srun's environment, or from a user-supplied unique id. */
#ifndef SYMMEM_CORE_BOOTSTRAP_H
#define SYMMEM_CORE_BOOTSTRAP_H

#include "backend.h"

/* The most PEs a job may have: a launcher's variable or init's nranks that
 * says more is refused (a typo, not a job to wait for). */
#define SYMMEM_MAX_PES (1 << 20)

symmem_status_t symmem__bootstrap_from_attr(const symmem_init_attr_t *attr,
                                            symmem_bootstrap_t *boot_p);

/* A unique id in the cpu backend's format (a job name and a host). */
symmem_status_t symmem__cpu_unique_id(symmem_unique_id_t *uid_p);

/* What tells this job from another one with the same name, for a backend
 * whose PEs meet on this host (the cpu one). */
typedef struct {
    /* Every PE of the job presents the same key; the first one to arrive
     * records it. "secret <hash>" (SYMMEM_JOB_SECRET, which python -m
     * symmem.run sets), "launcher <pid> <start time>" (the process that
     * started the PEs: torchrun, mpirun, srun), "uid" or "solo". */
    char key[64];
    /* The variables the job's name comes from, for messages. */
    const char *named_by;
    /* The launcher: "symmem.run", "torchrun", "mpirun", "srun", "pmi" (MPICH's
     * hydra), "" for none, "uid" when the program passed a unique id. */
    const char *launcher;
} symmem_job_identity_t;

void symmem__bootstrap_identity(const symmem_bootstrap_t *boot, symmem_job_identity_t *id_p);

/* What init would find in the environment, starting nothing: the
 * launcher's numbering and placement, and the name, capabilities and engine
 * of the backend it would choose (backend as init's argument; NULL:
 * SYMMEM_BACKEND). Python's init asks, to hand the unique id of a backend
 * that spans hosts over the launcher's rendezvous when the PEs do
 * (lifecycle.c). */
/* The engine under the backend init would choose (the gpu backend's
 * "nvshmem" or "symmem"; "" for a backend of one engine), and why. */
typedef struct {
    char name[32];
    char why[1024];
} symmem_engine_choice_t;

symmem_status_t symmem__init_preview(const char *backend, symmem_bootstrap_t *boot_p,
                                     symmem_job_identity_t *id_p, const char **backend_p,
                                     uint32_t *capabilities_p, symmem_engine_choice_t *engine_p);

#endif
