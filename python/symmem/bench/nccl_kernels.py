"""Which NCCL kernels a measurement ran, and the label it gets by them.

NCCL (2.27 and later) runs its symmetric kernels only where it can: buffers
registered as symmetric windows, a collective, type and size they take,
every rank reaching the others' memory. Elsewhere it falls back to its
regular kernels without a word. So the symmetric libraries make each
size's first call under torch.profiler, whose CUPTI trace names every
kernel the process launches (NCCL's too), and for the graph rows also read
the kernel nodes of the captured graph (its DOT dump, where a profiler may
not report a replay's kernels), and label each measurement by what ran:

    ncclSymDevKernel_*   (NCCL 2.27), ncclSymkDevKernel_* (2.28 on): symmetric,
                         e.g. ncclSymkDevKernel_AllReduce_AGxLL_R_sum_f32
    ncclDevKernel_*      regular, e.g. ncclDevKernel_AllReduce_Sum_f32_RING_LL
                         (the name says which kernel, not which algorithm:
                         ring's other protocols and NVLS run in it too)

NCCL's own word is its debug output: with NCCL_DEBUG=INFO and
NCCL_DEBUG_SUBSYS=TUNING rank 0 prints "AllReduce [Symmetric]: ... -> Kernel
..." for a symmetric call and "AllReduce: ... -> Algo RING proto LL ..."
otherwise, a line per call (it slows the calls it times: a cross-check only).
"""

import os
import re
import tempfile

# A kernel's name, demangled ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)")
# or mangled, its length before it ("_Z39ncclDevKernel_AllReduce_...").
SYMMETRIC = re.compile(r"(?:_Z(\d+))?(ncclSymk?DevKernel_\w+)")
REGULAR = re.compile(r"(?:_Z(\d+))?(ncclDevKernel_\w+)")

# verdict -> what the label adds to the library's name
SUFFIXES = {
    "symmetric": "",
    "fell back": " (fell back)",
    "partly fell back": " (partly fell back)",
    "unchecked": " (unchecked)",
}


def nccl_kernels(names):
    """(symmetric, regular): NCCL's kernels among the kernel names, each
    sorted and without repeats (the argument lists left off)."""
    found = {pattern: set() for pattern in (SYMMETRIC, REGULAR)}
    for name in names:
        for pattern, kernels in found.items():
            kernels.update(
                kernel[: int(length)] if length else kernel
                for length, kernel in pattern.findall(name)
            )
    return tuple(sorted(found[pattern]) for pattern in (SYMMETRIC, REGULAR))


def verdict(names):
    """What NCCL ran, from the kernel names of one call (or one graph
    replay): "symmetric", "fell back" (its regular kernels only), "partly
    fell back" (both), or "unchecked" (no NCCL kernel seen: the profiler
    saw nothing)."""
    symmetric, regular = nccl_kernels(names)
    if symmetric:
        return "partly fell back" if regular else "symmetric"
    return "fell back" if regular else "unchecked"


def label(base, names, graph=False):
    """The library a measurement is recorded under: base ("nccl symmetric"),
    then what ran unless it was the symmetric kernels alone, then " (graph)"
    for a graph replay (the report compares it with symmem's graph rows)."""
    return base + SUFFIXES[verdict(names)] + (" (graph)" if graph else "")


_failures = set()  # what failed (the profiler, the graph's dump), said once


def _failed(what, error):
    if what not in _failures:
        print(f"{what} failed ({error}): which NCCL kernels ran may be unchecked", flush=True)
    _failures.add(what)


def kernels_of(run):
    """The names of the GPU kernels run() launches, as torch.profiler's
    CUPTI trace records them; [] (saying why) where the profiler fails."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    try:
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            run()
            torch.cuda.synchronize()
        cuda = torch.autograd.DeviceType.CUDA
        return [e.name for e in prof.events() if getattr(e, "device_type", cuda) == cuda]
    except Exception as error:  # the measurement goes on, labelled unchecked
        _failed("torch.profiler", error)
        return []


def graph_kernels(run, graph):
    """The names of the kernels run() (capture into graph, a
    torch.cuda.CUDAGraph, and its first replay) launches and captures: the
    profiler's, and the graph's DOT dump, which names each kernel node."""
    try:
        graph.enable_debug_mode()  # keeps the graph to dump after its capture
    except Exception as error:
        _failed("CUDAGraph.enable_debug_mode", error)
    names = kernels_of(run)
    with tempfile.TemporaryDirectory() as tmp:
        dot = os.path.join(tmp, "graph.dot")
        try:
            graph.debug_dump(dot)
            with open(dot) as f:
                names.append(f.read())
        except Exception as error:
            _failed("CUDAGraph.debug_dump", error)
    return names


def expected(op, n, block):
    """What op leaves where each of n ranks gave rank + 1 (blocks of block
    float32): the reductions n(n+1)/2 everywhere (exact in float32), the
    all-gather each rank's block in rank order."""
    import torch

    if op == "fcollect":
        return torch.arange(1.0, n + 1, device="cuda").repeat_interleave(block)
    return torch.full((n * block if op == "reduce" else block,), n * (n + 1) / 2, device="cuda")


def check_data(what, rank, got, want):
    """Raises RuntimeError naming the first element of got that is not
    want's: a measurement of a call that computed nothing would mislead."""
    import torch

    torch.cuda.synchronize()
    if not torch.equal(got, want):
        bad = int((got != want).nonzero()[0, 0])
        raise RuntimeError(
            f"{what}: rank {rank} got {got[bad].item()} at element {bad}, want {want[bad].item()}"
        )


def measure(emit, base, op, nbytes, body, check, line_up, graph, fixed=None):
    """Times body (one collective call) eager and, with graph, replayed from
    a CUDA graph (torch_timing.py), each time after a first call (or capture
    and replay) that says which kernels ran; eager, check() confirms the
    data of that first call. emit()s a record for each, labelled by what ran, with
    the NCCL kernels it saw."""
    from symmem.bench import plan
    from symmem.bench.torch_timing import best_of, best_of_graph

    iters = plan.iterations(nbytes, fixed)  # fixed: --iters
    for replayed in (False, True) if graph else (False,):
        if replayed:
            seen = []
            us = best_of_graph(
                body,
                iters,
                line_up,
                watch=lambda run, graph, seen=seen: seen.extend(graph_kernels(run, graph)),
            )
        else:
            seen = kernels_of(body)
            check()
            us = best_of(body, iters, line_up)
        found = nccl_kernels(seen)
        emit(
            lib=label(base, seen, replayed),
            op=op,
            bytes=nbytes,
            us=us,
            kernels=[*found[0], *found[1]],
        )
