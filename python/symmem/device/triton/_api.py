"""The functions Triton kernels call: PyTorch's names and argument orders
(torch.distributed._symmetric_memory._nvshmem_triton), NVSHMEM4Py's atomics,
and remote_ptr. Each picks its engine when the kernel compiles: ENGINE is
OWN (_own.py, in Triton) or NVSHMEM (_bitcode.py), fixed for the process
by _runtime.configure() before the first kernel compiles.

Every call is made by all threads of a program (a CUDA block) with the
same arguments. Collectives and team syncs are made by one program at a
time, as NVSHMEM's _block collectives are."""
import triton
import triton.language as tl

from . import _bitcode as nv
from . import _own as own

OWN = tl.constexpr(0)
NVSHMEM = tl.constexpr(1)
ENGINE = tl.constexpr(OWN)  # set by _runtime.configure()


@triton.jit
def _bytes(ptr, nelems):
    return tl.cast(nelems, tl.int64) * (ptr.dtype.element_ty.primitive_bitwidth // 8)


@triton.jit
def _i64(x):
    """A pointer or an integer as int64 (how the bitcode takes addresses)."""
    return tl.cast(own.address(x), tl.int64, bitcast=True)


@triton.jit
def _same_type(dest, source, CALL: tl.constexpr):
    tl.static_assert(dest.dtype.element_ty == source.dtype.element_ty,
                     CALL + ": dest and source must have the same element type")


# ---- who am I ----

@triton.jit
def my_pe():
    """This PE's number.

    Returns:
        An int32 in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming my_pe:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: before symmem.init(), symmem's engine writes
            an error record and traps; the PE prints "symmem: a kernel
            stopped in the device call my_pe: ..." and its CUDA context is
            unusable. NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            me = sdt.my_pe()
    """
    if ENGINE == NVSHMEM:
        return nv.call_pure("nvshmem_my_pe", tl.int32)
    else:
        return own.my_pe_now()


@triton.jit
def n_pes():
    """How many PEs the program has.

    Returns:
        An int32.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming n_pes:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: before symmem.init(), symmem's engine writes
            an error record and traps; the PE prints "symmem: a kernel
            stopped in the device call n_pes: ..." and its CUDA context is
            unusable. NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            npes = sdt.n_pes()
    """
    if ENGINE == NVSHMEM:
        return nv.call_pure("nvshmem_n_pes", tl.int32)
    else:
        return own.n_pes_now()


@triton.jit
def team_my_pe(team):
    """This PE's number in team.

    Args:
        team: a team handle (TEAM_WORLD, 0, or a team made on the host).

    Returns:
        An int32.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming team_my_pe:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a team that is not one, symmem's engine
            writes an error record and traps; the PE prints "symmem: a
            kernel stopped in the device call team_my_pe: ..." and its CUDA
            context is unusable. NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            r = sdt.team_my_pe(sdt.TEAM_WORLD)
    """
    if ENGINE == NVSHMEM:
        return nv.call("nvshmem_team_my_pe", tl.int32, tl.cast(team, tl.int32))
    else:
        return own.team_rank(team, "team_my_pe")


@triton.jit
def team_n_pes(team):
    """How many PEs team has.

    Args:
        team: a team handle (TEAM_WORLD, 0, or a team made on the host).

    Returns:
        An int32.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming team_n_pes:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a team that is not one, symmem's engine
            writes an error record and traps; the PE prints "symmem: a
            kernel stopped in the device call team_n_pes: ..." and its CUDA
            context is unusable. NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            k = sdt.team_n_pes(sdt.TEAM_WORLD)
    """
    if ENGINE == NVSHMEM:
        return nv.call("nvshmem_team_n_pes", tl.int32, tl.cast(team, tl.int32))
    else:
        return own.team_size(team, "team_n_pes")


# ---- put and get, in bytes ----

@triton.jit
def _copy(dest, source, nbytes, pe, NAME: tl.constexpr, GET: tl.constexpr):
    """NVSHMEM's nvshmemx_<NAME>, or the own engine's put or get (its nbi
    forms are the same stores, complete after quiet alike)."""
    tl.debug_barrier()  # every thread's earlier stores (the data, maybe) before the copy
    if ENGINE == NVSHMEM:
        nv.call("nvshmemx_" + NAME, tl.int32, _i64(dest), _i64(source),
                tl.cast(nbytes, tl.int64), tl.cast(pe, tl.int32))
    elif GET:
        own.get(dest, source, nbytes, pe, NAME)
    else:
        own.put(dest, source, nbytes, pe, NAME)


@triton.jit
def putmem_block(dest, source, nbytes, pe):
    """Copy nbytes bytes from source (here) to dest on PE pe.

    Complete when it returns. Made by all threads of the program.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory (PE pe's copy is written).
        source: a pointer or an int64 address (here).
        nbytes: how many bytes to copy.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming putmem_block:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call
            putmem_block: ..." and its CUDA context is unusable. NVSHMEM's
            engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.putmem_block(dest, src, n * 4, pe)
    """
    _copy(dest, source, nbytes, pe, "putmem_block", False)


@triton.jit
def putmem_nbi_block(dest, source, nbytes, pe):
    """Copy nbytes bytes from source (here) to dest on PE pe.

    Complete after quiet(). Made by all threads of the program.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory (PE pe's copy is written).
        source: a pointer or an int64 address (here).
        nbytes: how many bytes to copy.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming
            putmem_nbi_block: arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call
            putmem_nbi_block: ..." and its CUDA context is unusable.
            NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.putmem_nbi_block(dest, src, n * 4, pe)
            sdt.quiet()
    """
    _copy(dest, source, nbytes, pe, "putmem_nbi_block", False)


@triton.jit
def getmem_block(dest, source, nbytes, pe):
    """Copy nbytes bytes from source on PE pe to dest (here).

    Complete when it returns. Made by all threads of the program.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory (here).
        source: a pointer or an int64 address (PE pe's copy is read).
        nbytes: how many bytes to copy.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming getmem_block:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call
            getmem_block: ..." and its CUDA context is unusable. NVSHMEM's
            engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.getmem_block(dest, src, n * 4, pe)
    """
    _copy(dest, source, nbytes, pe, "getmem_block", True)


@triton.jit
def getmem_nbi_block(dest, source, nbytes, pe):
    """Copy nbytes bytes from source on PE pe to dest (here).

    Complete after quiet(). Made by all threads of the program.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory (here).
        source: a pointer or an int64 address (PE pe's copy is read).
        nbytes: how many bytes to copy.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming
            getmem_nbi_block: arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call
            getmem_nbi_block: ..." and its CUDA context is unusable.
            NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.getmem_nbi_block(dest, src, n * 4, pe)
            sdt.quiet()
    """
    _copy(dest, source, nbytes, pe, "getmem_nbi_block", True)


# ---- put and get, in elements of typed pointers ----

@triton.jit
def put(dest, source, nelems, pe):
    """Copy nelems elements from source (here) to dest on PE pe.

    Complete when it returns. Made by all threads of the program.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory (PE pe's copy is written).
        source: a pointer or an int64 address (here).
        nelems: how many elements of dest's type.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming put: arguments
            of the wrong type (dest and source of different element types).
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call put: ..."
            and its CUDA context is unusable. NVSHMEM's engine does not
            check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.put(dest, src, n, pe)
    """
    _same_type(dest, source, "put")
    putmem_block(dest, source, _bytes(dest, nelems), pe)


@triton.jit
def put_nbi(dest, source, nelems, pe):
    """Copy nelems elements from source (here) to dest on PE pe.

    Complete after quiet(). Made by all threads of the program.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory (PE pe's copy is written).
        source: a pointer or an int64 address (here).
        nelems: how many elements of dest's type.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming put_nbi:
            arguments of the wrong type (dest and source of different
            element types).
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call put_nbi:
            ..." and its CUDA context is unusable. NVSHMEM's engine does not
            check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.put_nbi(dest, src, n, pe)
            sdt.quiet()
    """
    _same_type(dest, source, "put_nbi")
    putmem_nbi_block(dest, source, _bytes(dest, nelems), pe)


@triton.jit
def get(dest, source, nelems, pe):
    """Copy nelems elements from source on PE pe to dest (here).

    Complete when it returns. Made by all threads of the program.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory (here).
        source: a pointer or an int64 address (PE pe's copy is read).
        nelems: how many elements of dest's type.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming get: arguments
            of the wrong type (dest and source of different element types).
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call get: ..."
            and its CUDA context is unusable. NVSHMEM's engine does not
            check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.get(dest, src, n, pe)
    """
    _same_type(dest, source, "get")
    getmem_block(dest, source, _bytes(dest, nelems), pe)


@triton.jit
def get_nbi(dest, source, nelems, pe):
    """Copy nelems elements from source on PE pe to dest (here).

    Complete after quiet(). Made by all threads of the program.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory (here).
        source: a pointer or an int64 address (PE pe's copy is read).
        nelems: how many elements of dest's type.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming get_nbi:
            arguments of the wrong type (dest and source of different
            element types).
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call get_nbi:
            ..." and its CUDA context is unusable. NVSHMEM's engine does not
            check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.get_nbi(dest, src, n, pe)
            sdt.quiet()
    """
    _same_type(dest, source, "get_nbi")
    getmem_nbi_block(dest, source, _bytes(dest, nelems), pe)


@triton.jit
def p(dest, value, pe):
    """Store one element, value, into dest on PE pe.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        value: the value, of dest's element type.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming p: arguments
            of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call p: ..." and
            its CUDA context is unusable. NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.p(flag, 1, (sdt.my_pe() + 1) % sdt.n_pes())
    """
    T: tl.constexpr = dest.dtype.element_ty
    if ENGINE == NVSHMEM:
        U: tl.constexpr = tl.core.get_int_dtype(T.primitive_bitwidth, False)
        bits = tl.cast(tl.cast(value, T), U, bitcast=True)
        if nv.first_thread():
            nv.call(nv.typed("nvshmem", U, "p"), tl.int32, _i64(dest), bits,
                    tl.cast(pe, tl.int32))
    else:
        at = own.remote(own.address(dest), T.primitive_bitwidth // 8, pe, 0, "p")
        tl.store(at.to(dest.dtype), tl.cast(value, T))


@triton.jit
def g(source, pe):
    """Load one element of source on PE pe.

    Args:
        source: a pointer or an int64 address of symmetric memory.
        pe: the PE, in [0, n_pes()).

    Returns:
        The element, of source's type.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming g: arguments
            of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call g: ..." and
            its CUDA context is unusable. NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            x = sdt.g(src, 0)
    """
    T: tl.constexpr = source.dtype.element_ty
    if ENGINE == NVSHMEM:
        U: tl.constexpr = tl.core.get_int_dtype(T.primitive_bitwidth, False)
        bits = tl.cast(0, U)
        if nv.first_thread():
            bits = nv.call(nv.typed("nvshmem", U, "g"), U, _i64(source), tl.cast(pe, tl.int32))
        return tl.cast(nv.from_first_thread(bits), T, bitcast=True)
    else:
        at = own.remote(own.address(source), T.primitive_bitwidth // 8, pe, 0, "g")
        return tl.load(at.to(source.dtype), volatile=True)


@triton.jit
def remote_ptr(ptr, pe):
    """ptr's counterpart on PE pe, as a pointer for plain tl.load / tl.store.

    ptr's counterpart on PE pe as a pointer this GPU loads and stores
    through (tl.load / tl.store), or a failed kernel where PE pe's heap is
    not mapped here.

    Args:
        ptr: pointer into symmetric memory (this PE's copy).
        pe: the PE, in [0, n_pes()).

    Returns:
        A pointer of ptr's type into PE pe's memory, mapped into this GPU.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming remote_ptr:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, or where PE pe's heap is not mapped here, symmem's engine
            writes an error record and traps; the PE prints "symmem: a
            kernel stopped in the device call remote_ptr: ..." and its CUDA
            context is unusable. NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            right = sdt.remote_ptr(x, (sdt.my_pe() + 1) % sdt.n_pes())
            tl.store(right + offs, vals)
    """
    if ENGINE == NVSHMEM:
        at = nv.call("nvshmem_ptr", tl.int64, _i64(ptr), tl.cast(pe, tl.int32))
        return tl.cast(at, tl.uint64, bitcast=True).to(ptr.dtype)
    else:
        size: tl.constexpr = ptr.dtype.element_ty.primitive_bitwidth // 8
        return own.remote(own.address(ptr), size, pe, 0, "remote_ptr").to(ptr.dtype)


# ---- signals and waits ----

@triton.jit
def _put_signal(dest, source, nbytes, sig_addr, signal, sig_op, pe, NAME: tl.constexpr):
    tl.debug_barrier()  # every thread's earlier stores (the data, maybe) before the copy
    if ENGINE == NVSHMEM:
        nv.call("nvshmemx_" + NAME, tl.int32, _i64(dest), _i64(source),
                tl.cast(nbytes, tl.int64), _i64(sig_addr), tl.cast(signal, tl.uint64),
                nv.signal_op_code(sig_op), tl.cast(pe, tl.int32))
    else:
        own.put_signal(dest, source, nbytes, sig_addr, signal, sig_op, pe, NAME)


@triton.jit
def putmem_signal_block(dest, source, nbytes, sig_addr, signal, sig_op, pe):
    """putmem_block, then PE pe's signal at sig_addr set or added to, once the
    data is there.

    A signal_wait_until that sees the signal sees the data.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory (PE pe's copy is written).
        source: a pointer or an int64 address (here).
        nbytes: how many bytes to copy.
        sig_addr: pointer or int64 address of a symmetric uint64 signal.
        signal: the signal value.
        sig_op: SIGNAL_SET or SIGNAL_ADD.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming
            putmem_signal_block: arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, or a sig_op that is neither SIGNAL_SET nor SIGNAL_ADD,
            symmem's engine writes an error record and traps; the PE prints
            "symmem: a kernel stopped in the device call
            putmem_signal_block: ..." and its CUDA context is unusable.
            NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.putmem_signal_block(dst, src, n * 4, sig, 1, sdt.SIGNAL_SET, pe)
    """
    _put_signal(dest, source, nbytes, sig_addr, signal, sig_op, pe, "putmem_signal_block")


@triton.jit
def putmem_signal_nbi_block(dest, source, nbytes, sig_addr, signal, sig_op, pe):
    """putmem_block, then PE pe's signal at sig_addr set or added to, once the
    data is there.

    A signal_wait_until that sees the signal sees the data. source may be
    reused after quiet().

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory (PE pe's copy is written).
        source: a pointer or an int64 address (here).
        nbytes: how many bytes to copy.
        sig_addr: pointer or int64 address of a symmetric uint64 signal.
        signal: the signal value.
        sig_op: SIGNAL_SET or SIGNAL_ADD.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming
            putmem_signal_nbi_block: arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, or a sig_op that is neither SIGNAL_SET nor SIGNAL_ADD,
            symmem's engine writes an error record and traps; the PE prints
            "symmem: a kernel stopped in the device call
            putmem_signal_nbi_block: ..." and its CUDA context is unusable.
            NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.putmem_signal_nbi_block(dst, src, n * 4, sig, 1, sdt.SIGNAL_SET, pe)
    """
    _put_signal(dest, source, nbytes, sig_addr, signal, sig_op, pe, "putmem_signal_nbi_block")


@triton.jit
def signal_op(sig_addr, signal, sig_op, pe):
    """Set or add to PE pe's signal at sig_addr, after this PE's earlier stores
    to it.

    The signal at sig_addr on PE pe set or added to (SIGNAL_SET/ADD), as a
    release on either engine: the program's earlier loads and stores are
    ordered before it (a signal_wait_until that sees it has them).

    Args:
        sig_addr: pointer or int64 address of a symmetric uint64 signal.
        signal: the signal value.
        sig_op: SIGNAL_SET or SIGNAL_ADD.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming signal_op:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, or a bad sig_op, symmem's engine writes an error record
            and traps; the PE prints "symmem: a kernel stopped in the device
            call signal_op: ..." and its CUDA context is unusable. NVSHMEM's
            engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.signal_op(sig, 1, sdt.SIGNAL_ADD, pe)
    """
    if ENGINE == NVSHMEM:
        # a release, as the own engine's: every thread's earlier loads and
        # stores (bar.sync), NVSHMEM's fence, then the update, by thread 0
        tl.debug_barrier()
        if nv.first_thread():
            nv.call("nvshmem_fence", tl.int32)
            nv.call("nvshmemx_signal_op", tl.int32, _i64(sig_addr), tl.cast(signal, tl.uint64),
                    nv.signal_op_code(sig_op), tl.cast(pe, tl.int32))
    else:
        own.signal_op(sig_addr, signal, sig_op, pe, "signal_op")


@triton.jit
def signal_wait_until(sig_addr, cmp, cmp_val):
    """Wait until this PE's signal at sig_addr compares true with cmp_val.

    Args:
        sig_addr: pointer or int64 address of a symmetric uint64 signal.
        cmp: CMP_EQ, CMP_NE, CMP_GT, CMP_LE, CMP_LT or CMP_GE.
        cmp_val: the value compared with.

    Returns:
        The signal's value (uint64).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming
            signal_wait_until: arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a dead peer, SYMMEM_TIMEOUT passed, a
            team this PE is not in, a bad cmp or an address off the heap,
            symmem's engine writes an error record and traps; the PE prints
            "symmem: a kernel stopped in the device call signal_wait_until:
            ..." and its CUDA context is unusable. NVSHMEM's engine does not
            check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            v = sdt.signal_wait_until(sig, sdt.CMP_GE, 1)
    """
    if ENGINE == NVSHMEM:
        # thread 0 waits: NVSHMEM's acquire, pairing with the sender's fence and
        # signal update (signal_op, putmem_signal); the rest wait at
        # from_first_thread's bar.sync, so their later loads follow it
        value = tl.cast(0, tl.uint64)
        if nv.first_thread():
            value = nv.call("nvshmem_signal_wait_until", tl.uint64, _i64(sig_addr),
                            tl.cast(cmp, tl.int32), tl.cast(cmp_val, tl.uint64))
        return nv.from_first_thread(value)
    else:
        return own.wait(own.address(sig_addr), cmp, cmp_val, 64, False, "signal_wait_until")


@triton.jit
def wait_until(ivar, cmp, cmp_val):
    """Wait until this PE's integer at ivar compares true with cmp_val.

    Args:
        ivar: pointer to a symmetric integer on this PE.
        cmp: CMP_EQ, CMP_NE, CMP_GT, CMP_LE, CMP_LT or CMP_GE.
        cmp_val: the value compared with.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming wait_until:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a dead peer, SYMMEM_TIMEOUT passed, a
            team this PE is not in, a bad cmp or an address off the heap,
            symmem's engine writes an error record and traps; the PE prints
            "symmem: a kernel stopped in the device call wait_until: ..."
            and its CUDA context is unusable. NVSHMEM's engine does not
            check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.wait_until(flag, sdt.CMP_EQ, 1)
    """
    T: tl.constexpr = ivar.dtype.element_ty
    tl.static_assert(T.is_int(), "wait_until: ivar must point to integers")
    if ENGINE == NVSHMEM:
        nv.call(nv.wait_until(T), tl.int32, _i64(ivar),
                tl.cast(cmp, tl.int32), tl.cast(cmp_val, T))
    else:
        own.wait(own.address(ivar), cmp, cmp_val, T.primitive_bitwidth, T.is_int_signed(),
                 "wait_until")


@triton.jit
def fence():
    """Order this PE's earlier puts before its later ones, to every PE.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming fence:
            arguments of the wrong type.
        RuntimeError: never: it checks nothing and never traps (listed for
            symmetry with the other calls).

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.putmem_block(dst, src, n, pe)
            sdt.fence()
            sdt.p(flag, 1, pe)
    """
    if ENGINE == NVSHMEM:
        nv.call("nvshmem_fence", tl.int32)
    else:
        own.fence_acq_rel_sys()


@triton.jit
def quiet():
    """Complete this PE's earlier puts, gets and signals.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming quiet:
            arguments of the wrong type.
        RuntimeError: never: it checks nothing and never traps (listed for
            symmetry with the other calls).

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.putmem_nbi_block(dst, src, n, pe)
            sdt.quiet()
    """
    if ENGINE == NVSHMEM:
        nv.call("nvshmem_quiet", tl.int32)
    else:
        tl.debug_barrier()  # the program's stores before every thread's fence
        own.fence_sc_sys()


# ---- syncs and barriers ----

@triton.jit
def barrier_all():
    """Complete this PE's puts, then wait for every PE.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming barrier_all:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a dead peer, SYMMEM_TIMEOUT passed,
            symmem's engine writes an error record and traps; the PE prints
            "symmem: a kernel stopped in the device call barrier_all: ..."
            and its CUDA context is unusable. NVSHMEM's engine does not
            check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.barrier_all()
    """
    if ENGINE == NVSHMEM:
        nv.call("nvshmemx_barrier_all_block", tl.int32)
    else:
        own.barrier(0, "barrier_all")


@triton.jit
def sync_all():
    """Wait for every PE, without completing puts first.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming sync_all:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a dead peer, SYMMEM_TIMEOUT passed,
            symmem's engine writes an error record and traps; the PE prints
            "symmem: a kernel stopped in the device call sync_all: ..." and
            its CUDA context is unusable. NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.sync_all()
    """
    if ENGINE == NVSHMEM:
        nv.call("nvshmemx_sync_all_block", tl.int32)
    else:
        own.sync(0, "sync_all")


@triton.jit
def barrier(team):
    """Complete this PE's puts, then wait for every member of team.

    Args:
        team: a team handle (TEAM_WORLD, 0, or a team made on the host).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming barrier:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a dead peer, SYMMEM_TIMEOUT passed, a
            team this PE is not in, symmem's engine writes an error record
            and traps; the PE prints "symmem: a kernel stopped in the device
            call barrier: ..." and its CUDA context is unusable. NVSHMEM's
            engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.barrier(sdt.TEAM_WORLD)
    """
    if ENGINE == NVSHMEM:
        nv.call("nvshmemx_barrier_block", tl.int32, tl.cast(team, tl.int32))
    else:
        own.barrier(team, "barrier")


@triton.jit
def sync(team):
    """Wait for every member of team, without completing puts first.

    Args:
        team: a team handle (TEAM_WORLD, 0, or a team made on the host).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming sync:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a dead peer, SYMMEM_TIMEOUT passed, a
            team this PE is not in, symmem's engine writes an error record
            and traps; the PE prints "symmem: a kernel stopped in the device
            call sync: ..." and its CUDA context is unusable. NVSHMEM's
            engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.sync(sdt.TEAM_WORLD)
    """
    if ENGINE == NVSHMEM:
        nv.call("nvshmemx_team_sync_block", tl.int32, tl.cast(team, tl.int32))
    else:
        own.sync(team, "sync")


# ---- collectives ----

@triton.jit
def alltoall(team, dest, source, nelems_per_pe):
    """Team PE i's source[j * nelems_per_pe:][:nelems_per_pe] lands in team PE
    j's dest[i * nelems_per_pe:].

    Every member calls it, one program at a time.

    Args:
        team: a team handle (TEAM_WORLD, 0, or a team made on the host).
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        source: a pointer or an int64 address of symmetric memory.
        nelems_per_pe: how many elements go to each member.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming alltoall:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a dead peer, SYMMEM_TIMEOUT passed, a
            team this PE is not in, an address off the heap, symmem's engine
            writes an error record and traps; the PE prints "symmem: a
            kernel stopped in the device call alltoall: ..." and its CUDA
            context is unusable. NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.alltoall(sdt.TEAM_WORLD, dst, src, n)
    """
    _same_type(dest, source, "alltoall")
    nbytes = _bytes(dest, nelems_per_pe)
    if ENGINE == NVSHMEM:
        nv.call("nvshmemx_alltoallmem_block", tl.int32, tl.cast(team, tl.int32), _i64(dest),
                _i64(source), nbytes)
    else:
        own.sync(team, "alltoall")
        own.push(team, dest, source, nbytes, True, True, "alltoall")
        own.sync(team, "alltoall")


@triton.jit
def fcollect(team, dest, source, nelems):
    """Team PE i's source[:nelems] lands in every member's dest[i * nelems:].

    Every member calls it, one program at a time.

    Args:
        team: a team handle (TEAM_WORLD, 0, or a team made on the host).
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        source: a pointer or an int64 address of symmetric memory.
        nelems: how many elements of dest's type.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming fcollect:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a dead peer, SYMMEM_TIMEOUT passed, a
            team this PE is not in, an address off the heap, symmem's engine
            writes an error record and traps; the PE prints "symmem: a
            kernel stopped in the device call fcollect: ..." and its CUDA
            context is unusable. NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.fcollect(sdt.TEAM_WORLD, dst, src, n)
    """
    _same_type(dest, source, "fcollect")
    nbytes = _bytes(dest, nelems)
    if ENGINE == NVSHMEM:
        nv.call("nvshmemx_fcollectmem_block", tl.int32, tl.cast(team, tl.int32), _i64(dest),
                _i64(source), nbytes)
    else:
        own.sync(team, "fcollect")
        own.push(team, dest, source, nbytes, True, False, "fcollect")
        own.sync(team, "fcollect")


@triton.jit
def broadcast(team, dest, source, nelems, pe_root):
    """Team PE pe_root's source[:nelems] lands in every member's dest.

    Every member calls it, one program at a time.

    Args:
        team: a team handle (TEAM_WORLD, 0, or a team made on the host).
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        source: a pointer or an int64 address of symmetric memory.
        nelems: how many elements of dest's type.
        pe_root: the root's PE number in team.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming broadcast:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a dead peer, SYMMEM_TIMEOUT passed, a
            team this PE is not in, an address off the heap, a root outside
            the team, symmem's engine writes an error record and traps; the
            PE prints "symmem: a kernel stopped in the device call
            broadcast: ..." and its CUDA context is unusable. NVSHMEM's
            engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.broadcast(sdt.TEAM_WORLD, dst, src, n, 0)
    """
    _same_type(dest, source, "broadcast")
    nbytes = _bytes(dest, nelems)
    if ENGINE == NVSHMEM:
        nv.call("nvshmemx_broadcastmem_block", tl.int32, tl.cast(team, tl.int32), _i64(dest),
                _i64(source), nbytes, tl.cast(pe_root, tl.int32))
    else:
        own.sync(team, "broadcast")
        n = own.team_size(team, "broadcast")
        if (pe_root < 0) | (pe_root >= n):
            own.fail(own.ERR_BAD_ROOT, own.my_pe_now(), 4, tl.cast(pe_root, tl.int64),
                     "broadcast")
        if own.team_rank(team, "broadcast") == pe_root:
            own.push(team, dest, source, nbytes, False, False, "broadcast")
        own.sync(team, "broadcast")


@triton.jit
def _reduce_in_place(team, dest, nreduce, operation: tl.constexpr):
    """Each block of elements combined in registers from every member, then,
    after a sync (nobody reads it any more), stored."""
    for lo in range(0, nreduce, own.REDUCE_BLOCK):
        acc = own.reduce_block(team, dest, lo, nreduce, operation, "reduce")
        own.sync(team, "reduce")
        offs = lo + tl.arange(0, own.REDUCE_BLOCK)
        tl.store(dest + offs, acc, mask=offs < nreduce)
        own.sync(team, "reduce")


@triton.jit
def reduce(team, dest, source, nreduce, operation: tl.constexpr):
    """dest[:nreduce] = every member's source[:nreduce] combined by operation.

    Every member calls it, one program at a time; dest may be source.

    dest[:nreduce] = every member's source[:nreduce] combined by operation
    ("sum", "prod", "max", "min"; "and", "or", "xor" for integers), the same
    bits on every PE; dest may be source.

    Args:
        team: a team handle (TEAM_WORLD, 0, or a team made on the host).
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        source: a pointer or an int64 address of symmetric memory.
        nreduce: how many elements to combine.
        operation: tl.constexpr: "sum", "min", "max", "prod", or for
            integers "and", "or", "xor".

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming reduce:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a dead peer, SYMMEM_TIMEOUT passed, a
            team this PE is not in, an address off the heap, a dest
            overlapping source without being it, symmem's engine writes an
            error record and traps; the PE prints "symmem: a kernel stopped
            in the device call reduce: ..." and its CUDA context is
            unusable. NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.reduce(sdt.TEAM_WORLD, dst, src, n, "sum")
    """
    _same_type(dest, source, "reduce")
    if ENGINE == NVSHMEM:
        nv.call(nv.typed("nvshmemx", dest.dtype.element_ty, operation + "_reduce_block"),
                tl.int32, tl.cast(team, tl.int32), _i64(dest), _i64(source),
                tl.cast(nreduce, tl.int64))
    else:
        nreduce = tl.cast(nreduce, tl.int64)
        own.sync(team, "reduce")
        if own.same_address(dest, source):
            _reduce_in_place(team, dest, nreduce, operation)
        else:
            own.reduce_range(team, dest, source, 0, nreduce, operation, "reduce")
        own.sync(team, "reduce")


# ---- atomics (NVSHMEM4Py's names), on the element dest points at on PE pe ----

@triton.jit
def _atomic(dest, value, cond, pe, NAME: tl.constexpr):
    """atomic_<NAME> on either engine: relaxed, at system scope. Returns the
    old value where the call has one (0 from NVSHMEM's forms without)."""
    T: tl.constexpr = dest.dtype.element_ty
    KIND: tl.constexpr = nv.atomic_kind(NAME)  # what it does to the word
    value = tl.cast(value, T)
    pe = tl.cast(pe, tl.int32)
    if ENGINE == NVSHMEM:
        RET: tl.constexpr = nv.atomic_result(T, NAME)
        result = tl.cast(0, RET)
        if nv.first_thread():  # once per program, as Triton's own atomics
            if KIND == "compare_swap":
                result = nv.call(nv.atomic(T, NAME), RET, _i64(dest), tl.cast(cond, T), value,
                                 pe)
            elif (KIND == "fetch") or (KIND == "inc"):
                result = nv.call(nv.atomic(T, NAME), RET, _i64(dest), pe)
            else:
                result = nv.call(nv.atomic(T, NAME), RET, _i64(dest), value, pe)
        if RET == T:
            old = nv.from_first_thread(result)
        else:
            old = tl.cast(0, T)
    else:
        size: tl.constexpr = T.primitive_bitwidth // 8
        at = own.remote(own.address(dest), size, pe, 0, "atomic_" + NAME).to(dest.dtype)
        if KIND == "fetch":
            old = tl.load(at, volatile=True)
        elif (KIND == "set") or (KIND == "swap"):
            old = tl.atomic_xchg(at, value, sem="relaxed", scope="sys")
        elif KIND == "compare_swap":
            old = tl.atomic_cas(at, tl.cast(cond, T), value, sem="relaxed", scope="sys")
        elif KIND == "add":
            old = tl.atomic_add(at, value, sem="relaxed", scope="sys")
        elif KIND == "inc":
            old = tl.atomic_add(at, tl.cast(1, T), sem="relaxed", scope="sys")
        elif KIND == "and":
            old = tl.atomic_and(at, value, sem="relaxed", scope="sys")
        elif KIND == "or":
            old = tl.atomic_or(at, value, sem="relaxed", scope="sys")
        else:
            old = tl.atomic_xor(at, value, sem="relaxed", scope="sys")
    return old


@triton.jit
def atomic_fetch(dest, pe):
    """Atomically load dest's element on PE pe.

    Relaxed, at system scope.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        pe: the PE, in [0, n_pes()).

    Returns:
        The value.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming atomic_fetch:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call
            atomic_fetch: ..." and its CUDA context is unusable. NVSHMEM's
            engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            old = sdt.atomic_fetch(counter, 0)
    """
    return _atomic(dest, 0, 0, pe, "fetch")


@triton.jit
def atomic_set(dest, value, pe):
    """Atomically store value into dest's element on PE pe.

    Relaxed, at system scope.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        value: the value, of dest's element type.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming atomic_set:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call atomic_set:
            ..." and its CUDA context is unusable. NVSHMEM's engine does not
            check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.atomic_set(counter, 1, 0)
    """
    _atomic(dest, value, 0, pe, "set")


@triton.jit
def atomic_swap(dest, value, pe):
    """Atomically replace dest's element on PE pe with value.

    Relaxed, at system scope.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        value: the value, of dest's element type.
        pe: the PE, in [0, n_pes()).

    Returns:
        The old value.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming atomic_swap:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call atomic_swap:
            ..." and its CUDA context is unusable. NVSHMEM's engine does not
            check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            old = sdt.atomic_swap(counter, 1, 0)
    """
    return _atomic(dest, value, 0, pe, "swap")


@triton.jit
def atomic_compare_swap(dest, cond, value, pe):
    """Atomically replace dest's element on PE pe with value if it equals cond.

    Relaxed, at system scope.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        cond: the value dest's element must equal for the swap.
        value: the value, of dest's element type.
        pe: the PE, in [0, n_pes()).

    Returns:
        The old value.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming
            atomic_compare_swap: arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call
            atomic_compare_swap: ..." and its CUDA context is unusable.
            NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            old = sdt.atomic_compare_swap(counter, 0, 1, 0)
    """
    return _atomic(dest, value, cond, pe, "compare_swap")


@triton.jit
def atomic_add(dest, value, pe):
    """Atomically ``dest[0] += value`` on PE pe.

    Relaxed, at system scope.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        value: the value, of dest's element type.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming atomic_add:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call atomic_add:
            ..." and its CUDA context is unusable. NVSHMEM's engine does not
            check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.atomic_add(counter, 1, 0)
    """
    _atomic(dest, value, 0, pe, "add")


@triton.jit
def atomic_fetch_add(dest, value, pe):
    """Atomically ``dest[0] += value`` on PE pe.

    Relaxed, at system scope.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        value: the value, of dest's element type.
        pe: the PE, in [0, n_pes()).

    Returns:
        The old value.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming
            atomic_fetch_add: arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call
            atomic_fetch_add: ..." and its CUDA context is unusable.
            NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            old = sdt.atomic_fetch_add(counter, 1, 0)
    """
    return _atomic(dest, value, 0, pe, "fetch_add")


@triton.jit
def atomic_inc(dest, pe):
    """Atomically add 1 to dest's element on PE pe.

    Relaxed, at system scope.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming atomic_inc:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call atomic_inc:
            ..." and its CUDA context is unusable. NVSHMEM's engine does not
            check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.atomic_inc(counter, 0)
    """
    _atomic(dest, 0, 0, pe, "inc")


@triton.jit
def atomic_fetch_inc(dest, pe):
    """Atomically add 1 to dest's element on PE pe.

    Relaxed, at system scope.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        pe: the PE, in [0, n_pes()).

    Returns:
        The old value.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming
            atomic_fetch_inc: arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call
            atomic_fetch_inc: ..." and its CUDA context is unusable.
            NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            old = sdt.atomic_fetch_inc(counter, 0)
    """
    return _atomic(dest, 0, 0, pe, "fetch_inc")


@triton.jit
def atomic_and(dest, value, pe):
    """Atomically ``dest[0] &= value`` on PE pe.

    Relaxed, at system scope.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        value: the value, of dest's element type.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming atomic_and:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call atomic_and:
            ..." and its CUDA context is unusable. NVSHMEM's engine does not
            check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.atomic_and(counter, 1, 0)
    """
    _atomic(dest, value, 0, pe, "and")


@triton.jit
def atomic_fetch_and(dest, value, pe):
    """Atomically ``dest[0] &= value`` on PE pe.

    Relaxed, at system scope.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        value: the value, of dest's element type.
        pe: the PE, in [0, n_pes()).

    Returns:
        The old value.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming
            atomic_fetch_and: arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call
            atomic_fetch_and: ..." and its CUDA context is unusable.
            NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            old = sdt.atomic_fetch_and(counter, 1, 0)
    """
    return _atomic(dest, value, 0, pe, "fetch_and")


@triton.jit
def atomic_or(dest, value, pe):
    """Atomically ``dest[0] |= value`` on PE pe.

    Relaxed, at system scope.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        value: the value, of dest's element type.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming atomic_or:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call atomic_or:
            ..." and its CUDA context is unusable. NVSHMEM's engine does not
            check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.atomic_or(counter, 1, 0)
    """
    _atomic(dest, value, 0, pe, "or")


@triton.jit
def atomic_fetch_or(dest, value, pe):
    """Atomically ``dest[0] |= value`` on PE pe.

    Relaxed, at system scope.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        value: the value, of dest's element type.
        pe: the PE, in [0, n_pes()).

    Returns:
        The old value.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming
            atomic_fetch_or: arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call
            atomic_fetch_or: ..." and its CUDA context is unusable.
            NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            old = sdt.atomic_fetch_or(counter, 1, 0)
    """
    return _atomic(dest, value, 0, pe, "fetch_or")


@triton.jit
def atomic_xor(dest, value, pe):
    """Atomically ``dest[0] ^= value`` on PE pe.

    Relaxed, at system scope.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        value: the value, of dest's element type.
        pe: the PE, in [0, n_pes()).

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming atomic_xor:
            arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call atomic_xor:
            ..." and its CUDA context is unusable. NVSHMEM's engine does not
            check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            sdt.atomic_xor(counter, 1, 0)
    """
    _atomic(dest, value, 0, pe, "xor")


@triton.jit
def atomic_fetch_xor(dest, value, pe):
    """Atomically ``dest[0] ^= value`` on PE pe.

    Relaxed, at system scope.

    Args:
        dest: a pointer (a tensor argument) or an int64 address of symmetric
            memory.
        value: the value, of dest's element type.
        pe: the PE, in [0, n_pes()).

    Returns:
        The old value.

    Raises:
        CompilationError: at compile time
            (triton.compiler.errors.CompilationError), naming
            atomic_fetch_xor: arguments of the wrong type.
        RuntimeError: from the host's next CUDA call (torch raises it) once
            the kernel trapped: on a bad PE or an address off the symmetric
            heap, symmem's engine writes an error record and traps; the PE
            prints "symmem: a kernel stopped in the device call
            atomic_fetch_xor: ..." and its CUDA context is unusable.
            NVSHMEM's engine does not check.

    Example:
        In a ``@triton.jit`` kernel (``import symmem.device.triton as sdt``;
        launch it after ``@sdt.requires_symmem``)::

            old = sdt.atomic_fetch_xor(counter, 1, 0)
    """
    return _atomic(dest, value, 0, pe, "fetch_xor")
