"""The shape of the source tree: short files, no include circles, and every
environment variable read through the one table."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "src")


def c_files():
    for folder, _, names in os.walk(SRC):
        for name in names:
            if name.endswith((".c", ".h")):
                yield os.path.join(folder, name)


def test_no_source_file_is_past_500_lines():
    long = {os.path.relpath(p, ROOT): n for p in c_files()
            if (n := sum(1 for _ in open(p))) > 500}
    assert not long, f"split these by concept: {long}"


def includes(path):
    """The project files path includes, as absolute paths."""
    here = os.path.dirname(path)
    found = []
    for name in re.findall(r'^#include "([^"]+)"', open(path).read(), re.M):
        for base in (here, os.path.join(ROOT, "include")):
            candidate = os.path.normpath(os.path.join(base, name))
            if os.path.exists(candidate):
                found.append(candidate)
                break
    return found


def test_no_include_circle():
    graph = {p: includes(p) for p in c_files()}
    state = {}

    def visit(node, trail):
        if state.get(node) == "done":
            return
        assert state.get(node) != "open", "include circle: " + " -> ".join(
            os.path.relpath(p, ROOT) for p in trail + [node])
        state[node] = "open"
        for child in graph.get(node, ()):
            visit(child, trail + [node])
        state[node] = "done"

    for node in graph:
        visit(node, [])


def test_only_the_environment_table_calls_getenv():
    # Every variable symmem reads is listed (python -m symmem info shows it).
    readers = sorted(os.path.relpath(p, ROOT) for p in c_files()
                     if re.search(r"\bgetenv\s*\(", open(p).read()))
    assert readers == ["src/core/env.c"], readers
