"""The functions Triton kernels call on typed pointers that reach an engine
only through _api.py's: put, get and their nbi forms count elements of
dest's type (over _api's byte copies), and NVSHMEM4Py's atomics by name
(over _api._atomic). None of them reads ENGINE itself, so they need not be
in _api.py, where configure() sets it: Triton takes the globals of every
function a kernel calls into its cache key, ENGINE among them through the
functions here call. The package imports them from here (_api.py does not:
this module imports it); their docstrings come from _docs.py, as the others'."""

import triton

from ._api import (
    _atomic,
    _bytes,
    _same_type,
    getmem_block,
    getmem_nbi_block,
    putmem_block,
    putmem_nbi_block,
)
from ._docs import documented

# ---- put and get, in elements of typed pointers ----


@triton.jit
@documented
def put(dest, source, nelems, pe):
    _same_type(dest, source, "put")
    putmem_block(dest, source, _bytes(dest, nelems), pe)


@triton.jit
@documented
def put_nbi(dest, source, nelems, pe):
    _same_type(dest, source, "put_nbi")
    putmem_nbi_block(dest, source, _bytes(dest, nelems), pe)


@triton.jit
@documented
def get(dest, source, nelems, pe):
    _same_type(dest, source, "get")
    getmem_block(dest, source, _bytes(dest, nelems), pe)


@triton.jit
@documented
def get_nbi(dest, source, nelems, pe):
    _same_type(dest, source, "get_nbi")
    getmem_nbi_block(dest, source, _bytes(dest, nelems), pe)


# ---- atomics (NVSHMEM4Py's names), on the element dest points at on PE pe ----


@triton.jit
@documented
def atomic_fetch(dest, pe):
    return _atomic(dest, 0, 0, pe, "fetch")


@triton.jit
@documented
def atomic_set(dest, value, pe):
    _atomic(dest, value, 0, pe, "set")


@triton.jit
@documented
def atomic_swap(dest, value, pe):
    return _atomic(dest, value, 0, pe, "swap")


@triton.jit
@documented
def atomic_compare_swap(dest, cond, value, pe):
    return _atomic(dest, value, cond, pe, "compare_swap")


@triton.jit
@documented
def atomic_add(dest, value, pe):
    _atomic(dest, value, 0, pe, "add")


@triton.jit
@documented
def atomic_fetch_add(dest, value, pe):
    return _atomic(dest, value, 0, pe, "fetch_add")


@triton.jit
@documented
def atomic_inc(dest, pe):
    _atomic(dest, 0, 0, pe, "inc")


@triton.jit
@documented
def atomic_fetch_inc(dest, pe):
    return _atomic(dest, 0, 0, pe, "fetch_inc")


@triton.jit
@documented
def atomic_and(dest, value, pe):
    _atomic(dest, value, 0, pe, "and")


@triton.jit
@documented
def atomic_fetch_and(dest, value, pe):
    return _atomic(dest, value, 0, pe, "fetch_and")


@triton.jit
@documented
def atomic_or(dest, value, pe):
    _atomic(dest, value, 0, pe, "or")


@triton.jit
@documented
def atomic_fetch_or(dest, value, pe):
    return _atomic(dest, value, 0, pe, "fetch_or")


@triton.jit
@documented
def atomic_xor(dest, value, pe):
    _atomic(dest, value, 0, pe, "xor")


@triton.jit
@documented
def atomic_fetch_xor(dest, value, pe):
    return _atomic(dest, value, 0, pe, "fetch_xor")
