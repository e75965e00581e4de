"""How symmem's device library serves each raw device function: the
parameter lists of NVSHMEM's families and each call's body (its recipe), in
a few names every DSL of symmem.bindings.device binds to its own helpers:

    ST            the device state block's address (symmem_dev_* take it first)
    A(x)          the address of x: a pointer, an array's first element, or an int
    U64 U32 I64 I32 I8    integer conversions
    BITS(x)       x as the call's element type, its bits in a 64-bit word
    FROM(w)       the element whose bits are w's low ones (w 32 or 64 bits)
    STORE(p, i, v)    v into element i of the pointer or array p
    PTR(a, like)  the address a as a pointer of like's type
    W CODE OP     the element's bytes, its dtype code, the reduce or atomic op
    dev_<name>    the library's symmem_dev_<name> (device/_library_calls.py)
    NAME NAME_LEN     info_get_name's bytes, read when a kernel compiles

A recipe is Python that numba and numba-cuda-mlir compile and CuTe runs
while it traces; every number in it comes from the vocabulary
(_library_calls.py, _symmem), none is written here."""

from symmem import _capabilities, _symmem
from symmem._multicast import multicast_unavailable_reason
from symmem.device import _library_calls as L

FLOATS = ("float16", "bfloat16", "float32", "float64")
PE = ("pe", "int32")

# ---- parameter lists: NVSHMEM's names and types ("T": the element) ----

P = [("dest", "*T"), ("value", "T"), PE]
G = [("source", "*T"), PE]
COPY = [("dest", "*T"), ("source", "*T"), ("nelems", "uint64"), PE]
COPY_MEM = [("dest", "*void"), ("source", "*void"), ("nelems", "uint64"), PE]
_SIGNAL = [("sig_addr", "*uint64"), ("signal", "uint64"), ("sig_op", "int32"), PE]
PUT_SIGNAL = COPY[:3] + _SIGNAL
PUT_SIGNAL_MEM = COPY_MEM[:3] + _SIGNAL
STRIDED = COPY[:2] + [("dst", "int64"), ("sst", "int64")] + COPY[2:]
STRIDED_MEM = COPY_MEM[:2] + [("dst", "int64"), ("sst", "int64")] + COPY_MEM[2:]
TEST = [("ivar", "*T"), ("cmp", "int32"), ("cmp_value", "T")]
SIGNAL_WAIT = [("sig_addr", "*uint64"), ("cmp", "int32"), ("cmp_value", "uint64")]
SIGNAL_OP = _SIGNAL
TRANSLATE = [("src_team", "int32"), ("src_pe", "int32"), ("dest_team", "int32")]


def ints(*names):
    """Output parameters, each a pointer to one int32."""
    return [(name, "*int32") for name in names]


def wait_set_params(mode, vector):
    """<T>_wait_until_<mode>[_vector] and <T>_test_<mode>[_vector]."""
    params = [("ivars", "*T"), ("nelems", "uint64")]
    params += [("indices", "*uint64")] if mode == "some" else []
    params += [("status", "*int32"), ("cmp", "int32")]
    return params + [("cmp_values", "*T") if vector else ("cmp_value", "T")]


def atomic_params(name, operands):
    """An atomic's: the target, its operands (_symmem.ATOMIC_OPS), the PE."""
    target = ("source", "*T") if name == "atomic_fetch" else ("dest", "*T")
    return [target] + [(operand, "T") for operand in operands] + [PE]


def collective_params(kind, pointer="*T"):
    """alltoall, fcollect, broadcast, reduce and reducescatter, team first."""
    count = "nreduce" if kind.startswith("reduce") else "nelems"
    params = [("team", "int32"), ("dest", pointer), ("source", pointer), (count, "uint64")]
    return params + ([("PE_root", "int32")] if kind == "broadcast" else [])


# ---- recipes ----

p = "dev_p(ST, A(dest), BITS(value), I32(W), I32(pe))"
g = "return FROM(dev_g(ST, A(source), I32(W), I32(pe)))"


def copy(fn):
    """put, get and their forms: nelems elements of W bytes."""
    return f"dev_{fn}(ST, A(dest), A(source), U64(nelems) * U64(W), I32(pe))"


def put_signal(scope):
    return (
        f"dev_put_signal{scope}(ST, A(dest), A(source), U64(nelems) * U64(W), A(sig_addr), "
        "U64(signal), I32(sig_op), I32(pe))"
    )


def strided(fn):
    """iput and iget: strides dst and sst in elements, as NVSHMEM's."""
    return f"dev_{fn}(ST, A(dest), A(source), I64(dst), I64(sst), U64(nelems), I32(W), I32(pe))"


def test(kind):
    call = "dev_{}(ST, A(ivar), I32(CODE), I32(cmp), I64(cmp_value))"
    return "return " + call.format("test") if kind == "test" else call.format("wait_until")


