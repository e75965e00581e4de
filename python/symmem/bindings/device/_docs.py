"""The docstrings of symmem.bindings.device's functions, made from the table
(_table.py) as the functions are: a summary by family, what a scope, an
_nbi, a qp_ or a generic form adds, Args for every parameter, Returns,
Raises and an Example (Google style, as test_docs.py checks)."""

import re

from . import _types as TY

# the family without scope, _nbi, qp_ and type -> its summary ({T}: the element)
_SUMMARIES = {
    "p": "Stores value, one {T} element, into dest on PE pe.",
    "g": "Loads one {T} element from source on PE pe.",
    "put": "Copies nelems {T} elements from source, on this PE, into dest on PE pe.",
    "get": "Copies nelems {T} elements from source on PE pe into dest, on this PE.",
    "put_signal": "Copies nelems {T} elements from source into dest on PE pe, then updates the "
    "signal at sig_addr on PE pe (sig_op SIGNAL_SET or SIGNAL_ADD, with signal): a PE that "
    "sees the signal sees the data.",
    "iput": "Copies nelems {T} elements to PE pe: source's every sst-th element into dest's "
    "every dst-th.",
    "iget": "Copies nelems {T} elements from PE pe: source's every sst-th element into dest's "
    "every dst-th.",
    "test": "Whether ivar, on this PE, compares true with cmp_value (cmp a ComparisonType) now: "
    "1 or 0, without waiting.",
    "wait_until": "Waits until ivar, on this PE, compares true with cmp_value (cmp a "
    "ComparisonType).",
    "wait_until_all": "Waits until every one of ivars[0:nelems] whose status is 0 (status may be "
    "0: all) compares true.",
    "wait_until_any": "Waits until one of ivars[0:nelems] whose status is 0 compares true; "
    "returns its index (SIZE_MAX where status leaves none).",
    "wait_until_some": "Waits until at least one of ivars[0:nelems] whose status is 0 compares "
    "true; returns how many do, their indices in indices.",
    "test_all": "Whether every one of ivars[0:nelems] whose status is 0 compares true now: 1 or 0.",
    "test_any": "The index of one of ivars[0:nelems] whose status is 0 that compares true now, "
    "or SIZE_MAX.",
    "test_some": "How many of ivars[0:nelems] whose status is 0 compare true now, their indices "
    "in indices.",
    "signal_fetch": "The value of the signal at sig_addr, on this PE.",
    "signal_wait_until": "Waits until the signal at sig_addr, on this PE, compares true with "
    "cmp_value; returns its value.",
    "signal_op": "Updates the signal at sig_addr on PE pe with signal (sig_op SIGNAL_SET or "
    "SIGNAL_ADD), after this thread's earlier stores.",
    "signal_counted_reset": "Sets the counted signal at signal_addr, on this PE, to 0.",
    "atomic_fetch": "Atomically reads dest's {T} element on PE pe.",
    "atomic_set": "Atomically sets dest's {T} element on PE pe to value.",
    "atomic_swap": "Atomically swaps value into dest on PE pe; returns the old value.",
    "atomic_compare_swap": "Atomically stores value into dest on PE pe where it holds cond; "
    "returns the old value.",
    "atomic_inc": "Atomically adds 1 to dest on PE pe.",
    "atomic_fetch_inc": "Atomically adds 1 to dest on PE pe; returns the old value.",
    "atomic_add": "Atomically adds value to dest on PE pe.",
    "atomic_fetch_add": "Atomically adds value to dest on PE pe; returns the old value.",
    "atomic_and": "Atomically ands value into dest on PE pe.",
    "atomic_fetch_and": "Atomically ands value into dest on PE pe; returns the old value.",
    "atomic_or": "Atomically ors value into dest on PE pe.",
    "atomic_fetch_or": "Atomically ors value into dest on PE pe; returns the old value.",
    "atomic_xor": "Atomically xors value into dest on PE pe.",
    "atomic_fetch_xor": "Atomically xors value into dest on PE pe; returns the old value.",
    "atomicAdd_system": "CUDA's atomicAdd_system of a half at address (this process's memory); "
    "returns the old value.",
    "quiet": "Completes this thread's earlier puts, p's, signals and atomics on every PE.",
    "fence": "Orders this thread's earlier puts before its later ones, to every PE.",
    "flush": "Completes this thread's earlier non-blocking puts locally (their sources may be "
    "reused); symmem's quiet, which also completes them remotely.",
    "qp_quiet": "NVSHMEM's quiet of some queue pairs: symmem has none and runs quiet.",
    "qp_fence": "NVSHMEM's fence of some queue pairs: symmem has none and runs fence.",
    "barrier": "Completes this PE's earlier puts, then waits until every member of team has "
    "arrived. Returns 0.",
    "team_sync": "Waits until every member of team has arrived (no quiet). Returns 0.",
    "barrier_all": "Completes this PE's earlier puts, then waits until every PE has arrived.",
    "sync_all": "Waits until every PE has arrived (no quiet).",
    "barrier_warpgroup": "NVSHMEM's barrier over a warpgroup's threads.",
    "alltoall": "Sends nelems {T} elements to each member of team: block i of source goes to "
    "member i's dest, at this PE's place. Returns 0.",
    "fcollect": "Gathers nelems {T} elements from each member of team into every member's dest, "
    "in member order. Returns 0.",
    "broadcast": "Copies nelems {T} elements from member PE_root's source into every member's "
    "dest. Returns 0.",
    "reduce": "Combines nreduce {T} elements of every member's source with {op} into every "
    "member's dest. Returns 0.",
    "reducescatter": "Combines every member's source with {op}; member i gets elements "
    "[i * nreduce, (i + 1) * nreduce) in dest. Returns 0.",
    "maxloc_reduce": "NVSHMEM's maxloc reduction of double2 (value, index) pairs.",
    "my_pe": "This PE's number.",
    "n_pes": "How many PEs the job has.",
    "team_my_pe": "This PE's number in team, -1 where it is not a member.",
    "team_n_pes": "How many members team has, -1 where team is no team of this PE.",
    "team_translate_pe": "src_team's PE src_pe's number in dest_team, -1 where it has none.",
    "info_get_name": "Writes symmem's name (symmem.get_name()) at name, NUL-ended.",
    "info_get_version": "Writes the OpenSHMEM version symmem implements at major and minor.",
    "vendor_get_version_info": "Writes symmem's version at major, minor and patch.",
    "ask_smem": "How many bytes of shared memory NVSHMEM's staging wants: symmem stages nothing "
    "and answers 16, as symmem.ask_smem does.",
    "give_smem": "Gives NVSHMEM shared memory to stage through: symmem stages nothing, so it "
    "does nothing.",
    "release_smem": "Takes back the shared memory give_smem gave: does nothing.",
    "region_is_active": "Writes 1 at active where an RMA region with hints is active: 0, symmem "
    "starts none. Returns 0.",
    "region_stop": "Ends NVSHMEM's RMA region handle.",
    "ptr": "Where PE pe's copy of the symmetric ptr is mapped here, for plain loads and stores; "
    "0 where it is not mapped.",
    "mc_ptr": "NVSHMEM's NVLink multicast address of ptr for team.",
}
_ARGS = {
    "dest": "where the data goes: a pointer, an array (its first element) or an address.",
    "source": "where the data comes from: a pointer, an array (its first element) or an address.",
    "nelems": "how many elements.",
    "nreduce": "how many elements (reducescatter: per member).",
    "pe": "the PE (an int).",
    "value": "the value, converted to the element type.",
    "cond": "the value dest must hold for the swap.",
    "val": "the value to add.",
    "sig_addr": "the signal: a uint64 pointer, array or address (symmetric).",
    "signal_addr": "the signal: a uint64 pointer, array or address (symmetric).",
    "signal": "the signal's operand (uint64).",
    "sig_op": "SIGNAL_SET or SIGNAL_ADD (a SignalOp member or its int).",
    "cmp": "a ComparisonType (CMP_EQ, CMP_NE, CMP_GT, CMP_LE, CMP_LT, CMP_GE) or its int.",
    "cmp_value": "the value to compare with.",
    "cmp_values": "the values to compare with, one an element of ivars.",
    "ivar": "the variable (symmetric, on this PE).",
    "ivars": "the variables (symmetric, on this PE).",
    "status": "nelems int32s, nonzero to leave a variable out; or 0 (none left out).",
    "indices": "nelems uint64s, where the indices of those that compare true go.",
    "team": "a team handle (Teams.TEAM_WORLD is 0).",
    "PE_root": "the member whose source is copied.",
    "dst": "dest's stride, in elements.",
    "sst": "source's stride, in elements.",
    "qp_index": "NVSHMEM's queue pair (symmem has none: any int).",
    "qp_handle": "NVSHMEM's queue pairs (symmem has none: any pointer).",
    "num_qps": "how many queue pairs.",
    "is_nbi": "whether NVSHMEM may return before the copy is done (symmem's copies are the same "
    "either way).",
    "hints": "the region's hints.",
    "active": "where 0 or 1 is written (an int32 pointer or array).",
    "handle": "the region.",
    "major": "where the major version is written (an int32 pointer or array).",
    "minor": "where the minor version is written (an int32 pointer or array).",
    "patch": "where the patch version is written (an int32 pointer or array).",
    "name": "where the name is written (at least 256 bytes).",
    "amount": "an nvshmemx_smem_amount_t (SmemAmount) member or its int.",
    "smem": "the shared memory.",
    "size": "its bytes.",
    "ptr": "a symmetric pointer, array or address.",
    "address": "the half to add to.",
    "src_team": "the team src_pe is a number of.",
    "src_pe": "the PE, in src_team.",
    "dest_team": "the team to give its number in.",
}
_DSL = {
    "numba": ("@numba.cuda.jit", "numba", "TypingError"),
    "numba_cuda_mlir": ("numba-cuda-mlir @cuda.jit", "numba_cuda_mlir", "TypingError"),
    "cute": ("@cute.kernel", "cute", "TypeError"),
}


