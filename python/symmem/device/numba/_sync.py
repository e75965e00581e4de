"""my_pe, n_pes, barrier_all and sync_all in njit code on the cpu backend.
The barriers are the C engine's (through the address the extension exports),
so they keep its timeouts, Ctrl-C and dead-peer errors; the GIL is released
while they wait (src/extension/device.c)."""

from . import _checks as C
from . import _errors as E
from . import _llvm as L
from ._stubs import cpu_overload, stub

my_pe = stub("my_pe", "")
n_pes = stub("n_pes", "")
barrier_all = stub("barrier_all", "")
sync_all = stub("sync_all", "")


@cpu_overload(my_pe)
def _my_pe():
    return lambda: C.my_pe()


@cpu_overload(n_pes)
def _n_pes():
    return lambda: C.n_pes()


@cpu_overload(barrier_all)
def _barrier_all():
    call = E.CALL["barrier_all"]

    def impl():
        C.ready(call)
        L.fence_seq_cst()  # quiet: this PE's stores before the arrival
        status = L.c_barrier_all()
        if status != 0:
            C.raise_status(status)

    return impl


@cpu_overload(sync_all)
def _sync_all():
    call = E.CALL["sync_all"]

    def impl():
        C.ready(call)
        status = L.c_sync_all()
        if status != 0:
            C.raise_status(status)

    return impl
