# Developer entry points. The README's two commands are `make example` and
# `make test`; both build what they need into .venv and build/.
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
CC ?= cc
# cflags.txt: the flags setup.py compiles with too
CFLAGS += $(shell cat cflags.txt) -Iinclude
LDLIBS := -pthread -ldl

CORE_SRC := $(wildcard src/core/*.c) $(wildcard src/backends/cpu/*.c)
GPU_FILES := $(shell find src/backends/gpu -name '*.[ch]')
ALL_FILES := $(shell find src include -name "*.[ch]" -o -name "*.def")
CORE_OBJ := $(patsubst src/%.c,build/obj/%.o,$(CORE_SRC))
C_TESTS := $(patsubst tests/c/%.c,build/tests/%,$(wildcard tests/c/*.c))
C_EXAMPLES := $(patsubst examples/%.c,build/examples/%,$(wildcard examples/*.c))

.PHONY: all lib example test test-c test-python dev clean

all: lib $(C_TESTS) $(C_EXAMPLES)

lib: build/libsymmem.so build/libsymmem.a build/libsymmem_gpu.so

# The gpu backend: its own shared object, loaded through SYMMEM_GPU_BACKEND_LIB.
build/libsymmem_gpu.so: $(GPU_FILES) src/core/backend.h src/core/error.h cflags.txt
	@mkdir -p build
	$(CC) $(CFLAGS) -shared -o $@ $(filter %.c,$^) -ldl

build/obj/%.o: src/%.c cflags.txt $(wildcard include/symmem/*.h src/core/*.h src/core/*.def src/backends/cpu/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

build/libsymmem.so: $(CORE_OBJ)
	$(CC) -shared -o $@ $^ $(LDLIBS)

build/libsymmem.a: $(CORE_OBJ)
	ar rcs $@ $^

build/tests/%: tests/c/%.c build/libsymmem.a tests/c/c_test.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< build/libsymmem.a $(LDLIBS)

build/examples/%: examples/%.c build/libsymmem.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< build/libsymmem.a $(LDLIBS)

# A virtual environment with the package installed for development.
$(VENV)/.installed: pyproject.toml setup.py cflags.txt $(ALL_FILES)
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[test]'
	touch $@

dev: $(VENV)/.installed

example: dev
	$(VPY) -m symmem.run -n 4 examples/ring.py

test-c: all
	$(VPY) tests/c/run_c_tests.py build/tests

test-python: dev
	$(VPY) -m pytest -q tests/python

test: dev test-c test-python

clean:
	rm -rf build build-python python/symmem/*.so
