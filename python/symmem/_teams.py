"""Teams: the predefined ones, on one host. TEAM_WORLD, TEAM_SHARED and
TEAM_NODE hold every PE; TEAM_SAME_MYPE_NODE and TEAM_SAME_GPU hold only the
calling PE; TEAM_GPU_LEADERS holds every PE (each PE leads its own device)."""
from symmem import _symmem
from symmem._enums import Teams
from symmem._errors import invalid, require_initialized

_WHOLE_WORLD = (Teams.TEAM_WORLD, Teams.TEAM_SHARED, Teams.TEAM_NODE, Teams.TEAM_GPU_LEADERS)
_JUST_ME = (Teams.TEAM_SAME_MYPE_NODE, Teams.TEAM_SAME_GPU)


def _predefined(team, call):
    require_initialized(call)
    try:
        team = Teams(team)
    except ValueError:
        raise invalid(f"{call}: team={team!r} is not a valid team") from None
    if team == Teams.TEAM_INVALID:
        raise invalid(f"{call}: team=TEAM_INVALID is not a valid team")
    return team


def team_my_pe(team):
    team = _predefined(team, "team_my_pe")
    return 0 if team in _JUST_ME else _symmem.my_pe()


def team_n_pes(team):
    team = _predefined(team, "team_n_pes")
    return 1 if team in _JUST_ME else _symmem.n_pes()


def team_translate_pe(src_team, src_pe, dest_team):
    """src_pe of src_team as numbered in dest_team; -1 where not a member."""
    src_team = _predefined(src_team, "team_translate_pe")
    dest_team = _predefined(dest_team, "team_translate_pe")
    if not 0 <= src_pe < team_n_pes(src_team):
        raise invalid(f"team_translate_pe: src_pe={src_pe} is outside [0, {team_n_pes(src_team)})")
    world_pe = _symmem.my_pe() if src_team in _JUST_ME else src_pe
    if dest_team in _JUST_ME:
        return 0 if world_pe == _symmem.my_pe() else -1
    return world_pe


def barrier(team, stream=None):
    """Completes this PE's puts, then waits for every PE of the team."""
    if _predefined(team, "barrier") in _WHOLE_WORLD:
        _symmem.barrier_all(stream)
    else:
        _symmem.quiet(stream)


def sync(team, stream=None):
    """Waits for every PE of the team (no completion of puts implied)."""
    if _predefined(team, "sync") in _WHOLE_WORLD:
        _symmem.sync_all(stream)
