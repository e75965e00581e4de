"""Random bad arguments into every public call of symmem and of
symmem.bindings (junk addresses too): the process never crashes or hangs, no
byte outside the call's memory changes, and every exception is one the
contract names (NvshmemInvalid / NvshmemError, TypeError for a wrong
argument count, NotImplementedError for what the backend lacks,
ModuleNotFoundError for a missing torch), naming the call. Every PE makes the
same calls (one seed), so collectives stay matched. Each bug this found
(an ndarray taken for a module handle, a junk struct address read, ...) has
its own test too."""

import pytest

from conftest import assert_all_ok, not_on_gpu

FUZZ = """
import random
import symmem.bindings as B

warnings.simplefilter("ignore", RuntimeWarning)  # finalize's leak report
seed, rounds, api = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
rng = random.Random(seed)  # the same calls on every PE
a, b = nvshmem.array((16,), dtype="float32"), nvshmem.array((16 * n,), dtype="int64")
sig = nvshmem.array((2,), dtype="uint64")
canary = nvshmem.array((4096,), dtype="uint8")  # allocated last: after every other block
canary[:] = 0xAB
raw = B.malloc(256)
freed = nvshmem.array((8,), dtype="float32")
nvshmem.free_array(freed)
private = np.zeros(64, dtype=np.uint8)
values = [a, b, sig, a[::2], a[3:5], a[:0], b.reshape(4, 4 * n).T, freed,
          nvshmem.buffer(64), np.zeros(16, np.float32), np.zeros(3, np.complex64),
          None, -1, 0, 1, 2, n, 99, 1 << 63, -(1 << 70), 1.5, float("nan"), "sum", "bogus",
          b"xx", [1, 2], object(), np.float32(2), np.int64(5), np.uint64(2), True,
          nvshmem.Teams.TEAM_WORLD, nvshmem.Teams.TEAM_INVALID, nvshmem.SignalOp.SIGNAL_ADD,
          nvshmem.ComparisonType.CMP_EQ, memoryview(b"abcd"), bytearray(8),
          raw, raw + 248, raw + 256, private.ctypes.data, 0x1000, 64, (1 << 64) - 1]
WAITS = {"wait_until", "signal_wait", "signal_wait_until_on_stream"}  # may wait for good
LIFE = {"init", "finalize", "hostlib_init_attr", "hostlib_finalize", "team_destroy"}
module = B if api == "bindings" else nvshmem
names = sorted(name for name in (dir(B) if api == "bindings" else nvshmem.__all__)
               if not name.startswith("_") and name[0].islower() and name not in WAITS | LIFE
               and callable(getattr(module, name)) and not isinstance(getattr(module, name), type))
ALIASES = {"flush": "quiet"}
CONTRACT = (nvshmem.NvshmemError, nvshmem.NvshmemInvalid, B.NVSHMEMError, TypeError,
            NotImplementedError, ModuleNotFoundError)


def on_alarm(*_):
    raise TimeoutError


signal.signal(signal.SIGALRM, on_alarm)
for round in range(rounds):
    name = rng.choice(names)
    args = [rng.choice(values) for _ in range(rng.randint(0, 7))]
    what = f"round {round}: {name}{tuple(args)!r:.300}"
    signal.alarm(30)
    try:
        getattr(module, name)(*args)
    except CONTRACT as error:
        text = str(error)
        # a binding carries the name of the symmem call it is made of (put for putmem_on_stream)
        if api != "bindings":
            check(ALIASES.get(name, name) in text, f"{what}: {type(error).__name__} does not "
                  f"name the call: {text}")
    except TimeoutError:
        check(False, f"{what} hung")
    except Exception as error:
        check(False, f"{what} raised {type(error).__name__}: {error}")
    finally:
        signal.alarm(0)
    check(bool((canary == 0xAB).all()), f"{what} wrote outside its memory")
    if rng.random() < 0.1:
        nvshmem.barrier_all()  # the PEs are still in step
nvshmem.free_array(canary)  # the rest the calls may have freed; finalize frees what is left
ok()
nvshmem.finalize()
"""


@not_on_gpu("the heap and the junk addresses are host memory")
@pytest.mark.parametrize("api", ["symmem", "bindings"])
@pytest.mark.parametrize("n, seed", [(1, 1), (2, 2)])
def test_random_bad_arguments_never_crash_hang_or_corrupt(run_pes, n, seed, api):
    assert_all_ok(run_pes(n, FUZZ, timeout=240, args=(str(seed), "1500", api)), n)


# What the fuzzing found, one call each: an array where a scalar belongs was
# compared elementwise (NumPy's "truth value ... is ambiguous") or unpacked.
FOUND = """
import symmem.bindings as B
nvshmem.init()
P = f"[pe {nvshmem.my_pe()}] "
arr = np.zeros(4)
data = B.malloc(64)
expect_raises(nvshmem.NvshmemInvalid, ["find_device_library: language=array("],
              nvshmem.find_device_library, arr)
expect_raises(nvshmem.NvshmemInvalid, [P + "array: morder=array("], nvshmem.array, (2,),
              morder=arr)
expect_raises(nvshmem.NvshmemInvalid, [P + "check_status: status=array("], B.check_status, arr)
expect_raises(nvshmem.NvshmemInvalid, [P + "free: ptr=array("], B.free, arr)
handle = np.zeros(1, dtype=np.int32)
expect_raises(nvshmem.NvshmemInvalid, [P + "team_init: config=array("], B.team_init,
              handle.ctypes.data, arr, 0, 1, 0)
expect_raises(nvshmem.NvshmemInvalid, [P + "broadcast: takes at most 5 positional arguments"],
              B.int64_broadcast_on_stream, 0, data, data, 1, 0, 0, 0)
B.free(data)
ok()
nvshmem.finalize()
"""


@not_on_gpu("the bindings' addresses are host memory here")
def test_what_the_fuzzing_found_is_refused_by_name(run_pes):
    assert_all_ok(run_pes(1, FOUND), 1)
