/* The nvshmem engine (engine.h): what its files (nvshmem_engine.c,
 * nvshmem_start.c, nvshmem_teams.c, nvshmem_external.c) call in one
 * another. */
#ifndef SYMMEM_GPU_NVSHMEM_ENGINE_H
#define SYMMEM_GPU_NVSHMEM_ENGINE_H

#include "engine.h"

/* nvshmem_start.c */
symmem_status_t symmem__nv_start(gpu_t *g);
symmem_status_t symmem__nv_stop(gpu_t *g, int finished);
symmem_status_t symmem__nv_final_barrier(gpu_t *g);
void symmem__nv_version(gpu_t *g, char *text, size_t size);

/* nvshmem_teams.c: NVSHMEM's teams */
symmem_status_t symmem__nv_predefined_teams(gpu_t *g);
symmem_status_t symmem__nv_split_strided(gpu_t *g, const symmem_team_view_t *parent, int start,
                                         int stride, int size, int in_team, int *handle_p);
symmem_status_t symmem__nv_split_2d(gpu_t *g, const symmem_team_view_t *parent, int xrange,
                                    int *xhandle_p, int *yhandle_p);
symmem_status_t symmem__nv_team_init(gpu_t *g, uint64_t key, int npes, int index, int *members,
                                     int *handle_p);
void symmem__nv_team_destroy(gpu_t *g, int handle);
symmem_status_t symmem__nv_team_meet(gpu_t *g, const char *call, int handle, const int *members,
                                     int n);

/* nvshmem_external.c */
symmem_status_t symmem__nv_register_external(gpu_t *g, void *ptr, size_t size, void **sym_p);
symmem_status_t symmem__nv_unregister_external(gpu_t *g, void *sym, size_t size);

#endif
