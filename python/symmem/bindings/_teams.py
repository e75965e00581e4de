"""Teams through NVSHMEM's C calls: configs are read from, and handles
written to, addresses (a TeamConfig's .ptr, the address of an int32 such as
np.zeros(1, np.int32).__array_interface__["data"][0]), through
_symmem.memory_at (the raw pointer contract).
The splits run symmem.core's, so each new team is also Teams.TEAM_<handle>
(as NVSHMEM4Py's core names it) and team_get_config gives its config back."""

import os

import numpy as np

from symmem import _symmem, _teams
from symmem.bindings._host import _field_at, _out, _out_at
from symmem.bindings._pod import team_config_dtype

team_my_pe = _symmem.team_my_pe
team_n_pes = _symmem.team_n_pes
team_translate_pe = _symmem.team_translate_pe
team_destroy = _teams.team_destroy


def _config_at(address, call, arg):
    """The core TeamConfig of the struct at address (None for NULL)."""
    if address is None or (isinstance(address, int) and address == 0):
        return None
    _out(address, call, arg)
    raw = _symmem.memory_at(address, team_config_dtype.itemsize, call=call)
    fields = np.frombuffer(raw, dtype=team_config_dtype)[0]
    return _teams.TeamConfig(
        version=int(fields["version"]),
        num_contexts=int(fields["num_contexts"]),
        uniqueid=int(fields["uniqueid"]),
    )


def _handle_at(address, call, arg):
    """The int32 out-parameter at address, checked (writable) before the
    collective that makes the team: a team is never made only to fail at
    writing its handle."""
    return _out_at(address, np.int32, call, arg)


def _write_handle(handle, team):
    handle[0] = -1 if team is None else int(team)


def team_split_strided(parent_team, pe_start, pe_stride, pe_size, config, config_mask, new_team):
    """Collective over parent_team: writes the new team's handle (-1 outside it)
    at address new_team."""
    call = "team_split_strided"
    handle = _handle_at(new_team, call, "new_team")
    made = _teams.team_split_strided(
        parent_team, pe_start, pe_stride, pe_size, _config_at(config, call, "config"), config_mask
    )
    _write_handle(handle, made)


def team_split_2d(
    parent_team, xrange, xaxis_config, xaxis_mask, xaxis_team, yaxis_config, yaxis_mask, yaxis_team
):
    call = "team_split_2d"
    x_handle = _handle_at(xaxis_team, call, "xaxis_team")
    y_handle = _handle_at(yaxis_team, call, "yaxis_team")
    x, y = _teams.team_split_2d(
        parent_team,
        xrange,
        _config_at(xaxis_config, call, "xaxis_config"),
        xaxis_mask,
        _config_at(yaxis_config, call, "yaxis_config"),
        yaxis_mask,
    )
    _write_handle(x_handle, x)
    _write_handle(y_handle, y)


def team_init(team, config, config_mask, npes, pe_idx_in_team):
    """Collective over the new team's PEs, who meet on the config's uniqueid:
    writes the handle at address team."""
    call = "team_init"
    handle = _handle_at(team, call, "team")
    made = _teams.team_init(_config_at(config, call, "config"), config_mask, npes, pe_idx_in_team)
    _write_handle(handle, made)


def team_get_config(team, config):
    """Writes team's config (its version, num_contexts and uniqueid) at address config."""
    core = _teams.team_get_config(team)
    base = _out(config, "team_get_config", "config")
    key = _teams._team_key(core.uniqueid) if core.uniqueid is not None else 0
    for name, value in (
        ("version", core.version),
        ("num_contexts", core.num_contexts),
        ("uniqueid", key),
    ):
        _field_at(base, team_config_dtype, name, "team_get_config", writable=True)[0] = int(value)


def team_get_uniqueid(uniqueid):
    """Writes a fresh random uint64 for a team_init config at address uniqueid."""
    out = _out_at(uniqueid, np.uint64, "team_get_uniqueid", "uniqueid")
    out[0] = int.from_bytes(os.urandom(8), "little")
