/* Collectives' fingerprints (core/calls.h), compared among a collective's
 * members before it starts: MPI pairs any collectives of one communicator,
 * so PEs in different collectives, or with different arguments, would mix
 * their data or hang; instead each raises naming what every PE called. */
#include <stdlib.h>
#include <string.h>

#include "mpi_backend.h"

const char *symmem__mpi_call_name(symmem_call_t call)
{
    /* The vocabulary's names, by kind (the core's table is not reachable
     * from this library, which links no core); no formatting: every
     * collective names itself on its fast path. */
#define NAME_OF(NAME, name, code, shape, moves_data) [code] = name,
    static const char *const names[SYMMEM_CALL_COUNT] = {SYMMEM_CALL_KINDS(NAME_OF)};
#undef NAME_OF
    unsigned kind = (unsigned)(call.what & 0xff);
    return kind > 0 && kind < SYMMEM_CALL_COUNT ? names[kind] : "a collective";
}

symmem_status_t symmem__mpi_check_call(mpi_t *m, const symmem_team_view_t *team, symmem_call_t call,
                                       int always)
{
    if (!m->check_calls && !always) return SYMMEM_OK;
    const char *name = symmem__mpi_call_name(call);
    int n = team->n;
    const int *members = team->members;
    if (n == 1) return SYMMEM_OK;
    uint64_t mine[2] = {call.what, call.count};
    SYMMEM_CHECK(symmem__mpi_meeting_begin(m, team, call));
    uint64_t *all = malloc(2 * (size_t)n * sizeof(uint64_t));
    if (all == NULL) {
        symmem__mpi_meeting_end(m, SYMMEM_ERR_NO_MEMORY);
        return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "%s: out of host memory", name);
    }
    MPI_Request req;
    int rc =
        MPI_Iallgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, m->teams[team->channel], &req);
    symmem_status_t status = rc == MPI_SUCCESS ? symmem__mpi_wait(m, name, &req)
                                               : symmem__mpi_failed(rc, name, "MPI_Iallgather");
    symmem__mpi_meeting_end(m, status);
    if (status != SYMMEM_OK) return status; /* all stays MPI's: it may still write there */
    int same = 1;
    for (int i = 0; i < n; i++) same &= all[2 * i] == mine[0] && all[2 * i + 1] == mine[1];
    if (!same) {
        symmem_call_t *calls = malloc((size_t)n * sizeof(*calls));
        int *pes = malloc((size_t)n * sizeof(int));
        char text[1024] = "";
        if (calls != NULL && pes != NULL) {
            for (int i = 0; i < n; i++) {
                calls[i].what = all[2 * i];
                calls[i].count = all[2 * i + 1];
                pes[i] = members ? members[i] : i;
            }
            MPI_CORE->calls_group(calls, pes, n, text, sizeof(text));
        }
        free(calls);
        free(pes);
        status = MPI_CORE->error(SYMMEM_ERR_MISMATCH,
                                 "%s: PEs disagree: %s (every PE must make the same collective "
                                 "calls, with the same arguments, in the same order)",
                                 name, text);
    }
    free(all);
    return status;
}
