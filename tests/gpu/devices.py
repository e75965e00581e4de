"""Which GPU a PE runs on: init with another device current makes the heap's
device current and says so; a stream of another GPU is refused by every
stream-taking call, naming both devices, and the PE works on afterwards.
Run: python -m symmem.run -n 2 tests/gpu/devices.py  (2 GPUs or more)"""

import torch

import symmem as nv
from symmem import _symmem  # the launcher's placement, whichever launcher

n_gpus = torch.cuda.device_count()
local = _symmem.launcher()["local_rank"]
other = (local + 1) % n_gpus
torch.cuda.set_device(other)  # the "wrong" device current before init
torch.zeros(1, device=f"cuda:{other}")  # makes its context current
nv.init()  # device=None: LOCAL_RANK % device count
me, n = nv.my_pe(), nv.n_pes()
heap_device = nv.tensor((4,), dtype=torch.float32).device.index
assert heap_device == local, (me, heap_device, local)
assert torch.cuda.current_device() == local, (me, torch.cuda.current_device(), local)

x = nv.tensor((256,), dtype=torch.float32)
y = nv.tensor((256,), dtype=torch.float32)
x.fill_(me + 1)
y.fill_(0)
foreign = torch.cuda.Stream(device=other)
W = nv.Teams.TEAM_WORLD
calls = {
    "put": lambda: nv.put(y, x, (me + 1) % n, stream=foreign),
    "get": lambda: nv.get(y, x, (me + 1) % n, stream=foreign),
    "quiet": lambda: nv.quiet(stream=foreign),
    "fence": lambda: nv.fence(stream=foreign),
    "barrier_all": lambda: nv.barrier_all(stream=foreign),
    "sync_all": lambda: nv.sync_all(stream=foreign),
    "reduce": lambda: nv.reduce(W, y, x, "sum", stream=foreign),
    "broadcast": lambda: nv.broadcast(W, y, x, root=0, stream=foreign),
}
for name, call in calls.items():
    try:
        call()
    except nv.NvshmemInvalid as error:
        text = str(error)
        assert (
            f"{name}: stream=" in text
            and f"belongs to cuda:{other}" in text
            and f"heap is on cuda:{local}" in text
        ), text
        assert text.count("[pe ") == 1, text
    else:
        raise AssertionError(f"PE {me}: {name} on a stream of cuda:{other} was accepted")

# The context is not poisoned: the same calls on a stream of our GPU work.
own = torch.cuda.Stream()
nv.barrier_all()
nv.put(y, x, (me + 1) % n, stream=own)
nv.barrier_all(stream=own)
own.synchronize()
assert bool((y == (me - 1) % n + 1).all()), (me, y[:4])
nv.free_tensor(x)
nv.free_tensor(y)
nv.finalize()
print(
    f"PE {me} OK (devices: heap on cuda:{local}, {len(calls)} foreign-stream calls refused)",
    flush=True,
)
