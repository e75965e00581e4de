"""The shape of the API: every public callable has a signature inspect can
read (IDEs and Jupyter show it), the tables the package reads come from the
C module, the call forms of put/get are exactly the documented ones, and
the package builds its exceptions through the C module."""

import inspect

import pytest

import symmem
import symmem.core
from symmem import _symmem
from conftest import assert_all_ok


def _public_callables():
    seen = {}
    for module in (symmem, symmem.core):
        for name in module.__all__:
            obj = getattr(module, name)
            if callable(obj):
                seen[f"{module.__name__}.{name}"] = obj
    return seen


@pytest.mark.parametrize("name", sorted(_public_callables()))
def test_every_public_callable_has_a_signature(name):
    inspect.signature(_public_callables()[name])


def test_every_function_of_the_c_module_has_a_signature():
    for name in dir(_symmem):
        obj = getattr(_symmem, name)
        if inspect.isbuiltin(obj):
            assert obj.__text_signature__, name
            inspect.signature(obj)
            assert obj.__doc__, f"{name} has a signature but no text"
    for name in ("__dlpack__", "__dlpack_device__"):
        inspect.signature(getattr(symmem.Buffer, name))


@pytest.mark.parametrize(
    "name, params",
    [
        ("put", ["dst", "src", "remote_pe", "stream", "count", "pe"]),
        ("get", ["dst", "src", "remote_pe", "stream", "count", "pe"]),
        ("put_nbi", ["dst", "src", "remote_pe", "stream", "count", "pe"]),
        (
            "put_signal",
            ["dst", "src", "signal_var", "signal_val", "signal_op", "remote_pe", "stream"],
        ),
        ("signal_wait", ["signal_var", "signal_val", "signal_op", "stream", "cmp"]),
        ("reduce", ["team", "dst", "src", "op", "stream"]),
        ("broadcast", ["team", "dst", "src", "root", "stream"]),
        ("barrier", ["team", "stream"]),
        ("barrier_all", ["stream"]),
        ("p", ["dst", "value", "pe", "stream"]),
        ("g", ["src", "pe", "stream"]),
        ("atomic_compare_swap", ["target", "cond", "value", "remote_pe", "offset", "dtype"]),
        ("team_translate_pe", ["src_team", "src_pe", "dest_team"]),
    ],
)
def test_parameter_names(name, params):
    assert list(inspect.signature(getattr(symmem, name)).parameters) == params


