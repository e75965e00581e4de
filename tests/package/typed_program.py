"""A user's program on 2 or more PEs, which check_package.sh runs from the
installed package and type-checks against it with mypy --warn-unused-ignores:
the calls below must check, and each `type: ignore[code]` marks a mistake mypy
must find (were the types missing, the ignore would be unused and fail the
check). The C module's calls are typed by symmem/_symmem.pyi; the package's
Python functions are not annotated (their results are Any). The enums'
members are declared in symmem/_enums.py, so mypy knows them (and finds a
misspelt one), and `import symmem` exports what its literal __all__ lists
(mypy --strict re-exports nothing else)."""

from typing import TYPE_CHECKING

import symmem as nvshmem
from symmem import Buffer, ComparisonType, NvshmemInvalid, SignalOp, Teams

nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
src = nvshmem.array((10,), dtype="float32")
dst = nvshmem.array((10,), dtype="float32")
flag = nvshmem.array((1,), dtype="uint64")
counter = nvshmem.array((1,), dtype="int64")
src[:] = me
flag[:] = 0
counter[:] = 0
nvshmem.barrier_all()

# Both forms of put: (dst, src, remote_pe, stream) and NVSHMEM4Py's
# (dst, src, count, pe, stream).
nvshmem.put(dst, src, (me + 1) % n)
nvshmem.put(dst, src, 10, (me + 1) % n, None)
nvshmem.put_nbi(dst, src, count=10, pe=(me + 1) % n)
nvshmem.quiet()
add: SignalOp = nvshmem.SignalOp.SIGNAL_ADD
nvshmem.put_signal(dst, src, flag, 1, add, (me + 1) % n)
nvshmem.signal_wait(flag, 1, ComparisonType.CMP_GE)
received: int = nvshmem.signal_fetch(flag)
first: int | float = nvshmem.g(dst, me)
assert received == 1 and first == (me - 1) % n, (received, first)

old = nvshmem.atomic_fetch_add(counter, 1, 0)  # every PE adds 1 on PE 0
world: Teams = Teams.TEAM_WORLD
nvshmem.barrier(world)
if me == 0:
    done: bool = nvshmem.test(counter, nvshmem.ComparisonType.CMP_EQ, n)
    assert done, counter

buf: Buffer = nvshmem.get_peer_buffer(nvshmem.array_get_buffer(src)[0], me)
nbytes: int = buf.size
try:
    nvshmem.put(dst, src, n)  # no such PE
    raise AssertionError("put to PE n_pes() did not raise")
except NvshmemInvalid as error:
    assert "remote_pe" in str(error), error

if TYPE_CHECKING:  # mistakes mypy must find (never run)
    nvshmem.put(dst)  # type: ignore[call-overload]
    nvshmem.put_signal(dst, src, flag, 1, SignalOp.SIGNAL_SET)  # type: ignore[call-arg]
    nvshmem.test(flag, ComparisonType.CMP_EQ, "1")  # type: ignore[arg-type]
    nvshmem.signal_wait(flag, 1, ComparisonType.CMP_GREATER)  # type: ignore[attr-defined]
    nvshmem.barrier(Teams.TEAM_WROLD)  # type: ignore[attr-defined]
    op: SignalOp = ComparisonType.CMP_EQ  # type: ignore[assignment]
    name: str = nvshmem.signal_fetch(flag)  # type: ignore[assignment]
    buf.size = 3  # type: ignore[misc]

print(f"PE {me}: typed program done, old counter {old}, {nbytes} bytes")
for array in (src, dst, flag, counter):
    nvshmem.free_array(array)
nvshmem.finalize()
