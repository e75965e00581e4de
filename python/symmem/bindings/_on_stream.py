"""NVSHMEM's on-stream calls on raw addresses: puts, gets, signals, quiet
and barriers, each the symmem call of the same meaning (whose name its
errors carry: put for putmem_on_stream). dest and sig_addr must be
symmetric; source (of a put) and dest (of a get) may be any local memory.
Parameter names are NVSHMEM4Py's (bytes, cstrm, ...)."""

from symmem import _symmem
from symmem.bindings._heap import memory_at


def _bytes(address, count, call, arg, writable=False):
    return memory_at(address, count, "uint8", call, arg, writable)


def _signal(address, call):
    return memory_at(address, 1, "uint64", call, "sig_addr")


def putmem_on_stream(dest, source, bytes, pe, cstrm):
    call = "putmem_on_stream"
    _symmem.put(
        _bytes(dest, bytes, call, "dest"), _bytes(source, bytes, call, "source"), pe, stream=cstrm
    )


def putmem_nbi_on_stream(dest, source, bytes, pe, cstrm):
    call = "putmem_nbi_on_stream"
    _symmem.put_nbi(
        _bytes(dest, bytes, call, "dest"), _bytes(source, bytes, call, "source"), pe, stream=cstrm
    )


def getmem_on_stream(dest, source, bytes, pe, cstrm):
    call = "getmem_on_stream"
    _symmem.get(
        _bytes(dest, bytes, call, "dest", True),
        _bytes(source, bytes, call, "source"),
        pe,
        stream=cstrm,
    )


def getmem_nbi_on_stream(dest, source, bytes, pe, cstrm):
    call = "getmem_nbi_on_stream"
    _symmem.get_nbi(
        _bytes(dest, bytes, call, "dest", True),
        _bytes(source, bytes, call, "source"),
        pe,
        stream=cstrm,
    )


def putmem_signal_on_stream(dest, source, bytes, sig_addr, signal, sig_op, pe, cstrm):
    call = "putmem_signal_on_stream"
    _symmem.put_signal(
        _bytes(dest, bytes, call, "dest"),
        _bytes(source, bytes, call, "source"),
        _signal(sig_addr, call),
        signal,
        sig_op,
        pe,
        stream=cstrm,
    )


def putmem_signal_nbi_on_stream(dest, source, bytes, sig_addr, signal, sig_op, pe, cstrm):
    call = "putmem_signal_nbi_on_stream"
    _symmem.put_signal_nbi(
        _bytes(dest, bytes, call, "dest"),
        _bytes(source, bytes, call, "source"),
        _signal(sig_addr, call),
        signal,
        sig_op,
        pe,
        stream=cstrm,
    )


def signal_op_on_stream(sig_addr, signal, sig_op, pe, cstrm):
    _symmem.signal_op(_signal(sig_addr, "signal_op_on_stream"), signal, sig_op, pe, stream=cstrm)


def signal_wait_until_on_stream(sig_addr, cmp, cmp_value, cstream):
    """Note NVSHMEM's order (cmp before the value); symmem.signal_wait's is
    NVSHMEM4Py's (value before cmp)."""
    _symmem.signal_wait(
        _signal(sig_addr, "signal_wait_until_on_stream"), cmp_value, cmp, stream=cstream
    )


def signal_fetch(sig_addr):
    return _symmem.signal_fetch(_signal(sig_addr, "signal_fetch"))


def quiet_on_stream(cstrm):
    _symmem.quiet(stream=cstrm)


flush_on_stream = quiet_on_stream  # symmem's quiet completes what flush would


def barrier_on_stream(team, stream):
    _symmem.barrier(team, stream=stream)


def barrier_all_on_stream(stream):
    _symmem.barrier_all(stream=stream)


def team_sync_on_stream(team, stream):
    _symmem.sync(team, stream=stream)
    return 0


def sync_all_on_stream(stream):
    _symmem.sync_all(stream=stream)
