"""symmem.bindings (NVSHMEM4Py's nvshmem.bindings) on real PEs: init through
an InitAttr (the launcher's environment, a unique id, an MPI communicator),
the heap by address (malloc, calloc, free, ptr, mc_ptr), puts, gets and
signals on a stream, the typed atomics and collectives, and teams through
config and handle addresses. Each PE reads what it received through host
addresses (ctypes), so these run on the cpu backend; every error the calls
document is raised on each PE by itself, naming the call and the PE."""

import contextlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import symmem
from _launch import assert_all_ok, run_pes
from conftest import (
    PRELUDE,
    clean_env,
    cpu_only,
    not_on_gpu,
    not_on_mpi,
    run_plain,
    wait_all,
    write_program,
)

host_addresses = not_on_gpu("the PEs read symmetric memory through host addresses")

COMMON = """
import ctypes
import symmem.bindings as B


def at(address, count, ctype=ctypes.c_int64):
    \"\"\"count ctype values at a host address, as a NumPy array over them.\"\"\"
    return np.ctypeslib.as_array((ctype * count).from_address(address))
"""

BINDINGS = (
    COMMON
    + """
attr = B.InitAttr()
B.hostlib_init_attr(0, attr.ptr)                  # 0: the launcher's environment
check(B.init_status() == int(nvshmem.InitStatus.STATUS_IS_INITIALIZED), "init_status")
me, n = B.my_pe(), B.n_pes()
W = B.Team_id.TEAM_WORLD
nxt, prv = (me + 1) % n, (me - 1) % n

# ---- the heap by address ----
data = B.malloc(8 * n)
view = at(data, n)
view[:] = -1
zeros = B.calloc(n, 8)
check(at(zeros, n).tolist() == [0] * n, "calloc's memory is zeroed on return")
local = np.array([100 * me + k for k in range(n)], dtype=np.int64)
B.barrier_all()

# ---- puts and gets on a stream ----
B.putmem_on_stream(data + 8 * me, local.ctypes.data, 8, nxt, 0)
B.quiet_on_stream(0)
B.barrier_all()
expect = [-1] * n
expect[prv] = 100 * prv
check(view.tolist() == expect, f"putmem_on_stream: {view.tolist()}, expected {expect}")
got = np.zeros(n, dtype=np.int64)
B.getmem_on_stream(got.ctypes.data, data, 8 * n, nxt, 0)
expect = [-1] * n
expect[me] = 100 * me
check(got.tolist() == expect, f"getmem_on_stream: {got.tolist()}, expected {expect}")
B.barrier_all()
if n > 1:
    B.putmem_nbi_on_stream(zeros + 8 * me, local.ctypes.data + 8, 8, nxt, 0)
B.flush_on_stream(0)
B.quiet_on_stream(0)
B.barrier_all()
if n > 1:
    check(at(zeros, n)[prv] == 100 * prv + 1, f"putmem_nbi_on_stream: {at(zeros, n).tolist()}")
got[:] = 0
B.getmem_nbi_on_stream(got.ctypes.data, data, 8 * n, nxt, 0)
B.quiet_on_stream(0)
check(got[me] == 100 * me, f"getmem_nbi_on_stream: {got.tolist()}")
B.barrier_all()

# ---- ptr: loads and stores straight into the next PE's copy ----
# (0 where this process does not map it: the mpi backend's PEs of other nodes)
mapped = B.ptr(data, nxt) != 0
check(mapped or nvshmem.get_version().backend == "mpi", "ptr of the next PE is 0")
if mapped:
    peer = at(B.ptr(data, nxt), n)
    check(peer[me] == 100 * me, f"ptr: the next PE's copy holds {peer.tolist()}")
check(B.ptr(data + 16 if n > 2 else data, me) - B.ptr(data, me) == (16 if n > 2 else 0),
      "ptr keeps the offset")
B.barrier_all()
if mapped:
    peer[me] = 5000 + me
else:
    five = np.array([5000 + me], dtype="int64")
    B.putmem_on_stream(data + 8 * me, five.ctypes.data, 8, nxt, 0)
B.barrier_all()
check(view[prv] == 5000 + prv, f"a store through ptr: {view.tolist()}")
check(B.mc_ptr(W, data) == 0, "no multicast memory: mc_ptr is 0")

# ---- signals ----
sig = B.calloc(1, 8)
B.putmem_signal_on_stream(data + 8 * me, local.ctypes.data, 8, sig, 1, B.Signal_op.SIGNAL_ADD,
                          nxt, 0)
B.signal_wait_until_on_stream(sig, B.Cmp_type.CMP_GE, 1, 0)
check(B.signal_fetch(sig) == 1 and view[prv] == 100 * prv, "putmem_signal_on_stream")
B.barrier_all()
B.signal_op_on_stream(sig, 10 + me, B.Signal_op.SIGNAL_SET, nxt, 0)
B.signal_wait_until_on_stream(sig, B.Cmp_type.CMP_EQ, 10 + prv, 0)
B.barrier_all()
B.putmem_signal_nbi_on_stream(data + 8 * me, local.ctypes.data + 8 * (n - 1), 8, sig, 5,
                              B.Signal_op.SIGNAL_ADD, nxt, 0)
B.signal_wait_until_on_stream(sig, B.Cmp_type.CMP_EQ, 15 + prv, 0)
check(view[prv] == 100 * prv + n - 1, "putmem_signal_nbi_on_stream: the data came first")
B.barrier_all()

# ---- typed atomics on PE 0's counter ----
counter = B.calloc(4, 8)
old = B.int64_atomic_fetch_add(counter, me + 1, 0)
check(0 <= old <= n * (n + 1) // 2, f"fetch_add gave {old}")
B.uint64_atomic_or(counter + 8, 1 << me, 0)
B.double_atomic_add(counter + 16, 0.5, 0)
B.int_atomic_inc(counter + 24, 0)
B.barrier_all()
check(B.int64_atomic_fetch(counter, 0) == n * (n + 1) // 2, "the sum of the adds")
check(B.uint64_atomic_fetch_or(counter + 8, 0, 0) == (1 << n) - 1, "the or of the bits")
check(B.double_atomic_fetch(counter + 16, 0) == 0.5 * n, "double_atomic_add")
check(B.int_atomic_fetch(counter + 24, 0) == n, "int_atomic_inc")
for turn in range(n):                       # compare_swap in turns: each sees the last one's
    B.barrier_all()
    if turn == me:
        old = B.int64_atomic_compare_swap(counter, n * (n + 1) // 2 + turn,
                                          n * (n + 1) // 2 + turn + 1, 0)
        check(old == n * (n + 1) // 2 + turn, f"compare_swap saw {old}")
B.barrier_all()
check(B.long_atomic_swap(counter, 7, 0) in (n * (n + 1) // 2 + n, 7), "swap")
B.barrier_all()
B.int32_atomic_set(counter + 24, -3, nxt)
B.barrier_all()
check(at(counter + 24, 1, ctypes.c_int32)[0] == -3, "int32_atomic_set from the previous PE")

# ---- typed collectives on a stream ----
src = B.malloc(8 * 2 * n)
dst = B.malloc(8 * 2 * n)
at(src, 3, ctypes.c_int32)[:] = [me, 2 * me, 3 * me]
B.int32_sum_reduce_on_stream(W, dst, src, 3, 0)
s = n * (n - 1) // 2
check(at(dst, 3, ctypes.c_int32).tolist() == [s, 2 * s, 3 * s], "int32_sum_reduce_on_stream")
at(src, 2 * n, ctypes.c_float)[:] = np.arange(2 * n) + me
B.float_max_reducescatter_on_stream(W, dst, src, 2, 0)
check(at(dst, 2, ctypes.c_float).tolist() == [n - 1 + 2 * me, n + 2 * me],
      f"float_max_reducescatter_on_stream: {at(dst, 2, ctypes.c_float).tolist()}")
at(src, n, ctypes.c_int16)[:] = [10 * me + j for j in range(n)]
B.int16_alltoall_on_stream(W, dst, src, 1, 0)
check(at(dst, n, ctypes.c_int16).tolist() == [10 * k + me for k in range(n)], "alltoall")
at(src, 1)[0] = 1000 + me
B.longlong_fcollect_on_stream(W, dst, src, 1, 0)
check(at(dst, n).tolist() == [1000 + k for k in range(n)], "longlong_fcollect_on_stream")
at(src, 2, ctypes.c_double)[:] = [me, me + 0.5]
B.double_broadcast_on_stream(W, dst, src, 2, n - 1, 0)
check(at(dst, 2, ctypes.c_double).tolist() == [n - 1, n - 0.5], "double_broadcast_on_stream")
at(src, 2, ctypes.c_uint16)[:] = np.array([me + 1, 2], dtype=np.float32).view(np.uint32) >> 16
B.bfloat16_sum_reduce_on_stream(W, dst, src, 2, 0)
raw = (at(dst, 2, ctypes.c_uint16).astype(np.uint32) << 16).view(np.float32)
check(raw.tolist() == [n * (n + 1) / 2, 2 * n], f"bfloat16_sum_reduce_on_stream: {raw}")

# ---- teams through addresses ----
cfg = B.TeamConfig()
cfg.version, cfg.num_contexts, cfg.uniqueid = 2, 3, 77
handle = ctypes.c_int32(-5)
B.team_split_strided(W, 0, 2, (n + 1) // 2, cfg.ptr, 0, ctypes.addressof(handle))
if me % 2 == 0:
    h = handle.value
    check(B.team_n_pes(h) == (n + 1) // 2 and B.team_my_pe(h) == me // 2, "strided split")
    check(B.team_translate_pe(h, B.team_n_pes(h) - 1, W) == 2 * ((n + 1) // 2 - 1), "translate")
    out = B.TeamConfig()
    B.team_get_config(h, out.ptr)
    check((out.version, out.num_contexts, out.uniqueid) == (2, 3, 77), f"team_get_config {out}")
    check(getattr(Teams, f"TEAM_{h}") == h, "named as NVSHMEM4Py's core names it")
    check(B.team_sync_on_stream(h, 0) == 0, "team_sync_on_stream")
    B.barrier_on_stream(h, 0)
    B.barrier(h)
    B.team_destroy(h)
else:
    check(handle.value == -1, f"outside the team: handle {handle.value}")
hx, hy = ctypes.c_int32(-5), ctypes.c_int32(-5)
B.team_split_2d(W, 2, 0, 0, ctypes.addressof(hx), 0, 0, ctypes.addressof(hy))
check(B.team_n_pes(hx.value) == len(range(me - me % 2, min(me - me % 2 + 2, n))), "2-D x")
check(B.team_n_pes(hy.value) == len(range(me % 2, n, 2)), "2-D y")
B.team_destroy(hy.value)
B.team_destroy(hx.value)
key = B.TeamUniqueId()
if me == 0:
    B.team_get_uniqueid(key.ptr)
at(src, 1, ctypes.c_uint64)[0] = key.value
B.uint64_broadcast_on_stream(W, dst, src, 1, 0, 0)
cfg2 = B.TeamConfig()
cfg2.uniqueid = int(at(dst, 1, ctypes.c_uint64)[0])
check(cfg2.uniqueid != 0, "PE 0's team unique id came")
made = ctypes.c_int32(-5)
B.team_init(ctypes.addressof(made), cfg2.ptr, 0, n, n - 1 - me)
check(B.team_my_pe(made.value) == n - 1 - me, "team_init placement")
B.team_destroy(made.value)
B.barrier_all_on_stream(0)
B.sync_all_on_stream(0)

# ---- misuse: each PE by itself, naming the call, the argument and the PE ----
def refused(call, fn, *args, words=()):
    msg = expect_invalid(call, fn, *args)
    for word in words:
        check(word in msg, f"{msg!r} lacks {word!r}")


refused("putmem_on_stream", B.putmem_on_stream, "x", local.ctypes.data, 8, nxt, 0,
        words=["dest='x' is not an address"])
refused("getmem_on_stream", B.getmem_on_stream, local.ctypes.data, data, -1, nxt, 0,
        words=["the size -1 of dest"])
refused("put", B.putmem_on_stream, local.ctypes.data, local.ctypes.data, 8, nxt, 0)
refused("atomic_add", B.int_atomic_add, local.ctypes.data, 1, 0)
refused("signal_fetch", B.signal_fetch, -8, words=["sig_addr=-8"])
refused("free", B.free, 12345, words=["ptr=12345 is not an address malloc or calloc returned"])
refused("ptr", B.ptr, local.ctypes.data, 0, words=[f"dest={local.ctypes.data}"])
refused("ptr", B.ptr, data, n, words=["pe"])
refused("mc_ptr", B.mc_ptr, 57, data, words=["57"])
refused("mc_ptr", B.mc_ptr, W, local.ctypes.data, words=["ptr="])
refused("calloc", B.calloc, -1, 8, words=["count=-1"])
refused("calloc", B.calloc, 2, "8", words=["size='8'"])
refused("team_split_strided", B.team_split_strided, W, 0, 1, n, cfg.ptr, 0, 0,
        words=["new_team=0 is not an address to write to"])
refused("team_init", B.team_init, None, cfg.ptr, 0, n, me, words=["team=None"])
refused("team_get_config", B.team_get_config, W, 0, words=["config=0"])
refused("query_thread", B.query_thread, 0, words=["provided=0"])
refused("reducescatter", B.uint8_sum_reducescatter_on_stream, -1, data, data, 1, 0,
        words=["team=-1 is not a valid team"])
# addresses no page of this process is mapped at (below mmap_min_addr): refused, not a crash
JUNK = 0x1000
refused("putmem_on_stream", B.putmem_on_stream, data, JUNK, 8, nxt, 0,
        words=["putmem_on_stream: source: [0x1000, +8) is not memory this process has mapped"])
refused("getmem_on_stream", B.getmem_on_stream, JUNK, data, 8, nxt, 0,
        words=["getmem_on_stream: dest: [0x1000, +8)"])
refused("team_init", B.team_init, local.ctypes.data, JUNK, 0, n, me,
        words=["team_init: [0x1000, +64)"])
refused("team_get_config", B.team_get_config, W, JUNK, words=["team_get_config: [0x1000, +"])
refused("query_thread", B.query_thread, JUNK, words=["query_thread: provided: [0x1000, +4)"])
refused("info_get_name", B.info_get_name, JUNK, words=["info_get_name: name: [0x1000, +"])
# a page mapped read-only, where these write: refused before anything is written
# (a split or team_init before its collective, so no team is made), not a crash
import mmap
page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ)
RO = np.frombuffer(page, dtype=np.uint8).__array_interface__["data"][0]
read_only = f"[{RO:#x}, +"
refused("team_split_strided", B.team_split_strided, W, 0, 1, n, cfg.ptr, 0, RO,
        words=["team_split_strided: new_team: " + read_only, "is mapped read-only"])
refused("team_split_2d", B.team_split_2d, W, 2, 0, 0, local.ctypes.data, 0, 0, RO,
        words=["team_split_2d: yaxis_team: " + read_only, "is mapped read-only"])
refused("team_split_2d", B.team_split_2d, W, 2, 0, 0, RO, 0, 0, local.ctypes.data,
        words=["team_split_2d: xaxis_team: " + read_only])
refused("team_init", B.team_init, RO, cfg.ptr, 0, n, me,
        words=["team_init: team: " + read_only, "is mapped read-only"])
refused("getmem_on_stream", B.getmem_on_stream, RO, data, 8, nxt, 0,
        words=["getmem_on_stream: dest: " + read_only, "is mapped read-only"])
refused("getmem_nbi_on_stream", B.getmem_nbi_on_stream, RO, data, 8, nxt, 0,
        words=["getmem_nbi_on_stream: dest: " + read_only])
B.putmem_on_stream(data, RO, 8, me, 0)  # a read-only source is only read
# a page mapped but unreadable (PROT_NONE: a guard page, an arena's reserve): refused
# where a call reads it, not a SIGSEGV; data is left as it was
guard = mmap.mmap(-1, mmap.PAGESIZE)
NONE = np.frombuffer(guard, dtype=np.uint8).__array_interface__["data"][0]
libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
check(libc.mprotect(NONE, mmap.PAGESIZE, 0) == 0, f"mprotect: errno {ctypes.get_errno()}")
unreadable = f"[{NONE:#x}, +8) has a page this process may not read"
first = np.arange(8, dtype=np.uint8)
B.putmem_on_stream(data, first.ctypes.data, 8, me, 0)
B.barrier_all()  # every PE's data holds first before any refused put
for name in ("putmem_on_stream", "putmem_nbi_on_stream"):
    refused(name, getattr(B, name), data, NONE, 8, nxt, 0,
            words=[f"{name}: source: " + unreadable, "PROT_NONE"])
refused("putmem_signal_on_stream", B.putmem_signal_on_stream, data, NONE, 8, sig, 1,
        int(nvshmem.SignalOp.SIGNAL_SET), nxt, 0,
        words=["putmem_signal_on_stream: source: " + unreadable])
B.barrier_all()
check_equal(at(data, 8, ctypes.c_uint8), first, "data after the refused puts")
libc.mprotect(NONE, mmap.PAGESIZE, mmap.PROT_READ | mmap.PROT_WRITE)

for address in (dst, src, sig, counter, zeros, data):
    B.free(address)
B.free(0)
B.hostlib_finalize()
check(B.init_status() != int(nvshmem.InitStatus.STATUS_IS_INITIALIZED), "finalized")
ok(me)
"""
)


