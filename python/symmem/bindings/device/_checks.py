"""The checks of a raw device call's arguments when a kernel compiles, for
every DSL of symmem.bindings.device: each argument against its parameter's
kind in the table ("*T" a pointer, "T" a number), and a generic form's
element type from its typed pointer or array arguments. Each DSL says what
an argument points to and whether it is a number; the messages name the
call and the argument. typing() makes the typing function numba's and
numba-cuda-mlir's overloads take."""

import inspect


def check(call, args, pointee, is_number, error):
    """error(message) unless args suit call's parameters; returns the dtype
    (a generic form's, found from its arguments).

    pointee(arg): what a pointer argument points to (a dtype name, or
    names joined by "|" where the DSL cannot tell which: a CuTe pointer to
    an unsigned type says it is signed; "void"; "address" for an int) or
    None where arg is no pointer; is_number(arg): whether arg can be a
    value parameter's."""
    typed = None if call.generic else call.dtype
    candidates = None  # a generic form's dtypes its typed pointers allow
    for (name, kind), arg in zip(call.params, args):
        if not kind.startswith("*"):
            if not is_number(arg):
                raise error(f"{call.name}: {name} must be a number ({kind}), got {arg}")
            continue
        points, want = pointee(arg), kind[1:]
        if points is None:
            raise error(
                f"{call.name}: {name} must be a pointer ({kind}), an array or an address "
                f"(an int), got {arg}"
            )
        if points in ("void", "address") or want == "void":
            continue
        choices = points.split("|")
        if want == "T":
            before = candidates
            candidates = [c for c in choices if before is None or c in before]
            if not candidates:
                raise error(
                    f"{call.name}: {name} points to {points}, where the other pointers point "
                    f"to {'|'.join(before)}"
                )
        elif want not in choices:
            raise error(
                f"{call.name}: {name} points to {points}, where {call.name} takes a pointer "
                f"to {want}"
            )
    if not call.generic:
        return typed
    if candidates is None:
        raise error(
            f"{call.name}: no argument says the element type: pass a typed pointer or an "
            "array for one of its pointers (an int or a void pointer does not say it)"
        )
    dtype = candidates[0]  # signed where the DSL could not tell
    if dtype not in call.dtypes():
        raise error(
            f"{call.name}: the arguments point to {dtype}, which NVSHMEM's {call.name} "
            f"does not take ({', '.join(call.dtypes())})"
        )
    return dtype


def typing(stub, error, impl, pointee, is_number):
    """The typing function of stub's overload: binds the arguments to the
    call's parameters, refuses what the table refuses, checks, and returns
    impl(call, dtype), the compiled recipe. Its signature is the call's (the
    overload's implementation must have the same parameter names)."""
    call, shown = stub.call, inspect.signature(stub)

    def typed(*args, **kwargs):
        try:
            bound = shown.bind(*args, **kwargs)
        except TypeError as problem:
            raise error(f"{call.name}{shown}: {problem}") from None
        why = call.why_not()
        if why:
            raise error(why)
        return impl(call, check(call, bound.args, pointee, is_number, error))

    typed.__signature__ = shown.replace(
        parameters=[p.replace(annotation=p.empty) for p in shown.parameters.values()]
    )
    return typed
