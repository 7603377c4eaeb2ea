# cuops - one Makefile: `make` builds the library and tools, `make test` builds
# and runs the tests, `make ptx` / `make sass` dump what the kernels became.
#
#   make -j$(nproc)                 library, cuops-bench, cuops-probe, tests
#   make test                       build + run every test (GPU tests skip without a GPU)
#   make bench                      cuops-bench all (BENCH_ARGS=... to choose), JSON in build/
#   make sass                       SASS of every kernel into build/sass/
#   ARCHS=sm90 make                 sm_90a only (faster builds on the device)

CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
CC        ?= gcc
BUILD     ?= build

# One fat binary: sm_90a (wgmma, setmaxnreg) and sm_80 machine code + compute_80 PTX.
ARCHS ?= all
ifeq ($(ARCHS),sm90)
GENCODE := -gencode=arch=compute_90a,code=sm_90a
else
GENCODE := -gencode=arch=compute_90a,code=sm_90a \
           -gencode=arch=compute_80,code=sm_80 \
           -gencode=arch=compute_80,code=compute_80
endif

INCLUDES  := -Iinclude -Isrc
CFLAGS    ?= -O2 -g
CFLAGS    += -std=c11 -Wall -Wextra -fPIC -fvisibility=hidden $(INCLUDES)
NVCCFLAGS ?= -O3
NVCCFLAGS += -std=c++17 $(GENCODE) -lineinfo -Xptxas=--warn-on-spills \
             -Xcompiler -fPIC,-fvisibility=hidden,-Wall $(INCLUDES) \
             -I$(CUDA_HOME)/include/cccl --expt-relaxed-constexpr
# host-only programs (tests, tools) compiled by nvcc
TOOLFLAGS := -std=c++17 -O2 -g $(GENCODE) -lineinfo $(INCLUDES) -I$(CUDA_HOME)/include/cccl \
             --expt-relaxed-constexpr -Xcompiler -Wall
CUDALIB   := -L$(CUDA_HOME)/lib64

LIB_C_SRC  := $(wildcard src/api/*.c src/cpu/*.c)
LIB_CU_SRC := $(shell find src/cuda -name '*.cu' | sort)
LIB_OBJ    := $(LIB_C_SRC:%.c=$(BUILD)/obj/%.o) $(LIB_CU_SRC:%.cu=$(BUILD)/obj/%.o)
LIB        := $(BUILD)/lib/libcuops.so

BENCH_SRC  := $(wildcard tools/bench/*.cu tools/bench/*.c)
PROBE_SRC  := $(wildcard tools/probe/*.cu)
TEST_C     := $(wildcard tests/test_*.c)
TEST_CU    := $(wildcard tests/test_*.cu)
TEST_BIN   := $(TEST_C:tests/%.c=$(BUILD)/tests/%) $(TEST_CU:tests/%.cu=$(BUILD)/tests/%) \
              $(BUILD)/tests/test_python $(BUILD)/tests/test_binary $(BUILD)/tests/test_run_tests \
              $(BUILD)/tests/test_docs
RPATH      := -Wl,-rpath,'$$ORIGIN/../lib'

BIN := $(BUILD)/bin/cuops-bench
ifneq ($(PROBE_SRC),)
BIN += $(BUILD)/bin/cuops-probe
endif

.PHONY: all lib test bench sass ptx clean
all: $(LIB) $(BIN) $(TEST_BIN)
lib: $(LIB)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

# The CUDA runtime is linked statically and libcuda never: the library loads
# (and its CPU backend works) on a machine without an NVIDIA driver.
$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(NVCC) -shared $(GENCODE) -cudart static $^ -o $@ $(CUDALIB) -lm -lpthread -ldl -lrt

$(BUILD)/bin/cuops-bench: $(BENCH_SRC) $(LIB) $(wildcard tools/bench/*.h tools/bench/*.cuh)
	@mkdir -p $(dir $@)
	$(NVCC) $(TOOLFLAGS) $(BENCH_SRC) -o $@ -L$(BUILD)/lib -lcuops $(CUDALIB) -lcublasLt -lcublas -lm -lpthread -ldl -Xlinker -rpath,'$$ORIGIN/../lib'

$(BUILD)/bin/cuops-probe: $(PROBE_SRC) $(wildcard tools/probe/*.h tools/probe/*.cuh)
	@mkdir -p $(dir $@)
	$(NVCC) $(TOOLFLAGS) $(PROBE_SRC) -o $@ -lm

$(BUILD)/tests/%: tests/%.c $(LIB) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra $(INCLUDES) $< -o $@ -L$(BUILD)/lib -lcuops -lm $(RPATH)

$(BUILD)/tests/%: tests/%.cu $(LIB) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(NVCC) $(TOOLFLAGS) $< -o $@ -L$(BUILD)/lib -lcuops $(CUDALIB) -lcublas -lm -Xlinker -rpath,'$$ORIGIN/../lib'

$(BUILD)/tests/test_python: tests/test_python.sh $(LIB) $(wildcard tests/python/*.py python/cuops/*.py)
	@mkdir -p $(dir $@)
	cp tests/test_python.sh $@ && chmod +x $@

$(BUILD)/tests/test_binary: tests/test_binary.sh $(LIB)
	@mkdir -p $(dir $@)
	cp tests/test_binary.sh $@ && chmod +x $@

$(BUILD)/tests/test_docs: tests/test_docs.sh
	@mkdir -p $(dir $@)
	cp tests/test_docs.sh $@ && chmod +x $@

$(BUILD)/tests/test_run_tests: tests/test_run_tests.sh scripts/run-tests.sh
	@mkdir -p $(dir $@)
	cp tests/test_run_tests.sh $@ && chmod +x $@

test: all
	bash scripts/run-tests.sh $(BUILD)/tests

# Validate + time every op against cuBLAS/CUB in one run; the JSON goes to
# $(BUILD)/bench.json (scripts/split_results.py files it under bench/results/).
BENCH_ARGS ?= all
bench: all
	$(BUILD)/bin/cuops-bench $(BENCH_ARGS) --json $(BUILD)/bench.json

ptx:
	@mkdir -p $(BUILD)/ptx
	for f in $(LIB_CU_SRC); do $(NVCC) $(NVCCFLAGS) -ptx -gencode=arch=compute_90a,code=compute_90a $$f -o $(BUILD)/ptx/$$(basename $$f .cu).ptx || exit 1; done

sass: $(LIB)
	@mkdir -p $(BUILD)/sass
	$(CUDA_HOME)/bin/cuobjdump --dump-sass $(LIB) > $(BUILD)/sass/libcuops.sass

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJ:.o=.d)
