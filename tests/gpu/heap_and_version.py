"""SYMMEM_SYMMETRIC_SIZE reaches NVSHMEM as NVSHMEM_SYMMETRIC_SIZE (when that
is unset), and get_version() names the NVSHMEM library that runs.
Run: SYMMEM_SYMMETRIC_SIZE=256M python -m symmem.run -n 2 tests/gpu/heap_and_version.py"""

import ctypes
import importlib.metadata
import os
import re

import symmem as nvshmem

assert os.environ.get("SYMMEM_SYMMETRIC_SIZE") == "256M"
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
# The backend set the variable in this process before NVSHMEM started; the
# C environment is read directly (os.environ is a copy made at start-up).
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
assert libc.getenv(b"NVSHMEM_SYMMETRIC_SIZE") == str(256 << 20).encode(), libc.getenv(
    b"NVSHMEM_SYMMETRIC_SIZE"
)
big = nvshmem.array((48 << 20,), dtype="int32")  # 192 MiB of the 256
big[-1] = me + 1
nvshmem.barrier_all()
assert nvshmem.g(big[-1:], (me + 1) % n) == (me + 1) % n + 1
nvshmem.free_array(big)

version = nvshmem.get_version().libnvshmem_version
assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
wheels = [
    d.metadata["Name"]
    for d in importlib.metadata.distributions()
    if (d.metadata["Name"] or "").startswith("nvidia-nvshmem")
]
if wheels:  # the wheel's version starts with the library's
    assert importlib.metadata.version(wheels[0]).startswith(version), (wheels, version)
nvshmem.finalize()
assert nvshmem.get_version().libnvshmem_version == ""
print(f"PE {me} OK (heap and version {version})")
