/*
 * symmem's device library: put, get, signals, waits, atomics and barriers
 * from inside CUDA kernels, on the gpu backend, when every PE's heap is
 * mapped into this GPU (one NVLink domain; a call that needs a PE on another
 * node fails, naming it). symmem.device.numba links it into Numba kernels,
 * and CUDA C or CuPy RawKernel code includes it as <symmem/device.cuh>.
 *
 * The files, by concept: device_layout.h (the state block, the constant
 * state, the error record: the host's layout too), device_primitives.cuh
 * (the memory-model primitives, the error record's writer, a wait's check:
 * the gpu backend's own kernels include it too), device_base.cuh (the
 * state, scopes, addresses, waits), device_rma.cuh (put, get, strided
 * copies, signals, atomics), device_collectives.cuh (team syncs and
 * collectives), device_wait_sets.cuh (test, and waits on several
 * variables), device_queries.cuh. With -I<this folder's parent> nvcc and NVRTC
 * compile them as they are; the package's copy (the path
 * symmem.find_device_library() gives) is this file with all of them
 * inlined, which NVRTC compiles with no include path (tools/embed.py makes
 * it at build time).
 *
 * Every function takes the address of this process's device state block
 * first (symmem.device.state_address(); it never moves while the process
 * lives) and addresses as unsigned long long, so any language can call them.
 * Names: symmem_dev_<call>[_warp|_block]; the scoped forms are called by
 * every thread of the warp or block, with the same arguments.
 *
 * Memory model (PTX's; "sys" = every GPU and the host):
 * - put and p store through the peer's mapping with plain stores. They are
 *   complete (visible on the target) after quiet, a barrier, or the signal
 *   of a put_signal; a blocking put only means the source may be reused.
 * - quiet = fence.sc.sys after the scope's barrier: every earlier store of
 *   the scope is visible system-wide before any later one of this thread.
 * - fence = fence.acq_rel.sys: earlier stores are ordered before later ones
 *   (to every PE, which is stronger than NVSHMEM asks: per PE).
 * - put_signal: copy, the scope's barrier, then the leader's fence.acq_rel.sys
 *   and one relaxed system-scope store or add on the signal. The bar.sync
 *   puts every thread's copy before the leader's fence in causality order,
 *   so fence + signal form a release pattern over all of them.
 * - signal_wait / wait_until spin on ld.acquire.sys: each acquire pairs
 *   with the release fence before the signal (or flag) store that it reads
 *   (put_signal's and signal_op's fence.acq_rel.sys; a p of a flag after
 *   quiet or fence), so a PE that sees the signal sees the data.
 * - atomics are relaxed, at system scope (atom.sys), like NVSHMEM's.
 * - sync (a team, or all PEs = TEAM_WORLD): the scope's barrier, then the
 *   leader's fence.acq_rel.sys and a relaxed store of its epoch into every
 *   member's arrival slot; it waits with ld.acquire.sys for every slot to
 *   reach the epoch (each acquire pairs with that member's fence), then the
 *   scope's barrier again. barrier = quiet + sync.
 * - collectives move data between two syncs: the first says every member
 *   has entered (its dst may be written, its src is complete), the second
 *   that every copy is done. fcollect, alltoall and broadcast push into the
 *   members' dst (stores, which NVLink posts); reduce and reducescatter
 *   pull every member's src and combine in member order, so every PE gets
 *   the same bits. An in-place reduce (dst == src) syncs once more: each
 *   member reduces its share of the elements into its own array (only it
 *   reads that share), syncs, then copies the others' shares from theirs.
 * Waits look at the abort word every SYMMEM_DEV_SPINS spins and at
 * %globaltimer for SYMMEM_TIMEOUT: a dead peer or a timeout writes the
 * error record (the host prints it, naming the call and the PE) and traps,
 * so the kernel ends instead of hanging the GPU.
 */
#ifndef SYMMEM_DEVICE_CUH
#define SYMMEM_DEVICE_CUH

#include "device_base.cuh"
#include "device_rma.cuh"
#include "device_collectives.cuh"
#include "device_wait_sets.cuh"
#include "device_queries.cuh"

#endif
