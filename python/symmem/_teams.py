"""Teams. On the cpu backend TEAM_WORLD, TEAM_SHARED, TEAM_NODE and
TEAM_GPU_LEADERS hold every PE of the host; TEAM_SAME_MYPE_NODE and
TEAM_SAME_GPU hold only the calling PE. On the gpu backend they hold the PEs
as NVSHMEM places them (TEAM_NODE: the PEs of this host, TEAM_SAME_MYPE_NODE:
the PEs with this PE's local number on every host). New teams come from
splits, which are collective over the parent; PEs outside a new team get
None.

Each team a PE makes is also Teams.<its name> on that PE (NVSHMEM4Py's
registry): new_team_name, or NVSHMEM4Py's default TEAM_<handle> (2-D splits:
<name>_X and <name>_Y, or TEAM_X_<handle> and TEAM_Y_<handle>), until
team_destroy or finalize. Names are checked before the collective starts."""

import os
import warnings

from symmem import _symmem
from symmem._enums import Teams, _TeamsType
from symmem._errors import NvshmemWarning, invalid
from symmem._lifecycle import UniqueID, _finalize_hooks


class Team(int):
    """A team made by a split or team_init: an int handle with a name.

    The handle is the same on every member; every call that takes a team
    takes it (or a Teams member). ``Teams.<name>`` finds it on this PE until
    team_destroy() or finalize(). Made by symmem, not directly.

    Args:
        handle: the team's handle.
        name: its name (new_team_name, or TEAM_<handle>).

    Example:
        >>> t = symmem.team_split_strided(symmem.Teams.TEAM_WORLD, 0, 1,
        ...                               symmem.n_pes(), new_team_name="ALL")
        >>> t.name, symmem.Teams.ALL is t
        ('ALL', True)
        >>> symmem.team_destroy(t)
    """

    def __new__(cls, handle, name):
        team = super().__new__(cls, handle)
        team.name = name
        return team

    def __repr__(self):
        return f"<Team {self.name}={int(self)}>"


class TeamConfig:
    """NVSHMEM's team configuration, for the splits and team_init.

    symmem keeps it for team_get_config(); team_init() reads its uniqueid.

    Args:
        version: the configuration's version (NVSHMEM's is 1).
        num_contexts: NVSHMEM's number of contexts (kept, not used).
        uniqueid: for team_init(): what the PEs of one new team share (a
            TeamUniqueId, its .value, an int, a UniqueID or bytes).

    Example:
        >>> config = symmem.TeamConfig(num_contexts=2)
        >>> config.num_contexts
        2
    """

    def __init__(self, version=1, num_contexts=0, uniqueid=None):
        self.version = version
        self.num_contexts = num_contexts
        self.uniqueid = uniqueid

    def __repr__(self):
        return f"TeamConfig(version={self.version}, num_contexts={self.num_contexts})"


class TeamUniqueId(UniqueID):
    """The number the members of one team_init() meet on.

    NVSHMEM's nvshmemx_team_uniqueid_t, a uint64: .value (settable) and
    .ptr, as in NVSHMEM4Py. It is a UniqueID too, whose first 8 bytes hold
    the value (little-endian), so it pickles and round-trips through bytes.

    Args:
        value: the uint64, or the bytes of one (as from_bytes takes).

    Raises:
        NvshmemInvalid: value is not a uint64 (or the bytes of one).

    Example:
        >>> tid = symmem.TeamUniqueId(7)
        >>> tid.value
        7
        >>> symmem.TeamUniqueId.from_bytes(bytes(tid)).value
        7
    """

    def __init__(self, value=0):
        if isinstance(value, int) and not isinstance(value, bool):
            super().__init__()
            self.value = value
        else:
            super().__init__(value)  # the bytes of one (from_bytes)

    @property
    def value(self):
        return int.from_bytes(self._data[:8].tobytes(), "little")

    @value.setter
    def value(self, value):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**64:
            raise invalid(f"TeamUniqueId: value={value!r} is not a uint64")
        self._data[:8] = memoryview(value.to_bytes(8, "little"))

    def __reduce__(self):
        return (TeamUniqueId, (self.value,))

    def __repr__(self):
        return f"TeamUniqueId(value={self.value})"


