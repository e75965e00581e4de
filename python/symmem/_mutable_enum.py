"""MutableEnum: NVSHMEM4Py's enum-like mapping that gains and loses members
at run time (its Teams is one). symmem's Teams is an IntEnum with the same
lookups (_enums.py), so that numba can compile its members; MutableEnum is
here for programs that build their own."""

from symmem._errors import invalid


class MutableEnum:
    """NVSHMEM4Py's enum-like mapping whose members change at run time.

    ``e.NAME``, ``e["NAME"]``, ``"NAME" in e``, iteration over the names,
    keys() / values() / items(), add(), remove() and remove_by_value().

    Args:
        members: the first members, NAME=value.

    Example:
        >>> e = symmem.MutableEnum(RED=1)
        >>> e.add("BLUE", 2)
        >>> e.BLUE, list(e)
        (2, ['RED', 'BLUE'])
        >>> e.remove_by_value(1)
        >>> "RED" in e
        False
    """

    def __init__(self, **members):
        self._members = dict(members)

    @classmethod
    def from_enum(cls, enum_cls):
        """A MutableEnum of an Enum class's members (aliases left out, as
        iterating the class does)."""
        return cls(**{member.name: member.value for member in enum_cls})

    def add(self, key, value):
        """Add member key = value; NvshmemInvalid where key is a member."""
        if key in self._members:
            raise invalid(
                f"MutableEnum.add: key={key!r} is already a member "
                f"(= {self._members[key]!r}); remove it first"
            )
        self._members[key] = value

    def remove(self, key):
        """Remove member key; NvshmemInvalid where it is none."""
        if key not in self._members:
            raise invalid(f"MutableEnum.remove: key={key!r} is not a member")
        del self._members[key]

    def remove_by_value(self, value):
        """Removes the first member equal to value; nothing if there is none."""
        for key, member in self._members.items():
            if member == value:
                del self._members[key]
                return

    def __getattr__(self, name):
        members = self.__dict__.get("_members", {})  # absent while unpickling
        if name in members:
            return members[name]
        raise AttributeError(f"MutableEnum has no member {name!r}")

    def __getitem__(self, key):
        return self._members[key]  # KeyError names the key

    def __contains__(self, key):
        return key in self._members

    def __iter__(self):
        return iter(self._members)

    def __len__(self):
        return len(self._members)

    def keys(self):
        return self._members.keys()

    def values(self):
        return self._members.values()

    def items(self):
        return self._members.items()

    def __repr__(self):
        return f"<MutableEnum {', '.join(f'{k}={v}' for k, v in self._members.items())}>"


__all__ = ["MutableEnum"]
