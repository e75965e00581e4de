"""Device-side programming: code that moves data itself, outside symmem's calls.

`symmem.device.numba` (import it explicitly; it needs numba) gives
NVSHMEM4Py's device names for `@numba.njit` functions on the cpu backend.
The C side is the device state block (`src/device/state.h`), whose address
`symmem._symmem.device_state()` gives. See docs/architecture.md."""
