"""Teams. On the cpu backend TEAM_WORLD, TEAM_SHARED, TEAM_NODE and
TEAM_GPU_LEADERS hold every PE of the host; TEAM_SAME_MYPE_NODE and
TEAM_SAME_GPU hold only the calling PE. On the gpu backend they hold the PEs
as NVSHMEM places them (TEAM_NODE: the PEs of this host, TEAM_SAME_MYPE_NODE:
the PEs with this PE's local number on every host). New teams come from
splits, which are collective over the parent; PEs outside a new team get
None."""
from symmem import _symmem
from symmem._enums import Teams
from symmem._errors import invalid
from symmem._lifecycle import get_unique_id


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

# The queries and the team checks are the C module's: a team argument must
# be an int handle of a team this PE is a member of.
team_my_pe = _symmem.team_my_pe
team_n_pes = _symmem.team_n_pes
team_translate_pe = _symmem.team_translate_pe


def _made(handle, name, config):
    if handle < 0:
        return None
    _names[handle] = name or f"TEAM_{handle}"
    _configs[handle] = config if config is not None else TeamConfig()
    return Team(handle, _names[handle])


def team_split_strided(parent_team, start, stride, size, config=None, config_mask=0,
                       new_team_name=None):
    """Collective over parent_team: the team parent[start + i*stride], i < size."""
    handle = _symmem.team_split_strided(parent_team, start, stride, size)
    return _made(handle, new_team_name, config)


def team_split_2d(parent_team, xrange, xaxis_config=None, xaxis_mask=0, yaxis_config=None,
                  yaxis_mask=0, new_team_name=None):
    """Collective over parent_team: (x team of xrange consecutive PEs, y team of
    the PEs with the same x index)."""
    x, y = _symmem.team_split_2d(parent_team, xrange)
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
    npes = npes if npes is not None else n_pes
    pe_idx_in_team = pe_idx_in_team if pe_idx_in_team is not None else my_pe
    key = _team_key(getattr(config, "uniqueid", None))
    return _made(_symmem.team_init(key, npes, pe_idx_in_team), new_team_name, config)


def team_destroy(team):
    """Collective over the team."""
    _symmem.team_destroy(team)
    _configs.pop(int(team), None)
    _names.pop(int(team), None)


def team_get_config(team):
    return _configs.get(_symmem.check_team(team, "team_get_config"), TeamConfig())


def get_team_unique_id():
    return get_unique_id()


# barrier(team, stream=None) and sync(team, stream=None) are the C module's
# own functions (symmem.barrier, symmem.sync): every check is in C.
barrier = _symmem.barrier
sync = _symmem.sync


__all__ = ["Team", "TeamConfig", "Teams", "team_my_pe", "team_n_pes", "team_translate_pe",
           "team_split_strided", "team_split_2d", "team_init", "team_destroy", "team_get_config",
           "get_team_unique_id", "barrier", "sync"]
