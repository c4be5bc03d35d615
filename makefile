# petsc-csrk: the CSR-k matrix types as a PETSc plugin.
#
#   make          builds lib/libcsrk.so, the utilities library of the tests and tutorials, the tests and the tutorials
#   make check    installs missing dependencies (Debian, as root), builds, runs every test
#   make demo     runs tutorials/ex1 (CG on 3D Poisson, aij and csrk side by side)
#   make deps     only the dependency check/installation
#   make tune     once per machine: measures the CPU variants that only compete with AIJ's kernel (lib/csrk-machine.txt)
#   make bench    a quick MatMult benchmark; make apps: PETSc's own tutorials timed with aij, sell and csrk
#   make sweep    never slower? the test suite's tutorials and ksp ex10 on the bench matrices, aij against csrk
#   V=1           prints the full compiler commands (by default one line per file)
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
NV_OPENMP_FLAGS ?= -fopenmp
comma := ,

CC_        := $(or $(PCC),mpicc)
OPTFLAGS   ?= -O3
WARNFLAGS  ?= -Wall -Wextra -Wno-unused-parameter
CFLAGS_ALL  = -fPIC $(OPTFLAGS) $(WARNFLAGS) $(OPENMP_FLAGS) $(EXTRA_CFLAGS) -I$(TOP)/include -I$(TOP)/src/mat/impls/csrk $(PETSC_CC_INCLUDES) $(METIS_CFLAGS)
RPATH       = $(patsubst -L%,-Wl$(comma)-rpath$(comma)%,$(filter -L%,$(PETSC_LIB)))
LIBS_ALL    = $(OPENMP_FLAGS) $(METIS_LIBS) $(RPATH) $(PETSC_LIB) -lz $(EXTRA_LDFLAGS)

# quiet build: one line per file, the full commands with V=1
V ?= 0
quiet = $(if $(filter 1,$(V)),,@printf '  %-7s %s\n' '$(1)' '$(patsubst $(TOP)/%,%,$(2))';)

BUILD  ?= $(TOP)/build
LIBDIR ?= $(TOP)/lib
LIB    := $(LIBDIR)/libcsrk.so

LIB_SRC := src/mat/impls/csrk/csrkregister.c src/mat/impls/csrk/csrk.c src/mat/impls/csrk/csrkconvert.c src/mat/impls/csrk/csrkthreads.c src/mat/impls/csrk/csrkstructure.c src/mat/impls/csrk/csrkplan.c src/mat/impls/csrk/csrkmult.c src/mat/impls/csrk/csrkpatterns.c src/mat/impls/csrk/csrkslices.c src/mat/impls/csrk/csrknodes.c src/mat/impls/csrk/csrksymmetric.c src/mat/impls/csrk/csrksetup.c src/mat/impls/csrk/csrkmachine.c src/mat/impls/csrk/tuning.c \
           src/mat/impls/csrk/ordering/bandk.c src/mat/impls/csrk/seq/csrkseq.c src/mat/impls/csrk/mpi/csrkmpi.c
LIB_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC))

# The utilities of the tests and tutorials (Matrix Market reader, generated problems; header petsccsrkutil.h beside
# them): a static library linked into those programs only, not into the plugin. They stay in src/mat/utils/, under
# their old paths, so that work on them in other branches merges without renames.
UTIL_SRC := src/mat/utils/mmread.c src/mat/utils/problems.c
UTIL_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(UTIL_SRC))
UTIL_LIB := $(BUILD)/lib/libcsrkutil.a
UTIL_INC := -I$(TOP)/src/mat/utils
$(UTIL_OBJ): CFLAGS_ALL += $(UTIL_INC)

