"""NVSHMEMError and check_status: how NVSHMEM4Py's bindings turn a nonzero
status into an exception. Here NVSHMEMError is also an NvshmemError.

The calls of this package raise symmem's own exceptions (NvshmemInvalid for
misuse, NvshmemError for failures), each naming the call, the argument, the
value and the PE, as symmem.core's do; NVSHMEM4Py's raise NVSHMEMError with a
status code, or abort inside NVSHMEM."""

import numpy as np

from symmem._errors import NvshmemError, invalid
from symmem.bindings._enums import Status


class NVSHMEMError(NvshmemError):
    """NVSHMEMError(status): .status is the nonzero nvshmemx_status."""

    def __init__(self, status, msg=None):
        try:
            name = Status(status).name
        except ValueError:
            name = str(status)
        self.status = status
        self.msg = msg or f"Status code {status} ({name})"
        super().__init__(self.msg)

    def __reduce__(self):
        return (type(self), (self.status, self.msg))


def check_status(status):
    """Raises NVSHMEMError(status) where status is not 0 (SUCCESS)."""
    if isinstance(status, bool) or not isinstance(status, (int, np.integer)):
        raise invalid(f"check_status: status={status!r:.60} is not an int")
    if status != 0:
        raise NVSHMEMError(status)
