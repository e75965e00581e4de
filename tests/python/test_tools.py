"""The repository's own tools (tools/) and CI script (.ci/run): each tool
answers --help with its usage and writes nothing (device_bitcode.py once
took --help for its output path and left a file named --help at the root),
and CI fails when make test leaves the tree unclean."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = sorted(p for p in (ROOT / "tools").iterdir() if p.suffix in (".py", ".sh"))
CI_RUN = ROOT / ".ci" / "run"


def run_tool(tool, *args, cwd):
    program = [sys.executable] if tool.suffix == ".py" else ["sh"]
    return subprocess.run(
        [*program, str(tool), *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_every_tool_is_covered():
    # a tool of another kind would escape the checks below
    names = {p.name for p in (ROOT / "tools").iterdir() if not p.name.startswith(".")}
    assert names == {p.name for p in TOOLS}, names


@pytest.mark.parametrize("tool", TOOLS, ids=lambda p: p.name)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_each_tool_answers_help_and_writes_nothing(tool, flag, tmp_path):
    before = sorted(os.listdir(ROOT))
    result = run_tool(tool, flag, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: "), result.stdout
    assert f"tools/{tool.name}" in result.stdout.splitlines()[0], result.stdout
    assert result.stderr == ""
    assert list(tmp_path.iterdir()) == []
    assert not (ROOT / flag).exists() and sorted(os.listdir(ROOT)) == before


@pytest.mark.parametrize("tool", TOOLS, ids=lambda p: p.name)
def test_each_tool_refuses_an_option_it_does_not_know(tool, tmp_path):
    result = run_tool(tool, "--no-such-option", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "usage: " in result.stderr, result.stderr
    assert list(tmp_path.iterdir()) == []
    assert not (ROOT / "--no-such-option").exists()


def ci_run(tmp_path, recipe):
    """.ci/run in a fresh repository of its own whose `make test` runs recipe."""
    (tmp_path / ".ci").mkdir()
    shutil.copy(CI_RUN, tmp_path / ".ci" / "run")
    (tmp_path / "Makefile").write_text(f"test:\n\t{recipe}\n")
    (tmp_path / ".gitignore").write_text("/build/\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "checked out"]):
        subprocess.run(git + command, cwd=tmp_path, env=env, check=True, capture_output=True)
    return subprocess.run(
        ["bash", ".ci/run"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )


def test_ci_passes_when_the_build_writes_only_ignored_files(tmp_path):
    result = ci_run(tmp_path, "mkdir -p build && touch build/out")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "left the tree clean" in result.stdout


@pytest.mark.parametrize(
    "recipe, listed",
    [("touch stray.bc", "?? stray.bc"), ("echo '/other/' >> .gitignore", " M .gitignore")],
    ids=["an untracked file", "a modified file"],
)
def test_ci_fails_when_make_test_leaves_the_tree_unclean(tmp_path, recipe, listed):
    result = ci_run(tmp_path, recipe)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "make test left the tree unclean" in result.stderr, result.stderr
    assert listed in result.stderr.splitlines(), result.stderr


def test_ci_fails_when_make_test_fails(tmp_path):
    result = ci_run(tmp_path, "false")
    assert result.returncode != 0 and "left the tree" not in result.stdout + result.stderr