@host_addresses
@pytest.mark.timeout(90)
@pytest.mark.parametrize("n", (1, 2, 3, 4))
def test_bindings_on_pes(tmp_path, n):
    assert_all_ok(run_pes(tmp_path, n, BINDINGS, timeout=60), n)


# The test makes the unique id (as test_bootstrap.py's uid tests do) and each
# PE starts through NVSHMEM4Py's own sequence: uniqueid, set_attr_uniqueid_args,
# hostlib_init_attr(INIT_WITH_UNIQUEID).
UID = (
    PRELUDE
    + COMMON
    + """
rank, nranks, uid_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
uid = B.uniqueid()
raw = open(uid_file, "rb").read()
ctypes.memmove(uid.ptr, raw, len(raw))
attr = B.InitAttr()
B.set_attr_uniqueid_args(rank, nranks, uid.ptr, attr.ptr)
B.hostlib_init_attr(B.Flags.INIT_WITH_UNIQUEID, attr.ptr)
check((B.my_pe(), B.n_pes()) == (rank, nranks), f"PE {B.my_pe()} of {B.n_pes()}")
box = B.malloc(8)
mine = np.array([rank + 1], dtype=np.int64)
B.putmem_on_stream(box, mine.ctypes.data, 8, (rank + 1) % nranks, 0)
B.barrier_all()
check(at(box, 1)[0] == (rank - 1) % nranks + 1, f"ring: got {at(box, 1)[0]}")
B.free(box)
B.hostlib_finalize()
print(f"PE {rank} OK", flush=True)
"""
)


