"""`import symmem.core.device.numba` gives the very module `symmem.device.numba`
(and so for .cute and .numba_cuda_mlir), `import symmem.core.utils` the module
`symmem.utils`, and `import symmem.core.interop.cute` `symmem.interop.cute`.

NVSHMEM4Py programs import `nvshmem.core.device.numba`,
`nvshmem.core.interop.cute` and `nvshmem.core.utils`; loading the files a second time under the
`symmem.core` name would register every numba overload twice on different
functions, so a finder maps each such name onto the module already known by
its real name."""

import importlib
import importlib.util
import sys

_ALIASES = {
    "symmem.core.device": "symmem.device",
    "symmem.core.utils": "symmem.utils",
    "symmem.core.interop": "symmem.interop",
}


def _real_name(name):
    for alias, real in _ALIASES.items():
        if name == alias or name.startswith(alias + "."):
            return real + name[len(alias) :]
    return None


# A finder and loader by their methods alone: importlib.abc's base classes
# would import importlib.resources (tempfile, pathlib, shutil, ...), 17 ms
# of every PE's start.
class _Finder:
    def find_spec(self, name, path=None, target=None):
        if _real_name(name) is None:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return importlib.import_module(_real_name(spec.name))

    def exec_module(self, module):
        pass  # already executed under its real name


def install():
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
