"""NVSHMEM4Py 0.4.1's public names, frozen: every name of nvshmem.core.__all__,
nvshmem.core.utils and the nvshmem.bindings names symmem supports must exist
(in symmem, symmem.core and symmem.bindings), and the new ones behave as
NVSHMEM4Py's do where that needs no PEs (the multi-PE behaviour is in
test_nvshmem4py_teams.py, test_nvshmem4py_bindings.py and
test_nvshmem4py_memory.py)."""

import ctypes
import importlib
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import symmem
import symmem.bindings
import symmem.core

# nvshmem.core.__all__ of NVSHMEM4Py 0.4.1 (its modules' __all__ lists, in order).
CORE_ALL = [
    "buffer",
    "free",
    "get_peer_buffer",
    "get_multicast_buffer",
    "register_external_buffer",
    "unregister_external_buffer",
    "get_unique_id",
    "init",
    "finalize",
    "get_name",
    "get_version",
    "module_init",
    "module_finalize",
    "library_init",
    "library_finalize",
    "UniqueID",
    "DeviceLibLanguage",
    "find_device_bitcode_library",
    "Version",
    "NvshmemInvalid",
    "NvshmemError",
    "NvshmemResource",
    "NvshmemStream",
    "NvshmemStreamsType",
    "MutableEnum",
    "Teams",
    "BufferTypes",
    "NvshmemKernelObject",
    "bytearray",
    "array",
    "free_array",
    "array_get_buffer",
    "get_peer_array",
    "get_multicast_array",
    "register_external_array",
    "unregister_external_array",
    "bytetensor",
    "tensor",
    "free_tensor",
    "tensor_get_buffer",
    "get_peer_tensor",
    "get_multicast_tensor",
    "register_external_tensor",
    "unregister_external_tensor",
    "ComparisonType",
    "SignalOp",
    "InitStatus",
    "ThreadSupport",
    "SmemAmount",
    "ask_smem",
    "query_thread",
    "my_pe",
    "team_my_pe",
    "team_n_pes",
    "n_pes",
    "init_status",
    "reduce",
    "reducescatter",
    "alltoall",
    "fcollect",
    "broadcast",
    "barrier",
    "sync",
    "barrier_all",
    "sync_all",
    "collective_on_buffer",
    "put_signal",
    "put_signal_nbi",
    "signal_op",
    "signal_wait",
    "put",
    "put_nbi",
    "get",
    "get_nbi",
    "quiet",
    "flush",
    "signal_fetch",
    "SignalOp",
    "atomic_fetch",
    "atomic_set",
    "atomic_inc",
    "atomic_fetch_inc",
    "atomic_add",
    "atomic_fetch_add",
    "atomic_and",
    "atomic_fetch_and",
    "atomic_or",
    "atomic_fetch_or",
    "atomic_xor",
    "atomic_fetch_xor",
    "atomic_swap",
    "atomic_compare_swap",
    "team_split_strided",
    "team_split_2d",
    "team_destroy",
    "team_init",
    "team_translate_pe",
    "team_get_config",
    "TeamConfig",
    "TeamUniqueId",
    "get_team_unique_id",
]
# Public in nvshmem.core.nvshmem_types, outside __all__.
CORE_EXTRA = ["NvshmemWarning"]
UTILS = ["get_size", "dtype_nbytes"]

