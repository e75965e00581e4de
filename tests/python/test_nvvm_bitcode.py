"""symmem.device._nvvm_bitcode: the copy of NVSHMEM's device bitcode that CuTe
kernels link (libNVVM refuses functions with an explicit section), checked on
a small module made here with llvmlite (NVSHMEM's own is 31 MB, and no part of
CI; docs/history/testing-2026.md records the run with it)."""

import sys

import pytest

llvm = pytest.importorskip("llvmlite.binding")

from symmem import NvshmemInvalid  # noqa: E402
from symmem.device import _nvvm_bitcode  # noqa: E402

MODULE = r"""
target triple = "nvptx64-nvidia-cuda"
@counter = global i32 0
@llvm.used = appending global [1 x ptr] [ptr @counter], section "llvm.metadata"
define void @put(ptr %dst, i32 %v) section ".text.compute" {
  store i32 %v, ptr %dst
  ret void
}
define i32 @plain(i32 %x) {
  %y = add i32 %x, 1
  ret i32 %y
}
"""


def _bitcode(tmp_path, text, name="lib.bc"):
    path = tmp_path / name
    path.write_bytes(llvm.parse_assembly(text).as_bitcode())
    return path


def test_function_sections_are_dropped_and_the_rest_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    original = _bitcode(tmp_path, MODULE)
    copy = _nvvm_bitcode.for_nvvm(str(original))
    assert copy != str(original) and copy.startswith(str(tmp_path / "cache" / "symmem" / "cute"))
    text = str(llvm.parse_bitcode(open(copy, "rb").read()))
    assert ".text.compute" not in text
    assert 'section "llvm.metadata"' in text  # a global's section stays
    for kept in ("define void @put(", "store i32 %v, ptr %dst", "define i32 @plain(", "@counter"):
        assert kept in text, kept


def test_the_copy_is_made_once_and_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    original = _bitcode(tmp_path, MODULE)
    first = _nvvm_bitcode.for_nvvm(str(original))
    made = open(first, "rb").read()

    def no_second_build(data, call):
        raise AssertionError("built again")

    monkeypatch.setattr(_nvvm_bitcode, "without_function_sections", no_second_build)
    assert _nvvm_bitcode.for_nvvm(str(original)) == first
    assert open(first, "rb").read() == made


def test_a_module_without_function_sections_is_used_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    plain = MODULE.replace(' section ".text.compute"', "")
    original = _bitcode(tmp_path, plain)
    assert _nvvm_bitcode.for_nvvm(str(original)) == str(original)
    assert _nvvm_bitcode.for_nvvm(str(original)) == str(original)  # remembered


def test_without_llvmlite_the_call_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    original = _bitcode(tmp_path, MODULE)
    monkeypatch.setitem(sys.modules, "llvmlite.binding", None)
    with pytest.raises(NvshmemInvalid, match=r"cute_compile: .*pip install llvmlite"):
        _nvvm_bitcode.for_nvvm(str(original), call="cute_compile")
