"""torch tensors on the symmetric heap. torch is imported only when used."""

import math

from symmem import _symmem
from symmem._errors import invalid
from symmem._memory import _allocate, _shape_tuple, buffer_of, free
from symmem._resolver import TENSOR_BUFFER


def _torch(call):
    try:
        import torch
    except ImportError as error:
        raise ModuleNotFoundError(f"{call}: torch is not installed ({error})") from None
    return torch


def _torch_dtype(torch, dtype, call):
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    name = str(getattr(dtype, "name", dtype)).replace("torch.", "")
    found = getattr(torch, name, None)
    if not isinstance(found, torch.dtype):
        raise invalid(f"{call}: dtype={dtype!r} is not a torch dtype")
    return found


def _mark(made, buf):
    """made (a tensor just made over buf) and its root are over buf: every
    view of it has the root as ._base, through which the C module finds buf
    (_resolver.owner_of) and refuses the tensor once buf is freed."""
    setattr(made, TENSOR_BUFFER, buf)
    if made._base is not None:
        setattr(made._base, TENSOR_BUFFER, buf)
    return made


def _typed(raw, dtype, buf):
    """raw (bytes over buf) as dtype, marked. torch's view to a dtype of
    another size starts a root of its own (its ._base is None, and its views'
    ._base is it), so the mark goes on what the view gives."""
    return _mark(raw.view(dtype), buf)


def _wrap(torch, buf, dtype, count):
    if "device_memory" in _symmem.capabilities():
        flat = _typed(torch.from_dlpack(buf), dtype, buf)[:count]
    elif count == 0:
        flat = torch.empty(0, dtype=dtype)
    else:
        flat = _mark(torch.frombuffer(buf, dtype=dtype, count=count), buf)
    return flat


def _check_morder(morder, call):
    if not isinstance(morder, str) or morder not in ("C", "F"):
        raise invalid(f"{call}: morder={morder!r:.60} must be 'C' or 'F'")


def _shaped(flat, shape, morder):
    """flat as shape, in C order or (morder "F") column-major: strides 1, d0, d0*d1, ..."""
    if morder == "C":
        return flat.reshape(shape)
    return flat.reshape(shape[::-1]).permute(*reversed(range(len(shape))))


def _column_major(t):
    """Whether t is laid out column-major (as tensor(..., morder="F") makes
    them) rather than row-major."""
    if t.is_contiguous() or t.dim() < 2:
        return False
    return t.permute(*reversed(range(t.dim()))).is_contiguous()


def tensor(shape, dtype=None, release=False, morder="C", except_on_del=True):
    """Allocate a torch tensor on every PE's symmetric heap: collective.

    A CPU tensor on the cpu backend, a CUDA tensor on the gpu backend.
    Every PE calls it with the same shape and dtype; the elements are not
    initialised. free_tensor() releases it.

    Args:
        shape: an int or a sequence of ints.
        dtype: a torch dtype (or its name, "float32"); default
            torch.float32.
        release: True: a leak of it is freed by finalize() without a
            warning.
        morder: "C" (row-major) or "F" (column-major, as NVSHMEM4Py lays
            it out).
        except_on_del: accepted for NVSHMEM4Py; symmem never frees memory
            when its object is garbage-collected.

    Returns:
        A torch tensor over this PE's copy.

    Raises:
        ModuleNotFoundError: torch is not installed.
        NvshmemInvalid: shape is not an int or a sequence of ints, or has a
            negative dimension; dtype is not a torch dtype; morder is not
            "C" or "F"; release is not a bool; the PEs asked for different
            sizes (the cpu backend checks); symmem is not initialised.
        NvshmemError: the symmetric heap has no room for it, a PE died,
            SYMMEM_TIMEOUT seconds passed, or the backend failed.

    Example:
        >>> import torch
        >>> t = symmem.tensor((2, 2), dtype=torch.int32)
        >>> t.shape, t.dtype
        (torch.Size([2, 2]), torch.int32)
        >>> symmem.free_tensor(t)
    """
    torch = _torch("tensor")
    shape = _shape_tuple(shape, "tensor")
    dtype = _torch_dtype(torch, dtype, "tensor")
    _check_morder(morder, "tensor")
    count = math.prod(shape)
    itemsize = torch.empty(0, dtype=dtype).element_size()
    buf = _allocate(count * itemsize, release, "tensor")
    return _shaped(_wrap(torch, buf, dtype, count), shape, morder)


def bytetensor(shape, dtype=None, release=False, morder="C", except_on_del=True):
    """Allocate a flat uint8 tensor of shape x dtype's bytes: collective.

    NVSHMEM4Py's call; as tensor(), with the bytes of a tensor of shape
    and dtype as a 1-D torch.uint8 tensor.

    Args:
        shape: an int or a sequence of ints.
        dtype: the torch dtype whose size counts; default torch.float32.
        release: True: a leak of it is freed by finalize() without a
            warning.
        morder: "C" or "F" (checked; the result is flat either way).
        except_on_del: accepted for NVSHMEM4Py.

    Returns:
        A 1-D torch.uint8 tensor.

    Raises:
        ModuleNotFoundError: torch is not installed.
        NvshmemInvalid: shape is not an int or a sequence of ints, or has a
            negative dimension; dtype is not a torch dtype; morder is not
            "C" or "F"; release is not a bool; the PEs asked for different
            sizes (the cpu backend checks); symmem is not initialised.
        NvshmemError: the symmetric heap has no room for it, a PE died,
            SYMMEM_TIMEOUT seconds passed, or the backend failed.

    Example:
        >>> import torch
        >>> b = symmem.bytetensor(4, dtype=torch.float64)
        >>> b.shape, b.dtype
        (torch.Size([32]), torch.uint8)
        >>> symmem.free_tensor(b)
    """
    torch = _torch("bytetensor")
    shape = _shape_tuple(shape, "bytetensor")
    dtype = _torch_dtype(torch, dtype, "bytetensor")
    _check_morder(morder, "bytetensor")
    nbytes = math.prod(shape) * torch.empty(0, dtype=dtype).element_size()
    buf = _allocate(nbytes, release, "bytetensor")
    return _wrap(torch, buf, torch.uint8, nbytes)