# nvshmem.bindings (= nvshmem.bindings.nvshmem) of NVSHMEM4Py 0.4.1, all of it.
BINDINGS = [
    "Cmp_type",
    "Flags",
    "InitAttr",
    "Init_status",
    "NVSHMEMError",
    "Pe_index",
    "Proxy_status",
    "Qp_handle_index",
    "Region_hint",
    "Signal_op",
    "Smem_amount",
    "Status",
    "TeamConfig",
    "TeamUniqueId",
    "Team_id",
    "Thread_support",
    "Tma_policy",
    "UniqueId",
    "align",
    "barrier",
    "barrier_all",
    "barrier_all_on_stream",
    "barrier_on_stream",
    "buffer_register_symmetric",
    "buffer_register_symmetric_at_preferred_address",
    "buffer_unregister_symmetric",
    "calloc",
    "check_status",
    "culibrary_finalize",
    "culibrary_init",
    "cumodule_finalize",
    "cumodule_init",
    "flush_on_stream",
    "free",
    "get_uniqueid",
    "getmem_nbi_on_stream",
    "getmem_on_stream",
    "hostlib_finalize",
    "hostlib_init_attr",
    "info_get_name",
    "info_get_version",
    "init_attr_dtype",
    "init_status",
    "malloc",
    "mc_ptr",
    "my_pe",
    "n_pes",
    "ptr",
    "putmem_nbi_on_stream",
    "putmem_on_stream",
    "putmem_signal_nbi_on_stream",
    "putmem_signal_on_stream",
    "query_thread",
    "quiet_on_stream",
    "set_attr_mpi_comm_args",
    "set_attr_uniqueid_args",
    "signal_fetch",
    "signal_op_on_stream",
    "signal_wait_until_on_stream",
    "sync_all_on_stream",
    "team_config_dtype",
    "team_destroy",
    "team_get_config",
    "team_get_uniqueid",
    "team_init",
    "team_my_pe",
    "team_n_pes",
    "team_split_2d",
    "team_split_strided",
    "team_sync_on_stream",
    "team_translate_pe",
    "team_uniqueid",
    "uniqueid",
    "uniqueid_dtype",
    "vendor_get_version_info",
]
# The typed families of nvshmem.bindings: the types each has, NVSHMEM4Py's.
_AMO_INT = [
    "uint",
    "ulong",
    "ulonglong",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "int",
    "long",
    "longlong",
    "size",
    "ptrdiff",
]
_AMO_BITS = ["uint", "ulong", "ulonglong", "int32", "uint32", "int64", "uint64"]
_COLL = [
    "bfloat16",
    "half",
    "float",
    "double",
    "char",
    "short",
    "schar",
    "int",
    "long",
    "longlong",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "size",
]
TYPED = {
    **{f: _AMO_INT for f in ("atomic_inc", "atomic_fetch_inc", "atomic_compare_swap")},
    **{
        f: _AMO_INT + ["float", "double"]
        for f in ("atomic_fetch", "atomic_add", "atomic_set", "atomic_swap", "atomic_fetch_add")
    },
    **{
        f: _AMO_BITS
        for f in (
            "atomic_and",
            "atomic_or",
            "atomic_xor",
            "atomic_fetch_and",
            "atomic_fetch_or",
            "atomic_fetch_xor",
        )
    },
    **{f: _COLL for f in ("alltoall_on_stream", "broadcast_on_stream", "fcollect_on_stream")},
    **{
        f"{op}_{kind}_on_stream": _COLL
        for op in ("max", "min", "sum")
        for kind in ("reduce", "reducescatter")
    },
}
TYPED_NAMES = [f"{t}_{family}" for family, types in TYPED.items() for t in types]


# ---------------------------------------------------------------- the names


@pytest.mark.parametrize("module", [symmem, symmem.core])
def test_every_core_name_exists(module):
    missing = [name for name in CORE_ALL + CORE_EXTRA if not hasattr(module, name)]
    assert not missing, f"{module.__name__} lacks NVSHMEM4Py's {missing}"
    assert len(set(CORE_ALL)) == 100  # SignalOp is listed twice by NVSHMEM4Py


def test_core_all_holds_the_names():
    lacking = sorted(set(CORE_ALL) - set(symmem.core.__all__))
    assert not lacking, lacking


def test_utils_in_every_spelling():
    import symmem.core.utils as by_import
    from symmem.core import utils as by_from

    assert by_import is by_from is symmem.core.utils is symmem.utils
    assert sys.modules["symmem.core.utils"] is symmem.utils
    assert importlib.import_module("symmem.core.utils") is symmem.utils
    for name in UTILS:
        assert callable(getattr(by_import, name)), name