@host_addresses
@not_on_mpi(
    "plain processes that meet by a unique id are no MPI job; the mpi backend's PEs "
    "are the processes of one (mpirun, srun)"
)
@pytest.mark.timeout(90)
@pytest.mark.parametrize("n", (2, 3))
def test_bindings_unique_id_start(tmp_path, n):
    uid_file = tmp_path / "uid"
    uid_file.write_bytes(bytes(symmem.get_unique_id()))
    prog = tmp_path / "uid_prog.py"
    prog.write_text(UID)
    results = wait_all([run_plain(prog, [rank, n, uid_file]) for rank in range(n)], timeout=60)
    for rank, (rc, out, err) in enumerate(results):
        assert rc == 0 and f"PE {rank} OK" in out, f"PE {rank}: rc={rc}\n{out}\n{err}"


MPI = (
    COMMON
    + """
from mpi4py import MPI
comm = MPI.COMM_WORLD
handle = (ctypes.c_int if MPI._sizeof(MPI.Comm) == ctypes.sizeof(ctypes.c_int) else
          ctypes.c_void_p)(comm.handle)
attr = B.InitAttr()
B.set_attr_mpi_comm_args(ctypes.addressof(handle), attr.ptr)
check(attr.mpi_comm == ctypes.addressof(handle), "set_attr_mpi_comm_args stores the address")
B.hostlib_init_attr(B.Flags.INIT_WITH_MPI_COMM, attr.ptr)
check((B.my_pe(), B.n_pes()) == (comm.Get_rank(), comm.Get_size()), "MPI's ranks")
dst = B.malloc(8 * B.n_pes())
src = B.malloc(8)
at(src, 1)[0] = 7 * B.my_pe()
B.int64_fcollect_on_stream(B.Team_id.TEAM_WORLD, dst, src, 1, 0)
check(at(dst, B.n_pes()).tolist() == [7 * k for k in range(B.n_pes())], "fcollect")
B.free(src)
B.free(dst)
B.hostlib_finalize()
print(f"PE {comm.Get_rank()} OK", flush=True)
"""
)