def empty(shape, dtype=None, release=False, morder="C"):
    """tensor(shape, dtype, release, morder): NVSHMEM4Py's interop spelling.

    Example:
        >>> import torch
        >>> t = symmem.interop.torch.empty(3, dtype=torch.float64)
        >>> symmem.interop.torch.free_tensor(t)
    """
    return tensor(shape, dtype=dtype, release=release, morder=morder)


def free_tensor(t):
    """Free a tensor that tensor() or bytetensor() made: collective.

    Every PE frees the same tensor, in the same order; views of it become
    unusable (calls refuse them).

    Args:
        t: the tensor tensor() or bytetensor() returned (not a view that
            starts inside it).

    Raises:
        NvshmemInvalid: t is not on the symmetric heap, starts inside its
            allocation, or was freed already; the PEs freed different
            tensors (the cpu backend checks); symmem is not initialised.
        NvshmemError: a PE died, SYMMEM_TIMEOUT seconds passed, or the
            backend failed.

    Example:
        >>> t = symmem.tensor(8)
        >>> symmem.free_tensor(t)
    """
    buf, offset = buffer_of(t, "free_tensor", "tensor")
    if offset != 0:
        raise invalid(
            f"free_tensor: the tensor starts {offset} bytes inside its allocation; "
            "pass the tensor that tensor() returned"
        )
    free(buf)


def tensor_get_buffer(t):
    """The Buffer under a symmetric tensor, with its size and dtype.

    Args:
        t: a tensor on the symmetric heap (or a view of one).

    Returns:
        (Buffer, nbytes, dtype name): the whole allocation holding t, t's
        own size in bytes, and its dtype's name ("float32").

    Raises:
        ModuleNotFoundError: torch is not installed.
        NvshmemInvalid: t is not a torch tensor, not on the symmetric heap,
            or was freed; symmem is not initialised.

    Example:
        >>> t = symmem.tensor(4)
        >>> buf, nbytes, dtype = symmem.tensor_get_buffer(t)
        >>> buf.size, nbytes, dtype
        (16, 16, 'float32')
        >>> symmem.free_tensor(t)
    """
    torch = _torch("tensor_get_buffer")
    if not isinstance(t, torch.Tensor):
        raise invalid(
            f"tensor_get_buffer: tensor of type {type(t).__name__} is not a torch "
            "tensor (array_get_buffer takes arrays)"
        )
    buf, _ = buffer_of(t, "tensor_get_buffer", "tensor")
    return buf, t.numel() * t.element_size(), str(t.dtype).replace("torch.", "")


def get_peer_tensor(t, peer_pe):
    """A tensor over PE peer_pe's copy of t: its stores land in that memory.

    The same shape, dtype and layout as t. On the cpu backend every PE's
    copy is mapped; on the gpu backend, those of PEs in this GPU's NVLink
    (P2P) domain.

    Args:
        t: a tensor on the symmetric heap (or a view of one).
        peer_pe: the PE whose copy to reach, in [0, n_pes()).

    Returns:
        A torch tensor.

    Raises:
        ModuleNotFoundError: torch is not installed.
        NvshmemInvalid: t is not on the symmetric heap, or was freed;
            peer_pe is outside [0, n_pes()); symmem is not initialised.
        NotImplementedError: PE peer_pe's copy cannot be reached with loads
            and stores from this PE (gpu: outside the NVLink domain).

    Example:
        >>> t = symmem.tensor(2)
        >>> t.zero_()
        tensor([0., 0.])
        >>> symmem.barrier_all()
        >>> nxt = symmem.get_peer_tensor(t, (symmem.my_pe() + 1) % symmem.n_pes())
        >>> nxt[1] = 5.0  # a plain store into the next PE's t
        >>> symmem.barrier_all()
        >>> t.tolist()
        [0.0, 5.0]
        >>> del nxt
        >>> symmem.free_tensor(t)
    """
    torch = _torch("get_peer_tensor")
    whole, offset = buffer_of(t, "get_peer_tensor", "tensor")
    peer = _symmem.peer_buffer(whole, peer_pe, "get_peer_tensor", "peer_pe")
    nbytes = t.numel() * t.element_size()
    if "device_memory" in _symmem.capabilities():
        raw = torch.from_dlpack(peer)[offset : offset + nbytes]
    else:
        raw = torch.frombuffer(peer, dtype=torch.uint8, count=nbytes, offset=offset)
    typed = _typed(raw, t.dtype, peer)
    return _shaped(typed, tuple(t.shape), "F" if _column_major(t) else "C")


# The names NVSHMEM4Py's interop module uses.
free_array = free_tensor
__all__ = ["empty", "tensor", "bytetensor", "free_tensor", "tensor_get_buffer", "get_peer_tensor"]
