/* signal_wait_until on a stream, for the symmem engine (NVSHMEM's
 * nvshmemx_signal_wait_until_on_stream under the nvshmem engine): one
 * thread waits through the device library's wait (device_base.cuh), which
 * watches the abort word and SYMMEM_TIMEOUT and traps with an error record
 * naming the call. Its acquire pairs with the release of the put_signal or
 * signal_op that set the signal (their fence before the signal's store);
 * the stream's later work runs after this kernel. */
#define SYMMEM_DEVICE_API static __device__ __forceinline__
#pragma nv_diag_suppress 177 /* "declared but never referenced": the library's other parts */
#include "symmem/device_base.cuh"

/* st: the device state block; sig: the signal's address here; cmp: the
 * comparison's code (vocabulary.h). */
extern "C" __global__ void signal_wait(symmem_u64 st, symmem_u64 sig, int cmp, symmem_u64 value)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        symmem_dev_signal_wait(st, sig, cmp, value);
        symmem__fence_acq_rel_sys();
    }
}
