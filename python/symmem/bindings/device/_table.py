"""symmem.bindings.device's one table: every raw device function of
NVSHMEM4Py 0.4.1's nvshmem.bindings.device.numba, .numba_cuda_mlir and
.cute, made by loops over NVSHMEM's families and types (_types.py) and
symmem's vocabulary (scopes, reduce ops, atomic ops: _symmem's tables and
symmem/device/_library_calls.py). Each row (a Call) has NVSHMEM's name,
parameters and return, the modules that have it, NVSHMEM's C symbol, and
how symmem's device library serves it (a recipe) or why it cannot (a
refusal). The DSL modules (numba.py, numba_cuda_mlir.py, cute.py) loop over
CALLS; none lists a name of its own.

A recipe is the call's body in a few names that every DSL binds to its own
helpers (_recipes.py says what each is). Besides NVSHMEM4Py's names, each
typed family has a generic form without the type (put_signal_nbi,
atomic_add, sum_reduce, ...: NVSHMEM's C11 generic names), whose type comes
from its pointer or array arguments; arrays are taken wherever a pointer
is, and an int is taken as an address."""

from dataclasses import dataclass, field

from symmem import _symmem
from symmem.device import _library_calls as L

from . import _recipes as R
from . import _types as TY

ALL = frozenset({"numba", "numba_cuda_mlir", "cute"})
SCOPES = L.SCOPES  # "", "_warp", "_block"
# NVSHMEM's extensions (nvshmemx_*) among the names that are not scoped or qp_
_EXTENSIONS = {
    "ask_smem",
    "give_smem",
    "release_smem",
    "vendor_get_version_info",
    "region_is_active",
    "region_stop_block",
    "signal_op",
    "signal_counted_reset",
    "mc_ptr",
    "flush",
}


@dataclass(frozen=True)
class Call:
    """One raw device function. params are (name, type) pairs in the
    notation of tests/python/data/nvshmem4py_0.4.1_device.txt ("*int32" a
    pointer to int32, "*void" to anything; "T" and "*T" the dtype of a
    generic form, found from its arguments)."""

    name: str
    params: tuple
    returns: str
    recipe: object  # dtype -> the body (a str), or None where refused
    family: str  # the generic name (put_signal_nbi for int_put_signal_nbi)
    dtype: str = None  # symmem's dtype of a typed name; "T" for a generic form
    types: tuple = ()  # a generic form's NVSHMEM type names
    modules: frozenset = ALL
    refusal: object = None  # call -> why no engine serves it (a str)
    own_refusal: str = None  # why symmem's engine cannot (NVSHMEM's may, in CuTe)
    constants: dict = field(default_factory=dict)

    @property
    def generic(self):
        return self.dtype == "T"

    @property
    def symbol(self):
        """NVSHMEM's C function (CuTe's NVSHMEM engine calls it)."""
        name = self.name
        if name == "atomicAdd_system" or name.startswith("nvshmemi_"):
            return name
        float_add = "atomic_" in name and "add" in name and self.dtype in R.FLOATS
        extension = name.startswith("qp_") or name.endswith(("_warp", "_block", "_warpgroup"))
        return ("nvshmemx_" if extension or float_add or name in _EXTENSIONS else "nvshmem_") + name

    def dtypes(self):
        """The symmem dtypes the call takes (one for a typed name)."""
        if self.generic:
            return sorted({TY.NV_TYPES[nv] for nv in self.types})
        return [self.dtype] if self.dtype else []

    def body(self, dtype=None):
        """The recipe for dtype (a generic form's, once its arguments say it)."""
        return self.recipe(dtype or self.dtype)

    def source(self, dtype=None):
        """The recipe as a function, impl, of the call's parameters (Python
        source that each DSL runs with its own names bound)."""
        body = self.body(dtype).replace("\n", "\n    ")
        return f"def impl({', '.join(p for p, _ in self.params)}):\n    {body}\n"

    def compile(self, dtype, names):
        """impl: the recipe for dtype, run with names (a DSL's bindings of
        the recipe's words) and the call's numbers."""
        space = dict(names, **self.numbers(dtype))
        if self.name == "info_get_name":
            space.update(R.compile_constants())
        exec(self.source(dtype), space)  # the table's recipe: nothing of a kernel's
        return space["impl"]

    def numbers(self, dtype=None):
        """The constants the recipe reads: W, CODE, OP."""
        dtype = dtype or self.dtype
        found = dict(self.constants)
        if dtype and dtype != "T":
            found.setdefault("W", _symmem.DTYPES[dtype])
            found.setdefault("CODE", L.DTYPE_CODES[dtype])
        if self.family in L.ATOMIC_OPS:
            found["OP"] = R.atomic_op(self.family, dtype)
        return found

    def why_not(self, engine="symmem"):
        """Why the call cannot run on engine (None where it can)."""
        if self.refusal is not None:
            return self.refusal(self.name)
        if engine == "symmem" and self.own_refusal:
            return f"{self.name}: {self.own_refusal}"
        return None


