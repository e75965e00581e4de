"""Teams. On the cpu backend TEAM_WORLD, TEAM_SHARED, TEAM_NODE and
TEAM_GPU_LEADERS hold every PE of the host; TEAM_SAME_MYPE_NODE and
TEAM_SAME_GPU hold only the calling PE. New teams come from splits, which are
collective over the parent; PEs outside a new team get None."""
from symmem import _symmem
from symmem._enums import Teams
from symmem._errors import invalid, require_initialized
from symmem._lifecycle import get_unique_id

_MY_PE, _N_PES, _TRANSLATE = 0, 1, 2


class Team(int):
    """A team made by a split: an int handle (the same on every member) with a name."""

    def __new__(cls, handle, name):
        team = super().__new__(cls, handle)
        team.name = name
        return team

    def __repr__(self):
        return f"<Team {self.name}={int(self)}>"


class TeamConfig:
    """NVSHMEM's team configuration; the cpu backend keeps it for team_get_config."""

    def __init__(self, version=1, num_contexts=0, uniqueid=None):
        self.version = version
        self.num_contexts = num_contexts
        self.uniqueid = uniqueid

    def __repr__(self):
        return f"TeamConfig(version={self.version}, num_contexts={self.num_contexts})"


_configs = {}  # handle -> TeamConfig of the teams this PE made
_names = {}    # handle -> name


def _handle(team, call, arg="team"):
    require_initialized(call)
    if team is None:
        raise invalid(f"{call}: {arg} is None (this PE is not a member of that team)")
    if isinstance(team, bool) or not isinstance(team, int):
        raise invalid(f"{call}: {arg}={team!r} is not a team")
    if not -2**31 <= team < 2**31 or _symmem.team_query(_N_PES, int(team)) < 0:
        raise invalid(f"{call}: {arg}={int(team)} is not a valid team (never created, "
                      "destroyed, or this PE is not a member)")
    return int(team)


def _team_int(team, call, arg="team"):
    """team as an int, for calls whose C side checks the team itself (that
    it exists and this PE is a member): the fast path of barriers and
    collectives."""
    if team is None:
        raise invalid(f"{call}: {arg} is None (this PE is not a member of that team)")
    if isinstance(team, bool) or not isinstance(team, int):
        raise invalid(f"{call}: {arg}={team!r} is not a team")
    return int(team)


def team_my_pe(team):
    return _symmem.team_query(_MY_PE, _handle(team, "team_my_pe"))


def team_n_pes(team):
    return _symmem.team_query(_N_PES, _handle(team, "team_n_pes"))


def team_translate_pe(src_team, src_pe, dest_team):
    """src_pe of src_team as numbered in dest_team; -1 where not a member."""
    src = _handle(src_team, "team_translate_pe", "src_team")
    dest = _handle(dest_team, "team_translate_pe", "dest_team")
    n = _symmem.team_query(_N_PES, src)
    if isinstance(src_pe, bool) or not isinstance(src_pe, int) or not 0 <= src_pe < n:
        raise invalid(f"team_translate_pe: src_pe={src_pe!r} is outside [0, {n})")
    return _symmem.team_query(_TRANSLATE, src, src_pe, dest)


def _made(handle, name, config):
    if handle < 0:
        return None
    _names[handle] = name or f"TEAM_{handle}"
    _configs[handle] = config if config is not None else TeamConfig()
    return Team(handle, _names[handle])


def team_split_strided(parent_team, start, stride, size, config=None, config_mask=0,
                       new_team_name=None):
    """Collective over parent_team: the team parent[start + i*stride], i < size."""
    parent = _handle(parent_team, "team_split_strided", "parent_team")
    return _made(_symmem.team_split_strided(parent, start, stride, size), new_team_name, config)


def team_split_2d(parent_team, xrange, xaxis_config=None, xaxis_mask=0, yaxis_config=None,
                  yaxis_mask=0, new_team_name=None):
    """Collective over parent_team: (x team of xrange consecutive PEs, y team of
    the PEs with the same x index)."""
    parent = _handle(parent_team, "team_split_2d", "parent_team")
    x, y = _symmem.team_split_2d(parent, xrange)
    base = new_team_name or "TEAM_2D"
    return _made(x, f"{base}_X", xaxis_config), _made(y, f"{base}_Y", yaxis_config)


def _team_key(uniqueid):
    """The number PEs of one team_init meet on: from TeamConfig.uniqueid (an
    int, a UniqueID from get_team_unique_id(), or bytes); a fixed one if unset."""
    if uniqueid is None:
        return 0x5EED
    if isinstance(uniqueid, int) and not isinstance(uniqueid, bool):
        return uniqueid & (2**64 - 1)
    try:
        data = bytes(uniqueid)
    except TypeError:
        raise invalid(f"team_init: config.uniqueid={uniqueid!r} is not an int, a UniqueID or "
                      "bytes") from None
    h = 1469598103934665603  # FNV-1a
    for byte in data:
        h = ((h ^ byte) * 1099511628211) & (2**64 - 1)
    return h


def team_init(config=None, config_mask=0, npes=None, pe_idx_in_team=None, new_team_name=None,
              n_pes=None, my_pe=None):
    """A team of npes PEs from any group (collective over the group): each
    member passes its place in the team, and all pass a config with the same
    uniqueid (teams made at the same time need different ones). The seeds'
    spelling team_init(config, mask, n_pes=..., my_pe=...) works too."""
    require_initialized("team_init")
    npes = npes if npes is not None else n_pes
    pe_idx_in_team = pe_idx_in_team if pe_idx_in_team is not None else my_pe
    for name, value in (("npes", npes), ("pe_idx_in_team", pe_idx_in_team)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise invalid(f"team_init: {name}={value!r} must be an int")
    key = _team_key(getattr(config, "uniqueid", None))
    return _made(_symmem.team_init(key, npes, pe_idx_in_team), new_team_name, config)


def team_destroy(team):
    """Collective over the team."""
    handle = _handle(team, "team_destroy")
    _symmem.team_destroy(handle)
    _configs.pop(handle, None)
    _names.pop(handle, None)


def team_get_config(team):
    handle = _handle(team, "team_get_config")
    return _configs.get(handle, TeamConfig())


def get_team_unique_id():
    return get_unique_id()


# barrier(team, stream=None) and sync(team, stream=None) are the C module's
# own functions (symmem.barrier, symmem.sync): every check is in C.
barrier = _symmem.barrier
sync = _symmem.sync


__all__ = ["Team", "TeamConfig", "Teams", "team_my_pe", "team_n_pes", "team_translate_pe",
           "team_split_strided", "team_split_2d", "team_init", "team_destroy", "team_get_config",
           "get_team_unique_id", "barrier", "sync"]
