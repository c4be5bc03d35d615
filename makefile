# petsc-csrk: the CSR-k matrix types as a PETSc plugin.
#
#   make          builds lib/libcsrk.so, the tests and the tutorials
#   make check    installs missing dependencies (Debian, as root), builds, runs every test
#   make demo     runs tutorials/ex1 (CG on 3D Poisson, aij and csrk side by side)
#   make deps     only the dependency check/installation
#
# PETSc comes from PETSC_DIR/PETSC_ARCH when set, else from pkg-config (Debian's petsc-dev).
# METIS from METIS_DIR when set, else pkg-config metis, else the system default paths.

.DEFAULT_GOAL := all
TOP := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

ifeq ($(strip $(PETSC_DIR)),)
  PETSC_DIR := $(shell pkg-config --variable=prefix PETSc 2>/dev/null)
endif
PETSC_CONF := $(firstword $(wildcard $(PETSC_DIR)/$(PETSC_ARCH)/lib/petsc/conf/petscvariables $(PETSC_DIR)/lib/petsc/conf/petscvariables))
ifneq ($(PETSC_CONF),)
  include $(PETSC_CONF)
endif

METIS_CFLAGS ?= $(if $(METIS_DIR),-I$(METIS_DIR)/include,$(shell pkg-config --cflags metis 2>/dev/null))
METIS_LIBS   ?= $(if $(METIS_DIR),-L$(METIS_DIR)/lib -Wl$(comma)-rpath$(comma)$(METIS_DIR)/lib -lmetis,$(or $(shell pkg-config --libs metis 2>/dev/null),-lmetis))
OPENMP_FLAGS ?= -fopenmp
comma := ,

CC_        := $(or $(PCC),mpicc)
OPTFLAGS   ?= -O3
WARNFLAGS  ?= -Wall -Wextra -Wno-unused-parameter
CFLAGS_ALL  = -fPIC $(OPTFLAGS) $(WARNFLAGS) $(OPENMP_FLAGS) $(EXTRA_CFLAGS) -I$(TOP)/include -I$(TOP)/src/mat/impls/csrk $(PETSC_CC_INCLUDES) $(METIS_CFLAGS)
RPATH       = $(patsubst -L%,-Wl$(comma)-rpath$(comma)%,$(filter -L%,$(PETSC_LIB)))
LIBS_ALL    = $(OPENMP_FLAGS) $(METIS_LIBS) $(RPATH) $(PETSC_LIB) -lz $(EXTRA_LDFLAGS)

BUILD  ?= $(TOP)/build
LIBDIR ?= $(TOP)/lib
LIB    := $(LIBDIR)/libcsrk.so

LIB_SRC := src/mat/impls/csrk/csrk.c src/mat/impls/csrk/csrkstructure.c src/mat/impls/csrk/tuning.c \
           src/mat/impls/csrk/ordering/bandk.c src/mat/impls/csrk/seq/csrkseq.c src/mat/impls/csrk/mpi/csrkmpi.c \
           src/mat/utils/mmread.c src/mat/utils/problems.c
LIB_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC))

# CUDA: the MATCSRKCUDA type is built when PETSc was configured with CUDA, with PETSc's CUDA compiler
PETSC_CONFH := $(patsubst %/lib/petsc/conf/petscvariables,%/include/petscconf.h,$(PETSC_CONF))
CSRK_CUDA   := $(if $(PETSC_CONF),$(shell grep -qs "define PETSC_HAVE_CUDA 1" $(PETSC_CONFH) && echo 1))
NVCC_       := $(or $(CUDAC),$(shell command -v nvcc 2>/dev/null))
CUDA_ARCH   ?= 90
MPICXX_INC  := $(or $(MPICXX_INCLUDES),$(shell mpicxx --showme:compile 2>/dev/null))
NVFLAGS      = -O3 -std=c++17 -arch=sm_$(CUDA_ARCH) -Xcompiler -fPIC $(MPICXX_INC) -I$(TOP)/include -I$(TOP)/src/mat/impls/csrk $(PETSC_CC_INCLUDES)
CUDA_SRC    := src/mat/impls/csrk/cuda/csrkcudakernels.cu
CUDA_CSRC   := src/mat/impls/csrk/cuda/csrkcuda.c
ifeq ($(CSRK_CUDA),1)
  EXTRA_CFLAGS += -DCSRK_HAVE_CUDA
  LIB_OBJ      += $(patsubst %.cu,$(BUILD)/obj/%.o,$(CUDA_SRC)) $(patsubst %.c,$(BUILD)/obj/%.o,$(CUDA_CSRC))
endif

TESTS     := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/*.c))
TUTORIALS := $(patsubst tutorials/%.c,$(BUILD)/tutorials/%,$(wildcard tutorials/*.c))

.PHONY: all deps check test demo clean need-petsc cuda-check
all: need-petsc $(LIB) $(TESTS) $(TUTORIALS)

need-petsc:
	@if [ -z "$(PETSC_CONF)" ]; then echo "PETSc not found: set PETSC_DIR (and PETSC_ARCH) or run 'make deps' (Debian: petsc-dev)"; exit 1; fi

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC_) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC_) $(NVFLAGS) -DCSRK_HAVE_CUDA -c $< -o $@

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC_) -shared -o $@ $^ $(LIBS_ALL)

# tests and tutorials link the library (and so can call MatCSRKRegister); PETSc programs may instead load it with -dll_append
$(BUILD)/tests/% $(BUILD)/tutorials/%: CFLAGS_EXE = $(filter-out -fPIC,$(CFLAGS_ALL))
$(BUILD)/tests/%: tests/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC_) $(CFLAGS_EXE) $< -o $@ -L$(LIBDIR) -Wl,-rpath,$(LIBDIR) -lcsrk $(LIBS_ALL)
$(BUILD)/tutorials/%: tutorials/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC_) $(CFLAGS_EXE) $< -o $@ -L$(LIBDIR) -Wl,-rpath,$(LIBDIR) -lcsrk $(LIBS_ALL)

deps:
	@bash $(TOP)/configure-hooks/install-deps.sh

# deps first, then a fresh make so that the PETSc variables are read
check:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory cuda-check
	@$(MAKE) --no-print-directory test

# Compiles the CUDA sources even where PETSc has no CUDA (nvcc present, no GPU), so that they cannot rot
CUDA_INC := $(if $(NVCC_),$(abspath $(dir $(NVCC_))/../include))
cuda-check:
	@if [ -z "$(NVCC_)" ]; then echo "cuda-check: no nvcc, CUDA sources not compiled"; exit 0; fi; \
	mkdir -p $(BUILD)/cuda-check && \
	$(NVCC_) $(NVFLAGS) -include $(TOP)/src/mat/impls/csrk/cuda/compilecheck.h -c $(TOP)/$(CUDA_SRC) -o $(BUILD)/cuda-check/kernels.o && \
	$(CC_) $(CFLAGS_ALL) -Werror -I$(CUDA_INC) -include $(TOP)/src/mat/impls/csrk/cuda/compilecheck.h -c $(TOP)/$(CUDA_CSRC) -o $(BUILD)/cuda-check/glue.o && \
	echo "cuda-check: $(CUDA_SRC) and $(CUDA_CSRC) compile ($$($(NVCC_) --version | tail -n 1))"

test: all
	@MPIEXEC="$(or $(MPIEXEC),mpiexec)" bash $(TOP)/tests/run.sh

demo:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/tutorials/ex1 -n 48

clean:
	rm -rf $(BUILD) $(LIBDIR)

-include $(LIB_OBJ:.o=.d)
