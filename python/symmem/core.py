"""`import symmem.core as nvshmem`: the same API as `import symmem`.

NVSHMEM4Py programs also write `nvshmem.core.array(...)` after importing
`nvshmem.core as nvshmem`, so this module is its own `core` attribute."""
import sys

from symmem import *  # noqa: F401,F403
from symmem import __all__  # noqa: F401
from symmem import interop  # noqa: F401

core = sys.modules[__name__]
