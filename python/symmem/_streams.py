"""NvshmemStream: NVSHMEM4Py's wrapper that gives a torch stream the
__cuda_stream__ protocol; here any stream-like object works (a torch or CuPy
stream, a cuda.core Stream, an int handle). symmem's calls take all of these
directly; the wrapper is for programs that make one."""

from typing import Protocol, Tuple, Union

from symmem._errors import invalid


def _handle(stream):
    """The int handle of stream, or None where it is no stream."""
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if callable(protocol):
        return int(protocol()[1])
    for attribute in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attribute, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


class NvshmemStream:
    """NVSHMEM4Py's stream wrapper: any stream, with __cuda_stream__.

    symmem's calls take the stream itself as well; the wrapper is for
    programs written against NVSHMEM4Py. .pt_stream is the stream, .handle
    its CUDA handle (an int).

    Args:
        pt_stream: a torch or CuPy stream, a cuda.core Stream, or an int
            handle.

    Raises:
        NvshmemInvalid: pt_stream is none of those.

    Example:
        >>> s = symmem.NvshmemStream(0)  # the legacy default stream's handle
        >>> s.handle, s.__cuda_stream__()
        (0, (0, 0))
    """

    def __init__(self, pt_stream):
        if _handle(pt_stream) is None:
            raise invalid(
                f"NvshmemStream: pt_stream of type {type(pt_stream).__name__} is not a "
                "stream (expected a torch or CuPy stream, a cuda.core Stream or an "
                "int handle)"
            )
        self.pt_stream = pt_stream

    @property
    def handle(self):
        return _handle(self.pt_stream)

    def __cuda_stream__(self):
        return (0, self.handle)  # (protocol version, handle), as cuda.core reads it

    def __repr__(self):
        return f"<NvshmemStream handle={self.handle:#x}>"


# What a stream= argument may be, for annotations: the three ways a stream
# shows its handle (cuda.core, torch, CuPy; none is imported for it), an int
# handle, or None.
class _CudaStreamProtocol(Protocol):
    def __cuda_stream__(self) -> Tuple[int, int]: ...


class _TorchStream(Protocol):
    cuda_stream: int


class _CupyStream(Protocol):
    ptr: int


NvshmemStreamsType = Union[NvshmemStream, _CudaStreamProtocol, _TorchStream, _CupyStream, int, None]
NvshmemStreamsType.__doc__ = """What a stream= argument may be, for annotations.

An NvshmemStream, an object with __cuda_stream__ (cuda.core), .cuda_stream
(torch) or .ptr (CuPy), an int handle, or None (the call completes before
it returns). None of those libraries is imported for it.

Example:
    >>> def step(x, stream: symmem.NvshmemStreamsType = None):
    ...     symmem.barrier_all(stream=stream)
    >>> step(None)
"""

__all__ = ["NvshmemStream", "NvshmemStreamsType"]
