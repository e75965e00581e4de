/* team_init: PEs that pass the same key make a team, without the others.
 * An MPI communicator needs its members' numbers, which no member knows, so
 * they meet in a rendezvous table past the end of PE 0's heap in the window
 * (heap.c): each takes an entry with an atomic add on the table's count
 * and writes its key, npes, index and PE there with MPI_Accumulate
 * (atomic per word, and read with MPI_Get_accumulate, so no read sees half
 * an entry); it then reads the table, polled as every wait, until the
 * team's npes entries are there. The members make the communicator with
 * MPI_Comm_create_group (collective over them alone; bounded, comms.c) and
 * agree on a team handle free on all of them. The n-th team_init of a key on a PE looks
 * only at entries of the n-th (a team remade with the same key is new). */
#include <stdlib.h>
#include <string.h>

#include "mpi_backend.h"

/* One entry: [0] the tag (key and use), [1] npes, index and PE, plus 1. */
#define WHO(npes, index, pe)                                                                       \
    (((uint64_t)(npes) << 42 | (uint64_t)(index) << 21 | (uint64_t)(pe)) + 1)
#define WHO_NPES(w) ((int)(((w) - 1) >> 42))
#define WHO_INDEX(w) ((int)(((w) - 1) >> 21 & 0x1fffff))
#define WHO_PE(w) ((int)(((w) - 1) & 0x1fffff))

/* How many times this PE used key before (so the n-th uses meet). */
static uint64_t key_uses(mpi_t *m, uint64_t key)
{
    for (int i = 0; i < m->team_keys_n; i++)
        if (m->team_keys[i].key == key) return m->team_keys[i].uses++;
    if (m->team_keys_n % 16 == 0) {
        void *grown = realloc(m->team_keys, (size_t)(m->team_keys_n + 16) * sizeof(*m->team_keys));
        if (grown == NULL) return 0;
        m->team_keys = grown;
    }
    m->team_keys[m->team_keys_n].key = key;
    m->team_keys[m->team_keys_n++].uses = 1;
    return 0;
}

static uint64_t tag_of(uint64_t key, uint64_t use)
{
    uint64_t h = key ^ (use + 0x9e3779b97f4a7c15ULL) * 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h | 1; /* never 0: 0 is an entry not yet written */
}

/* Reading the table, as a wait: one MPI_Rget_accumulate at a time. */
typedef struct {
    uint64_t tag;
    int npes, index;
    uint64_t *table; /* [0] count, then the entries */
    MPI_Request req;
    int reading, rc;
    int *members; /* [out] world PE of each index; -1 where none yet */
    int conflict; /* an entry of our tag that disagrees: its index in table */
} gather_t;

static MPI_Aint table_disp(const mpi_t *m)
{
    return m->skew[0] + (MPI_Aint)m->heap_size;
}

static int gathered(mpi_t *m, void *arg)
{
    gather_t *g = arg;
    if (!g->reading) {
        int words = 1 + 2 * MPI_RENDEZVOUS_ENTRIES;
        g->rc = MPI_Rget_accumulate(NULL, 0, MPI_UINT64_T, g->table, words, MPI_UINT64_T, 0,
                                    table_disp(m), words, MPI_UINT64_T, MPI_NO_OP, m->win, &g->req);
        if (g->rc != MPI_SUCCESS) return 1;
        g->reading = 1;
    }
    int done = 0;
    g->rc = MPI_Test(&g->req, &done, MPI_STATUS_IGNORE);
    if (g->rc != MPI_SUCCESS) return 1;
    if (!done) return 0;
    g->reading = 0;
    int found = 0;
    for (int i = 0; i < g->npes; i++) g->members[i] = -1;
    for (int e = 0; e < MPI_RENDEZVOUS_ENTRIES; e++) {
        const uint64_t *entry = g->table + 1 + 2 * e;
        if (entry[0] != g->tag || entry[1] == 0) continue;
        int npes = WHO_NPES(entry[1]), index = WHO_INDEX(entry[1]), pe = WHO_PE(entry[1]);
        if (npes != g->npes || index >= npes ||
            (g->members[index] >= 0 && g->members[index] != pe)) {
            g->conflict = e;
            return 1;
        }
        if (g->members[index] < 0) found++;
        g->members[index] = pe;
    }
    return found == g->npes;
}

