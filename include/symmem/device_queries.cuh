/* symmem's device library (device.cuh): what a kernel asks of the state
 * (my_pe, n_pes, a peer's copy of an address), and the failures that
 * language bindings raise where they find a bad argument at run time. */
#ifndef SYMMEM_DEVICE_QUERIES_CUH
#define SYMMEM_DEVICE_QUERIES_CUH

#include "device_base.cuh"

/* Where PE pe's copy of the symmetric addr is mapped here (get_peer_array). */
SYMMEM_DEVICE_API symmem_u64 symmem_dev_ptr(symmem_u64 st, symmem_u64 addr, symmem_u64 nbytes,
                                            int pe)
{
    return symmem__remote(st, "get_peer_array", 0, addr, nbytes, pe);
}

/* nvshmem_ptr: where PE pe's copy of the symmetric addr is mapped here; 0
 * where it is not (a PE out of range or on another node, an address off
 * the heap, symmem not initialised), as NVSHMEM answers. */
SYMMEM_DEVICE_API symmem_u64 symmem_dev_peer_ptr(symmem_u64 st, symmem_u64 addr, int pe)
{
    symmem_u64 remote;
    if (symmem__remote_fast(addr, 1, pe, &remote)) return remote;
    if (SYMMEM__RO(st, magic) != SYMMEM_DEVICE_STATE_MAGIC || pe < 0 || pe >= SYMMEM__RO(st, n_pes))
        return 0;
    symmem_u64 base = SYMMEM__RO(st, heap_base);
    if (addr < base || addr - base >= SYMMEM__RO(st, heap_size)) return 0;
    symmem_u64 peer = symmem__mapped(st, pe);
    return peer != 0 ? peer + (addr - base) : 0;
}

/* For language bindings that check an argument's size at run time. */
SYMMEM_DEVICE_API int symmem_dev_too_small(symmem_u64 st, int arg, symmem_u64 needed)
{
    symmem__dev_fail(st, "a device collective", SYMMEM_DEV_ERR_TOO_SMALL, SYMMEM__ST(st)->my_pe,
                     arg, needed);
    return 0;
}

/* For language bindings: p, g, a signal or an atomic on an empty array,
 * whose first element (the address the call would act on) is not its own. */
SYMMEM_DEVICE_API int symmem_dev_empty(symmem_u64 st, int arg, symmem_u64 itemsize)
{
    symmem__dev_fail(st, "p, g, a signal or an atomic", SYMMEM_DEV_ERR_TOO_SMALL,
                     SYMMEM__ST(st)->my_pe, arg, itemsize);
    return 0;
}

/* For language bindings that find a strided view only at run time. */
SYMMEM_DEVICE_API int symmem_dev_not_contiguous(symmem_u64 st, int arg, symmem_u64 stride)
{
    symmem__dev_fail(st, "a device copy", SYMMEM_DEV_ERR_NOT_CONTIGUOUS, SYMMEM__ST(st)->my_pe, arg,
                     stride);
    return 0;
}

SYMMEM_DEVICE_API int symmem_dev_my_pe(symmem_u64 st)
{
    const symmem_device_consts_t *c = &symmem_device_consts;
    return c->magic == SYMMEM_DEVICE_STATE_MAGIC ? c->my_pe : SYMMEM__RO(st, my_pe);
}
SYMMEM_DEVICE_API int symmem_dev_n_pes(symmem_u64 st)
{
    const symmem_device_consts_t *c = &symmem_device_consts;
    return c->magic == SYMMEM_DEVICE_STATE_MAGIC ? c->n_pes : SYMMEM__RO(st, n_pes);
}

#endif
