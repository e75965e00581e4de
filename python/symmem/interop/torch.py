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


def _mark(root, buf):
    """root (a tensor that is no view) is over buf: every view of it has it as
    ._base, through which the C module finds buf (_resolver.owner_of) and
    refuses the tensor once buf is freed."""
    setattr(root, TENSOR_BUFFER, buf)
    return root


def _wrap(torch, buf, dtype, count):
    if _symmem.backend_name() == "gpu":
        flat = _mark(torch.from_dlpack(buf), buf).view(dtype)[:count]
    elif count == 0:
        flat = torch.empty(0, dtype=dtype)
    else:
        flat = _mark(torch.frombuffer(buf, dtype=dtype, count=count), buf)
    return flat


def _check_morder(morder, call):
    if morder not in ("C", "F"):
        raise invalid(f"{call}: morder={morder!r} must be 'C' or 'F'")


def _shaped(flat, shape, morder):
    """flat as shape, in C order or (morder "F") column-major: strides 1, d0, d0*d1, ..."""
    if morder == "C":
        return flat.reshape(shape)
    return flat.reshape(shape[::-1]).permute(*reversed(range(len(shape))))


def _dense(t):
    """t, or the view of it in memory order where t is column-major (the
    resolver reads only row-major tensors)."""
    if t.is_contiguous() or t.dim() < 2:
        return t
    flipped = t.permute(*reversed(range(t.dim())))
    return flipped if flipped.is_contiguous() else t


def tensor(shape, dtype=None, release=False, morder="C", except_on_del=True):
    """A torch tensor on the symmetric heap (collective); morder "F" lays it
    out column-major, as NVSHMEM4Py's does."""
    torch = _torch("tensor")
    shape = _shape_tuple(shape, "tensor")
    dtype = _torch_dtype(torch, dtype, "tensor")
    _check_morder(morder, "tensor")
    count = math.prod(shape)
    itemsize = torch.empty(0, dtype=dtype).element_size()
    buf = _allocate(count * itemsize, release, "tensor")
    return _shaped(_wrap(torch, buf, dtype, count), shape, morder)


def bytetensor(shape, dtype=None, release=False, morder="C", except_on_del=True):
    """A uint8 torch tensor big enough for shape x dtype (collective); flat,
    so morder (checked) changes nothing."""
    torch = _torch("bytetensor")
    shape = _shape_tuple(shape, "bytetensor")
    dtype = _torch_dtype(torch, dtype, "bytetensor")
    _check_morder(morder, "bytetensor")
    nbytes = math.prod(shape) * torch.empty(0, dtype=dtype).element_size()
    buf = _allocate(nbytes, release, "bytetensor")
    return _wrap(torch, buf, torch.uint8, nbytes)


def empty(shape, dtype=None, release=False, morder="C"):
    """An uninitialised torch tensor on the symmetric heap (collective)."""
    return tensor(shape, dtype=dtype, release=release, morder=morder)


def free_tensor(t):
    """Free a tensor made by tensor() or bytetensor() (collective)."""
    buf, offset = buffer_of(_dense(t), "free_tensor", "tensor")
    if offset != 0:
        raise invalid(f"free_tensor: the tensor starts {offset} bytes inside its allocation; "
                      "pass the tensor that tensor() returned")
    free(buf)


def tensor_get_buffer(t):
    """(Buffer, nbytes, dtype name) of a tensor on the symmetric heap."""
    buf, _ = buffer_of(_dense(t), "tensor_get_buffer", "tensor")
    return buf, t.numel() * t.element_size(), str(t.dtype).replace("torch.", "")


def get_peer_tensor(t, peer_pe):
    """A tensor over PE peer_pe's copy of t: stores land in its memory."""
    torch = _torch("get_peer_tensor")
    whole, offset = buffer_of(_dense(t), "get_peer_tensor", "tensor")
    peer = _symmem.peer_buffer(whole, peer_pe, "get_peer_tensor", "peer_pe")
    nbytes = t.numel() * t.element_size()
    if _symmem.backend_name() == "gpu":
        raw = _mark(torch.from_dlpack(peer), peer)[offset:offset + nbytes]
    else:
        raw = _mark(torch.frombuffer(peer, dtype=torch.uint8, count=nbytes, offset=offset), peer)
    column_major = _dense(t) is not t
    return _shaped(raw.view(t.dtype), tuple(t.shape), "F" if column_major else "C")


# The names NVSHMEM4Py's interop module uses.
free_array = free_tensor
__all__ = ["empty", "tensor", "bytetensor", "free_tensor", "tensor_get_buffer", "get_peer_tensor"]
