"""`nvshmem.bindings.nvshmem`: NVSHMEM's C API as NVSHMEM4Py's bindings
spell it, on symmem. Addresses are ints, structs are passed by .ptr, and
out-parameters are addresses written as NVSHMEM writes them; the work is
done by symmem's own calls, so it runs on every backend (the cpu one too).

Here: the structs (uniqueid, team_uniqueid, TeamConfig, InitAttr), the enums,
NVSHMEMError / check_status, init and finalize (hostlib_init_attr,
set_attr_uniqueid_args, set_attr_mpi_comm_args, get_uniqueid,
hostlib_finalize), queries (my_pe, n_pes, init_status, query_thread,
info_get_version, info_get_name, vendor_get_version_info), the heap
(malloc, align, calloc, free, ptr, mc_ptr), teams, barriers, RMA, signals and quiet
on a stream, the typed atomics and collectives, CUDA module init, and the
buffer_register_symmetric family (CUDA VMM memory made symmetric by
address, as symmem.register_external_buffer does it).
Not here: the device bindings."""

from symmem.bindings._enums import (
    Cmp_type,
    Flags,
    Init_status,
    Pe_index,
    Proxy_status,
    Qp_handle_index,
    Region_hint,
    Signal_op,
    Smem_amount,
    Status,
    Team_id,
    Thread_support,
    Tma_policy,
)
from symmem.bindings._heap import align, calloc, free, malloc, mc_ptr, ptr
from symmem.bindings._host import (
    barrier,
    barrier_all,
    culibrary_finalize,
    culibrary_init,
    cumodule_finalize,
    cumodule_init,
    get_uniqueid,
    hostlib_finalize,
    hostlib_init_attr,
    info_get_name,
    info_get_version,
    init_status,
    my_pe,
    n_pes,
    query_thread,
    set_attr_mpi_comm_args,
    set_attr_uniqueid_args,
    vendor_get_version_info,
)
from symmem.bindings._on_stream import (
    barrier_all_on_stream,
    barrier_on_stream,
    flush_on_stream,
    getmem_nbi_on_stream,
    getmem_on_stream,
    putmem_nbi_on_stream,
    putmem_on_stream,
    putmem_signal_nbi_on_stream,
    putmem_signal_on_stream,
    quiet_on_stream,
    signal_fetch,
    signal_op_on_stream,
    signal_wait_until_on_stream,
    sync_all_on_stream,
    team_sync_on_stream,
)
from symmem.bindings._register import (
    buffer_register_symmetric,
    buffer_register_symmetric_at_preferred_address,
    buffer_unregister_symmetric,
)
from symmem.bindings._pod import (
    InitAttr,
    TeamConfig,
    TeamUniqueId,
    UniqueId,
    init_attr_dtype,
    team_config_dtype,
    team_uniqueid,
    uniqueid,
    uniqueid_dtype,
)
from symmem.bindings._status import NVSHMEMError, check_status
from symmem.bindings._teams import (
    team_destroy,
    team_get_config,
    team_get_uniqueid,
    team_init,
    team_my_pe,
    team_n_pes,
    team_split_2d,
    team_split_strided,
    team_translate_pe,
)
from symmem.bindings import _typed

globals().update(_typed.functions())

__all__ = sorted(name for name in globals() if not name.startswith("_"))
