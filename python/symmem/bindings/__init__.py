"""`nvshmem.bindings` on symmem: `import symmem.bindings as bindings` (see
nvshmem.py, also importable as symmem.bindings.nvshmem, the name some
programs import it by)."""

from symmem.bindings import nvshmem  # noqa: F401
from symmem.bindings.nvshmem import *  # noqa: F401,F403
from symmem.bindings.nvshmem import __all__  # noqa: F401
