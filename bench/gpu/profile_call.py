import time, statistics, cupy as cp, symmem as nv
from symmem import _symmem
nv.init(); me=nv.my_pe(); peer=(me+1)%nv.n_pes()
a = nv.array((8,), dtype="uint8"); b = nv.array((8,), dtype="uint8")
ba, _, _ = nv.array_get_buffer(a); bb, _, _ = nv.array_get_buffer(b)
s = cp.cuda.Stream(non_blocking=True); h = s.ptr
def med(f, n=5000):
    c=[]
    for i in range(n):
        t=time.perf_counter(); f(); c.append(time.perf_counter()-t)
        if i % 500 == 499: s.synchronize()
    s.synchronize(); return round(statistics.median(c)*1e6,3)
nv.barrier_all()
r = dict(
 cai=med(lambda: a.__cuda_array_interface__),
 buffers_int=med(lambda: _symmem.put(bb, ba, peer, stream=h)),
 arrays_int=med(lambda: _symmem.put(b, a, peer, stream=h)),
 arrays_obj=med(lambda: _symmem.put(b, a, peer, stream=s)),
 stream_attr=med(lambda: s.__cuda_stream__() if hasattr(s,'__cuda_stream__') else s.ptr),
 noop=med(lambda: None),
)
nv.quiet(stream=s); s.synchronize(); nv.barrier_all()
if me == 0: print(r)
nv.free_array(a); nv.free_array(b); nv.finalize()
