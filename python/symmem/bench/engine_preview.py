"""Which engine of the gpu backend a library's PEs would get, asked of
symmem itself before the run: the bench does not guess the engine rules
(src/backends/gpu/engine_choice.c), it runs symmem's own preview of init
(symmem._symmem.launcher) in a process that looks like PE 0 of the job:
symmem.run's variables for n PEs on this host, and the library's
environment. A library that needs an engine its PEs would not get is left
out with symmem's reason."""

import json
import os
import subprocess
import sys

from symmem.bench.programs import Unavailable

# What one preview runs: symmem's answer (or refusal) for the gpu backend, as JSON.
ASK = """\
import json
import re
from symmem import _symmem
try:
    job = _symmem.launcher(backend="gpu")
    print(json.dumps(dict(engine=job["engine"], why=job["engine_reason"])))
except Exception as error:
    words = getattr(error, "msg", None) or str(error)
    print(json.dumps(dict(refused=re.sub(r"^.*?backend='gpu' cannot run here: ", "", words))))
"""
# Variables of a launcher the bench itself may run under, which would make
# the preview another job's PE (or tie it to that launcher's life).
NOT_PASSED = (
    "SYMMEM_LAUNCHER",
    "SYMMEM_STATUS_DIR",
    "SYMMEM_JOB_SECRET",
    "LOCAL_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_SIZE",
    "MPI_LOCALNRANKS",
)

_answers = {}


def ask(pes, env_extra):
    """symmem's answer for a gpu job of pes PEs on this host with
    env_extra set: {"engine", "why"} or {"refused": why}. One process
    per question, remembered for the run."""
    key = (pes, tuple(sorted(env_extra.items())))
    if key not in _answers:
        env = {k: v for k, v in os.environ.items() if k not in NOT_PASSED}
        env.update(
            env_extra,
            SYMMEM_BACKEND="gpu",
            SYMMEM_JOB="symmem-bench-engine-preview",
            SYMMEM_RANK="0",
            SYMMEM_NRANKS=str(pes),
            SYMMEM_LOCAL_RANK="0",
        )
        try:
            done = subprocess.run(
                [sys.executable, "-c", ASK], capture_output=True, text=True, env=env, timeout=120
            )
            lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
            _answers[key] = (
                json.loads(lines[-1])
                if lines
                else {"refused": f"symmem's preview printed nothing: {done.stderr[-300:]}"}
            )
        except subprocess.TimeoutExpired:
            _answers[key] = {"refused": "symmem's preview took more than 120 s"}
    return _answers[key]


def need_engine(opts, engine, env_extra=None):
    """Raises Unavailable unless opts.pes PEs with env_extra would run on
    the gpu backend's engine here (engine None: on either)."""
    env_extra = dict(env_extra or {})
    answer = ask(opts.pes, env_extra)
    if "refused" in answer:
        raise Unavailable(answer["refused"])
    if engine and answer["engine"] != engine:
        raise Unavailable(f"it would run on the {answer['engine']} engine ({answer['why']})")
    return answer