# CUDA: the MATCSRKCUDA type is built when PETSc was configured with CUDA, with PETSc's CUDA compiler
PETSC_CONFH := $(patsubst %/lib/petsc/conf/petscvariables,%/include/petscconf.h,$(PETSC_CONF))
CSRK_CUDA   := $(if $(PETSC_CONF),$(shell grep -qs "define PETSC_HAVE_CUDA 1" $(PETSC_CONFH) && echo 1))
NVCC_       := $(or $(CUDAC),$(shell command -v nvcc 2>/dev/null))
CUDA_ARCH   ?= 90
MPICXX_INC  := $(or $(MPICXX_INCLUDES),$(shell mpicxx --showme:compile 2>/dev/null))
NVFLAGS      = -O3 -std=c++17 -arch=sm_$(CUDA_ARCH) -Xcompiler -fPIC -Xcompiler $(NV_OPENMP_FLAGS) $(NVFLAGS_EXTRA) $(MPICXX_INC) -I$(TOP)/include -I$(TOP)/src/mat/impls/csrk $(PETSC_CC_INCLUDES)
CUDA_SRC    := $(addprefix src/mat/impls/csrk/cuda/,csrkcudaplan.cu csrkcudakernels.cu csrkcudasliced.cu csrkcudamerge.cu csrkcudablock.cu csrkcudabsliced.cu csrkcudahalo.cu csrkcudareorder.cu csrkcudastage.cu)
CUDA_CSRC   := src/mat/impls/csrk/cuda/csrkcuda.c src/mat/impls/csrk/cuda/csrkcudampi.c
ifeq ($(CSRK_CUDA),1)
  EXTRA_CFLAGS += -DCSRK_HAVE_CUDA
  LIB_OBJ      += $(patsubst %.cu,$(BUILD)/obj/%.o,$(CUDA_SRC)) $(patsubst %.c,$(BUILD)/obj/%.o,$(CUDA_CSRC))
endif

