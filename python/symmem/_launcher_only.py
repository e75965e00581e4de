"""``python -m symmem.run`` without the API: the launcher only.

Python imports a package before it runs a module of it, so every job's
launcher used to import all of symmem (NumPy, the extension) and use none of
it: about 0.3 s of CPU a job, and a launcher that could not start while the
compiled part was broken, though run.py needs only the standard library.
While ``python -m`` looks for its module, ``sys.argv[0]`` is ``"-m"`` (the
documented sign); when that module is symmem.run, symmem/__init__.py hands
over to the launcher here and exits before importing anything else.

The launcher then runs while symmem's import is in progress: no thread of it
may import a module of the package (run.py and its helpers import theirs at
the top).
"""

import sys

LAUNCHER = "symmem.run"

# Python's options that take the next argument as their value.
_OPTIONS_WITH_VALUE = ("-X", "-W", "--check-hash-based-pycs")


def module_being_started():
    """The module ``python -m NAME`` is starting, while Python still looks
    for it; None otherwise (a script, -c, an import from a program, or a
    command line this does not understand: then symmem imports as usual)."""
    if sys.argv[:1] != ["-m"] or not hasattr(sys, "orig_argv"):
        return None
    args = iter(sys.orig_argv[1:])
    for arg in args:
        if arg == "-m":
            return next(args, None)
        if arg.startswith("-m"):
            return arg[2:]
        if arg in _OPTIONS_WITH_VALUE:
            next(args, None)
        elif not arg.startswith("-") or arg in ("-", "-c"):
            return None
    return None


def run_if_started():
    """Runs the launcher and exits when ``python -m symmem.run`` is starting."""
    if module_being_started() != LAUNCHER:
        return
    from symmem import run

    sys.argv[0] = run.__file__  # what runpy would have set
    sys.exit(run.main())