_configs: dict = {}  # handle -> TeamConfig of the teams this PE made

# The queries and the team checks are the C module's: a team argument must
# be an int handle of a team this PE is a member of.
team_my_pe = _symmem.team_my_pe
team_n_pes = _symmem.team_n_pes
team_translate_pe = _symmem.team_translate_pe


def _check_name(name, call):
    """new_team_name: None or a str that is not a predefined team's name. Every
    PE that calls checks before the collective, so a refused name never
    leaves the other PEs waiting in it (the program passes the same name)."""
    if name is None:
        return
    if not isinstance(name, str) or not name:
        raise invalid(f"{call}: new_team_name={name!r} is not a non-empty str")
    if name in Teams._member_map_:
        raise invalid(f"{call}: new_team_name={name!r} is a predefined team's name")


def _made(handle, name, config, call="team_split_strided"):
    if handle < 0:
        return None
    name = name or f"TEAM_{handle}"
    old = _TeamsType._made.get(name)
    if old is not None:
        # NVSHMEM4Py raises ValueError here, after the team exists (its handle
        # lost); symmem keeps both teams and moves the name to the new one.
        warnings.warn(
            NvshmemWarning(
                f"[pe {_symmem.my_pe()}] {call}: new_team_name={name!r} named live team {old!r}; "
                f"Teams.{name} now names the new team {handle} ({old!r} keeps its handle)"
            ),
            stacklevel=3,
        )
    _configs[handle] = config if config is not None else TeamConfig()
    team = Team(handle, name)
    _TeamsType._made[name] = team
    return team


def _forget(handle):
    _configs.pop(handle, None)
    for name in [k for k, team in _TeamsType._made.items() if int(team) == handle]:
        del _TeamsType._made[name]


def team_split_strided(
    parent_team, start, stride, size, config=None, config_mask=0, new_team_name=None
):
    """A new team of every stride-th PE of parent_team: collective over it.

    The members are the parent's PEs start, start + stride, ..., size of
    them, numbered 0 to size - 1 in that order. Every PE of the parent calls
    it with the same arguments.

    A start, stride and size whose last member lies beyond the parent team
    raise NvshmemInvalid on each PE that calls, before any PE waits for
    another, naming the PE it would reach. NVSHMEM4Py leaves this check to
    NVSHMEM, which checks only against TEAM_WORLD: a last member beyond the
    world fails on every PE after a sync of the parent (NVSHMEM4Py raises
    nvshmem.bindings.NVSHMEMError), and one inside the world but outside a
    split parent makes a team holding PEs that never took part.

    Args:
        parent_team: the team to split (a Teams member or a Team).
        start: the first member's number in parent_team.
        stride: the distance between members, 1 or more.
        size: the number of members, 1 or more.
        config: a TeamConfig, kept for team_get_config().
        config_mask: NVSHMEM's mask of config's fields (accepted).
        new_team_name: the name Teams.<name> finds it by on this PE
            (default TEAM_<handle>).

    Returns:
        The new Team on its members; None on the other PEs of the parent.

    Raises:
        NvshmemInvalid: new_team_name is not a non-empty str, or is a
            predefined team's name; start, stride or size is out of
            range; parent_team is not a team this PE is a member of; the
            PEs asked for different splits (the cpu backend checks);
            symmem is not initialised.
        NvshmemError: a PE died, SYMMEM_TIMEOUT seconds passed, or the
            backend failed.

    Example:
        >>> world = symmem.Teams.TEAM_WORLD
        >>> even = symmem.team_split_strided(world, 0, 2, (symmem.n_pes() + 1) // 2)
        >>> (even is None) == (symmem.my_pe() % 2 == 1)
        True
        >>> if even is not None:
        ...     assert symmem.team_my_pe(even) == symmem.my_pe() // 2
        ...     symmem.team_destroy(even)
    """
    _check_name(new_team_name, "team_split_strided")
    handle = _symmem.team_split_strided(parent_team, start, stride, size)
    return _made(handle, new_team_name, config)


