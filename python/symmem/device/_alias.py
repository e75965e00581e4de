"""`import symmem.core.device.numba` gives the very module `symmem.device.numba`.

NVSHMEM4Py programs import `nvshmem.core.device.numba`; loading the files a
second time under the `symmem.core` name would register every numba overload
twice on different functions, so a finder maps each `symmem.core.device...`
name onto the module already known by its `symmem.device...` name."""
import importlib
import importlib.abc
import importlib.util
import sys

_ALIAS = "symmem.core.device"
_REAL = "symmem.device"


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name != _ALIAS and not name.startswith(_ALIAS + "."):
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return importlib.import_module(_REAL + spec.name[len(_ALIAS):])

    def exec_module(self, module):
        pass  # already executed under its real name


def install():
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
