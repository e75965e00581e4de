/* The symmem engine (engine.h): its state, and what its files
 * (symmem_engine.c, symmem_start.c, symmem_wait.c, symmem_teams.c,
 * symmem_external.c, vmm_heap.c) call in one another. */
#ifndef SYMMEM_GPU_SYMMEM_ENGINE_H
#define SYMMEM_GPU_SYMMEM_ENGINE_H

#include "host_mesh.h"
#include "vmm_heap.h"

/* At most this many PEs: symmem's collective kernels serve every team, and
 * they take SYMMEM_COLL_MAX_PES members. */
#define SYMMEM_ENGINE_MAX_PES SYMMEM_COLL_MAX_PES

typedef struct symmem_engine_state {
    host_mesh_t mesh;
    vmm_window_t heap;
    symmem_heap_allocator_t *alloc;  /* the heap's offsets */
    size_t granule;                  /* of this GPU's VMM allocations */
    vmm_window_t *externals;         /* register_external's windows */
    uint64_t registrations;          /* register_external calls so far */
    int64_t *exchanged;              /* [n]: the last exchange's values */
    int64_t *gpus;                   /* [n]: each PE's GPU (PCI domain, bus, device) */
    uint64_t teams_in_use;           /* bit h: this PE is in a team of handle h */
    void *wait_module, *wait_kernel; /* kernels/signal_wait.cu, built at the first wait */
    nv_stream_t peek;                /* reads from the host; waits for no other stream */
} symmem_engine_state_t;

/* symmem_wait.c: a wait on the host mesh, as the backend's waits go:
 * Ctrl-C, a dead peer and SYMMEM_TIMEOUT (at init, limit seconds where it
 * is 0) end it. */
typedef struct {
    gpu_t *g;
    const char *call, *what;
    double started, next_check, limit;
    symmem_status_t status; /* why still_waiting stopped it */
    mesh_wait_t mesh;
} sym_wait_t;

void symmem__sym_wait_start(sym_wait_t *w, gpu_t *g, const char *call, const char *what,
                            double limit);
/* A mesh call's return (not 0) as the backend's error. */
symmem_status_t symmem__sym_mesh_failed(gpu_t *g, const sym_wait_t *w, int rc);
/* Every member's value on every member, over the mesh. */
symmem_status_t symmem__sym_allgather(gpu_t *g, const char *call, const int *members, int n,
                                      int64_t value, int64_t *values);

/* symmem_start.c: the engine's start, stop and final barrier. */
symmem_status_t symmem__sym_start(gpu_t *g);
symmem_status_t symmem__sym_stop(gpu_t *g, int finished);
symmem_status_t symmem__sym_final_barrier(gpu_t *g);
void symmem__sym_version(gpu_t *g, char *text, size_t size);

/* symmem_teams.c */
symmem_status_t symmem__sym_predefined_teams(gpu_t *g);
symmem_status_t symmem__sym_split_strided(gpu_t *g, const symmem_team_view_t *parent, int start,
                                          int stride, int size, int in_team, int *handle_p);
symmem_status_t symmem__sym_split_2d(gpu_t *g, const symmem_team_view_t *parent, int xrange,
                                     int *xhandle_p, int *yhandle_p);
symmem_status_t symmem__sym_team_init(gpu_t *g, uint64_t key, int npes, int index, int *members,
                                      int *handle_p);
void symmem__sym_team_destroy(gpu_t *g, int handle);
symmem_status_t symmem__sym_team_meet(gpu_t *g, const char *call, int handle, const int *members,
                                      int n);

/* symmem_external.c */
symmem_status_t symmem__sym_register_external(gpu_t *g, void *ptr, size_t size, void **sym_p);
symmem_status_t symmem__sym_unregister_external(gpu_t *g, void *sym, size_t size);

#endif