def _family_parts(call):
    """(base family, scope, nbi, qp) of a call's family name."""
    family = call.family.replace("nvshmemi_", "")
    qp = family.startswith("qp_")
    family = family[3:] if qp else family
    scope = next((s for s in ("_warp", "_block") if family.endswith(s)), "")
    family = family[: len(family) - len(scope)] if scope else family
    nbi = family.endswith("_nbi")
    family = family[:-4] if nbi else family
    return family, scope, nbi, qp


def _summary(call, base):
    op = None
    match = re.match(r"(\w+?)_(reduce|reducescatter)$", base)
    if match and match.group(1) != "maxloc":
        op, base = match.group(1), match.group(2)
    sized = re.match(r"(put|get|iput|iget)(mem|\d+)(_signal)?$", base)
    if sized:
        base = sized.group(1) + (sized.group(3) or "")
    if base.endswith("mem") and base[:-3] in _SUMMARIES:
        base = base[:-3]
    if base.endswith("_vector"):
        base = base[: -len("_vector")]
    text = _SUMMARIES[base]
    elem = call.dtype if call.dtype and call.dtype != "T" else "T"
    if sized and sized.group(2) != "mem":
        elem = f"{sized.group(2)}-bit"
    if "W" in call.constants and call.constants["W"] == 1 and not sized:
        elem = "byte"
    if sized and sized.group(2) == "mem":
        text = text.replace("{T} elements", "bytes").replace("nelems {T}", "nelems")
    return text.format(T=elem, op=op).replace("byte elements", "bytes")


