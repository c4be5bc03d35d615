#!/usr/bin/env bash
# make check-valgrind: a bounded, representative subset of tests/run.sh under valgrind memcheck, then the same
# programs natively under PETSc's own allocator checks. Prints "N passed, N failed"; exits non-zero on any failure.
#   BUILD         build folder with tests/ (default <repo>/build-valgrind, an -O1 -g build made by the makefile)
#   MPIEXEC       MPI launcher (default mpiexec)
#   VALGRIND      valgrind command (default valgrind); VALGRIND_ARGS: extra arguments (e.g. --track-origins=yes)
#   VG_ONLY       regular expression: run only the cases whose name matches
#
# Two passes per case, because valgrind and PETSc's tracing allocator hide each other's findings:
#   valgrind      memcheck with PETSc's plain allocator (-malloc_debug 0): with -malloc_debug every block stays
#                 reachable from PETSc's list of allocations, so valgrind reports no leak at all, and its guard words
#                 hide overruns. -malloc_coalesce 0 gives each array of PetscMalloc2..7 its own block, so that an
#                 overrun of one array into the next is seen. Every error and every definite leak is fatal
#                 (--error-exitcode), with only the Open MPI / PMIx / hwloc / libevent noise of tests/valgrind.supp
#                 suppressed; a run also fails when any rank's log holds an unsuppressed error. (PETSc rounds every
#                 request up to 16 bytes: an overrun inside that slack is invisible to valgrind.)
#   malloc_dump   the same command natively with -malloc_debug -malloc_dump: PETSc checks the guard words of every
#                 block at free and lists the PetscMalloc'd blocks still allocated at PetscFinalize (which PETSc
#                 itself does not turn into an exit status: any "[rank] N bytes ..." line fails the case).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build-valgrind}
mpiexec=${MPIEXEC:-mpiexec}
valgrind=${VALGRIND:-valgrind}
supp=$top/tests/valgrind.supp
only=${VG_ONLY:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# the kernels from the first product (tests/setup checks the default set-up budget)
export PETSC_OPTIONS="${PETSC_OPTIONS:+$PETSC_OPTIONS }-mat_csrk_setup eager"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
# Open MPI keeps its plugins loaded, so that stacks through them are symbolised (and matched by the suppressions)
export OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
# hwloc's x86 CPUID backend does not work under valgrind (it says so on every run); the Linux backend is enough
export HWLOC_COMPONENTS=${HWLOC_COMPONENTS:--x86}
logdir=$build/valgrind-logs
rm -rf "$logdir"
mkdir -p "$logdir"
command -v "$valgrind" >/dev/null || { echo "check-valgrind: $valgrind not found (make deps installs it on Debian)"; echo "0 passed, 1 failed"; exit 1; }
[ -f "$supp" ] || { echo "check-valgrind: $supp missing"; echo "0 passed, 1 failed"; exit 1; }
vgopts=(--tool=memcheck --error-exitcode=97 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite
        --num-callers=40 --suppressions="$supp" --gen-suppressions=all ${VALGRIND_ARGS:-})
vgpetsc=(-malloc_debug 0 -malloc_coalesce 0)
pass=0
fail=0
ntest=0

ok() {
  pass=$((pass + 1))
  echo "ok   $1"
}
notok() {
  fail=$((fail + 1))
  echo "FAIL $1"
}

# case NAME NP CMD...: CMD under valgrind on NP ranks, then natively with -malloc_debug -malloc_dump
case_() {
  local name=$1 np=$2 rc t0 bad log cmd
  shift 2
  if [ -n "$only" ] && ! [[ $name =~ $only ]]; then return; fi
  cmd="$*"
  [ ${#cmd} -le 240 ] || cmd="${cmd:0:240}..."
  ntest=$((ntest + 1))
  log=$logdir/$ntest
  t0=$(date +%s)
  $mpiexec -n "$np" "$valgrind" "${vgopts[@]}" --log-file="$log.vg.%p" "$@" "${vgpetsc[@]}" >"$log.out" 2>&1
  rc=$?
  # every rank's log must end with an error summary of 0 (a rank killed before its summary fails too)
  bad=$(grep -L "ERROR SUMMARY: 0 errors" "$log".vg.* 2>/dev/null)
  if [ $rc -eq 0 ] && [ -z "$bad" ] && ls "$log".vg.* >/dev/null 2>&1; then
    ok "valgrind    $name (np $np, $(($(date +%s) - t0)) s)"
  else
    notok "valgrind    $name (np $np): exit $rc: $cmd ${vgpetsc[*]}"
    for f in ${bad:-$log.vg.*}; do
      [ -f "$f" ] || continue
      # the first unsuppressed reports with their stacks, and the summary
      awk '/^==[0-9]+== (Invalid|Conditional|Use of|Syscall param|Mismatched|Source and|Argument|[0-9,]+ (\([0-9,]+ direct, [0-9,]+ indirect\) )?bytes in [0-9,]+ blocks are definitely)/{p=1; n++} p && n <= 3 {print} /^==[0-9]+== $/{p=0}' "$f" | head -n 60 | sed 's/^/     | /'
      grep -E "ERROR SUMMARY" "$f" | sed 's/^/     | /'
    done
    tail -n 8 "$log.out" | sed 's/^/     | /'
    echo "     | logs: $log.out $log.vg.*"
  fi

  t0=$(date +%s)
  $mpiexec -n "$np" "$@" -malloc_debug -malloc_dump >"$log.malloc" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && ! grep -qE '^\[ *[0-9]+\] *[0-9]+ bytes ' "$log.malloc"; then
    ok "malloc_dump $name (np $np)"
  else
    notok "malloc_dump $name (np $np): exit $rc: $cmd -malloc_debug -malloc_dump"
    grep -E '^\[ *[0-9]+\] *[0-9]+ bytes ' "$log.malloc" | head -n 10 | sed 's/^/     | /'
    tail -n 8 "$log.malloc" | sed 's/^/     | /'
  fi
}

t=$build/tests
# the state test writes its binary viewer files into the working directory
cd "$logdir" || exit 1
start=$(date +%s)
# state: conversions, value and pattern changes, every ordering, k = 1..3; two threads forced (small
# matrices would otherwise run on one)
for o in natural rcm bandk auto; do
  case_ "state ordering $o" 1 "$t/state" -mat_csrk_ordering "$o" -mat_csrk_threads 2
done
case_ "state k=3 bandk" 1 "$t/state" -mat_csrk_k 3 -mat_csrk_ordering bandk -mat_csrk_threads 2
case_ "state k=1 elasticity3d rcm" 1 "$t/state" -problem elasticity3d -n 4 -mat_csrk_k 1 -mat_csrk_ordering rcm -mat_csrk_threads 2
case_ "state random bandk" 1 "$t/state" -problem random -n 300 -mat_csrk_ordering bandk -mat_csrk_threads 2
case_ "state bandk" 2 "$t/state" -mat_csrk_ordering bandk -mat_csrk_threads 2

# parity: each run goes through every ordering (natural, rcm, bandk, auto) and k = 1, 2, 3
case_ "parity lap2d5" 1 "$t/parity" -problem lap2d5 -n 16 -mat_csrk_threads 2
case_ "parity permuted lap3d7" 1 "$t/parity" -problem lap3d7 -n 7 -permute 3 -mat_csrk_threads 2
case_ "parity lap3d27 (row patterns)" 1 "$t/parity" -problem lap3d27 -n 6 -mat_csrk_threads 2 -expect_patterns 1
case_ "parity elasticity3d (bs 3)" 1 "$t/parity" -problem elasticity3d -n 4 -mat_csrk_threads 2
case_ "parity random (empty rows, dense row)" 1 "$t/parity" -problem random -n 300 -mat_csrk_threads 2
case_ "parity rectangular random" 1 "$t/parity" -problem randrect -n 200 -mat_csrk_threads 2
case_ "parity explicit sizes" 1 "$t/parity" -problem lap2d5 -n 13 -mat_csrk_sr_size 7 -mat_csrk_ssr_size 3 -mat_csrk_threads 3
case_ "parity tiny" 1 "$t/parity" -problem random -n 2
# 32-bit column indices (the cases above store row patterns or 16-bit offsets from the diagonal where they fit), the copied natural
# order (its offsets come straight from the AIJ columns), and an entry too far from the diagonal for the offsets
case_ "parity permuted lap3d7, 32-bit indices" 1 "$t/parity" -problem lap3d7 -n 7 -permute 3 -mat_csrk_threads 2 -mat_csrk_compress_indices 0
CSRK_NATURAL_COPY=1 case_ "parity natural order copied (CSRK_NATURAL_COPY=1)" 1 "$t/parity" -problem lap3d27 -n 6 -mat_csrk_threads 2
case_ "parity entry 32768 from the diagonal" 1 "$t/parity" -problem lap2d5 -n 182 -far 32768 -expect_natural_index_bytes 4 -kmin 2 -kmax 2 -transpose 0 -mat_csrk_row_patterns 0
case_ "parity permuted lap3d7" 2 "$t/parity" -problem lap3d7 -n 7 -permute 3 -mat_csrk_threads 2
# apiparity: the public-API sequence (stored values, conversions, transposes, submatrices, COO, products, KSP) on a
# square and a rectangular matrix, and on a block matrix over 2 ranks
case_ "apiparity lap2d5, randrect (natural, rcm; k 2)" 1 "$t/apiparity" -problem lap2d5,randrect -n 6,30 -orderings natural,rcm -ks 2 -mat_csrk_threads 2
case_ "apiparity elasticity3d (bandk, k 3)" 2 "$t/apiparity" -problem elasticity3d -n 3 -orderings bandk -ks 3 -mat_csrk_threads 2
# one real matrix, large enough (44k nonzeros) for the default thread count to be used
matrices=${CSRK_MATRICES:-$top/../shared/matrices}
if [ -f "$matrices/fe_4elt2.mtx" ]; then
  case_ "parity fe_4elt2.mtx" 1 "$t/parity" -f "$matrices/fe_4elt2.mtx"
else
  echo "note: $matrices/fe_4elt2.mtx not found, skipped"
fi

# property: seeded random matrices, options and state changes
case_ "property seed 1" 1 "$t/property" -seed 1 -count 30
case_ "property seed 2" 2 "$t/property" -seed 2 -count 10

# Matrix Market reader: good files, and every malformed file (the error paths are where leaks hide)
good=()
for f in "$top"/tests/data/mm-good/*.mtx*; do good+=(-f "$f"); done
bad=()
for f in "$top"/tests/data/mm-bad/*.mtx*; do bad+=(-f "$f"); done
case_ "mmread $((${#good[@]} / 2)) good files" 1 "$t/mmread_check" "${good[@]}"
case_ "mmread $((${#bad[@]} / 2)) malformed files, a missing file, a directory" 1 "$t/mmread_check" -expect_error "${bad[@]}" -f "$top/tests/data/no-such-file.mtx" -f "$top/tests/data/mm-bad"

# KSP CG with the default preconditioner, Jacobi and GAMG
case_ "ksp lap3d7" 1 "$t/ksp" -problem lap3d7 -n 8 -pcs default,jacobi,gamg -mat_csrk_threads 2
[ -f "$matrices/wing.mtx" ] && case_ "ksp wing.mtx bandk k=3" 1 "$t/ksp" -f "$matrices/wing.mtx" -mat_csrk_ordering bandk -mat_csrk_k 3
case_ "ksp elasticity3d bandk k=3" 1 "$t/ksp" -problem elasticity3d -n 4 -mat_csrk_ordering bandk -mat_csrk_k 3 -pcs default,gamg -mat_csrk_threads 2

# the demo: CG, and the -mat_view ::ascii_info summary of the CSR-k matrix (MatView of the types)
case_ "tutorial ex1 permuted" 1 "$build/tutorials/ex1" -n 10 -permute 1 -csrk_view ::ascii_info -mat_csrk_threads 2

echo "check-valgrind: $ntest cases in $(($(date +%s) - start)) s, logs in $logdir"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
