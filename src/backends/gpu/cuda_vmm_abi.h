/*
 * The part of the CUDA driver's binary interface for virtual memory
 * management (cuMemCreate, cuMemMap, shareable handles) that the symmem
 * engine's heap uses (vmm_heap.c), declared here so that the backend builds
 * without CUDA's headers (the driver is loaded at run time). Layouts and
 * numbers are cuda.h's (CUDA 12 and 13); the static asserts pin the sizes,
 * and tests/python/test_kernel_sources.py compares them with cuda.h where
 * it is installed.
 */
#ifndef SYMMEM_GPU_CUDA_VMM_ABI_H
#define SYMMEM_GPU_CUDA_VMM_ABI_H

#include <stdint.h>

typedef uint64_t cu_mem_handle_t; /* CUmemGenericAllocationHandle */

/* CUmemLocation */
typedef struct {
    int type; /* CU_MEM_LOCATION_TYPE_DEVICE */
    int id;   /* the device ordinal */
} cu_mem_location_t;

/* CUmemAllocationProp */
typedef struct {
    int type;                   /* CU_MEM_ALLOCATION_TYPE_PINNED */
    int requested_handle_types; /* CU_MEM_HANDLE_TYPE_* */
    cu_mem_location_t location;
    void *win32_metadata;
    struct {
        unsigned char compression_type;
        unsigned char gpu_direct_rdma_capable;
        unsigned short usage;
        unsigned char reserved[4];
    } flags;
} cu_mem_prop_t;
_Static_assert(sizeof(cu_mem_prop_t) == 32, "CUmemAllocationProp is 32 bytes");

/* CUmemAccessDesc */
typedef struct {
    cu_mem_location_t location;
    int flags; /* CU_MEM_ACCESS_FLAGS_PROT_READWRITE */
} cu_mem_access_t;
_Static_assert(sizeof(cu_mem_access_t) == 12, "CUmemAccessDesc is 12 bytes");

#define CU_MEM_ALLOCATION_TYPE_PINNED 0x1
#define CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR 0x1
#define CU_MEM_LOCATION_TYPE_DEVICE 0x1
#define CU_MEM_ACCESS_FLAGS_PROT_READWRITE 0x3
#define CU_MEM_ALLOC_GRANULARITY_RECOMMENDED 0x1
#define CU_STREAM_NON_BLOCKING 0x1
#define CU_ERROR_OUT_OF_MEMORY 2
#define CU_DEVICE_ATTRIBUTE_PCI_BUS_ID 33
#define CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID 34
#define CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID 50
#define CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED 102
#define CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED 103

#endif
