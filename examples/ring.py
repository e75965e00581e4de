"""A put ring: every PE puts its array into the next PE's and prints what it
received from the previous one.

    python -m symmem.run -n 4 examples/ring.py
"""

import numpy as np

import symmem as nvshmem

nvshmem.init()
my_pe, n_pes = nvshmem.my_pe(), nvshmem.n_pes()
if nvshmem.get_version().backend == "gpu":
    import cupy as xp  # symmetric arrays are CuPy arrays on the gpu backend
else:
    xp = np

size = 10
src = nvshmem.array((size,), dtype="float32")
dst = nvshmem.array((size,), dtype="float32")
src[:] = xp.arange(size, dtype="float32") + 100 * my_pe
dst[:] = -1
nvshmem.barrier_all()

next_pe = (my_pe + 1) % n_pes
nvshmem.put(dst, src, size, next_pe)  # (dst, src, count, pe): size elements into next_pe
nvshmem.barrier_all()

prev_pe = (my_pe - 1) % n_pes
expected = xp.arange(size, dtype="float32") + 100 * prev_pe
assert bool((dst == expected).all()), f"PE {my_pe} got {dst}, expected {expected}"
print(f"PE {my_pe} of {n_pes} received from PE {prev_pe}: {dst}")

nvshmem.free_array(src)
nvshmem.free_array(dst)
nvshmem.finalize()