def team_split_2d(
    parent_team,
    xrange,
    xaxis_config=None,
    xaxis_mask=0,
    yaxis_config=None,
    yaxis_mask=0,
    new_team_name=None,
):
    """Split parent_team into a 2-D grid's rows and columns: collective over it.

    The parent's PEs, in order, fill rows of xrange PEs: this PE's x team
    is its row, its y team the PEs with the same place in their rows.

    Args:
        parent_team: the team to split.
        xrange: the number of PEs in a row (the last row may be shorter).
        xaxis_config: a TeamConfig for the x team (kept).
        xaxis_mask: NVSHMEM's mask of xaxis_config's fields (accepted).
        yaxis_config: a TeamConfig for the y team (kept).
        yaxis_mask: NVSHMEM's mask of yaxis_config's fields (accepted).
        new_team_name: names them <name>_X and <name>_Y (default
            TEAM_X_<handle> and TEAM_Y_<handle>).

    Returns:
        (x team, y team), each a Team.

    Raises:
        NvshmemInvalid: new_team_name is not a non-empty str, or is a
            predefined team's name; xrange is less than 1; parent_team is
            not a team this PE is a member of; the PEs asked for different
            splits (the cpu backend checks); symmem is not initialised.
        NvshmemError: a PE died, SYMMEM_TIMEOUT seconds passed, or the
            backend failed.

    Example:
        >>> x, y = symmem.team_split_2d(symmem.Teams.TEAM_WORLD, 2, new_team_name="GRID")
        >>> symmem.team_my_pe(x) == symmem.my_pe() % 2
        True
        >>> symmem.team_my_pe(y) == symmem.my_pe() // 2
        True
        >>> symmem.team_destroy(x); symmem.team_destroy(y)
    """
    _check_name(new_team_name, "team_split_2d")
    x, y = _symmem.team_split_2d(parent_team, xrange)
    xname, yname = (
        (f"{new_team_name}_X", f"{new_team_name}_Y")
        if new_team_name
        else (f"TEAM_X_{x}", f"TEAM_Y_{y}")
    )
    return (
        _made(x, xname, xaxis_config, "team_split_2d"),
        _made(y, yname, yaxis_config, "team_split_2d"),
    )


def _team_key(uniqueid):
    """The number PEs of one team_init meet on: from TeamConfig.uniqueid (an
    int, a TeamUniqueId or its .value, a UniqueID, or bytes); a fixed one if unset."""
    if uniqueid is None:
        return 0x5EED
    if isinstance(uniqueid, TeamUniqueId):
        return uniqueid.value
    if isinstance(uniqueid, int) and not isinstance(uniqueid, bool):
        return uniqueid & (2**64 - 1)
    try:
        data = bytes(uniqueid)
    except TypeError:
        raise invalid(
            f"team_init: config.uniqueid={uniqueid!r} is not an int, a UniqueID or bytes"
        ) from None
    h = 1469598103934665603  # FNV-1a
    for byte in data:
        h = ((h ^ byte) * 1099511628211) & (2**64 - 1)
    return h


