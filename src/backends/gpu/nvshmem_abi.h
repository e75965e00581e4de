/*
 * The small part of NVSHMEM's and the CUDA driver's binary interface that the
 * gpu backend uses, declared here so that it builds without their headers
 * (both libraries are loaded at run time). Layouts follow NVSHMEM 3.x
 * (nvshmemx_init_attr_t v2, 144 bytes); the static asserts pin them.
 */
#ifndef SYMMEM_GPU_NVSHMEM_ABI_H
#define SYMMEM_GPU_NVSHMEM_ABI_H

#include <stddef.h>
#include <stdint.h>

/* ---- NVSHMEM ---- */

typedef int32_t nv_team_t;
typedef void *nv_stream_t; /* cudaStream_t */

typedef struct {
    int version;
    char internal[124];
} nv_uniqueid_t;
_Static_assert(sizeof(nv_uniqueid_t) == 128, "nvshmemx_uniqueid_t is 128 bytes");

typedef struct {
    int version;
    nv_uniqueid_t *id;
    int myrank;
    int nranks;
} nv_uniqueid_args_t;
_Static_assert(sizeof(nv_uniqueid_args_t) == 24, "nvshmemx_uniqueid_args_t is 24 bytes");

typedef struct {
    int version;
    nv_uniqueid_args_t uid_args;
    int cuda_device_id;
    char content[92];
} nv_init_args_t;
_Static_assert(sizeof(nv_init_args_t) == 128, "nvshmemx_init_args_t is 128 bytes");

typedef struct {
    int version;
    void *mpi_comm;
    nv_init_args_t args;
} nv_init_attr_t;
_Static_assert(sizeof(nv_init_attr_t) == 144, "nvshmemx_init_attr_t is 144 bytes");

/* Version words as NVSHMEM's initializers write them: (version << 16) + size. */
#define NV_UNIQUEID_VERSION ((1 << 16) + (int)sizeof(nv_uniqueid_t))
#define NV_UNIQUEID_ARGS_VERSION ((1 << 16) + (int)sizeof(nv_uniqueid_args_t))
#define NV_INIT_ARGS_VERSION ((2 << 16) + (int)sizeof(nv_init_args_t))
#define NV_INIT_ATTR_VERSION ((2 << 16) + (int)sizeof(nv_init_attr_t))
#define NV_INIT_WITH_UNIQUEID (1 << 3)
#define NV_INIT_STATUS_LIMITED_MPG 3 /* nvshmemx_init_status(): PEs share GPUs, no MPS */

/* ---- CUDA driver ---- */

/* nvshmem_team_config_t, version 2 (NVSHMEM 3.3 and later): what
 * nvshmemx_team_init needs to find the other members. */
typedef struct {
    int version;
    int num_contexts;
    uint64_t uniqueid;
    char padding[48];
} nv_team_config_t;
#define NV_TEAM_CONFIG_VERSION ((2 << 16) + (int)sizeof(nv_team_config_t))
#define NV_TEAM_CONFIG_MASK_UNIQUEID 0x2L
#define NV_TEAM_WORLD 0

typedef int cu_result_t; /* CUresult, 0 = CUDA_SUCCESS */
typedef int cu_device_t;
typedef void *cu_context_t;
typedef uintptr_t cu_deviceptr_t;
#define CU_ERROR_NOT_READY 600
#define CU_ERROR_NOT_FOUND 500
#define CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2
#define CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_MEMORYTYPE_HOST 1
#define CU_MEMORYTYPE_DEVICE 2

#endif
