"""`import symmem.core as nvshmem`: the same API as `import symmem`.

NVSHMEM4Py programs also write `nvshmem.core.array(...)` after importing
`nvshmem.core as nvshmem`, so this module is its own `core` attribute.
`symmem.core.device.numba` is `symmem.device.numba` itself, and
`symmem.core.utils` is `symmem.utils` (device/_alias.py): this module has a
`__path__` so that the import system looks below it."""

import sys

from symmem import *  # noqa: F401,F403
from symmem import __all__  # noqa: F401
from symmem import interop, utils  # noqa: F401  (nvshmem.core.utils as well)

from symmem import device  # noqa: E402,F401  (nvshmem.core.device)
from symmem.device import _alias  # noqa: E402

core = sys.modules[__name__]
__path__ = []  # a package to the import system: the finder serves device.* and utils
_alias.install()