def test_put_keywords():
    sig = inspect.signature(symmem.put).parameters
    assert sig["stream"].default is None
    assert sig["count"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig["pe"].kind is inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("call", ["put", "get", "put_nbi", "get_nbi"])
@pytest.mark.parametrize("keyword", ["a", "b", "c", "bogus"])
def test_unknown_keywords_are_refused(call, keyword):
    # put/get once took made-up keywords a=, b=, c=: none is accepted now.
    import numpy as np

    with pytest.raises(symmem.NvshmemInvalid) as info:
        getattr(symmem, call)(np.zeros(2), np.zeros(2), 0, **{keyword: 1})
    assert f"{call}: unexpected keyword argument '{keyword}'" in str(info.value)


def test_a_keyword_goes_where_its_text_says_every_time():
    # The parser remembers which slot each keyword str filled (args.c); new
    # strs of old texts, texts that collide in its table, the same str for
    # another function and two names of one slot still go by their text.
    import numpy as np

    a = np.zeros(2)
    for i in range(100):
        bogus = "".join(["bogus", str(i % 40)])  # a new str every time
        for call, args in (("put", (a, a, 0)), ("get", (a, a, 0)), ("quiet", ())):
            with pytest.raises(symmem.NvshmemInvalid) as info:
                getattr(symmem, call)(*args, **{bogus: 1})
            assert f"{call}: unexpected keyword argument '{bogus}'" in str(info.value)
        with pytest.raises(symmem.NvshmemInvalid, match="put: got argument 'pe' twice"):
            symmem.put(a, a, remote_pe=0, pe=0)
        with pytest.raises(symmem.NvshmemInvalid, match="get: got argument 'remote_pe' twice"):
            symmem.get(a, a, pe=0, remote_pe=0)
        with pytest.raises(symmem.NvshmemInvalid, match="put: got argument 'count' twice"):
            symmem.put(a, a, 2, 0, count=2)


def test_tables_come_from_the_c_module():
    assert (
        symmem._collectives.REDUCE_OPS
        == _symmem.REDUCE_OPS
        == ("sum", "min", "max", "prod", "and", "or", "xor")
    )
    names = [name for name, _ in _symmem.ATOMIC_OPS]
    assert names[0] == "atomic_fetch" and names[-1] == "atomic_compare_swap"
    for name, operands in _symmem.ATOMIC_OPS:
        assert callable(getattr(symmem, name)), name
        params = list(inspect.signature(getattr(symmem, name)).parameters)
        assert params[1 : 1 + len(operands)] == list(operands), name
    assert _symmem.DTYPES["float32"] == 4 and _symmem.DTYPES["bfloat16"] == 2
    assert _symmem.DTYPE_ALIASES["float"] == "float32"
    assert dict(symmem.Teams.__members__) == _symmem.TEAMS
    assert {k: int(v) for k, v in symmem.SignalOp.__members__.items()} == _symmem.SIGNAL_OPS
    assert {k: int(v) for k, v in symmem.ComparisonType.__members__.items()} == _symmem.COMPARISONS
    assert symmem.Teams.TEAM_WORLD == 0 and symmem.SignalOp.SIGNAL_ADD == 10


def test_exceptions_are_built_in_c():
    error = symmem._errors.invalid("call: what went wrong")
    assert isinstance(error, symmem.NvshmemInvalid)
    assert error.msg == str(error) == "call: what went wrong"  # no PE before init
    assert error.status == _symmem.ERR_INVALID
    unsupported = symmem._errors.exception(_symmem.ERR_UNSUPPORTED, "call: not here")
    assert isinstance(unsupported, NotImplementedError) and unsupported.status == 10
    assert isinstance(symmem._errors.exception(_symmem.ERR_BACKEND, "x"), symmem.NvshmemError)
    with pytest.raises(symmem.NvshmemInvalid, match="team_get_config: .*not initialized"):
        symmem._errors.require_initialized("team_get_config")


def test_env_reads_the_c_table(monkeypatch):
    monkeypatch.delenv("SYMMEM_BACKEND", raising=False)
    assert _symmem.env("SYMMEM_BACKEND") == "auto"  # the table's default
    assert symmem.get_version().backend == "auto"
    monkeypatch.setenv("SYMMEM_BACKEND", "cpu")
    assert _symmem.env("SYMMEM_BACKEND") == "cpu"
    monkeypatch.setenv("NVSHMEM_DISABLE_NVLS", "0")
    assert _symmem.env("NVSHMEM_DISABLE_NVLS") is False
    with pytest.raises(symmem.NvshmemInvalid, match="not a variable symmem reads"):
        _symmem.env("HOME")


def test_buffer_is_made_by_buffer_only():
    with pytest.raises(TypeError):
        symmem.Buffer()


# The accepted call forms of put/get, on every PE: each moves what it says.
CALL_FORMS = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n
    dst = nvshmem.array((8,), dtype="int32")
    src = xp().asarray(np.arange(8, dtype="int32") + 10 * me)
    expect = np.arange(8, dtype="int32") + 10 * prv
    forms = [
        (8, lambda: nvshmem.put(dst, src, nxt)),
        (8, lambda: nvshmem.put(dst, src, nxt, None)),
        (8, lambda: nvshmem.put(dst, src, remote_pe=nxt)),
        (8, lambda: nvshmem.put(dst, src, pe=nxt, stream=None)),
        (3, lambda: nvshmem.put(dst, src, 3, nxt)),             # NVSHMEM4Py's seeds
        (3, lambda: nvshmem.put(dst, src, 3, nxt, None)),
        (2, lambda: nvshmem.put(dst, src, 2, pe=nxt)),          # count positional, pe=
        (5, lambda: nvshmem.put(dst, src, 5, remote_pe=nxt)),
        (4, lambda: nvshmem.put(dst, src, count=4, pe=nxt)),
        (6, lambda: nvshmem.put(dst=dst, src=src, count=6, remote_pe=nxt)),
    ]
    for k, move in forms:
        dst[:] = 0
        nvshmem.barrier_all()
        move()
        nvshmem.barrier_all()
        check_equal(dst[:k], expect[:k], f"{k} elements")
        check_equal(dst[k:], np.zeros(8 - k, dtype="int32"), f"beyond {k}")
        nvshmem.barrier_all()
    INV = nvshmem.NvshmemInvalid
    expect_raises(INV, ["put:", "twice"], nvshmem.put, dst, src, nxt, pe=nxt, remote_pe=nxt)
    expect_raises(INV, ["put:", "twice"], nvshmem.put, dst, src, 2, nxt, count=2)
    expect_raises(INV, ["put:", "positional"], nvshmem.put, dst, src, 1, nxt, None, None)
    expect_raises(INV, ["put:", "remote_pe"], nvshmem.put, dst, src, count=2)
    expect_raises(INV, ["put:", "remote_pe", "bool"], nvshmem.put, dst, src, True)
    nvshmem.free_array(dst)
    ok()
    nvshmem.finalize()
"""


@pytest.mark.parametrize("n", (1, 2, 3))
def test_put_call_forms(run_pes, n):
    assert_all_ok(run_pes(n, CALL_FORMS), n)
