/* The team table: the predefined teams after init, every team at finalize,
 * and the lookup every team-taking call makes. */
#ifndef SYMMEM_CORE_TEAMS_H
#define SYMMEM_CORE_TEAMS_H

#include "backend.h"

symmem_status_t symmem__teams_init(void);
void symmem__teams_clear(void);
/* The team behind a handle, or an INVALID error naming call. */
symmem_status_t symmem__team_lookup(const char *call, symmem_team_t team,
                                    const symmem_team_view_t **view_p);

#endif
