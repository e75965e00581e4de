"""The docstrings of symmem.device.numba's names (its _stubs.stub() gives each its own; the warp
and block forms take their thread-scope function's, see scoped()). Google
style, as the host calls': a summary, Args, Returns, Raises (what a bad
call does inside @numba.njit on the cpu backend and inside a
@numba.cuda.jit kernel on the gpu backend; docs/device.md, 'Errors inside
kernels') and an Example, a literal block since it needs a jitted
function. The same summaries and argument texts are the base of
symmem.device.cute's and numba_cuda_mlir's docstrings (_dsl_docs.py), so
these files import nothing of numba.

Each kind of call has its docstrings built in a module of its own
(_device_docs_rma, _atomics, _teams, _smem_multicast) from the parts in
_device_doc_format.py; DOCS here holds them all."""

from . import (
    _device_docs_atomics,
    _device_docs_rma,
    _device_docs_smem_multicast,
    _device_docs_teams,
)

from ._device_doc_format import _ARGS, _wrap  # noqa: F401 (_dsl_docs.py reads _ARGS here)

DOCS = {
    **_device_docs_rma.DOCS,
    **_device_docs_atomics.DOCS,
    **_device_docs_teams.DOCS,
    **_device_docs_smem_multicast.DOCS,
}


def scoped(name, base):
    """The docstring of name (base's _warp or _block form)."""
    scope = "warp" if name.endswith("_warp") else "block"
    doc = DOCS[base]
    summary, rest = doc.split("\n\n", 1)
    note = (
        f"{name}: {base}, called by every thread of the {scope} with the same "
        f"arguments (in @numba.cuda.jit kernels; in @numba.njit code, where a PE is one "
        f"thread, it is {base})."
    )
    return (
        "\n".join(_wrap(note, "", hang=0))
        + "\n\n"
        + summary
        + "\n\n"
        + rest.replace(f"dev.{base}(", f"dev.{name}(")
    )