/* Takes an entry of the table and writes ours into it. */
static symmem_status_t post(mpi_t *m, uint64_t tag, int npes, int index)
{
    const char *call = "team_init";
    uint64_t one = 1, slot = 0;
    MPI_TRY(call, "MPI_Fetch_and_op",
            MPI_Fetch_and_op(&one, &slot, MPI_UINT64_T, 0, table_disp(m), MPI_SUM, m->win));
    SYMMEM_CHECK(symmem__mpi_flush(m, call, 0));
    uint64_t entry[2] = {tag, WHO(npes, index, m->me)};
    MPI_Aint at = table_disp(m) + (MPI_Aint)(8 + 16 * (slot % MPI_RENDEZVOUS_ENTRIES));
    MPI_TRY(call, "MPI_Accumulate",
            MPI_Accumulate(entry, 2, MPI_UINT64_T, 0, at, 2, MPI_UINT64_T, MPI_REPLACE, m->win));
    return symmem__mpi_flush(m, call, 0);
}

/* The members agree on a handle free on all of them. */
static symmem_status_t free_handle(mpi_t *m, MPI_Comm comm, int *handle_p)
{
    const char *call = "team_init";
    uint64_t mine = 0, busy = 0;
    for (int t = 0; t < SYMMEM_TEAM_MAX; t++)
        if (m->teams[t] != MPI_COMM_NULL) mine |= 1ULL << t;
    MPI_Request req;
    MPI_TRY(call, "MPI_Iallreduce",
            MPI_Iallreduce(&mine, &busy, 1, MPI_UINT64_T, MPI_BOR, comm, &req));
    SYMMEM_CHECK(symmem__mpi_wait(m, call, &req));
    for (int t = SYMMEM_TEAM_FIRST_USER; t < SYMMEM_TEAM_MAX; t++)
        if (!(busy >> t & 1)) {
            *handle_p = t;
            return SYMMEM_OK;
        }
    return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY,
                           "%s: too many teams: all %d team slots are in use on some member "
                           "(destroy teams with team_destroy)",
                           call, SYMMEM_TEAM_MAX - SYMMEM_TEAM_FIRST_USER);
}

symmem_status_t symmem__mpi_team_init(symmem_backend_t *be, uint64_t key, int npes, int index,
                                      int *members, int *handle_p)
{
    mpi_t *m = be;
    const char *call = "team_init";
    if (npes > m->n || npes >= 1 << 21)
        return MPI_CORE->error(SYMMEM_ERR_INVALID, "%s: npes=%d is more than the job's %d PEs",
                               call, npes, m->n);
    uint64_t tag = tag_of(key, key_uses(m, key));
    gather_t g = {.tag = tag, .npes = npes, .index = index, .members = members, .conflict = -1};
    g.table = malloc((1 + 2 * (size_t)MPI_RENDEZVOUS_ENTRIES) * sizeof(uint64_t));
    if (g.table == NULL)
        return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "%s: out of host memory", call);
    symmem_status_t status = post(m, tag, npes, index);
    if (status == SYMMEM_OK) status = symmem__mpi_poll(m, call, gathered, &g, 0);
    if (status == SYMMEM_OK && g.rc != MPI_SUCCESS)
        status = symmem__mpi_failed(g.rc, call, "reading the rendezvous table");
    if (status == SYMMEM_OK && g.conflict >= 0) {
        uint64_t who = g.table[2 + 2 * g.conflict];
        status = MPI_CORE->error(SYMMEM_ERR_INVALID,
                                 "%s: PEs that passed the same config disagree: PE %d passed "
                                 "npes=%d, pe_idx_in_team=%d, and this PE npes=%d, "
                                 "pe_idx_in_team=%d (each index once, the same npes on all)",
                                 call, WHO_PE(who), WHO_NPES(who), WHO_INDEX(who), npes, index);
    }
    if (status != SYMMEM_OK && g.reading) {
        MPI_Cancel(&g.req);
        MPI_Request_free(&g.req);
        g.table = NULL; /* MPI may still write it */
    }
    free(g.table);
    if (status != SYMMEM_OK) return status;
    MPI_Group world_group, group;
    MPI_Comm_group(m->world, &world_group);
    MPI_Group_incl(world_group, npes, members, &group);
    MPI_Comm comm = MPI_COMM_NULL;
    status = symmem__mpi_comm_create_group(m, call, m->world, group, (int)(tag >> 49), &comm);
    if (status != SYMMEM_OK) return status; /* the groups stay: the helper may hold them */
    MPI_Group_free(&group);
    MPI_Group_free(&world_group);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int handle = SYMMEM_TEAM_INVALID;
    status = free_handle(m, comm, &handle);
    if (status != SYMMEM_OK) {
        MPI_Comm_free(&comm);
        return status;
    }
    m->teams[handle] = comm;
    m->departures.met[handle] = 0; /* a new team: its members count its meetings from here */
    SYMMEM_CHECK(symmem__mpi_node_channel_open(m, call, comm, handle));
    *handle_p = handle;
    return SYMMEM_OK;
}