def wait_set(kind, mode, vector):
    """One call of symmem_dev_wait_set, its how from device_layout.h."""
    how = L.WAIT_SET[mode] | (L.WAIT_SET["test"] if kind == "test" else 0)
    value, values = ("I64(0)", "A(cmp_values)") if vector else ("I64(cmp_value)", "U64(0)")
    indices = "A(indices)" if mode == "some" else "U64(0)"
    call = (
        f"dev_wait_set(ST, A(ivars), U64(nelems), A(status), I32(CODE), I32(cmp), {value}, "
        f"{values}, {indices}, I32({how}))"
    )
    if mode == "all":
        return f"return I32({call})" if kind == "test" else call
    return "return " + call


_FETCH, _SET = L.ATOMIC_OPS["atomic_fetch"], L.ATOMIC_OPS["atomic_set"]
SIGNAL_FETCH = f"return dev_atomic64(ST, A(sig_addr), I32({_FETCH}), U64(0), U64(0), dev_my_pe(ST))"
SIGNAL_WAIT_UNTIL = "return dev_signal_wait(ST, A(sig_addr), I32(cmp), U64(cmp_value))"
SIGNAL_OP_BODY = "dev_signal_op(ST, A(sig_addr), U64(signal), I32(sig_op), I32(pe))"
# a counted signal is a plain word that the reset sets to 0 (NVSHMEM's)
SIGNAL_RESET = f"dev_atomic64(ST, A(signal_addr), I32({_SET}), U64(0), U64(0), dev_my_pe(ST))"


def atomic_op(name, dtype):
    """The library's op number of atomic name on dtype (floats add apart)."""
    if name in ("atomic_add", "atomic_fetch_add") and dtype in FLOATS:
        return L.FLOAT_ADD
    return L.ATOMIC_OPS[name]


def atomic(name):
    """The recipe of atomic name for a dtype: one symmem_dev_atomic32 or
    atomic64 (the value and cond as words), or the half add."""

    def recipe(dtype):
        if dtype == "float16":  # NVSHMEM4Py has half only among the adds
            call = "dev_atomic_add_f16(ST, A(dest), U32(BITS(value)), I32(pe))"
        else:
            word = "U64" if _symmem.DTYPES[dtype] == 8 else "U32"
            value, cond = "0", "0"
            if name in ("atomic_inc", "atomic_fetch_inc"):
                value = "1"
            elif name != "atomic_fetch":
                value = "BITS(value)"
            if name == "atomic_compare_swap":
                cond = "BITS(cond)"
            target = "source" if name == "atomic_fetch" else "dest"
            call = (
                f"dev_atomic{_symmem.DTYPES[dtype] * 8}(ST, A({target}), I32(OP), "
                f"{word}({value}), {word}({cond}), I32(pe))"
            )
        return f"return FROM({call})" if name in L.ATOMICS_RETURNING else call

    return recipe


ATOMIC_ADD_SYSTEM = "return FROM(dev_atomic_add_f16(ST, A(address), U32(BITS(val)), I32(-1)))"


def push(fn):
    """alltoall, fcollect (nelems per member) and broadcast, of W-byte elements."""
    root = "I32(PE_root)" if fn.startswith("broadcast") else "I32(0)"
    return f"return dev_{fn}(ST, I32(team), A(dest), A(source), U64(nelems) * U64(W), {root})"


def reduce(fn):
    """reduce (nreduce elements) and reducescatter (nreduce per member)."""
    return f"return dev_{fn}(ST, I32(team), A(dest), A(source), U64(nreduce), I32(CODE), I32(OP))"


TRANSLATE_BODY = "return dev_team_translate_pe(ST, I32(src_team), I32(src_pe), I32(dest_team))"
INFO_NAME = "for i in range(NAME_LEN):\n    STORE(name, i, I8(NAME[i]))"
ASK_SMEM = f"return I32({_capabilities.SMEM_BYTES})"  # every amount, as symmem.ask_smem
REGION_IS_ACTIVE = "STORE(active, 0, I32(0))\nreturn I32(0)"  # symmem starts no region
PTR = "return PTR(dev_peer_ptr(ST, A(ptr), I32(pe)), ptr)"


def _numbers(version):
    return [int(part) for part in str(version).split(".")[:3] if part.isdigit()] + [0, 0, 0]


def _stores(names, version):
    numbers = _numbers(version)
    return "\n".join(f"STORE({name}, 0, I32({numbers[i]}))" for i, name in enumerate(names))


def info_version():
    """The OpenSHMEM version symmem implements, as the host binding writes it."""
    return _stores(("major", "minor"), _symmem.OPENSHMEM_SPEC_VERSION)


def vendor():
    """symmem's version, as the host binding writes it."""
    return _stores(("major", "minor", "patch"), _symmem.VERSION)


def compile_constants():
    """NAME and NAME_LEN: symmem.get_name() as info_get_name writes it (NUL
    ended, at most 256 bytes), read when a kernel compiles (after init, so
    the gpu backend's NVSHMEM version is in it, as on the host)."""
    from symmem import _lifecycle

    name = tuple(_lifecycle.get_name().encode()[:255] + b"\0")
    return {"NAME": name, "NAME_LEN": len(name)}


def multicast_refusal(call):
    """Why a multicast call cannot run: symmem never enables NVLink multicast."""
    return multicast_unavailable_reason(call)