def test_bindings_names():
    import symmem.bindings.nvshmem as pynvshmem  # `import nvshmem.bindings.nvshmem`
    from symmem.bindings import nvshmem as by_from

    assert pynvshmem is by_from is symmem.bindings.nvshmem
    for module in (symmem.bindings, pynvshmem):
        missing = [n for n in BINDINGS + TYPED_NAMES if not hasattr(module, n)]
        assert not missing, f"{module.__name__} lacks {missing}"
    assert len(TYPED_NAMES) == 319
    assert set(BINDINGS + TYPED_NAMES) <= set(symmem.bindings.__all__)


def test_the_names_that_are_the_same_object():
    B = symmem.bindings
    assert (B.Signal_op, B.Cmp_type, B.Init_status, B.Thread_support, B.Smem_amount) == (
        symmem.SignalOp,
        symmem.ComparisonType,
        symmem.InitStatus,
        symmem.ThreadSupport,
        symmem.SmemAmount,
    )
    assert B.uniqueid is B.UniqueId is symmem.UniqueID
    assert B.team_uniqueid is B.TeamUniqueId is symmem.TeamUniqueId
    assert symmem.core.TeamUniqueId is symmem.TeamUniqueId


def test_a_fresh_interpreter_runs_the_nvshmem4py_imports():
    code = (
        "import symmem as nvshmem\nimport symmem.core\nimport symmem.bindings\n"
        "import symmem.core.utils\nfrom symmem.core import init, finalize\n"
        "from symmem.bindings import hostlib_finalize, hostlib_init_attr, uniqueid, "
        "check_status\nattr = symmem.bindings.InitAttr()\n"
        "from symmem.core import TeamConfig, TeamUniqueId, get_team_unique_id, Teams\n"
        "print(nvshmem.core.utils.get_size((4,), 'int64'))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "32", proc.stderr


# ---------------------------------------------------------------- enums


def test_enum_values_are_nvshmems():
    T, S = symmem.ThreadSupport, symmem.SmemAmount
    assert [(m.name, int(m)) for m in T] == [
        ("THREAD_SINGLE", 0),
        ("THREAD_FUNNELED", 1),
        ("THREAD_SERIALIZED", 2),
        ("THREAD_MULTIPLE", 3),
        ("THREAD_TYPE_SENTINEL", 2**31 - 1),
    ]
    assert [(m.name, int(m)) for m in S] == [
        ("SMEM_RECOMMENDED", 0),
        ("SMEM_MINIMUM", 1),
        ("SMEM_BARRIERS_ONLY", 2),
        ("MAX", 2**31 - 1),
    ]
    assert [(m.name, int(m)) for m in symmem.BufferTypes] == [
        ("NORMAL", 0),
        ("PEER", 1),
        ("MULTIMEM", 2),
        ("EXTERNAL", 3),
    ]
    B = symmem.bindings
    assert (
        B.Team_id.TEAM_WORLD,
        B.Team_id.TEAM_NODE_INDEX,
        B.Team_id.TEAM_MC_SHARED,
        B.Team_id.TEAMS_MIN,
    ) == (0, 2, 6, 7)
    assert [int(m) for m in B.Status][:8] == list(range(8))
    assert (B.Flags.INIT_WITH_MPI_COMM, B.Flags.INIT_WITH_UNIQUEID) == (2, 8)
    for name, member in symmem.Teams.__members__.items():
        assert B.Team_id[name] == member


def test_teams_lookups_before_any_team():
    Teams = symmem.Teams
    assert Teams.keys() == [
        "TEAM_INVALID",
        "TEAM_WORLD",
        "TEAM_SHARED",
        "TEAM_NODE",
        "TEAM_SAME_MYPE_NODE",
        "TEAM_SAME_GPU",
        "TEAM_GPU_LEADERS",
    ]
    assert Teams.values() == list(Teams) and len(Teams) == 7
    assert Teams.items()[1] == ("TEAM_WORLD", Teams.TEAM_WORLD)
    assert "TEAM_NODE" in Teams and 2 in Teams and Teams.TEAM_NODE in Teams
    assert "WORLD" not in Teams and 99 not in Teams and 1.5 not in Teams  # NVSHMEM4Py's tests ask
    assert Teams["TEAM_NODE"] is Teams.TEAM_NODE and Teams[Teams.TEAM_NODE] is Teams.TEAM_NODE
    with pytest.raises(AttributeError, match="NO_SUCH"):
        Teams.NO_SUCH
    with pytest.raises(KeyError, match="NO_SUCH"):
        Teams["NO_SUCH"]
    assert not hasattr(Teams, "NO_SUCH")


# ---------------------------------------------------------------- small types


def test_mutable_enum():
    import enum

    class Color(enum.IntEnum):
        RED = 1
        GREEN = 2
        LIME = 2  # an alias: left out, as iterating the Enum leaves it out

    e = symmem.MutableEnum.from_enum(Color)
    assert list(e) == ["RED", "GREEN"] and list(e.values()) == [1, 2] and len(e) == 2
    e.add("BLUE", 3)
    assert e.BLUE == 3 and e["BLUE"] == 3 and "BLUE" in e and ("BLUE", 3) in e.items()
    assert "<MutableEnum RED=1, GREEN=2, BLUE=3>" == repr(e)
    e.remove_by_value(2)
    e.remove_by_value(99)  # nothing to remove: nothing happens
    assert list(e.keys()) == ["RED", "BLUE"]
    e.remove("RED")
    assert list(e) == ["BLUE"] and not hasattr(e, "RED")
    with pytest.raises(
        symmem.NvshmemInvalid,
        match=r"MutableEnum.add: key='BLUE' is already "
        r"a member \(= 3\)",
    ):
        e.add("BLUE", 4)
    with pytest.raises(ValueError, match=r"MutableEnum.remove: key='RED' is not a member"):
        e.remove("RED")
    with pytest.raises(KeyError, match="RED"):
        e["RED"]
    with pytest.raises(AttributeError, match="RED"):
        e.RED
    assert pickle.loads(pickle.dumps(e)).BLUE == 3


def test_nvshmem_stream():
    class TorchLike:
        cuda_stream = 0x1234

    class CudaCoreLike:
        def __cuda_stream__(self):
            return (0, 0x99)

    for source, handle in ((TorchLike(), 0x1234), (CudaCoreLike(), 0x99), (7, 7)):
        s = symmem.NvshmemStream(source)
        assert s.pt_stream is source and s.handle == handle
        assert s.__cuda_stream__() == (0, handle) and hex(handle) in repr(s)
    for bad in ("stream", None, 1.5, True):
        with pytest.raises(
            symmem.NvshmemInvalid,
            match=f"NvshmemStream: pt_stream of type {type(bad).__name__} is not a stream",
        ):
            symmem.NvshmemStream(bad)
    assert symmem.NvshmemStream in symmem.NvshmemStreamsType.__args__


def test_nvshmem_warning():
    w = symmem.NvshmemWarning("something")
    assert isinstance(w, UserWarning) and w.msg == "something" and str(w) == "something"
    assert repr(w) == "<NvshmemWarning: something>"
    with pytest.warns(symmem.NvshmemWarning, match="something"):
        warnings.warn(w)


def test_team_unique_id_alone():
    T = symmem.TeamUniqueId
    t = T(5)
    assert t.value == 5 and isinstance(t, symmem.UniqueID) and repr(t) == "TeamUniqueId(value=5)"
    t.value = 2**64 - 1
    assert t.value == 2**64 - 1 and ctypes.c_uint64.from_address(t.ptr).value == 2**64 - 1
    again = pickle.loads(pickle.dumps(t))
    assert type(again) is T and again.value == t.value and again == t
    assert T.from_bytes(bytes(t)).value == t.value and symmem.UniqueID.from_bytes(bytes(t)) == t
    assert T().value == 0
    made = symmem.get_team_unique_id()
    assert (
        type(made) is T
        and 0 <= made.value < 2**64
        and made.value != symmem.get_team_unique_id().value
    )
    for bad in (-1, 2**64, 1.5, "7", True):
        with pytest.raises(
            symmem.NvshmemInvalid,
            match=rf"TeamUniqueId: value={bad!r} is not "
            "a uint64".replace("(", r"\("),
        ):
            t.value = bad
    with pytest.raises(symmem.NvshmemInvalid, match="expected 128 bytes"):
        T(b"short")


# ---------------------------------------------------------------- queries


def test_queries_before_init():
    assert symmem.get_name() == f"symmem v{symmem.__version__}"
    assert symmem.query_thread() is symmem.ThreadSupport.THREAD_SERIALIZED
    # NVSHMEM4Py's own check: recommended >= minimum >= barriers_only > 0, MAX == recommended
    sizes = [symmem.ask_smem(amount) for amount in list(symmem.SmemAmount) + [0, 1, 2]]
    assert sizes == [16] * 7 and symmem.ask_smem() == 16
    for bad in (3, -1, 2**31 - 2, "SMEM_MINIMUM", 1.0, None, True):
        with pytest.raises(
            symmem.NvshmemInvalid,
            match=rf"ask_smem: amount={bad!r} is not one of "
            "SMEM_RECOMMENDED".replace("(", r"\(")
            .replace("<", ".")
            .replace(">", "."),
        ):
            symmem.ask_smem(bad)


def test_bindings_queries_write_through_addresses():
    B = symmem.bindings
    level, major, minor, patch = (ctypes.c_int32() for _ in range(4))
    B.query_thread(ctypes.addressof(level))
    assert level.value == int(symmem.ThreadSupport.THREAD_SERIALIZED)
    B.info_get_version(ctypes.addressof(major), ctypes.addressof(minor))
    assert f"{major.value}.{minor.value}" == symmem._symmem.OPENSHMEM_SPEC_VERSION[:3]
    B.vendor_get_version_info(*(ctypes.addressof(x) for x in (major, minor, patch)))
    assert symmem.__version__.startswith(f"{major.value}.{minor.value}.{patch.value}")
    name = ctypes.create_string_buffer(256)
    B.info_get_name(ctypes.addressof(name))
    assert name.value.decode() == symmem.get_name()
    uid = B.uniqueid()
    B.get_uniqueid(uid.ptr)
    assert bytes(uid) != bytes(symmem.UniqueID.SIZE)
    tuid = B.team_uniqueid()
    B.team_get_uniqueid(tuid.ptr)
    assert tuid.value != 0
    assert B.init_status() == int(symmem.InitStatus.STATUS_NOT_INITIALIZED)
    for call, args in (
        ("query_thread", (0,)),
        ("info_get_name", (None,)),
        ("get_uniqueid", (-8,)),
        ("team_get_uniqueid", ("x",)),
    ):
        with pytest.raises(
            symmem.NvshmemInvalid,
            match=rf"{call}: \w+=.* is not an address to "
            "write to",
        ):
            getattr(B, call)(*args)


def test_bindings_structs_and_status():
    B = symmem.bindings
    config = B.TeamConfig()
    assert (config.version, config.num_contexts, config.uniqueid) == (0, 0, 0)
    config.version, config.num_contexts, config.uniqueid = 2, 1, 12345
    raw = np.frombuffer(ctypes.string_at(config.ptr, 16), dtype=np.int32)
    assert raw[:2].tolist() == [2, 1] and raw[2] == 12345 and "uniqueid=12345" in repr(config)
    assert B.team_config_dtype.itemsize == 64 and B.uniqueid_dtype.itemsize == 128
    attr = B.InitAttr()
    attr.mpi_comm = 0x1000
    assert attr.mpi_comm == 0x1000 and attr.version == 0
    uid = B.uniqueid()
    B.set_attr_uniqueid_args(3, 4, uid.ptr, attr.ptr)
    assert (attr.rank, attr.nranks, attr.uniqueid) == (3, 4, uid.ptr)
    for arg, args in (("myrank", (-1, 4)), ("nranks", (0, "4"))):
        with pytest.raises(symmem.NvshmemInvalid, match=f"set_attr_uniqueid_args: {arg}="):
            B.set_attr_uniqueid_args(*args, uid.ptr, attr.ptr)
    B.check_status(0)
    with pytest.raises(B.NVSHMEMError, match=r"Status code 2 \(ERROR_OUT_OF_MEMORY\)") as error:
        B.check_status(2)
    assert error.value.status == 2 and isinstance(error.value, symmem.NvshmemError)
    again = pickle.loads(pickle.dumps(error.value))
    assert again.status == 2 and str(again) == str(error.value)
    for flags in (B.Flags.INIT_WITH_SHMEM, 4, B.Flags.INIT_THREAD_PES, 10):
        with pytest.raises(
            symmem.NvshmemInvalid,
            match=rf"hostlib_init_attr: flags=.*{int(flags)}"
            r".* is not one symmem runs with",
        ):
            B.hostlib_init_attr(flags, attr.ptr)


def test_bindings_calls_need_init():
    B = symmem.bindings
    for call, fn in (
        ("malloc", lambda: B.malloc(8)),
        ("free", lambda: B.free(8)),
        ("ptr", lambda: B.ptr(8, 0)),
        ("putmem_on_stream", lambda: B.putmem_on_stream(8, 8, 8, 0, 0)),
    ):
        with pytest.raises(symmem.NvshmemInvalid, match=call):
            fn()
    B.free(0)  # NULL: nothing to do, as nvshmem_free(NULL)


# ---------------------------------------------------------------- utils


def test_utils_sizes():
    from symmem.core import utils

    assert utils.get_size((64, 64), "float32") == 64 * 64 * 4
    assert utils.get_size(10, np.int16) == 20 and utils.get_size((), "int64") == 8
    assert utils.get_size([3, 0], "float64") == 0 and utils.get_size((5,), "bfloat16") == 10
    assert utils.get_size((2,), "float") == 16  # NumPy's "float" is float64, as in NVSHMEM4Py
    for name, size in (
        ("half", 2),
        ("bfloat16", 2),
        ("float", 4),
        ("double", 8),
        ("int", 4),
        ("long", 8),
        ("longlong", 8),
        ("ulonglong", 8),
        ("char", 1),
        ("schar", 1),
        ("size", 8),
        ("ptrdiff", 8),
        ("fp16", 2),
        ("int32_t", 4),
        ("uint64_t", 8),
        ("uint8", 1),
        ("int64", 8),
        ("uint", 4),
    ):
        assert utils.dtype_nbytes(name) == size, name
    with pytest.raises(
        symmem.NvshmemInvalid,
        match=r"dtype_nbytes: dtype='quad' is not an "
        "NVSHMEM type name",
    ):
        utils.dtype_nbytes("quad")
    with pytest.raises(ValueError, match=r"dtype_nbytes: dtype=None"):
        utils.dtype_nbytes(None)
    with pytest.raises(
        symmem.NvshmemInvalid,
        match=r"get_size: dtype='nonsense' is not a "
        "NumPy or torch dtype",
    ):
        utils.get_size((2,), "nonsense")
    with pytest.raises(
        symmem.NvshmemInvalid,
        match=r"get_size: shape=\(2, -1\) has a "
        "negative dimension",
    ):
        utils.get_size((2, -1), "int8")
    with pytest.raises(symmem.NvshmemInvalid, match=r"get_size: shape='2' is not an int"):
        utils.get_size("2", "int8")


def test_utils_take_torch_dtypes():
    torch = pytest.importorskip("torch")
    from symmem.core import utils

    assert utils.get_size((3, 2), torch.bfloat16) == 12
    assert utils.get_size((3,), torch.float64) == 24


def test_resource_alone():
    r = symmem.NvshmemResource(None)
    assert r.device_id == -1 and "NvshmemResource device=None" in repr(r)
    assert symmem.NvshmemResource(3).device_id == 3

    class Device:
        device_id = 1

    assert symmem.NvshmemResource(Device()).device_id == 1
    for bad in ("gpu0", -1, 1.5, True):
        with pytest.raises(
            symmem.NvshmemInvalid, match=f"NvshmemResource: device={bad!r} is not a Device"
        ):
            symmem.NvshmemResource(bad)
    with pytest.raises(symmem.NvshmemInvalid, match="NvshmemResource.deallocate"):
        r.deallocate(0x1000, 8)