def team_init(
    config=None,
    config_mask=0,
    npes=None,
    pe_idx_in_team=None,
    new_team_name=None,
    n_pes=None,
    my_pe=None,
):
    """A team of npes PEs from any group: collective over the group.

    Each member passes its place in the team, and all pass a config with
    the same uniqueid (teams made at the same time need different ones:
    get_team_unique_id() makes one). The seeds' spelling
    ``team_init(config, mask, n_pes=..., my_pe=...)`` works too.

    Args:
        config: a TeamConfig whose uniqueid the members share (None, or
            no uniqueid: a fixed one).
        config_mask: NVSHMEM's mask of config's fields (accepted).
        npes: the number of members, in [1, n_pes()].
        pe_idx_in_team: this PE's number in the new team, in [0, npes).
        new_team_name: the name Teams.<name> finds it by on this PE.
        n_pes: the seeds' name for npes.
        my_pe: the seeds' name for pe_idx_in_team.

    Returns:
        The new Team.

    Raises:
        NvshmemInvalid: new_team_name is not a non-empty str, or is a
            predefined team's name; config.uniqueid is not an int, a
            UniqueID or bytes; npes or pe_idx_in_team is missing or out of
            range; the members disagree (the cpu backend checks); symmem
            is not initialised.
        NvshmemError: a PE died, SYMMEM_TIMEOUT seconds passed, or the
            backend failed.

    Example:
        >>> config = symmem.TeamConfig(uniqueid=symmem.TeamUniqueId(42))
        >>> t = symmem.team_init(config, 0, symmem.n_pes(),
        ...                      symmem.n_pes() - 1 - symmem.my_pe())  # reversed
        >>> symmem.team_translate_pe(t, 0, symmem.Teams.TEAM_WORLD) == symmem.n_pes() - 1
        True
        >>> symmem.team_destroy(t)
    """
    _check_name(new_team_name, "team_init")
    npes = npes if npes is not None else n_pes
    pe_idx_in_team = pe_idx_in_team if pe_idx_in_team is not None else my_pe
    key = _team_key(getattr(config, "uniqueid", None))
    return _made(_symmem.team_init(key, npes, pe_idx_in_team), new_team_name, config, "team_init")


def team_destroy(team):
    """Destroy a team that a split or team_init made: collective over it.

    Every member calls it; Teams.<name> no longer finds it.

    Args:
        team: the Team (or its handle), or, as NVSHMEM4Py takes it, the
            name of a team this PE made.

    Raises:
        NvshmemInvalid: team is None, not a team, a name of no live team,
            a predefined team, or a team this PE is not a member of;
            symmem is not initialised.
        NvshmemError: a PE died, SYMMEM_TIMEOUT seconds passed, or the
            backend failed.

    Example:
        >>> t = symmem.team_split_strided(symmem.Teams.TEAM_WORLD, 0, 1, symmem.n_pes(),
        ...                               new_team_name="TMP")
        >>> symmem.team_destroy("TMP")
        >>> "TMP" in symmem.Teams
        False
    """
    if isinstance(team, str):
        found = _TeamsType._made.get(team, Teams._member_map_.get(team))
        if found is None:
            raise invalid(
                f"team_destroy: team={team!r} names no live team of this PE "
                f"(live: {', '.join(_TeamsType._made) or 'none'})"
            )
        team = found
    _symmem.team_destroy(team)
    _forget(int(team))


def team_get_config(team):
    """The TeamConfig a team was made with.

    Args:
        team: a team this PE is a member of.

    Returns:
        The TeamConfig given to the split or team_init that made it, or a
        default TeamConfig (for predefined teams and those made without).

    Raises:
        NvshmemInvalid: team is not a team this PE is a member of; symmem
            is not initialised.

    Example:
        >>> symmem.team_get_config(symmem.Teams.TEAM_WORLD).version
        1
    """
    return _configs.get(_symmem.check_team(team, "team_get_config"), TeamConfig())


def get_team_unique_id():
    """A fresh TeamUniqueId (a random uint64) for a team_init() config.

    One PE makes it and hands it (or its .value) to the other members.

    Returns:
        A TeamUniqueId.

    Example:
        >>> tid = symmem.get_team_unique_id()
        >>> 0 <= tid.value < 2**64
        True
    """
    return TeamUniqueId(int.from_bytes(os.urandom(8), "little"))


def _forget_all():
    _configs.clear()
    _TeamsType._made.clear()


_finalize_hooks.append(_forget_all)  # the runtime's teams end with it

# barrier(team, stream=None) and sync(team, stream=None) are the C module's
# own functions (symmem.barrier, symmem.sync): every check is in C.
barrier = _symmem.barrier
sync = _symmem.sync


__all__ = [
    "Team",
    "TeamConfig",
    "TeamUniqueId",
    "Teams",
    "team_my_pe",
    "team_n_pes",
    "team_translate_pe",
    "team_split_strided",
    "team_split_2d",
    "team_init",
    "team_destroy",
    "team_get_config",
    "get_team_unique_id",
    "barrier",
    "sync",
]