def build(module, call):
    """The docstring of call in module ("numba", "numba_cuda_mlir", "cute")."""
    kernel, short, typing = _DSL[module]
    base, scope, nbi, qp = _family_parts(call)
    lines = [_summary(call, base), ""]
    notes = []
    if scope in ("_warp", "_block"):
        who = scope[1:]
        notes.append(f"Every thread of the {who} calls it, with the same arguments.")
    if nbi:
        notes.append(
            "Non-blocking in NVSHMEM; symmem's copies are stores through the peer's mapping, "
            "complete at quiet, a barrier or a signal, as the blocking form's are."
        )
    if qp and base not in ("quiet", "fence"):
        notes.append("qp_index picks NVSHMEM's queue pair; symmem has none and makes the call.")
    if call.family.endswith("_vector"):
        notes.append("cmp_values holds a value for each variable.")
    if call.generic:
        types = ", ".join(call.dtypes())
        notes.append(
            "symmem's generic form (NVSHMEM's C11 name): the element type comes from the "
            f"pointer or array arguments ({types})."
        )
    notes.append(f"NVSHMEM's {call.symbol}, as NVSHMEM4Py's bindings give it.")
    lines += [" ".join(notes), ""]
    if call.params:
        lines.append("Args:")
        lines += [f"    {p} ({t}): {_ARGS.get(p, 'see the summary.')}" for p, t in call.params]
        lines.append("")
    if call.returns != "void":
        lines += ["Returns:", f"    {call.returns}.", ""]
    lines.append("Raises:")
    refused = call.refusal is not None or call.own_refusal
    if refused:
        why = call.own_refusal or "symmem never enables NVLink multicast"
        engine = " on symmem's engine" if call.own_refusal and module == "cute" else ""
        lines.append(f"    {typing}: always{engine}, when the kernel compiles: {why}.")
    else:
        lines.append(
            f"    {typing}: when the kernel compiles, naming {call.name}: an argument of the "
            "wrong kind or type, or symmem not initialised on the gpu backend."
        )
        lines.append(
            "    NvshmemError: in the kernel, a PE out of range, an address off the symmetric "
            "heap or a PE on another node end the kernel, naming the call (the PE prints it)."
        )
    lines += [
        "",
        "Example:",
        f"    In a {kernel} kernel, with ``import symmem.bindings.device.{short} as nvb``::",
        "",
        f"        nvb.{call.name}({', '.join(p for p, _ in call.params)})",
    ]
    return "\n".join(lines) + "\n"


assert set(TY.ATOMIC) <= set(_SUMMARIES)