@host_addresses
@pytest.mark.timeout(150)
def test_bindings_mpi_start(tmp_path):
    mpiexec = Path(sys.executable).parent / "mpiexec"
    if not mpiexec.exists():
        pytest.skip(f"no mpiexec next to {sys.executable}")
    pytest.importorskip("mpi4py")
    prog = write_program(tmp_path, MPI)
    env = clean_env({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    proc = subprocess.run(
        [str(mpiexec), "-n", "2", "--oversubscribe", sys.executable, str(prog)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    for rank in range(2):
        assert f"PE {rank} OK" in proc.stdout, proc.stdout


# ---------------------------------------------------------------- memory_at
# The raw pointer contract the bindings read and write addresses through
# (_symmem.memory_at), in this process, before any init.


def address_of(array):
    return array.__array_interface__["data"][0]


def test_memory_at_round_trip_on_a_real_buffer():
    import struct

    import numpy as np
    from symmem import _symmem

    buf = np.zeros(4, dtype=np.int64)
    view = _symmem.memory_at(address_of(buf) + 8, 16, writable=True)
    assert (view.nbytes, view.format, view.readonly) == (16, "B", False)
    struct.pack_into("=qq", view, 0, -5, 2**40)  # write through the view...
    assert buf.tolist() == [0, -5, 2**40, 0]  # ...lands in the buffer
    buf[3] = 77  # and the buffer's writes show
    back = np.frombuffer(_symmem.memory_at(address_of(buf), 32), dtype=np.int64)
    assert back.tolist() == [0, -5, 2**40, 77] and not back.flags.writeable
    assert _symmem.memory_at(address_of(buf), 0).nbytes == 0
    with pytest.raises(TypeError):  # read-only unless writable=True
        _symmem.memory_at(address_of(buf), 8)[0] = 1


@pytest.mark.parametrize(
    "args, kw, words",
    [
        ((0, 8), {}, "memory_at: address=0 is NULL"),
        ((-8, 8), {}, "memory_at: address=-8 is negative"),
        ((2**64, 1), {}, "memory_at: address=18446744073709551616 is wider than a pointer"),
        ((2**64 - 8, 16), {}, "memory_at: address=0xfffffffffffffff8 with nbytes=16 runs past"),
        ((4096, -1), {}, "memory_at: nbytes=-1 must be >= 0"),
        (("0x1000", 8), {}, "memory_at: address must be an int, got str"),
        ((True, 8), {}, "memory_at: address must be an int, got bool"),
        ((4096, 8.0), {}, "memory_at: nbytes must be an int, got float"),
        ((4096, 8), {"writable": 1}, "memory_at: writable must be True or False, got int"),
        ((4096, 8), {}, "memory_at: [0x1000, +8) is not memory this process has mapped"),
        ((4096, 8), {"call": "team_init"}, "team_init: [0x1000, +8) is not memory this process"),
        ((4096, 8), {"call": 5}, "memory_at: call of type int is not a str"),
        ((4096,), {}, "memory_at: missing required argument 'nbytes'"),
    ],
)
def test_memory_at_refuses_what_is_no_address(args, kw, words):
    from symmem import NvshmemInvalid, _symmem

    with pytest.raises(ValueError, match="^" + re.escape(words)) as info:
        _symmem.memory_at(*args, **kw)
    assert isinstance(info.value, NvshmemInvalid)


def test_memory_at_refuses_a_stale_address():
    # A large NumPy array lives in its own mapping, which freeing it unmaps:
    # its address is then stale, and reading it would crash the process.
    import numpy as np
    from symmem import NvshmemInvalid, _symmem

    big = np.ones(64 << 20, dtype=np.uint8)
    address = address_of(big)
    assert bytes(_symmem.memory_at(address + (32 << 20), 4)) == b"\x01" * 4
    del big
    with pytest.raises(NvshmemInvalid, match=rf"^memory_at: \[{address:#x}, \+8\) is not"):
        _symmem.memory_at(address, 8)


def test_bindings_write_their_out_parameters_through_memory_at():
    # The calls that need no init write NVSHMEM's out-parameters at plain
    # NumPy addresses (not ctypes objects), and read them back from there.
    import numpy as np
    import symmem.bindings as B
    from symmem import _symmem

    ints = np.full(3, -7, dtype=np.int32)
    at = [address_of(ints) + 4 * k for k in range(3)]
    B.vendor_get_version_info(*at)
    assert ints.tolist() == [int(p) for p in _symmem.VERSION.split(".")]
    B.info_get_version(at[0], at[1])
    assert ints[:2].tolist() == [int(p) for p in _symmem.OPENSHMEM_SPEC_VERSION.split(".")]
    name = np.full(256, 0xFF, dtype=np.uint8)
    B.info_get_name(address_of(name))
    assert name.tobytes().split(b"\0")[0].decode() == symmem.get_name()
    key = np.zeros(1, dtype=np.uint64)
    B.team_get_uniqueid(address_of(key))
    assert key[0] != 0
    uid = B.uniqueid()
    B.get_uniqueid(uid.ptr)
    assert bytes(uid) != bytes(len(bytes(uid)))
    attr = B.InitAttr()
    B.set_attr_uniqueid_args(3, 5, uid.ptr, attr.ptr)
    assert (attr.rank, attr.nranks, attr.uniqueid) == (3, 5, uid.ptr)
    with pytest.raises(ValueError, match=r"^query_thread: provided=0 is not an address"):
        B.query_thread(0)


def read_only_page():
    """A page mapped PROT_READ (a write to it would kill the process with
    SIGSEGV) and its address."""
    import mmap

    import numpy as np

    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ)
    return page, address_of(np.frombuffer(page, dtype=np.uint8))


@pytest.mark.parametrize(
    "name, args, words",
    [
        ("query_thread", lambda ro, ok: (ro,), "query_thread: provided: "),
        ("info_get_name", lambda ro, ok: (ro,), "info_get_name: name: "),
        ("team_get_uniqueid", lambda ro, ok: (ro,), "team_get_uniqueid: uniqueid: "),
        ("get_uniqueid", lambda ro, ok: (ro,), "get_uniqueid: uniqueid: "),
        ("info_get_version", lambda ro, ok: (ok, ro), "info_get_version: minor: "),
        (
            "vendor_get_version_info",
            lambda ro, ok: (ok, ok, ro),
            "vendor_get_version_info: patch: ",
        ),
        ("set_attr_uniqueid_args", lambda ro, ok: (0, 1, ok, ro), "set_attr_uniqueid_args: "),
    ],
)
def test_bindings_refuse_a_read_only_out_parameter(name, args, words):
    # Mapped, so msync's check passes; writing there would crash the process.
    # Every out-parameter is checked before any is written.
    import mmap

    import numpy as np
    import symmem.bindings as B
    from symmem import NvshmemInvalid

    page, ro = read_only_page()
    ints = np.full(64, -7, dtype=np.int32)
    with pytest.raises(NvshmemInvalid, match="^" + re.escape(words)) as info:
        getattr(B, name)(*args(ro, address_of(ints)))
    at = re.search(r"\[(0x[0-9a-f]+), \+\d+\) is mapped read-only", str(info.value))
    assert at and int(at.group(1), 16) // mmap.PAGESIZE == ro // mmap.PAGESIZE, str(info.value)
    assert (ints == -7).all(), f"{name} wrote before it refused: {ints[:4]}"


@contextlib.contextmanager
def pages_with_one_protected(count, index, protection):
    """count fresh pages (an mmap) and the address of the first, page index
    mprotect-ed to protection; read and write again afterwards."""
    import ctypes
    import mmap

    import numpy as np

    size = mmap.PAGESIZE
    pages = mmap.mmap(-1, count * size)
    start = address_of(np.frombuffer(pages, dtype=np.uint8))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    assert libc.mprotect(start + index * size, size, protection) == 0, ctypes.get_errno()
    try:
        yield pages, start
    finally:
        libc.mprotect(start + index * size, size, mmap.PROT_READ | mmap.PROT_WRITE)


def test_memory_at_refuses_to_write_a_range_with_a_read_only_page():
    # Two pages, the second made read-only: a range over both is refused for
    # writing, the first alone is not, and reading either is allowed.
    import mmap

    from symmem import NvshmemInvalid, _symmem

    size = mmap.PAGESIZE
    with pages_with_one_protected(2, 1, mmap.PROT_READ) as (_, start):
        with pytest.raises(
            NvshmemInvalid,
            match=rf"^memory_at: \[{start + 8:#x}, \+{2 * size - 16}\) "
            r"is mapped read-only",
        ):
            _symmem.memory_at(start + 8, 2 * size - 16, writable=True)
        _symmem.memory_at(start, size, writable=True)[:8] = b"12345678"
        assert bytes(_symmem.memory_at(start, 2 * size))[:8] == b"12345678"


def test_memory_at_refuses_a_range_with_an_unreadable_page():
    # Three pages, the middle one PROT_NONE (a guard page): msync takes it for
    # mapped memory, and reading it kills the process with SIGSEGV. A range
    # that touches it is refused for reading and for writing, naming where;
    # the pages beside it are read as before.
    import mmap

    from symmem import NvshmemInvalid, _symmem

    size = mmap.PAGESIZE
    with pages_with_one_protected(3, 1, 0) as (pages, start):
        for at, nbytes, writable in (
            (start + size, 8, False),
            (start + 8, 2 * size, False),
            (start + 2 * size - 1, 2, False),
            (start + size + 16, 8, True),
        ):
            with pytest.raises(
                NvshmemInvalid,
                match=rf"^memory_at: \[{at:#x}, \+{nbytes}\) has a page this process may "
                r"not read \(mapped PROT_NONE",
            ):
                _symmem.memory_at(at, nbytes, writable=writable)
        pages[:8] = b"abcdefgh"
        assert bytes(_symmem.memory_at(start, size))[:8] == b"abcdefgh"
        assert len(_symmem.memory_at(start + 2 * size, size, writable=True)) == size


REGISTER_BY_ADDRESS = """
import symmem.bindings as bindings
nvshmem.init()
me = nvshmem.my_pe()
plain = np.zeros(64, dtype=np.uint8)
expect_raises(NotImplementedError, ["buffer_register_symmetric:", "gpu backend"],
              bindings.buffer_register_symmetric, plain.ctypes.data, 64, 0)
expect_raises(NotImplementedError, ["buffer_register_symmetric_at_preferred_address:"],
              bindings.buffer_register_symmetric_at_preferred_address,
              plain.ctypes.data, 64, 0, 0)
expect_raises(nvshmem.NvshmemInvalid, ["buffer_register_symmetric:", "flags=1"],
              bindings.buffer_register_symmetric, plain.ctypes.data, 64, 1)
expect_raises(nvshmem.NvshmemInvalid, ["buffer_register_symmetric:", "size=-1"],
              bindings.buffer_register_symmetric, plain.ctypes.data, -1, 0)
heap = nvshmem.array((16,), dtype="uint8")
expect_raises(nvshmem.NvshmemInvalid, ["buffer_unregister_symmetric:", "mmap_ptr=0x"],
              bindings.buffer_unregister_symmetric, heap.ctypes.data, 16)
nvshmem.free_array(heap)
print(f"PE {me} OK", flush=True)
nvshmem.finalize()
"""


@cpu_only("CUDA VMM memory by address: tests/gpu/register_external.py")
def test_register_by_address_says_why_it_cannot_run_and_refuses_bad_arguments(tmp_path):
    assert_all_ok(run_pes(tmp_path, 2, REGISTER_BY_ADDRESS), 2)


ALIGN = """
import symmem.bindings as bindings
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
made = []
for alignment, size in ((4096, 100), (512, 1), (65536, 4096), (2 << 20, 8), (256, 3000)):
    at = bindings.align(alignment, size)
    check(at % alignment == 0, f"align({alignment}, {size}) gave {at:#x}")
    made.append((at, size))
# the offsets are the same on every PE: a put to the peer's copy lands there
nxt, prv = (me + 1) % n, (me - 1) % n
for i, (at, size) in enumerate(made):
    src = np.full(size, 10 * i + me + 1, dtype=np.uint8)
    bindings.putmem_on_stream(at, src.ctypes.data, size, nxt, 0)
nvshmem.barrier_all()
for i, (at, size) in enumerate(made):
    got = np.frombuffer(nvshmem._symmem.memory_at(at, size), dtype=np.uint8)
    check(np.all(got == 10 * i + prv + 1), f"align block {i}: {got[:4]}")
for at, _ in made:
    bindings.free(at)
check(bindings.align(64, 0) == 0, "align of 0 bytes")
expect_raises(nvshmem.NvshmemInvalid, ["align:", "alignment=48", "power of two"],
              bindings.align, 48, 16)
expect_raises(nvshmem.NvshmemInvalid, ["align:", "alignment=4194304", "largest"],
              bindings.align, 4 << 20, 16)
# PEs that disagree on the alignment all raise, and the heap stays usable
if n > 1:
    expect_raises(nvshmem.NvshmemInvalid, ["align:", "alignment must be the same"],
                  bindings.align, 4096 << me, 16)
after = bindings.malloc(64)
check(after != 0, "malloc after a refused align")
bindings.free(after)
print(f"PE {me} OK", flush=True)
nvshmem.finalize()
"""


@host_addresses
@pytest.mark.parametrize("n", (1, 2, 3))
def test_align_gives_aligned_symmetric_addresses_and_refuses_what_it_cannot(tmp_path, n):
    assert_all_ok(run_pes(tmp_path, n, ALIGN), n)
