"""Compiles kernels that call every function of symmem.bindings.device.<dsl>
(numba, numba_cuda_mlir or cute) for sm_90, with no GPU, and checks that
each one symmem cannot serve fails the compile naming it and why
(test_bindings_device.py runs it in a subprocess where the DSL is
installed). Only compiled, never run: this proves the names, the argument
kinds and types, the recipes and the library's declarations, not the
behaviour (tests/gpu/bindings_*.py check that on GPUs).

    python tests/python/bindings_compile.py numba|numba_cuda_mlir|cute [NVSHMEM_BITCODE] [--every]

cute traces on the engine SYMMEM_CUTE_ENGINE names (symmem by default; with
nvshmem, NVSHMEM_BITCODE is its libnvshmem_device.bc).

Every name is compiled with --every; by default each family once at each of
its scopes and qp_ forms, and every dtype of the typed families once (a few
hundred calls). Arguments are arrays of the parameter's type for pointers
and scalars for values; each kernel makes a batch of calls. Prints
"compiled N calls in K kernels; refused R" and exits 0, or the error and
exits 1."""

import os
import sys
import time

DSL = sys.argv[1]
EVERY = "--every" in sys.argv
os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")
STATE = 0x7F0000001000  # no init here: any address compiles
BATCH = 40


def sample(calls):
    """One call of each family and each dtype (every call with --every)."""
    if EVERY:
        return list(calls.values())
    chosen, families, dtypes = [], set(), set()
    for call in calls.values():
        key = (call.family, call.generic)
        if key not in families or (call.dtype, call.family.split("_")[0]) not in dtypes:
            chosen.append(call)
            families.add(key)
            dtypes.add((call.dtype, call.family.split("_")[0]))
    return chosen


def numba_types():
    import numba.cuda
    from numba import types

    return types, numba.cuda.types.bfloat16


def mlir_types():
    from numba_cuda_mlir import types
    from numba_cuda_mlir.numba_cuda.types import bfloat16

    return types, bfloat16


def argument_types(types, bfloat16):
    """argument(kind, dtype): an argument type for a parameter of the table."""
    numbers = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64")  # fmt: skip
    arrays = {d: types.Array(getattr(types, d), 1, "C") for d in numbers}
    arrays.update(void=arrays["int8"], bfloat16=types.Array(bfloat16, 1, "C"))
    scalars = {"enum": types.int32, "bool": types.boolean}

    def argument(kind, dtype):
        kind = kind.replace("T", dtype or "int32") if kind in ("T", "*T") else kind
        if kind.startswith("*"):
            return arrays.get(kind[1:], arrays["int8"])
        return scalars[kind] if kind in scalars else arrays[kind].dtype

    return argument


def kernel_source(batch):
    """A kernel making each call of batch, its arguments its parameters."""
    lines, params = [], []
    for i, call in enumerate(batch):
        names = [f"a{i}_{j}" for j in range(len(call.params))]
        params += names
        lines.append(f"    nvb.{call.name}({', '.join(names)})")
    return f"def kernel({', '.join(params)}):\n" + "\n".join(lines) + "\n"


def argument_list(batch, argument):
    return tuple(
        argument(kind, call.dtypes()[0] if call.generic else call.dtype)
        for call in batch
        for _, kind in call.params
    )


def numba_setup():
    import types as simple

    import numba.cuda.dispatcher as dispatcher

    # numba-cuda asks the current device for its compute capability when it
    # compiles an overload's device function: say sm_90, with no GPU
    dispatcher.get_current_device = lambda: simple.SimpleNamespace(compute_capability=(9, 0))
    import symmem.bindings.device.numba as nvb
    from numba import cuda
    from numba.core.errors import TypingError

    from symmem.device.numba import _cuda

    _cuda.state_address = lambda call: STATE
    argument = argument_types(*numba_types())

    def compile_batch(batch):
        space = {"nvb": nvb}
        exec(kernel_source(batch), space)
        cuda.compile_ptx(space["kernel"], argument_list(batch, argument), cc=(9, 0))

    return nvb.STUBS, compile_batch, TypingError


def mlir_setup():
    import numba_cuda_mlir.tools as tools

    tools._cached_cc = (9, 0)  # what the driver would say on an H100
    import symmem.bindings.device.numba_cuda_mlir as nvb
    from numba_cuda_mlir import cuda
    from numba_cuda_mlir.numba_cuda.core.errors import TypingError

    from symmem.device.numba_cuda_mlir import _library

    _library.state_address = lambda call: STATE
    argument = argument_types(*mlir_types())

    def compile_batch(batch):
        space = {"nvb": nvb}
        exec(kernel_source(batch), space)
        kinds = argument_list(batch, argument)
        cuda.compile(space["kernel"], kinds, device=False, abi="numba", output="ltoir", cc=(9, 0))

    return nvb.STUBS, compile_batch, TypingError


def cute_setup():
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor

    import symmem._device_host as host
    import symmem.bindings.device.cute as nvb
    from symmem.device.cute import _engine, _values

    engine = os.environ.get("SYMMEM_CUTE_ENGINE", "symmem")
    if len(sys.argv) > 2 and not sys.argv[2].startswith("--"):  # NVSHMEM's bitcode
        host.find_device_bitcode_library = lambda *a, **k: sys.argv[2]
    _engine._engine = engine
    _engine.state = lambda call: STATE
    dtypes = list(_values.DTYPES)
    batch_now = []
    values = {"enum": 0, "bool": cutlass.Boolean(False), **_values.DTYPES}

    def arguments(call, tensors):
        dtype = call.dtypes()[0] if call.generic else call.dtype
        found = []
        for _, kind in call.params:
            kind = kind.replace("T", dtype) if kind in ("T", "*T") else kind
            if kind.startswith("*"):
                found.append(tensors.get(kind[1:], tensors["int8"]))
            else:
                make = values[kind]
                found.append(make if not callable(make) else make(1))
        return found

    @cute.kernel
    def kernel(tensors: list):
        named = dict(zip(dtypes, tensors))
        for call in batch_now:
            getattr(nvb, call.name)(*arguments(call, named))

    @cute.jit
    def launch(tensors: list):
        kernel(tensors).launch(grid=(1, 1, 1), block=(128, 1, 1))

    fakes = [make_fake_compact_tensor(_values.DTYPES[d], (256,)) for d in dtypes]

    def compile_batch(batch):
        batch_now[:] = batch
        cute.compile(launch, fakes, options="--gpu-arch sm_90a")

    return nvb.FUNCTIONS, compile_batch, TypeError


def refused(compile_batch, error, call):
    """The compile error of a kernel calling call, or None if it compiles."""
    try:
        compile_batch([call])
    except error as failure:
        return str(failure)
    return None


def main():
    setups = {"numba": numba_setup, "numba_cuda_mlir": mlir_setup, "cute": cute_setup}
    stubs, compile_batch, error = setups[DSL]()
    calls = {name: stub.call for name, stub in stubs.items()}
    served = [c for c in sample(calls) if c.why_not() is None]
    start, kernels = time.time(), 0
    for first in range(0, len(served), BATCH):
        compile_batch(served[first : first + BATCH])
        kernels += 1
    n_refused = 0
    for call in calls.values():
        why = call.why_not()
        if why is None:
            continue
        found = refused(compile_batch, error, call)
        if found is None or why not in found:
            sys.exit(f"{call.name}: compiled, or failed without saying why ({found!r})")
        n_refused += 1
    print(
        f"compiled {len(served)} calls in {kernels} kernels; refused {n_refused} "
        f"({time.time() - start:.0f} s)"
    )


if __name__ == "__main__":
    main()
