"""symmem.device.cute's tensors over other PEs' memory and NVSHMEM4Py's
shared-memory staging names:

- get_peer_tensor(tensor, pe): the tensor over PE pe's copy (the same
  layout), for plain loads and stores through the peer mapping.
- get_multicast_tensor(team, tensor): symmem never enables NVLink multicast,
  so tracing a kernel that calls it fails, naming why (symmem._multicast).
- ask_smem, give_smem, release_smem, SmemAmount: NVSHMEM stages a block's
  copies through shared memory the kernel gives it; symmem's calls stage
  nothing, so give and release do nothing and ask_smem answers the host
  call's small positive size (programs carve their own data after it)."""

import cutlass
import cutlass.cute as cute

from symmem._capabilities import SMEM_BYTES
from symmem._enums import SmemAmount  # noqa: F401 (exported)
from symmem._multicast import multicast_unavailable_reason
from symmem.device._dsl_docs import build

from . import _engine as E
from . import _externs as X
from . import _values as V


def get_peer_tensor(tensor, pe):
    V.dtype_name("get_peer_tensor", "tensor", tensor)
    t = tensor.element_type
    nbytes = V.u64(V.count(tensor)) * V.width(tensor)
    if E.configure("get_peer_tensor") == "symmem":
        at = cutlass.Int64(
            X.own("ptr")(E.state("get_peer_tensor"), V.address(tensor), nbytes, V.i32(pe))
        )
    else:  # nvshmem_ptr returns a pointer, which make_ptr takes as it is
        at = X.nvshmem("nvshmem_ptr", X.POINTER, ["ptr", cutlass.Int32])(
            V.address(tensor), V.i32(pe)
        )
    ptr = cute.make_ptr(t, at, cute.AddressSpace.gmem, assumed_align=V.width(tensor))
    return cute.make_tensor(ptr, tensor.layout)


def get_multicast_tensor(team, tensor):
    raise TypeError(multicast_unavailable_reason("get_multicast_tensor"))


def ask_smem(amount):
    return cutlass.Int32(SMEM_BYTES)


def give_smem(smem):
    return None


def release_smem():
    return None


get_peer_tensor.__doc__ = build(
    "cute", "get_peer_array", ["tensor", "pe"], returns="a cute.Tensor over PE pe's copy."
).replace("get_peer_array", "get_peer_tensor")
get_multicast_tensor.__doc__ = build(
    "cute", "get_multicast_array", ["team", "tensor"], returns="never: see Raises."
).replace("get_multicast_array", "get_multicast_tensor")
ask_smem.__doc__ = build(
    "cute", "ask_smem", ["amount"], returns=f"int32: {SMEM_BYTES} (symmem stages nothing)."
)
give_smem.__doc__ = build("cute", "give_smem", ["smem"])
release_smem.__doc__ = build("cute", "release_smem", [])
