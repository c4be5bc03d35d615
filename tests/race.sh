#!/usr/bin/env bash
# make check-race: the OpenMP code of petsc-csrk under ThreadSanitizer. Prints "N passed, N failed"; exits non-zero
# on any failure or any ThreadSanitizer report.
#   BUILD      build folder of the TSan build (default <repo>/build-race: clang -fsanitize=thread -fopenmp, LLVM libomp)
#   MPIEXEC    MPI launcher (default mpiexec)
#   ARCHER     path of LLVM's Archer OMPT tool (default: found next to libomp.so of clang)
#   RACE_ONLY  regular expression: run only the cases whose name matches
#
# Small matrices, 2 to 4 threads forced with -mat_csrk_threads (the default would run such small products on one
# thread), through every OpenMP region of the library: the structure build (ordering: RCM, Band-k's parallel loops;
# the threaded copy of columns and values), the value refresh after MatSetValues/MatScale/..., and MatMult and
# MatMultAdd (reordered copies: the gather of x, the barrier, the product) for k = 1, 2, 3, orderings natural, rcm,
# bandk (and auto), 16-bit column offsets (the default) and 32-bit indices; one case on 2 MPI ranks (diagonal and
# off-diagonal blocks).
#
# Only the library and the test programs are instrumented; PETSc, Open MPI and libomp are not. Archer (LLVM's OMPT
# tool, loaded through OMP_TOOL_LIBRARIES) tells TSan about OpenMP's synchronisation (fork, join, barriers), which it
# cannot see in the uninstrumented runtime. TSAN_OPTIONS ignore_noninstrumented_modules=1 is the setting Archer's
# documentation asks for with an uninstrumented OpenMP or MPI runtime: without it libomp's own thread-pool start-up
# (pthread_mutex_init in a worker, pthread_mutex_lock in the master, both inside libomp) is reported as a race. It only
# drops the accesses made through intercepted calls (memcpy, pthread_*, malloc) from uninstrumented libraries; every
# load and store of the instrumented library code is still checked. No suppression file is used.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build-race}
mpiexec=${MPIEXEC:-mpiexec}
only=${RACE_ONLY:-}
archer=${ARCHER:-}
if [ -z "$archer" ]; then
  # next to the libomp the tests were linked with, else next to clang's
  omp=$(ldd "$build/tests/parity" 2>/dev/null | awk '/libomp\.so/ {print $3; exit}')
  for d in ${omp:+"$(dirname "$(readlink -f "$omp")")"} "$(clang -print-resource-dir 2>/dev/null)/../.."; do
    [ -f "$d/libarcher.so" ] && { archer=$(readlink -f "$d/libarcher.so"); break; }
  done
fi
[ -f "$archer" ] || { echo "check-race: libarcher.so not found (Debian: libomp-dev; or set ARCHER)"; echo "0 passed, 1 failed"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# the kernels from the first product (tests/setup checks the default set-up budget)
export PETSC_OPTIONS="${PETSC_OPTIONS:+$PETSC_OPTIONS }-mat_csrk_setup eager"
export OMP_NUM_THREADS=4 OMP_WAIT_POLICY=passive OMP_TOOL_LIBRARIES=$archer ARCHER_OPTIONS=${ARCHER_OPTIONS:-verbose=1}
export TSAN_OPTIONS="ignore_noninstrumented_modules=1 halt_on_error=0 exitcode=66 second_deadlock_stack=1 history_size=4 ${TSAN_OPTIONS:-}"
logdir=$build/race-logs
rm -rf "$logdir"
mkdir -p "$logdir"
cd "$logdir" || exit 1 # the state test writes its binary viewer files into the working directory
pass=0
fail=0
ntest=0

# case NAME NP CMD...: passes when CMD exits 0, Archer was active and no rank printed a ThreadSanitizer report
case_() {
  local name=$1 np=$2 rc log
  shift 2
  if [ -n "$only" ] && ! [[ $name =~ $only ]]; then return; fi
  ntest=$((ntest + 1))
  log=$logdir/$ntest.log
  $mpiexec -n "$np" "$@" >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && ! grep -q "ThreadSanitizer" "$log" && [ "$(grep -c "^Archer detected OpenMP application with TSan" "$log")" -eq "$np" ]; then
    pass=$((pass + 1))
    echo "ok   $name (np $np)"
  else
    fail=$((fail + 1))
    echo "FAIL $name (np $np): exit $rc: $*"
    grep -q "^Archer detected" "$log" || echo "     | Archer did not start (OMP_TOOL_LIBRARIES=$archer): OpenMP synchronisation is invisible to TSan"
    awk '/^WARNING: ThreadSanitizer/{p=1; n++} p && n <= 2 {print} /^SUMMARY: ThreadSanitizer/{p=0}' "$log" | head -n 60 | sed 's/^/     | /'
    grep -E "^SUMMARY: ThreadSanitizer|ThreadSanitizer: reported" "$log" | sort | uniq -c | sed 's/^/     | /'
    tail -n 5 "$log" | sed 's/^/     | /'
  fi
}

t=$build/tests
start=$(date +%s)
for T in 2 3 4; do
  # every ordering and k: structure build and the products
  case_ "parity lap2d5, $T threads" 1 "$t/parity" -problem lap2d5 -n 10 -mat_csrk_threads $T
  case_ "parity permuted lap3d7, $T threads" 1 "$t/parity" -problem lap3d7 -n 6 -permute 3 -mat_csrk_threads $T
done
# 32-bit column indices (the cases above store 16-bit offsets from the diagonal where they fit)
case_ "parity permuted lap3d7, 32-bit indices, 3 threads" 1 "$t/parity" -problem lap3d7 -n 6 -permute 3 -mat_csrk_threads 3 -mat_csrk_compress_indices 0
case_ "parity random (empty rows, dense row), 3 threads" 1 "$t/parity" -problem random -n 200 -mat_csrk_threads 3
case_ "parity elasticity3d (bs 3), 2 threads" 1 "$t/parity" -problem elasticity3d -n 4 -mat_csrk_threads 2
case_ "parity explicit sizes, 4 threads" 1 "$t/parity" -problem lap2d5 -n 13 -mat_csrk_sr_size 5 -mat_csrk_ssr_size 2 -mat_csrk_threads 4
# value refresh, pattern changes, conversions, duplicates
for T in 2 4; do
  for o in natural rcm bandk; do
    for k in 1 2 3; do
      case_ "state ordering $o k=$k, $T threads" 1 "$t/state" -mat_csrk_ordering $o -mat_csrk_k $k -mat_csrk_threads $T
    done
  done
done
case_ "state ordering rcm, 32-bit indices, 3 threads" 1 "$t/state" -mat_csrk_ordering rcm -mat_csrk_threads 3 -mat_csrk_compress_indices 0
case_ "state k=3 bandk, 3 threads" 1 "$t/state" -mat_csrk_k 3 -mat_csrk_ordering bandk -mat_csrk_threads 3
case_ "property seed 3" 1 "$t/property" -seed 3 -count 40
case_ "ksp lap3d7 bandk k=3, 3 threads" 1 "$t/ksp" -problem lap3d7 -n 8 -mat_csrk_ordering bandk -mat_csrk_k 3 -pcs default,gamg -mat_csrk_threads 3
case_ "parity permuted lap3d7, 2 threads" 2 "$t/parity" -problem lap3d7 -n 6 -permute 3 -mat_csrk_threads 2
case_ "state bandk, 2 threads" 2 "$t/state" -mat_csrk_ordering bandk -mat_csrk_threads 2

echo "check-race: $ntest cases in $(($(date +%s) - start)) s, logs in $logdir"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
