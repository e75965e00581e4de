/* Who this PE is and how it finds its peers: from the launcher's, torchrun's,
 * mpirun's or srun's environment, or from a user-supplied unique id. */
#ifndef SYMMEM_CORE_BOOTSTRAP_H
#define SYMMEM_CORE_BOOTSTRAP_H

#include "backend.h"

symmem_status_t symmem__bootstrap_from_attr(const symmem_init_attr_t *attr,
                                            symmem_bootstrap_t *boot_p);

/* A unique id in the cpu backend's format (a job name and a host). */
symmem_status_t symmem__cpu_unique_id(symmem_unique_id_t *uid_p);

#endif
