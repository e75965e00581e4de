"""The two exception types and the helpers that build exceptions. All are
the C module's (_symmem): it adds "[pe N] " to the message and sets .msg and
.status, for its own errors and for the package's alike."""

from symmem import _symmem

NvshmemError = _symmem.NvshmemError
NvshmemInvalid = _symmem.NvshmemInvalid

invalid = _symmem.invalid  # invalid(message) -> NvshmemInvalid, to raise
exception = _symmem.exception  # exception(_symmem.ERR_..., message) -> its exception
require_initialized = _symmem.require_initialized  # raises NvshmemInvalid naming the call


class NvshmemWarning(UserWarning):
    """What symmem warns about (NVSHMEM4Py's warning type), a UserWarning.

    symmem warns with it when a split's new_team_name names a live team
    (the name moves to the new team). .msg is the text.

    Args:
        msg: the message.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     warnings.warn(symmem.NvshmemWarning("careful"))
        >>> caught[0].message.msg
        'careful'
    """

    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg

    def __repr__(self):
        return f"<NvshmemWarning: {self.msg}>"
