"""Whether a gpu run's PEs share GPUs, and how: time-sliced, or side by
side under CUDA MPS. The launcher puts PE i on GPU i % count, so with more
PEs than GPUs the PEs of a GPU take turns on it (the GPU switches between
their contexts every few milliseconds, and a PE waiting on a peer waits for
the peer's turn), unless the CUDA MPS control daemon runs, which puts their
kernels on the GPU together. Either way the numbers show that the paths
run, not how fast they are with a GPU a PE: the report says so in the
heading of every table and in the summary (sharing(), heading(), note())."""

import os
import socket
import stat

# Where CUDA looks for the MPS control daemon unless CUDA_MPS_PIPE_DIRECTORY says.
DEFAULT_PIPE_DIRECTORY = "/tmp/nvidia-mps"
DAEMON_NAMES = ("nvidia-cuda-mps-control", "nvidia-cuda-mps-server")


def mps_daemon(env=None, proc="/proc"):
    """(runs, words): whether a CUDA MPS control daemon answers where this
    run's PEs (env: default os.environ) would look for one when CUDA starts
    in them, and how that was found. Its control socket (pipe directory's
    "control") accepts a connection only while the daemon runs, so a file
    that a daemon left behind does not count. A control that is no socket
    (a named pipe, from older drivers) is not written to: a daemon process
    in proc says."""
    env = os.environ if env is None else env
    directory = env.get("CUDA_MPS_PIPE_DIRECTORY") or DEFAULT_PIPE_DIRECTORY
    control = os.path.join(directory, "control")
    try:
        mode = os.stat(control).st_mode
    except OSError:
        return False, f"no CUDA MPS control daemon: {control} does not exist"
    if stat.S_ISSOCK(mode):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(2.0)
            try:
                probe.connect(control)
            except OSError as error:
                why = error.strerror or type(error).__name__
                return False, f"no CUDA MPS control daemon answers on {control} ({why})"
        return True, f"a CUDA MPS control daemon answers on {control}"
    running = daemon_processes(proc)
    if running:
        return True, f"{control} is there and {running[0]} runs"
    return False, f"{control} is there, but no {DAEMON_NAMES[0]} process runs"


def daemon_processes(proc="/proc"):
    """The names of the MPS daemons among the processes proc lists."""
    found = []
    try:
        pids = [entry for entry in os.listdir(proc) if entry.isdigit()]
    except OSError:
        return found
    for pid in pids:
        try:
            with open(os.path.join(proc, pid, "comm")) as f:
                name = f.read().strip()
        except OSError:  # ended meanwhile, or not ours to read
            continue
        # comm holds the first 15 characters of the name
        found += [daemon for daemon in DAEMON_NAMES if daemon.startswith(name) and name]
    return found


def sharing(pes, gpus, env=None):
    """None where every PE has a GPU of its own (or no GPU was found);
    else how pes PEs share gpus GPUs: {"pes", "gpus", "most" (PEs on the
    busiest GPU), "mps" (bool), "mps_words"}."""
    if not 0 < gpus < pes:
        return None
    runs, words = mps_daemon(env)
    return dict(pes=pes, gpus=gpus, most=-(-pes // gpus), mps=runs, mps_words=words)


def _shared(share):
    gpus = f"{share['gpus']} GPU{'s' if share['gpus'] > 1 else ''}"
    return gpus if share["pes"] % share["gpus"] == 0 else f"{gpus} (up to {share['most']} a GPU)"


def heading(n_pes, share):
    """The PE count as a table's heading gives it: "2 PEs", or with share
    what makes the numbers no speed claim."""
    if not share:
        return f"{n_pes} PEs"
    how = "sharing" if share["mps"] else "time-sharing"
    mps = " under CUDA MPS" if share["mps"] else ""
    return f"{n_pes} PEs {how} {_shared(share)}{mps}: not a speed claim"


def note(share):
    """What a run whose PEs shared GPUs says in its summary and at its start."""
    if not share:
        return ""
    if share["mps"]:
        how = (
            f"under CUDA MPS ({share['mps_words']}): their kernels ran side by side, each "
            "PE with part of the GPU"
        )
    else:
        how = (
            f"without CUDA MPS ({share['mps_words']}): the GPU ran one PE's work at a time, "
            "switching every few milliseconds, so a call that waits on a peer waited for "
            "the peer's turn"
        )
    return (
        f"{share['pes']} PEs shared {_shared(share)} (PE i on GPU i % {share['gpus']}), {how}. "
        "These numbers show that the paths run with PEs sharing a GPU; they are not a speed "
        "claim: with a GPU a PE they differ. The libraries that need a GPU a PE (NVSHMEM's, "
        "NCCL's) are left out."
    )