TESTS     := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/*.c))
TUTORIALS := $(patsubst tutorials/%.c,$(BUILD)/tutorials/%,$(wildcard tutorials/*.c))

.PHONY: all deps check test demo tune clean need-petsc cuda-check block-emu bsliced-emu rcm-emu stage-emu check-asan check-valgrind check-race race-deps fuzz fuzz-build fuzz-deps bench plots apps apps-examples sweep manpages manpages-check
all: need-petsc $(LIB) $(UTIL_LIB) $(TESTS) $(TUTORIALS)

need-petsc:
	@if [ -z "$(PETSC_CONF)" ]; then echo "PETSc not found: set PETSC_DIR (and PETSC_ARCH) or run 'make deps' (Debian: petsc-dev)"; exit 1; fi

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC_) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.o: %.cu
	@mkdir -p $(dir $@)
	$(call quiet,NVCC,$<)$(NVCC_) $(NVFLAGS) -DCSRK_HAVE_CUDA -c $< -o $@

# relinked when the makefile changes, so that an object no longer listed (as the utilities once were) leaves it
$(LIB): $(LIB_OBJ) $(TOP)/makefile
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)$(CC_) -shared -o $@ $(filter %.o,$^) $(LIBS_ALL)

$(UTIL_LIB): $(UTIL_OBJ)
	@mkdir -p $(dir $@)
	$(call quiet,AR,$@)rm -f $@ && $(AR) rcs $@ $^

# tests and tutorials link the utilities and the library (and so can call MatCSRKRegister); PETSc programs may instead
# load the library with -dll_append
$(BUILD)/tests/% $(BUILD)/tutorials/%: CFLAGS_EXE = $(filter-out -fPIC,$(CFLAGS_ALL)) $(UTIL_INC)
$(BUILD)/tests/%: tests/%.c $(LIB) $(UTIL_LIB)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC_) $(CFLAGS_EXE) $< -o $@ $(UTIL_LIB) -L$(LIBDIR) -Wl,-rpath,$(LIBDIR) -lcsrk $(LIBS_ALL)
$(BUILD)/tutorials/%: tutorials/%.c $(LIB) $(UTIL_LIB)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC_) $(CFLAGS_EXE) $< -o $@ $(UTIL_LIB) -L$(LIBDIR) -Wl,-rpath,$(LIBDIR) -lcsrk $(LIBS_ALL)

deps:
	@bash $(TOP)/configure-hooks/install-deps.sh

# deps first, then a fresh make so that the PETSc variables are read
check:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory cuda-check
	@$(MAKE) --no-print-directory block-emu
	@$(MAKE) --no-print-directory bsliced-emu
	@$(MAKE) --no-print-directory rcm-emu
	@$(MAKE) --no-print-directory stage-emu
	@$(MAKE) --no-print-directory test

# Compiles the CUDA sources even where PETSc has no CUDA (nvcc present, no GPU), so that they cannot rot, and links
# them into one object (a partial link: the rest of the library unresolved), where a kernel defined in a header that two
# files include shows (a duplicate symbol)
CUDA_INC := $(if $(NVCC_),$(abspath $(dir $(NVCC_))/../include))
cuda-check:
	@if [ -z "$(NVCC_)" ]; then echo "cuda-check: no nvcc, CUDA sources not compiled"; exit 0; fi; \
	mkdir -p $(BUILD)/cuda-check && \
	for f in $(CUDA_SRC); do $(NVCC_) $(NVFLAGS) -include $(TOP)/src/mat/impls/csrk/cuda/compilecheck.h -c $(TOP)/$$f -o $(BUILD)/cuda-check/$$(basename $$f .cu).o || exit 1; done && \
	for f in $(CUDA_CSRC); do $(CC_) $(CFLAGS_ALL) -Werror -I$(CUDA_INC) -include $(TOP)/src/mat/impls/csrk/cuda/compilecheck.h -c $(TOP)/$$f -o $(BUILD)/cuda-check/$$(basename $$f .c).o || exit 1; done && \
	$(or $(LD),ld) -r -o $(BUILD)/cuda-check/link-check.o $(foreach f,$(CUDA_SRC),$(BUILD)/cuda-check/$(basename $(notdir $(f))).o) $(foreach f,$(CUDA_CSRC),$(BUILD)/cuda-check/$(basename $(notdir $(f))).o) && \
	echo "cuda-check: $(CUDA_SRC) $(CUDA_CSRC) compile and link without duplicate symbols ($$($(NVCC_) --version | tail -n 1))"

# Tests of GPU code built for the host, where there is no GPU or nvcc (host_emu TARGET,SOURCE,FLAGS): each prints a
# line ending in ": ok" a case, its failures, and a last line of its verdict, and exits nonzero on a failure
define host_emu
	@mkdir -p $(BUILD)/tests
	$(call quiet,CXX,tests/$(2).cpp)$(or $(CXX),g++) -O2 -Wall -Wextra $(3) $(TOP)/tests/$(2).cpp -o $(BUILD)/tests/$(2)
	@$(BUILD)/tests/$(2) >$(BUILD)/tests/$(2).log 2>&1; rc=$$?; grep -E "FAIL|error" $(BUILD)/tests/$(2).log; \
	echo "$(1): $$(tail -n 1 $(BUILD)/tests/$(2).log) ($$(grep -c ': ok$$' $(BUILD)/tests/$(2).log) cases; $(BUILD)/tests/$(2).log)"; exit $$rc
endef

# The GPU block kernel's kernels (csrkcudablock.cuh), checked against a reference
block-emu:
	$(call host_emu,block-emu,blockemu,-std=c++20 -Wno-unknown-pragmas -pthread)

# The GPU block-sliced kernel's kernels (csrkcudabsliced.cuh): layout, product, diagonal, refresh, against a reference
bsliced-emu:
	$(call host_emu,bsliced-emu,bslicedemu,-std=c++20 -Wno-unknown-pragmas -pthread)

# The kernels of the GPU's RCM levels (csrkcudareorder.cuh), their order checked against the sequential definition
rcm-emu:
	$(call host_emu,rcm-emu,rcmemu,-std=c++20 -Wno-unknown-pragmas -pthread)

# The host side of the GPU's staged upload (csrkcudastage.cuh): every byte of a chunk, whatever the threads
stage-emu:
	$(call host_emu,stage-emu,stageemu,-std=c++17 $(OPENMP_FLAGS))

test: all
	@MPIEXEC="$(or $(MPIEXEC),mpiexec)" bash $(TOP)/tests/run.sh

# demo and bench compare on equal cores: aij, sell and csrk on the same MPI ranks, one OpenMP thread each (the
# default of the CSR-k kernels; OMP_NUM_THREADS=1 makes it explicit), one rank per core
CORES  ?= $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
MPIRUN  = $(if $(filter 0,$(shell id -u)),OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 )OMP_NUM_THREADS=1 $(or $(MPIEXEC),mpiexec)
DEMO_NP ?= $(CORES)
demo:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	@echo "demo: CG with aij and csrk on the same $(DEMO_NP) MPI rank(s), one thread each (equal cores)"
	$(MPIRUN) -n $(DEMO_NP) $(BUILD)/tutorials/ex1 -n 64

# a quick representative benchmark (30 s on 2 cores): 3D stencils and elasticity in their natural order, the
# 7-point stencil randomly renumbered, unstructured tetrahedral meshes (Poisson and elasticity), and the BENCH_FILES found in BENCH_MATRICES (skipped, with a line, where absent)
BENCH_CSV      ?= $(BUILD)/bench.csv
BENCH_NP       ?= $(CORES)
BENCH_MATRICES ?= $(TOP)/../shared/matrices
BENCH_FILES    ?= astro-ph.mtx
BENCH_OPTS     ?= -types aij,sell,csrk -reps 20 -warmup 3 -solve 0
bench: all
	@rm -f $(BENCH_CSV)
	@echo "bench: MatMult of aij, sell and csrk on the same $(BENCH_NP) MPI rank(s), one OpenMP thread each (equal cores); CSV: $(BENCH_CSV)"
	@echo "bench 1/4: 3D stencils and elasticity, natural order"
	@$(MPIRUN) -n $(BENCH_NP) $(BUILD)/tutorials/bench -problem lap3d7,lap3d27,elasticity3d -n 80,40,24 $(BENCH_OPTS) -o $(BENCH_CSV)
	@echo "bench 2/4: the 7-point stencil, randomly renumbered"
	@$(MPIRUN) -n $(BENCH_NP) $(BUILD)/tutorials/bench -problem lap3d7 -n 80 -permute 1 $(BENCH_OPTS) -stream 0 -o $(BENCH_CSV)
	@echo "bench 3/4: unstructured tetrahedral meshes (P1 Poisson, P1 elasticity), numbered by the mesh"
	@$(MPIRUN) -n $(BENCH_NP) $(BUILD)/tutorials/bench -problem fem3d,femelast3d -n 64,32 $(BENCH_OPTS) -stream 0 -o $(BENCH_CSV)
	@files=""; for f in $(BENCH_FILES); do [ -f "$(BENCH_MATRICES)/$$f" ] && files="$$files$${files:+,}$(BENCH_MATRICES)/$$f"; done; \
	if [ -z "$$files" ]; then echo "bench 4/4: skipped, no $(BENCH_FILES) in $(BENCH_MATRICES) (BENCH_MATRICES=<folder> BENCH_FILES=<names> to add Matrix Market files)"; \
	else echo "bench 4/4: $$files"; $(MPIRUN) -n $(BENCH_NP) $(BUILD)/tutorials/bench -f $$files $(BENCH_OPTS) -stream 0 -o $(BENCH_CSV); fi

# the machine file: the CPU row loops that only compete with AIJ's kernel (symmetric half, row nodes, the plain loop)
# timed once against it on one rank per core, every core busy (tutorials/tune.c, about a minute on 2 cores); the
# plugin reads it beside itself when registered, and without it keeps AIJ's kernel where a variant saves no bytes
TUNE_NP   ?= $(CORES)
TUNE_FILE ?= $(LIBDIR)/csrk-machine.txt
tune: all
	@echo "tune: the rivals of AIJ's kernel on $(TUNE_NP) MPI rank(s), one thread each; writes $(TUNE_FILE)"
	@$(MPIRUN) -n $(TUNE_NP) $(BUILD)/tutorials/tune -o $(TUNE_FILE)

# PETSc's own tutorials, unmodified (ksp ex45, snes ex5 and ex19), built from PETSc's example sources (Debian:
# libpetsc<version>-dev-examples; a PETSc source tree holds them under src/) and timed by tutorials/apps.sh with
# -dm_mat_type aij, sell and csrk on APPS_NP ranks, one OpenMP thread each: the CPU table of README.md
PETSC_EXAMPLES ?= $(patsubst %/src/ksp/ksp/tutorials/ex45.c,%,$(firstword $(wildcard $(PETSC_DIR)/share/petsc/examples/src/ksp/ksp/tutorials/ex45.c $(PETSC_DIR)/src/ksp/ksp/tutorials/ex45.c)))
APPS     := $(BUILD)/apps/ksp-ex45 $(BUILD)/apps/snes-ex5 $(BUILD)/apps/snes-ex19
APPS_DIR ?= $(BUILD)/apps
$(BUILD)/apps/ksp-%: $(PETSC_EXAMPLES)/src/ksp/ksp/tutorials/%.c
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC_) -O2 $(PETSC_CC_INCLUDES) $< -o $@ $(RPATH) $(PETSC_LIB)
$(BUILD)/apps/snes-%: $(PETSC_EXAMPLES)/src/snes/tutorials/%.c
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC_) -O2 $(PETSC_CC_INCLUDES) $< -o $@ $(RPATH) $(PETSC_LIB)
apps-examples:
	@echo "apps: PETSc's example sources not found under $(PETSC_DIR) (Debian: apt-get install libpetsc$$(pkg-config --modversion PETSc | cut -d. -f1,2)-dev-examples; or set PETSC_EXAMPLES to a PETSc source tree)"; exit 1
apps: need-petsc $(LIB) $(if $(PETSC_EXAMPLES),$(APPS),apps-examples)
	@APPS_DIR=$(APPS_DIR) CSRK_LIB=$(LIB) MPIEXEC="$(or $(MPIEXEC),mpiexec)" bash $(TOP)/tutorials/apps.sh

# never slower? every PETSc tutorial of the test suite, and ksp ex10 on every bench matrix (natural and randomly
# renumbered), with aij and with csrk's default options on the same ranks, set-up included (tutorials/sweep.sh;
# SWEEP_NP ranks beside 1, SWEEP_ROUNDS interleaved rounds, about 12 minutes a round on 2 cores): $(BUILD)/sweep/table.md
SWEEP_NP     ?= $(CORES)
SWEEP_ROUNDS ?= 3
sweep: need-petsc $(LIB) $(TUTORIALS)
	@NP=$(SWEEP_NP) ROUNDS=$(SWEEP_ROUNDS) CSRK_LIB=$(LIB) PERMBIN=$(BUILD)/tutorials/permbin MPIEXEC="$(or $(MPIEXEC),mpiexec)" bash $(TOP)/tutorials/sweep.sh $(BUILD)/sweep

# charts of the CSV files of make bench and make apps (PLOT_CSV) into PLOT_DIR, with matplotlib
PYTHON   ?= $(or $(wildcard /usr/bin/python3),python3)
PLOT_CSV ?= $(wildcard $(BENCH_CSV) $(APPS_DIR)/apps.csv)
PLOT_DIR ?= $(BUILD)/plots
plots:
	@if [ -z "$(strip $(PLOT_CSV))" ]; then echo "plots: no CSV: run make bench or make apps first (or set PLOT_CSV)"; exit 1; fi
	@$(PYTHON) -c "import matplotlib" 2>/dev/null || { \
	  if [ "$$(id -u)" -eq 0 ] && command -v apt-get >/dev/null && [ "$(PYTHON)" = /usr/bin/python3 ]; then \
	    echo "plots: matplotlib missing: installing Debian's python3-matplotlib with apt-get"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-matplotlib >/dev/null || exit 1; \
	  else echo "plots: $(PYTHON) has no matplotlib: install it (Debian: sudo apt-get install python3-matplotlib; or pip install matplotlib)"; exit 1; fi; }
	@$(PYTHON) $(TOP)/tutorials/plots.py $(PLOT_DIR) $(PLOT_CSV)

# manual pages of the public names (configure-hooks/manpages.py, Python's standard library only), from the comment
# blocks of include/petsccsrk.h and src/mat/impls/csrk/: markdown in docs/manualpages (committed), troff in
# $(BUILD)/man (man -M build/man MATCSRK). manpages-check regenerates them apart and fails where docs/manualpages differs
MANPAGES_MD ?= $(TOP)/docs/manualpages
manpages:
	@$(PYTHON) $(TOP)/configure-hooks/manpages.py --root $(TOP) --md $(MANPAGES_MD) --man $(BUILD)/man

manpages-check:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(PYTHON) $(TOP)/configure-hooks/manpages.py --root $(TOP) --md $$tmp/manualpages >$$tmp/log 2>&1 || { cat $$tmp/log; echo "manpages-check: configure-hooks/manpages.py failed"; exit 1; }; \
	if diff -r -q $$tmp/manualpages $(MANPAGES_MD) >/dev/null 2>&1; then echo "manpages-check: docs/manualpages matches the source comments"; \
	else diff -r $$tmp/manualpages $(MANPAGES_MD) | head -n 20; \
	  echo "manpages-check: docs/manualpages differs from the comment blocks of include/ and src/ (above): run 'make manpages' and commit docs/manualpages"; exit 1; fi

clean:
	rm -rf $(BUILD) $(LIBDIR)

-include $(LIB_OBJ:.o=.d) $(UTIL_OBJ:.o=.d)

# ---------------------------------------------------------------- sanitizers and fuzzing
# make check-asan: library, tests and tutorials built with ASan+UBSan into ASAN_BUILD, then tests/run.sh against them.
# PETSc and Open MPI are not instrumented: leak reports are off (their allocations drown everything), every ASan
# error and every UBSan report is fatal. The unmodified PETSc tutorials are not ASan-built but dlopen the ASan
# library (-dll_append), so the ranks get the ASan runtime preloaded (mpiexec -x LD_PRELOAD); that section runs only
# with ASAN_TUTORIALS=1, because there every run that loads any library with -dll_append (libz.so.1 too) deadlocks at exit
# (glibc's __libc_setlocale_lock found corrupted in libp11-kit's destructor, under _dl_fini), Debian bookworm, PETSc 3.18.
ASAN_BUILD   ?= $(TOP)/build-asan
ASAN_SAN     ?= -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
ASAN_RUNTIME ?= $(shell $(CC_) -print-file-name=libasan.so 2>/dev/null)
ASAN_OPTIONS_CHECK  ?= detect_leaks=0:halt_on_error=1:abort_on_error=0:exitcode=86:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1
UBSAN_OPTIONS_CHECK ?= halt_on_error=1:print_stacktrace=1:exitcode=87
check-asan:
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) LIBDIR=$(ASAN_BUILD)/lib OPTFLAGS="-O1 -g $(ASAN_SAN)" EXTRA_LDFLAGS="$(ASAN_SAN)" all || exit 1; \
	built=$$(date +%s); echo "check-asan: build took $$((built - start)) s"; \
	rt=$$(readlink -f "$(ASAN_RUNTIME)"); [ -f "$$rt" ] || { echo "check-asan: ASan runtime $(ASAN_RUNTIME) not found"; exit 1; }; \
	mpx="$(or $(MPIEXEC),mpiexec)"; \
	if $$mpx --version 2>&1 | grep -qiE 'open ?mpi|openrte'; then mpx="$$mpx -x LD_PRELOAD=$$rt -x ASAN_OPTIONS -x UBSAN_OPTIONS"; \
	else echo "check-asan: not Open MPI, PETSc tutorials loading the ASan plugin may fail without LD_PRELOAD=$$rt"; fi; \
	if [ "$(ASAN_TUTORIALS)" != 1 ]; then export CSRK_TUT_ONLY='^$$'; \
	  echo "check-asan: unmodified PETSc tutorials not run (ASAN_TUTORIALS=1 runs them: with libasan preloaded into the non-ASan PETSc programs, every -dll_append run hangs at exit in libp11-kit's destructor, any plugin)"; fi; \
	ASAN_OPTIONS="$(ASAN_OPTIONS_CHECK)" UBSAN_OPTIONS="$(UBSAN_OPTIONS_CHECK)" \
	  BUILD=$(ASAN_BUILD) CSRK_LIB=$(ASAN_BUILD)/lib/libcsrk.so MPIEXEC="$$mpx" QUICK=$(or $(QUICK),1) \
	  bash $(TOP)/tests/run.sh; rc=$$?; \
	echo "check-asan: tests took $$(( $$(date +%s) - built )) s (total $$(( $$(date +%s) - start )) s)"; \
	if grep -lE 'ERROR: AddressSanitizer|runtime error:' $(ASAN_BUILD)/test-logs/*.log $(ASAN_BUILD)/petsc-tutorials/*.err 2>/dev/null; then \
	  echo "check-asan: sanitizer reports in the logs above"; rc=1; fi; \
	exit $$rc

# make check-valgrind: library, tests and tutorials built -O1 -g into VALGRIND_BUILD, then tests/valgrind.sh: a bounded
# subset of the tests (state, parity, property, Matrix Market reader, KSP; 1 and 2 ranks, 2 OpenMP threads) under
# valgrind memcheck, where every error and every definite leak fails (suppressions: tests/valgrind.supp, Open MPI
# noise only), and the same programs natively with PETSc's -malloc_debug -malloc_dump. About 2-3 minutes on 2 cores.
VALGRIND_BUILD ?= $(TOP)/build-valgrind
check-valgrind:
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory BUILD=$(VALGRIND_BUILD) LIBDIR=$(VALGRIND_BUILD)/lib OPTFLAGS="-O1 -g" all || exit 1; \
	echo "check-valgrind: build took $$(( $$(date +%s) - start )) s"; \
	BUILD=$(VALGRIND_BUILD) MPIEXEC="$(or $(MPIEXEC),mpiexec)" bash $(TOP)/tests/valgrind.sh; rc=$$?; \
	echo "check-valgrind: total $$(( $$(date +%s) - start )) s"; \
	exit $$rc

# make check-race: library, tests and tutorials built with clang -fsanitize=thread against LLVM's OpenMP runtime
# (libomp) into RACE_BUILD, then tests/race.sh: small matrices on 2-4 threads through every OpenMP region of the library
# (structure build and ordering, value refresh, MatMult/MatMultAdd; k = 1..3, orderings natural/rcm/bandk), with LLVM's
# Archer tool giving TSan OpenMP's synchronisation. PETSc and MPI are not instrumented. Under a minute on 2 cores.
RACE_CC    ?= clang
RACE_BUILD ?= $(TOP)/build-race
RACE_SAN   ?= -fsanitize=thread -fno-omit-frame-pointer
race-deps:
	@RACE_CC=$(RACE_CC) bash $(TOP)/configure-hooks/install-tsan-deps.sh

check-race: need-petsc
	@$(MAKE) --no-print-directory race-deps || exit 1; \
	start=$$(date +%s); \
	OMPI_CC=$(RACE_CC) MPICH_CC=$(RACE_CC) $(MAKE) --no-print-directory BUILD=$(RACE_BUILD) LIBDIR=$(RACE_BUILD)/lib \
	  OPENMP_FLAGS="-fopenmp=libomp" OPTFLAGS="-O1 -g $(RACE_SAN)" EXTRA_LDFLAGS="$(RACE_SAN)" all || exit 1; \
	echo "check-race: build took $$(( $$(date +%s) - start )) s"; \
	BUILD=$(RACE_BUILD) MPIEXEC="$(or $(MPIEXEC),mpiexec)" bash $(TOP)/tests/race.sh; rc=$$?; \
	echo "check-race: total $$(( $$(date +%s) - start )) s"; \
	exit $$rc

# make fuzz: libFuzzer (clang, ASan+UBSan) on MatCSRKReadMatrixMarket(); mmread.c is compiled into the fuzzer.
# Runs FUZZ_SECONDS (default 60) from the seeds in tests/fuzz/corpus (new inputs go to FUZZ_BUILD/corpus) and fails
# when libFuzzer finds a crash, a leak, a timeout or an out-of-memory input (saved under FUZZ_BUILD/artifacts/).
# Reproduce one: FUZZ_BUILD/mmread_fuzz FILE (MMFUZZ_VERBOSE=1 prints the PETSc error of a rejected file).
FUZZ_CC      ?= clang
FUZZ_BUILD   ?= $(TOP)/build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 1
FUZZ_ARGS    ?= -max_len=16384 -timeout=20 -rss_limit_mb=4096 -print_final_stats=1
FUZZ_SAN     ?= -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
MPI_CFLAGS   := $(shell mpicc --showme:compile 2>/dev/null)
MPI_LIBS     := $(shell mpicc --showme:link 2>/dev/null)
FUZZ_EXE     := $(FUZZ_BUILD)/mmread_fuzz

fuzz-deps:
	@FUZZ_CC=$(FUZZ_CC) bash $(TOP)/configure-hooks/install-fuzz-deps.sh

$(FUZZ_EXE): tests/fuzz/mmread_fuzz.c src/mat/utils/mmread.c src/mat/utils/petsccsrkutil.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -g -O1 $(FUZZ_SAN) $(UTIL_INC) $(PETSC_CC_INCLUDES) $(MPI_CFLAGS) tests/fuzz/mmread_fuzz.c src/mat/utils/mmread.c -o $@ $(RPATH) $(PETSC_LIB) $(MPI_LIBS) -lz

fuzz-build: need-petsc
	@$(MAKE) --no-print-directory fuzz-deps
	@$(MAKE) --no-print-directory $(FUZZ_EXE)

fuzz: fuzz-build
	@mkdir -p $(FUZZ_BUILD)/corpus $(FUZZ_BUILD)/artifacts; rm -f $(FUZZ_BUILD)/artifacts/*; \
	start=$$(date +%s); \
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 \
	ASAN_OPTIONS=leak_check_at_exit=0:halt_on_error=1:detect_stack_use_after_return=1 LSAN_OPTIONS=suppressions=$(TOP)/tests/fuzz/lsan.supp UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  $(FUZZ_EXE) -max_total_time=$(FUZZ_SECONDS) $(if $(filter-out 1,$(FUZZ_JOBS)),-fork=$(FUZZ_JOBS)) -dict=$(TOP)/tests/fuzz/mm.dict \
	  -artifact_prefix=$(FUZZ_BUILD)/artifacts/ $(FUZZ_ARGS) $(FUZZ_BUILD)/corpus $(TOP)/tests/fuzz/corpus 2>&1 | tee $(FUZZ_BUILD)/fuzz.log | \
	  grep -vE '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)' ; rc=$${PIPESTATUS[0]}; \
	echo "fuzz: $$(( $$(date +%s) - start )) s, exit $$rc; $$(grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|Done )' $(FUZZ_BUILD)/fuzz.log | tr '\n' ' ')"; \
	if [ $$rc -ne 0 ] || [ -n "$$(ls -A $(FUZZ_BUILD)/artifacts)" ]; then echo "fuzz: FINDINGS in $(FUZZ_BUILD)/artifacts: $$(ls $(FUZZ_BUILD)/artifacts | tr '\n' ' ')"; exit 1; fi; \
	echo "fuzz: no findings"
fuzz: SHELL := /bin/bash