CALLS = {}


def _add(name, params, returns, recipe, family=None, **kw):
    if isinstance(recipe, str):
        recipe = (lambda text: lambda dtype: text)(recipe)
    call = Call(name, tuple(params), returns, recipe, family or name, **kw)
    assert name not in CALLS, name
    CALLS[name] = call


def _typed(family, types, params, returns, recipe, prefix="", **kw):
    """family for each NVSHMEM type of types (<T>_<family>), and its generic form."""
    for nv in types:
        d = TY.NV_TYPES[nv]
        typed = [(p, t.replace("T", d) if t in ("T", "*T") else t) for p, t in params]
        ret = d if returns == "T" else returns
        _add(f"{prefix}{nv}_{family}", typed, ret, recipe, prefix + family, dtype=d, **kw)
    _add(prefix + family, params, returns, recipe, dtype="T", types=tuple(types), **kw)


def _rma():
    qp = [("qp_index", "int32")]
    for prefix, extra in (("", []), ("qp_", qp)):
        _typed("p", TY.RMA, R.P + extra, "void", R.p, prefix)
        _typed("g", TY.RMA, R.G + extra, "T", R.g, prefix)
        for scope in SCOPES:
            for nbi in ("", "_nbi"):
                for what in ("put", "get"):
                    _typed(
                        f"{what}{nbi}{scope}",
                        TY.RMA,
                        R.COPY + extra,
                        "void",
                        R.copy(what + scope),
                        prefix,
                    )
                _typed(
                    f"put_signal{nbi}{scope}",
                    TY.RMA,
                    R.PUT_SIGNAL + extra,
                    "void",
                    R.put_signal(scope),
                    prefix,
                )
    # putmem moves bytes (W 1), put8 ... put128 elements of W bytes
    widths = [("mem", 1)] + [(str(bits), bits // 8) for bits in TY.SIZED]
    for scope in SCOPES:
        for nbi in ("", "_nbi"):
            for what in ("put", "get"):
                for size, w in widths:
                    _add(
                        f"{what}{size}{nbi}{scope}",
                        R.COPY_MEM,
                        "void",
                        R.copy(what + scope),
                        constants={"W": w},
                    )
            for size, w in widths:
                _add(
                    f"put{size}_signal{nbi}{scope}",
                    R.PUT_SIGNAL_MEM,
                    "void",
                    R.put_signal(scope),
                    constants={"W": w},
                )
        for what in ("iput", "iget"):
            _typed(what + scope, TY.RMA, R.STRIDED, "void", R.strided(what + scope))
            for bits in TY.SIZED:
                _add(
                    f"{what}{bits}{scope}",
                    R.STRIDED_MEM,
                    "void",
                    R.strided(what + scope),
                    constants={"W": bits // 8},
                )
    for scope in ("_warp", "_block"):  # NVSHMEM's internal put_signal with is_nbi, in CuTe
        params = R.PUT_SIGNAL + [("is_nbi", "bool")]
        for nv in TY.RMA:
            d = TY.NV_TYPES[nv]
            typed = [(p, t.replace("T", d)) for p, t in params]
            _add(
                f"nvshmemi_{nv}_put_signal{scope}",
                typed,
                "void",
                R.put_signal(scope),
                "put_signal" + scope,
                dtype=d,
                modules=frozenset({"cute"}),
            )


def _waits():
    for kind in ("test", "wait_until"):
        _typed(kind, TY.WAIT, R.TEST, "int32" if kind == "test" else "void", R.test(kind))
        for mode in ("all", "any", "some"):
            for vector in ("", "_vector"):
                returns = {"all": "int32" if kind == "test" else "void"}.get(mode, "uint64")
                _typed(
                    f"{kind}_{mode}{vector}",
                    TY.WAIT,
                    R.wait_set_params(mode, vector),
                    returns,
                    R.wait_set(kind, mode, vector),
                )
    _add("signal_fetch", [("sig_addr", "*uint64")], "uint64", R.SIGNAL_FETCH)
    _add("signal_wait_until", R.SIGNAL_WAIT, "uint64", R.SIGNAL_WAIT_UNTIL)
    for prefix, extra in (("", []), ("qp_", [("qp_index", "int32")])):
        _add(prefix + "signal_op", R.SIGNAL_OP + extra, "void", R.SIGNAL_OP_BODY)
    _add("signal_counted_reset", [("signal_addr", "*uint64")], "void", R.SIGNAL_RESET)


def _atomics():
    for name, operands in _symmem.ATOMIC_OPS:
        _typed(
            name,
            TY.ATOMIC[name],
            R.atomic_params(name, operands),
            "T" if name in L.ATOMICS_RETURNING else "void",
            R.atomic(name),
        )
    _add(
        "atomicAdd_system",
        [("address", "*float16"), ("val", "float16")],
        "float16",
        R.ATOMIC_ADD_SYSTEM,
        dtype="float16",
    )


def _order():
    _add("quiet", [], "void", "dev_quiet(ST)")
    _add("fence", [], "void", "dev_fence(ST)")
    qp = [("pe", "int32"), ("qp_handle", "*int32"), ("num_qps", "int32")]
    for scope in SCOPES:
        # flush: every put's source is free when it returns here; quiet is stronger
        _add("flush" + scope, [], "void", "dev_quiet(ST)")
        _add("qp_quiet" + scope, qp, "void", "dev_quiet(ST)")
        _add("qp_fence" + scope, qp, "void", "dev_fence(ST)")


def _collectives():
    team = [("team", "int32")]
    for scope in SCOPES:
        for sync, fn in (("barrier", "barrier"), ("team_sync", "sync")):
            _add(sync + scope, team, "int32", f"return dev_{fn}{scope}(ST, I32(team))")
        for name in ("barrier_all", "sync_all"):
            _add(name + scope, [], "void", f"dev_{name}{scope}(ST)")
        for kind in ("alltoall", "fcollect", "broadcast"):
            params = R.collective_params(kind)
            _add(
                f"{kind}mem{scope}",
                [(p, t.replace("T", "void")) for p, t in params],
                "int32",
                R.push(kind + scope),
                constants={"W": 1},
            )
            _typed(kind + scope, TY.RMA, params, "int32", R.push(kind + scope))
        for op in _symmem.REDUCE_OPS:
            types = TY.REDUCE_BITWISE if op in L.BITWISE_OPS else TY.REDUCE_ARITHMETIC
            for kind in ("reduce", "reducescatter"):
                _typed(
                    f"{op}_{kind}{scope}",
                    types,
                    R.collective_params(kind),
                    "int32",
                    R.reduce(kind + scope),
                    constants={"OP": L.REDUCE_OPS[op]},
                )
    _add(
        "barrier_warpgroup",
        team,
        "int32",
        None,
        own_refusal="symmem's device library has no warpgroup scope (its scopes are a "
        "thread, a warp and a block): call barrier_block from every thread of the block",
    )
    _add(
        "double2_maxloc_reduce_block",
        R.collective_params("reduce", "*float64x2"),
        "int32",
        None,
        modules=frozenset({"numba", "numba_cuda_mlir"}),
        own_refusal="symmem's device reductions have no maxloc (of double2 value and "
        "index pairs): sum, min, max, prod, and, or and xor",
    )


def _queries():
    _add("my_pe", [], "int32", "return dev_my_pe(ST)")
    _add("n_pes", [], "int32", "return dev_n_pes(ST)")
    _add("team_my_pe", [("team", "int32")], "int32", "return dev_team_my_pe(ST, I32(team))")
    _add("team_n_pes", [("team", "int32")], "int32", "return dev_team_n_pes(ST, I32(team))")
    _add("team_translate_pe", R.TRANSLATE, "int32", R.TRANSLATE_BODY)
    _add("info_get_name", [("name", "*int8")], "void", R.INFO_NAME)
    _add("info_get_version", R.ints("major", "minor"), "void", R.info_version())
    _add("vendor_get_version_info", R.ints("major", "minor", "patch"), "void", R.vendor())
    _add(
        "ask_smem", [("amount", "enum")], "int32", R.ASK_SMEM, modules=frozenset({"numba", "cute"})
    )
    _add("give_smem", [("smem", "*void"), ("size", "uint64")], "void", "return None")
    _add("release_smem", [], "void", "return None")
    _add(
        "region_is_active", [("hints", "uint32"), ("active", "*int32")], "int32", R.REGION_IS_ACTIVE
    )
    _add(
        "region_stop_block",
        [("handle", "uint64")],
        "int32",
        None,
        modules=frozenset({"numba", "numba_cuda_mlir"}),
        own_refusal="symmem starts no RMA region (NVSHMEM's batching hints; "
        "region_is_active answers 0), so there is none to stop",
    )
    _add(
        "ptr",
        [("ptr", "*void"), ("pe", "int32")],
        "*void",
        R.PTR,
        modules=frozenset({"numba_cuda_mlir", "cute"}),
    )
    _add(
        "mc_ptr", [("team", "int32"), ("ptr", "*void")], "*void", None, refusal=R.multicast_refusal
    )


for _family in (_rma, _waits, _atomics, _order, _collectives, _queries):
    _family()


def for_module(module):
    """The calls module ("numba", "numba_cuda_mlir" or "cute") has, by name."""
    return {name: call for name, call in CALLS.items() if module in call.modules}
