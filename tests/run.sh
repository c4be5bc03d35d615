#!/usr/bin/env bash
# Runs every test of petsc-csrk and prints "N passed, N failed".
#   BUILD    build folder (default <repo>/build)
#   MPIEXEC  MPI launcher (default mpiexec)
#   QUICK=1  fewer matrices and rank counts
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
matrices=${CSRK_MATRICES:-$top/../shared/matrices}
mpiexec=${MPIEXEC:-mpiexec}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# the kernels run one thread per rank unless asked for more: OMP_NUM_THREADS asks for two per rank (the CI machine has
# two cores), so that the threaded paths run where a test does not force a count; the default is tested in section 4
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
# threads that spin while waiting starve the other ranks of an oversubscribed node (3 ranks on 2 cores here)
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
# the kernels under test run from the first product (the default set-up budget would give most of these short runs
# AIJ's kernel); tests/setup checks the budget itself
export PETSC_OPTIONS="${PETSC_OPTIONS:+$PETSC_OPTIONS }-mat_csrk_setup eager -mat_csrk_machine_file none"
logdir=$build/test-logs
mkdir -p "$logdir"
pass=0
fail=0
ntest=0

# run NAME NP CMD...: passes when CMD exits 0
run() {
  local name=$1 np=$2
  shift 2
  ntest=$((ntest + 1))
  local log="$logdir/$ntest.log"
  if $mpiexec -n "$np" "$@" >"$log" 2>&1; then
    pass=$((pass + 1))
    echo "ok   $name (np $np)"
  else
    fail=$((fail + 1))
    echo "FAIL $name (np $np): $*"
    tail -n 15 "$log" | sed 's/^/     | /'
  fi
}

# run_error NAME PATTERN CMD...: passes when CMD fails cleanly (non-zero exit, no signal) with PATTERN in its output
run_error() {
  local name=$1 pattern=$2
  shift 2
  ntest=$((ntest + 1))
  local log="$logdir/$ntest.log" rc
  "$@" >"$log" 2>&1
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q -- "$pattern" "$log"; then
    pass=$((pass + 1))
    echo "ok   $name"
  else
    fail=$((fail + 1))
    echo "FAIL $name: exit $rc, expected a PETSc error with '$pattern'"
    tail -n 8 "$log" | sed 's/^/     | /'
  fi
}

# run_same NAME NP CMD...: passes when CMD (which writes its solution to the file after -solution) exits 0 three times
# and writes the same bytes each time
run_same() {
  local name=$1 np=$2
  shift 2
  ntest=$((ntest + 1))
  local log="$logdir/$ntest.log" ok=1
  : >"$log"
  for i in 1 2 3; do
    $mpiexec -n "$np" "$@" -solution "$log.sol$i" >>"$log" 2>&1 || ok=0
  done
  if [ $ok = 1 ] && cmp -s "$log.sol1" "$log.sol2" && cmp -s "$log.sol1" "$log.sol3"; then
    pass=$((pass + 1))
    echo "ok   $name (np $np)"
  else
    fail=$((fail + 1))
    echo "FAIL $name (np $np): $* (runs differ or failed)"
    tail -n 8 "$log" | sed 's/^/     | /'
  fi
  rm -f "$log".sol*
}

# run_grep NAME PATTERN CMD...: passes when CMD exits 0 with PATTERN in its output
run_grep() {
  local name=$1 pattern=$2
  shift 2
  ntest=$((ntest + 1))
  local log="$logdir/$ntest.log"
  if "$@" >"$log" 2>&1 && grep -q -- "$pattern" "$log"; then
    pass=$((pass + 1))
    echo "ok   $name"
  else
    fail=$((fail + 1))
    echo "FAIL $name: expected success with '$pattern' in the output: $*"
    tail -n 8 "$log" | sed 's/^/     | /'
  fi
}

ranks="1 2 3"
[ "${QUICK:-0}" = 1 ] && ranks="1 3"

# 1. MatMult family parity with aij: every ordering and k (12 configurations a run)
for np in $ranks; do
  run "parity lap2d5" "$np" "$build/tests/parity" -problem lap2d5 -n 30
  run "parity lap3d7" "$np" "$build/tests/parity" -problem lap3d7 -n 12
  run "parity lap3d27" "$np" "$build/tests/parity" -problem lap3d27 -n 10
  run "parity elasticity3d (bs 3)" "$np" "$build/tests/parity" -problem elasticity3d -n 6
  run "parity random (empty rows, dense row)" "$np" "$build/tests/parity" -problem random -n 700
  run "parity rectangular random" "$np" "$build/tests/parity" -problem randrect -n 500
  run "parity permuted lap3d7" "$np" "$build/tests/parity" -problem lap3d7 -n 10 -permute 3
  run "parity tiny (fewer rows than ranks)" "$np" "$build/tests/parity" -problem random -n 2
  run "parity explicit sizes" "$np" "$build/tests/parity" -problem lap2d5 -n 25 -mat_csrk_sr_size 7 -mat_csrk_ssr_size 3 -mat_csrk_threads 2
  run "parity permuted elasticity3d (bs 3)" "$np" "$build/tests/parity" -problem elasticity3d -n 6 -permute 2
  # unstructured-like meshes: every row its own column offsets and values, in the mesh's numbering and renumbered
  run "parity fem3d (P1 tetrahedra, Morton numbering)" "$np" "$build/tests/parity" -problem fem3d -n 10
  run "parity permuted fem3d" "$np" "$build/tests/parity" -problem fem3d -n 10 -permute 4
  run "parity femelast3d (bs 3)" "$np" "$build/tests/parity" -problem femelast3d -n 7
  run "parity permuted femelast3d" "$np" "$build/tests/parity" -problem femelast3d -n 7 -permute 5
  run "parity femelast3d, one thread (row nodes where built)" "$np" "$build/tests/parity" -problem femelast3d -n 7 -mat_csrk_threads 1
  # natural order copies the AIJ arrays only on machines of several NUMA domains: that path forced here
  run "parity natural order copied (CSRK_NATURAL_COPY=1)" "$np" env CSRK_NATURAL_COPY=1 "$build/tests/parity" -problem lap3d27 -n 10
  # 32-bit column indices (the default stores 16-bit offsets from the diagonal where they fit)
  run "parity lap3d7, 32-bit indices" "$np" "$build/tests/parity" -problem lap3d7 -n 12 -mat_csrk_compress_indices 0
  run "parity permuted lap3d7, 32-bit indices" "$np" "$build/tests/parity" -problem lap3d7 -n 10 -permute 3 -mat_csrk_compress_indices 0
  run "parity rectangular random, 32-bit indices" "$np" "$build/tests/parity" -problem randrect -n 500 -mat_csrk_compress_indices 0
  run "parity natural order copied, 32-bit indices" "$np" env CSRK_NATURAL_COPY=1 "$build/tests/parity" -problem lap3d27 -n 10 -mat_csrk_compress_indices 0
  # row patterns: stencils in the natural order read them, with one thread or several, shared or copied AIJ arrays;
  # an irregular graph overflows the dictionary and keeps its indices; with them off the 16-bit offsets are back
  run "parity lap3d27, row patterns" "$np" "$build/tests/parity" -problem lap3d27 -n 12 -expect_patterns 1 -mat_csrk_threads 2
  run "parity elasticity3d, row patterns" "$np" "$build/tests/parity" -problem elasticity3d -n 7 -expect_patterns 1 -mat_csrk_threads 2
  run "parity lap3d27, one thread without row slices: the AIJ loop, no row patterns" "$np" "$build/tests/parity" -problem lap3d27 -n 12 -expect_patterns 0 -mat_csrk_threads 1 -mat_csrk_row_slices 0
  run "parity lap3d27, one thread: row patterns with row slices, the same bits as aij" "$np" "$build/tests/parity" -problem lap3d27 -n 20 -expect_patterns 1 -mat_csrk_threads 1 -tol 0
  run "parity random, one thread: no row patterns, the AIJ loop" "$np" "$build/tests/parity" -problem random -n 3000 -expect_patterns 0 -mat_csrk_threads 1
  run "parity lap3d7, row patterns, copied" "$np" env CSRK_NATURAL_COPY=1 "$build/tests/parity" -problem lap3d7 -n 14 -expect_patterns 1 -mat_csrk_threads 3
  run "parity random, no row patterns" "$np" "$build/tests/parity" -problem random -n 3000 -expect_patterns 0 -mat_csrk_threads 2
  run "parity lap3d27, row patterns off" "$np" "$build/tests/parity" -problem lap3d27 -n 12 -expect_patterns 0 -mat_csrk_row_patterns 0 -mat_csrk_threads 2
done
# the set-up budget (the default): AIJ's kernel until the products pay for the expected build, counted, so that the
# build comes at the same product every run (120 for row slices, 20 for row nodes and the plain loop, 600 for the
# symmetric half); value and option changes; nothing built where nothing reads fewer bytes than AIJ's kernel and the
# machine file measured no rival faster; the off-process block left to AIJ's compressed rows
rivals="symmetric_half.plain 1.3,symmetric_half.inodes 1.8,row_nodes.inodes 1.2,plain_loop.inodes 1.5"
for np in $ranks; do
  run "set-up lap3d7: row slices after 120 products, value lists found, dropped and found again" "$np" "$build/tests/setup" -problem lap3d7 -n 30 -expect_build 120 -expect_loop slices -expect_values 1
  run "set-up femelast3d, no machine file: AIJ's kernel throughout" "$np" "$build/tests/setup" -problem femelast3d -n 16 -expect_build -1
  run "set-up femelast3d, row nodes measured faster: after 20 products" "$np" "$build/tests/setup" -problem femelast3d -n 16 -machine "row_nodes.inodes 1.2" -expect_build 20 -expect_loop nodes
  run "set-up femelast3d, the plain loop measured fastest: after 20 products" "$np" "$build/tests/setup" -problem femelast3d -n 16 -machine "row_nodes.inodes 1.2,plain_loop.inodes 1.5" -expect_build 20 -expect_loop columns32
  run "set-up femelast3d, the symmetric half measured fastest: after 600 products" "$np" "$build/tests/setup" -problem femelast3d -n 16 -machine "$rivals" -expect_build 600 -expect_loop symmetric -expect_refresh 80
  run "set-up femelast3d, the half's set-up measured at 10 AIJ products: after 200" "$np" "$build/tests/setup" -problem femelast3d -n 16 -machine "$rivals,symmetric_half.inodes.cost 10" -expect_build 200 -expect_loop symmetric -expect_refresh 80
  run "set-up fem3d, a rival measured slower than 1.05x: AIJ's kernel" "$np" "$build/tests/setup" -problem fem3d -n 16 -machine "symmetric_half.plain 1.04" -expect_build -1
done
run "set-up permuted random (neither slices nor nodes nor symmetric: not built; the reordering waits for its own count)" 1 "$build/tests/setup" -problem random -n 20000 -machine "$rivals" -expect_build -1
run "set-up elasticity3d (row nodes whose values repeat: fewer bytes by rule, after 20 products)" 1 "$build/tests/setup" -problem elasticity3d -n 8 -expect_build 20 -expect_loop nodes -expect_values 1
run_grep "set-up: -info says what is expected and when" "Set-up: the structure (symmetric, columns32, nodes) is built after 600 products" "$build/tests/setup" -problem femelast3d -n 16 -machine "$rivals" -expect_build 600 -expect_loop symmetric -expect_refresh 80 -info :mat
run_grep "set-up: -info names the machine file and what it holds" "machine file csrk-machine-test-.*: symmetric_half.plain 1.3" "$build/tests/setup" -problem fem3d -n 16 -machine "$rivals" -expect_build 600 -expect_loop symmetric -expect_refresh 80 -info :sys
run_grep "row loop asked for: nodes alone, without a machine file (-mat_csrk_row_loop)" "Row loop: nodes" "$build/tests/setup" -problem femelast3d -n 16 -mat_csrk_row_loop nodes -expect_build 20 -expect_loop nodes -info :mat
run_error "unknown row loop" "Unknown option foo for -mat_csrk_row_loop" "$build/tests/ksp" -n 4 -mat_csrk_row_loop foo
# same bits every run: default options (the set-up budget), a machine file that has the rivals built, CG long enough
# for the symmetric half's build (600 products), three runs compared byte for byte
machine="$logdir/machine-rivals.txt"
{ echo "cpu $(sed -n 's/^model name[^:]*:[ \t]*//p' /proc/cpuinfo | head -n 1)"; echo "$rivals" | tr ',' '\n'; } >"$machine"
for np in 1 2; do
  run_same "same bits every run: CG on fem3d, default set-up, the half built at 600 products" "$np" "$build/tests/ksp" -problem fem3d -n 20 -pcs jacobi -max_it 800 -rtol 1e-30 -mat_csrk_setup budget -mat_csrk_machine_file "$machine"
  run_same "same bits every run: CG on femelast3d, default set-up, no machine file" "$np" "$build/tests/ksp" -problem femelast3d -n 12 -pcs jacobi -max_it 300 -mat_csrk_setup budget
done

# row slices: runs of 8 rows with one pattern, a row per vector lane; each row summed in the AIJ order, so the same bits
# as aij's loop on the stencils (-tol 0: any difference fails), on and off, every k, value changes
run_grep "row slices used on a 27-point stencil" "Row slices: .* multiplied a row per vector lane" "$build/tests/parity" -problem lap3d27 -n 16 -kmin 2 -kmax 2 -mat_csrk_threads 2 -info
for np in $ranks; do
  run "parity lap3d27, row slices: the same bits as aij" "$np" "$build/tests/parity" -problem lap3d27 -n 20 -tol 0 -expect_patterns 1 -mat_csrk_threads 2
  run "parity lap2d5, row slices, 3 threads: the same bits as aij" "$np" "$build/tests/parity" -problem lap2d5 -n 120 -tol 0 -expect_patterns 1 -mat_csrk_threads 3
  run "parity lap3d7, row slices off: the same bits as aij" "$np" "$build/tests/parity" -problem lap3d7 -n 20 -tol 0 -expect_patterns 1 -mat_csrk_threads 2 -mat_csrk_row_slices 0
  run "state lap3d27, row slices (values rewritten into the interleaved copy)" "$np" "$build/tests/state" -problem lap3d27 -n 14 -mat_csrk_threads 2
  run "parity lap3d7, value lists on one thread: the same bits as aij" "$np" "$build/tests/parity" -problem lap3d7 -n 20 -tol 0 -expect_patterns 1 -mat_csrk_threads 1
  run "parity lap3d27, value lists on one thread: the same bits as aij" "$np" "$build/tests/parity" -problem lap3d27 -n 20 -tol 0 -expect_patterns 1 -mat_csrk_threads 1
  run "parity lap3d7, value lists off: the same bits as aij" "$np" "$build/tests/parity" -problem lap3d7 -n 20 -tol 0 -expect_patterns 1 -mat_csrk_threads 1 -mat_csrk_row_values 0
  run "state lap3d7, value lists on one thread (found again after each change of values)" "$np" "$build/tests/state" -problem lap3d7 -n 14 -mat_csrk_threads 1
  run "parity lap3d27, value lists, lines of 21 rows (tails of 3): the same bits as aij" "$np" "$build/tests/parity" -problem lap3d27 -n 21 -tol 0 -expect_patterns 1 -mat_csrk_threads 1
done
# the tail of a run: lines of 13 rows, 11 of one pattern each, all 11 in a slice and its tail of 3 (8 without tails)
run_grep "value lists: every line's 11 interior rows in a slice or its tail (lap3d7 13^3)" "Row slices: 1859 of 2197 rows" "$build/tests/parity" -problem lap3d7 -n 13 -kmin 1 -kmax 1 -mat_csrk_threads 1 -tol 0 -expect_patterns 1 -info
# value lists: slices whose 8 rows repeat one list of values keep it once (one thread)
run_grep "value lists of row nodes used on 3D elasticity" "Row nodes: .* [1-9][0-9]* rows multiply an earlier node's values" "$build/tests/parity" -problem elasticity3d -n 9 -ordering natural -kmin 1 -kmax 1 -mat_csrk_threads 1 -info
run_grep "value lists used on a 7-point stencil" "Row slices: .* [1-9][0-9]* of them with one list of values kept once" "$build/tests/parity" -problem lap3d7 -n 20 -kmin 2 -kmax 2 -mat_csrk_threads 1 -info
# (the row-node tests below turn the symmetric half off: it goes before the nodes that do not repeat their values)
# row nodes: one thread over column indices with rows in their own order (natural, renumbered copies) multiplies
# consecutive rows with one column list together (runs of 1 to 7 rows: every node size, and runs split at 5); each row
# summed in its order, so the same bits as csrk without nodes in the same internal order (-tol 0), and within 1e-12 of
# aij (its inode kernel pairs the entries) in every configuration
run_grep "row nodes used on one thread" "Row nodes: .* multiplied together" "$build/tests/parity" -mat_csrk_symmetric_half 0 -problem randnodes -n 2000 -ordering natural -mat_csrk_threads 1 -info
run_grep "row nodes on a reordered copy with 16-bit offsets" "Row nodes: .* multiplied together" "$build/tests/parity" -mat_csrk_symmetric_half 0 -problem elasticity3d -n 8 -permute 1 -ordering rcm -kmin 1 -kmax 1 -mat_csrk_threads 1 -info
for np in $ranks; do
  run "parity randnodes, one thread, row nodes: the same bits as without" "$np" "$build/tests/parity" -mat_csrk_symmetric_half 0 -problem randnodes -n 3000 -mat_csrk_threads 1 -rtype csrk -ref_row_nodes 0 -ordering natural -tol 0 -expect_nodes 1
  run "parity randnodes, one thread: every ordering against aij" "$np" "$build/tests/parity" -mat_csrk_symmetric_half 0 -problem randnodes -n 3000 -mat_csrk_threads 1 -expect_nodes 1
  run "parity permuted elasticity3d, one thread, reordered copies with row nodes: the same bits as without" "$np" "$build/tests/parity" -mat_csrk_symmetric_half 0 -problem elasticity3d -n 8 -permute 1 -mat_csrk_threads 1 -rtype csrk -ref_row_nodes 0 -tol 0
  run "parity elasticity3d, one thread: row nodes" "$np" "$build/tests/parity" -mat_csrk_symmetric_half 0 -problem elasticity3d -n 7 -mat_csrk_threads 1 -expect_nodes 1
  run "parity elasticity3d, one thread: row nodes with value lists, the same bits as the AIJ loop" "$np" "$build/tests/parity" -mat_csrk_symmetric_half 0 -problem elasticity3d -n 9 -mat_csrk_threads 1 -rtype csrk -ref_row_nodes 0 -ordering natural -tol 0 -expect_nodes 1
  run "parity elasticity3d, one thread: row nodes without value lists" "$np" "$build/tests/parity" -mat_csrk_symmetric_half 0 -problem elasticity3d -n 9 -mat_csrk_threads 1 -rtype csrk -ref_row_nodes 0 -ordering natural -tol 0 -expect_nodes 1 -mat_csrk_row_values 0
  run "parity randnodes, row nodes off" "$np" "$build/tests/parity" -mat_csrk_symmetric_half 0 -problem randnodes -n 3000 -mat_csrk_threads 1 -mat_csrk_row_nodes 0 -ordering natural -expect_nodes 0
  run "state elasticity3d, one thread: row nodes over the AIJ arrays" "$np" "$build/tests/state" -mat_csrk_symmetric_half 0 -problem elasticity3d -n 7 -mat_csrk_threads 1
done
# the symmetric half: one thread over a block symmetric to rounding keeps its diagonal and upper triangle, and leaves
# row nodes that repeat their values to them; the products agree with aij to rounding
run_grep "symmetric half used on P1 tetrahedra" "Row loop: symmetric" "$build/tests/parity" -problem fem3d -n 10 -ordering natural -kmin 1 -kmax 1 -mat_csrk_threads 1 -info
run_grep "symmetric half used on P1 elasticity (symmetric to rounding)" "Row loop: symmetric" "$build/tests/parity" -problem femelast3d -n 6 -ordering natural -kmin 1 -kmax 1 -mat_csrk_threads 1 -info
run_grep "symmetric half left to row nodes that repeat their values" "Symmetric half: not kept, row nodes repeat their values" "$build/tests/parity" -problem elasticity3d -n 8 -ordering natural -kmin 1 -kmax 1 -mat_csrk_threads 1 -info
for np in $ranks; do
  run "parity fem3d, one thread: the symmetric half" "$np" "$build/tests/parity" -problem fem3d -n 12 -mat_csrk_threads 1
  run "parity femelast3d, one thread: the symmetric half" "$np" "$build/tests/parity" -problem femelast3d -n 8 -mat_csrk_threads 1
  run "symmetric half fem3d: value changes, rounding, asymmetry, duplicate; no machine file: not built under the budget" "$np" "$build/tests/symmetric" -problem fem3d -n 12
  run "symmetric half fem3d: measured faster, built under the budget after 600 products, dropped when the values stop being symmetric" "$np" "$build/tests/symmetric" -problem fem3d -n 12 -budget_only -machine "$rivals" -expect_build 600 -expect_drop
  run "symmetric half femelast3d (AIJ inodes): measured faster, built after 600 products" "$np" "$build/tests/symmetric" -problem femelast3d -n 7 -machine "$rivals" -expect_build 600
  run "state fem3d, one thread: the symmetric half" "$np" "$build/tests/state" -problem fem3d -n 8 -mat_csrk_threads 1
done
# a renumbered constant-coefficient stencil repeats its values in rows of their own columns: no value lists, and no
# half without a machine file that measured it faster
for np in $ranks; do
  run "symmetric half, renumbered lap3d27 under the set-up budget: not built" "$np" "$build/tests/symmetric" -problem lap3d27 -n 12 -permute 1 -budget_only
done
run "symmetric half fem3d renumbered: eager, and not under the budget" 2 "$build/tests/symmetric" -problem fem3d -n 12 -permute 3
run_grep "symmetric half fem3d renumbered, beyond the L2 cache, measured faster in a mesh's numbering: not built under the budget" "the machine file measured the rivals of AIJ's kernel in a mesh's numbering" "$build/tests/symmetric" -problem fem3d -n 48 -permute 3 -budget_only -machine "$rivals" -info :mat
run_grep "set-up: row nodes with value lists expected before the half (elasticity3d)" "Set-up: the structure (nodes, symmetric" "$build/tests/symmetric" -problem elasticity3d -n 8 -budget_only -machine "$rivals" -info :mat
run "parity permuted fem3d, one thread: the symmetric half in the user's numbering" 1 "$build/tests/parity" -problem fem3d -n 10 -permute 3 -mat_csrk_threads 1
run "parity random, one thread: too few rows in nodes, none" 1 "$build/tests/parity" -problem random -n 3000 -mat_csrk_threads 1 -ordering natural -expect_nodes 0
run "parity lap3d27, one thread: row slices, not nodes" 1 "$build/tests/parity" -problem lap3d27 -n 12 -mat_csrk_threads 1 -ordering natural -expect_nodes 0 -expect_patterns 1
# row patterns hold offsets of any width: entries 40000 from the diagonal, beyond the 16-bit offsets
run "parity entry 40000 from the diagonal: row patterns" 1 "$build/tests/parity" -problem lap2d5 -n 210 -far 40000 -expect_patterns 1 -mat_csrk_threads 2
# 16-bit offsets at their limit: an entry 32767 from the diagonal fits, 32768 does not (natural order then keeps
# 32-bit columns, a reordering may bring it back in); on 2-3 processes the far entries lie in the diagonal blocks
for far in 32767 32768; do
  b=$([ $far -le 32767 ] && echo 2 || echo 4)
  run "parity entry $far from the diagonal: $b-byte indices" 1 "$build/tests/parity" -problem lap2d5 -n 182 -far $far -expect_natural_index_bytes $b -mat_csrk_threads 2 -mat_csrk_row_patterns 0
  run "parity entry $far from the diagonal, copied: $b-byte indices" 1 env CSRK_NATURAL_COPY=1 "$build/tests/parity" -problem lap2d5 -n 182 -far $far -expect_natural_index_bytes $b -kmin 2 -kmax 2 -mat_csrk_threads 2 -mat_csrk_row_patterns 0
  for np in $ranks; do
    [ "$np" -gt 1 ] || continue
    run "parity entry $far from the diagonal: $b-byte indices" "$np" "$build/tests/parity" -problem lap2d5 -n 320 -far $far -expect_natural_index_bytes $b -mat_csrk_threads 2 -mat_csrk_row_patterns 0
  done
done
# a reordered copy stores 16-bit offsets during its fill; where the ordering leaves a wider band (a random graph of
# 40,000 rows under RCM and Band-k) it is filled again with 32-bit columns
run_grep "parity random 40000 rows: offsets that do not fit after the ordering, refilled 32-bit" "filled again with 32-bit columns" "$build/tests/parity" -problem random -n 40000 -kmin 2 -kmax 2 -info
if [ -d "$matrices" ]; then
  for f in "$matrices"/*.mtx "$matrices"/*.mtx.gz; do
    [ -e "$f" ] || continue
    for np in $ranks; do run "parity $(basename "$f")" "$np" "$build/tests/parity" -f "$f"; done
  done
  # parity's long-double recomputation (taken where a product differs from the reference by more than -tol) is a
  # check that fails too: the arrow's row of 46,500 entries is 1.7e-12 off its long-double sum in double
  [ -e "$matrices/arrow.mtx.gz" ] && run_error "parity long-double recomputation fails below its accuracy (arrow.mtx.gz, -tol 1e-30)" "from the product summed in long double" "$build/tests/parity" -f "$matrices/arrow.mtx.gz" -kmin 2 -kmax 2 -tol 1e-30
else
  echo "note: $matrices not found, shared matrices skipped"
fi

# 2. conversions, value and pattern changes
for np in $ranks; do
  for o in auto natural rcm bandk; do
    run "state ordering $o" "$np" "$build/tests/state" -mat_csrk_ordering "$o"
  done
  run "state k=3 bandk" "$np" "$build/tests/state" -mat_csrk_k 3 -mat_csrk_ordering bandk
  run "state k=1 elasticity3d" "$np" "$build/tests/state" -problem elasticity3d -n 5 -mat_csrk_k 1 -mat_csrk_ordering rcm
  run "state random" "$np" "$build/tests/state" -problem random -n 400 -mat_csrk_ordering bandk
  run "state femelast3d, one thread" "$np" "$build/tests/state" -problem femelast3d -n 6 -mat_csrk_threads 1
  run "state natural order copied (CSRK_NATURAL_COPY=1)" "$np" env CSRK_NATURAL_COPY=1 "$build/tests/state" -mat_csrk_ordering natural
  run "state ordering natural, 32-bit indices" "$np" "$build/tests/state" -mat_csrk_ordering natural -mat_csrk_compress_indices 0
  run "state ordering rcm, 32-bit indices" "$np" "$build/tests/state" -mat_csrk_ordering rcm -mat_csrk_compress_indices 0
done
# public-API parity: the same matrix built through PETSc's public API in csrk and in aij, the same ~80 public Mat
# operations applied to both (stored values retrieved, scalings, sums, zeroed rows, copies, duplicates, conversions,
# transposes, submatrices, array access, COO, products), the MatMult family, diagonal and norms compared after each
# and KSP iteration counts (CG, GMRES; ICC/ILU, GAMG); aij against aij is the control, so that a failure is the plugin's
for np in $ranks; do
  run "apiparity lap2d5, randrect, elasticity3d, random: every ordering and k" "$np" "$build/tests/apiparity" -problem lap2d5,randrect,elasticity3d,random -n 10,60,3,80
  run "apiparity permuted lap3d27, randnodes: 2 threads" "$np" "$build/tests/apiparity" -problem lap3d27,randnodes -n 4,90 -permute 1 -orderings natural,rcm -ks 2,3 -mat_csrk_threads 2
  run "apiparity control: aij against aij" "$np" "$build/tests/apiparity" -ctype aij -problem lap2d5,randrect,elasticity3d,random,lap3d27,randnodes -n 10,60,3,80,4,90 -orderings natural -ks 1
done
# the orderings give the same permutation whatever the number of threads (randomly permuted and natural inputs)
run "ordering: Band-k independent of the threads, permuted" 1 "$build/tests/ordering"
run "ordering: Band-k independent of the threads, natural" 1 "$build/tests/ordering" -permute 0 -problem lap3d7,elasticity3d,lap2d5 -n 30,10,200
# the specialized conversions, never MatConvert_Basic
ntest=$((ntest + 1))
if "$build/tests/state" -info 2>&1 | grep -q "MatConvert_Basic"; then
  fail=$((fail + 1)); echo "FAIL conversions go through MatConvert_Basic"
else
  pass=$((pass + 1)); echo "ok   conversions use the specialized routines (no MatConvert_Basic in -info)"
fi

# 3. KSP CG: same preconditioner, iterations and solution as aij
for np in 1 3; do
  run "ksp lap3d7" "$np" "$build/tests/ksp" -problem lap3d7 -n 14 -pcs default,jacobi,gamg
  run "ksp elasticity3d bandk" "$np" "$build/tests/ksp" -problem elasticity3d -n 7 -mat_csrk_ordering bandk -pcs default,gamg
  [ -e "$matrices/wing.mtx" ] && run "ksp wing.mtx bandk k=3" "$np" "$build/tests/ksp" -f "$matrices/wing.mtx" -mat_csrk_ordering bandk -mat_csrk_k 3
done

# 4. invalid options: clean PETSc errors that name the option (a value that is no integer: PETSc's own error, with
# the option in its table of options)
for bad in "-mat_csrk_k 7" "-mat_csrk_k 0" "-mat_csrk_sr_size -3" "-mat_csrk_threads -1"; do
  run_error "invalid option $bad" "${bad%% *}.* must be" "$build/tests/ksp" -n 4 $bad
done
run_error "invalid option -mat_csrk_k 2.5" "Input string 2.5 has no integer value" "$build/tests/ksp" -n 4 -mat_csrk_k 2.5
run_error "invalid option -mat_csrk_ssr_size abc" "Input string abc has no integer value" "$build/tests/ksp" -n 4 -mat_csrk_ssr_size abc
run_error "invalid option -mat_csrk_ordering foo" "mat_csrk_ordering" "$build/tests/ksp" -n 4 -mat_csrk_ordering foo
# removed options: errors that name them, with or without a value, also under a prefix and through MatConvert()
run_error "removed option -mat_csrk_layout" "Option -mat_csrk_layout was removed" "$build/tests/ksp" -n 4 -mat_csrk_layout renumbered
run_error "removed option -mat_csrk_tune" "Option -mat_csrk_tune was removed" "$build/tests/ksp" -n 4 -mat_csrk_tune
run_error "removed option under a prefix, through MatConvert()" "Option -foo_mat_csrk_tune was removed" "$build/tests/options" -convert initial -prefix foo_ -foo_mat_csrk_tune model
run_grep "0 asks for the rule's sizes" "seqaijcsrk: k 2" "$build/tests/options" -mat_type csrk -mat_csrk_sr_size 0 -mat_csrk_ssr_size 0 -mat_csrk_threads 0
# threads on request: one per rank without OMP_NUM_THREADS and -mat_csrk_threads, else what they ask for (blocks of
# 20,000 nonzeros and more: the 2D Laplacian on 100 x 100 has 49,600)
run_grep "one thread per rank by default" ", 1 OpenMP thread" env -u OMP_NUM_THREADS "$build/tests/options" -mat_type csrk -n 100 -mat_view ::ascii_info
run_grep "OMP_NUM_THREADS=2 asks for two threads" " 2 OpenMP threads" env OMP_NUM_THREADS=2 "$build/tests/options" -mat_type csrk -n 100 -mat_view ::ascii_info
run_grep "-mat_csrk_threads 2 without OMP_NUM_THREADS" " 2 OpenMP threads" env -u OMP_NUM_THREADS "$build/tests/options" -mat_type csrk -n 100 -mat_csrk_threads 2 -mat_view ::ascii_info
run_grep "-mat_csrk_threads 1 with OMP_NUM_THREADS=2" ", 1 OpenMP thread" env OMP_NUM_THREADS=2 "$build/tests/options" -mat_type csrk -n 100 -mat_csrk_threads 1 -mat_view ::ascii_info
run_error "MatCSRKSetFeature() with a value beyond MatCSRKFeature" "Unknown CSR-k feature 7" "$build/tests/options" -mat_type csrk -set_feature 7
run_grep "MatCSRKSetFeature(A, MAT_CSRK_ROW_NODES, PETSC_FALSE) on an assembled matrix: the product agrees" "seqaijcsrk: k 2" "$build/tests/options" -mat_type csrk -dof 3 -set_feature 4
run_grep "-help lists -mat_csrk_compress_indices" "mat_csrk_compress_indices.*MatCSRKSetFeature" "$build/tests/options" -mat_type csrk -help
run_grep "row patterns reported by -mat_view ::ascii_info" "column indices: row patterns ([0-9]* distinct rows)" "$build/tests/options" -mat_type csrk -mat_csrk_threads 2 -mat_view ::ascii_info
run_grep "16-bit offsets reported by -mat_view ::ascii_info" "column indices: 16-bit offsets from the diagonal" "$build/tests/options" -mat_type csrk -mat_csrk_threads 2 -mat_csrk_row_patterns 0 -mat_view ::ascii_info
run_grep "one thread, natural order, no row slices: 32-bit indices (the AIJ arrays)" "column indices: 32-bit" "$build/tests/options" -mat_type csrk -mat_csrk_threads 1 -mat_csrk_row_slices 0 -mat_view ::ascii_info
run_grep "two threads, row patterns without slices: reported as patterns by -mat_view ::ascii_info" "column indices: row patterns" "$build/tests/options" -mat_type csrk -mat_csrk_threads 2 -mat_csrk_row_slices 0 -mat_view ::ascii_info
run_grep "one thread, natural order: row slices, reported by -mat_view ::ascii_info" "row slices: .* rows multiplied 8 at a time" "$build/tests/options" -mat_type csrk -mat_csrk_threads 1 -mat_view ::ascii_info
run_grep "one thread, natural order, 3 unknowns per point, symmetric half off: row nodes, reported by -mat_view ::ascii_info" "row nodes: 4800 rows in nodes of up to 5 rows" "$build/tests/options" -mat_type csrk -dof 3 -mat_csrk_threads 1 -mat_csrk_symmetric_half 0 -mat_view ::ascii_info
run_grep "-mat_csrk_compress_indices 0 reported by -mat_view ::ascii_info" "column indices: 32-bit" "$build/tests/options" -mat_type csrk -mat_csrk_compress_indices 0 -mat_view ::ascii_info
# the plan's row loop, named by the view (one entry of the table of variants, docs/design.md)
run_grep "the view names the row loop: slices" "row loop: slices" "$build/tests/options" -mat_type csrk -mat_csrk_threads 1 -mat_view ::ascii_info
run_grep "the view names the row loop: nodes" "row loop: nodes" "$build/tests/options" -mat_type csrk -dof 3 -mat_csrk_threads 1 -mat_csrk_symmetric_half 0 -mat_view ::ascii_info
run_grep "the view names the row loop: symmetric" "row loop: symmetric" "$build/tests/options" -mat_type csrk -dof 3 -mat_csrk_threads 1 -mat_view ::ascii_info
run_grep "the view names the row loop: patterns" "row loop: patterns" "$build/tests/options" -mat_type csrk -mat_csrk_threads 2 -mat_csrk_row_slices 0 -mat_view ::ascii_info
run_grep "the view names the row loop: offsets16" "row loop: offsets16" "$build/tests/options" -mat_type csrk -mat_csrk_threads 2 -mat_csrk_row_patterns 0 -mat_view ::ascii_info
run_grep "the view names the row loop: columns32" "row loop: columns32" "$build/tests/options" -mat_type csrk -mat_csrk_compress_indices 0 -mat_csrk_symmetric_half 0 -mat_view ::ascii_info
run_grep "the MPI view names the ranks' row loops" "row loop: slices" $mpiexec -n 2 "$build/tests/options" -mat_type csrk -mat_csrk_threads 1 -mat_view ::ascii_info
# MatConvert() to csrk reads the -mat_csrk_* options of the matrix's prefix (no MatSetFromOptions() after it)
for np in 1 2; do
  for c in initial inplace; do
    run "MatConvert ($c) takes -mat_csrk_k" "$np" "$build/tests/options" -convert $c -mat_csrk_k 3 -expect_k 3
    run "MatConvert ($c) takes the prefix's -foo_mat_csrk_k" "$np" "$build/tests/options" -convert $c -prefix foo_ -foo_mat_csrk_k 1 -mat_csrk_k 3 -expect_k 1
  done
done
run_grep "-help lists the root name csrk among the -mat_type values" "Matrix type (one of).* csrk[ (]" "$build/tests/options" -mat_type csrk -help
# the benchmark refuses bad input before measuring anything
run_error "bench -types with an unknown type" "-types entry csrkk: csrkk is not a matrix type" "$build/tutorials/bench" -problem lap3d7 -n 8 -types aij,csrkk
[ -e "$matrices/wave.mtx.gz" ] && run_grep "bench -f reads a gzip-compressed Matrix Market file" "wave csrk: set-up" "$build/tutorials/bench" -f "$matrices/wave.mtx.gz" -types csrk -reps 1 -warmup 0 -solve 0 -stream 0
run_error "bench -f with a missing file" "no-such-file.mtx: No such file" "$build/tutorials/bench" -f "$top/tests/data/no-such-file.mtx" -problem lap3d7 -n 8
run_error "bench -problem with an unknown problem" "Unknown problem lap3dx" "$build/tutorials/bench" -problem lap3dx
# ordering auto on a randomly permuted stencil: RCM by the distance rule, at once with eager set-up, after its own
# count of products under the budget
run_grep "ordering auto: RCM for a scrambled matrix, by the distance rule (nothing timed)" "Mean |i-j| of the nonzeros .* ordering rcm" "$build/tutorials/bench" -problem lap3d7 -n 64 -permute 1 -types csrk -reps 2 -warmup 1 -solve 0 -stream 0 -info
run_grep "ordering auto under the set-up budget: the reordering waits for its own count of products" "Set-up: the auto ordering's reordering after 1200 products" "$build/tests/setup" -problem random -n 150000 -expect_build -1 -info :mat
run_grep "ordering auto: a scrambled block whose x stays in the core's L2 cache is not reordered" "Mean |i-j| of the nonzeros .* ordering natural" "$build/tutorials/bench" -problem lap3d7 -n 24 -permute 1 -types csrk -reps 2 -warmup 1 -solve 0 -stream 0 -info

# 5. Matrix Market reader: good files read, malformed ones give clean errors
for f in "$top"/tests/data/mm-good/*.mtx*; do run "read $(basename "$f")" 1 "$build/tests/mmread_check" -f "$f"; done
for f in "$top"/tests/data/mm-bad/*.mtx*; do run "reject $(basename "$f")" 1 "$build/tests/mmread_check" -expect_error -f "$f"; done
run_error "missing file" "cannot open" "$build/tests/mmread_check" -f "$top/tests/data/no-such-file.mtx"
# sizes that the entries do not justify: refused at once, with the virtual memory capped far below what the declared
# sizes would need (1e8 rows: 1.6 GB of row counts, more for the matrix); not under ASan, whose shadow memory needs an
# unlimited address space (the time limit and the message still apply)
run_lowmem() {
  local name=$1 pattern=$2 rc t0
  shift 2
  ntest=$((ntest + 1))
  local log="$logdir/$ntest.log"
  t0=$(date +%s)
  (
    [ -n "${ASAN_OPTIONS:-}" ] || ulimit -v $((768 * 1024))
    exec timeout 60 $mpiexec -n 1 "$@"
  ) >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && grep -qE -- "$pattern" "$log"; then
    pass=$((pass + 1))
    echo "ok   $name ($(($(date +%s) - t0)) s)"
  else
    fail=$((fail + 1))
    echo "FAIL $name: exit $rc, expected a PETSc error matching '$pattern' within 60 s and 768 MB of virtual memory"
    tail -n 8 "$log" | sed 's/^/     | /'
  fi
}
bad="$top/tests/data/mm-bad"
run_lowmem "reject huge-dims.mtx with 768 MB" "huge-dims\.mtx:2: 100000000 x 100000000 matrix with only 1 entry: .*-mm_max_dim" "$build/tests/mmread_check" -expect_error -f "$bad/huge-dims.mtx"
run_lowmem "reject huge-cols.mtx with 768 MB" "huge-cols\.mtx:2: 3 x 100000000 matrix with only 1 entry: .*-mm_max_dim" "$build/tests/mmread_check" -expect_error -f "$bad/huge-cols.mtx"
run_lowmem "reject huge-dims-few-entries.mtx.gz with 768 MB" "few-entries\.mtx\.gz:4: unexpected end of file: found 1 of the 2000000" "$build/tests/mmread_check" -expect_error -f "$bad/huge-dims-few-entries.mtx.gz"
# -mm_max_dim replaces the rule: lower, and higher (2^21 rows for 1 entry, refused by default)
run_lowmem "-mm_max_dim below the size" "symmetric\.mtx:7: 4 x 4 matrix: more rows or columns than the 3 allowed by -mm_max_dim" "$build/tests/mmread_check" -expect_error -mm_max_dim 3 -f "$top/tests/data/mm-good/symmetric.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n%% 2^21 rows for one entry\n2097152 2097152 1\n2097152 1 2.5\n' >"$logdir/two-mega-rows.mtx"
run_lowmem "2^21 rows, 1 entry: refused by default" "two-mega-rows\.mtx:3: 2097152 x 2097152 matrix with only 1 entry" "$build/tests/mmread_check" -expect_error -f "$logdir/two-mega-rows.mtx"
run_lowmem "2^21 rows, 1 entry: read with -mm_max_dim 2097152" "rows 2097152 cols 2097152 nonzeros 1 frobenius 2.5" "$build/tests/mmread_check" -mm_max_dim 2097152 -f "$logdir/two-mega-rows.mtx"

# 7. property test: seeded random matrices, layouts, CSR-k options and state changes against aij
#    (passive OpenMP waits: 3 ranks of 2 spinning threads on 2 cores take ~40x longer)
run "property seed 1" 1 "$build/tests/property" -seed 1 -count 200
run "property seed 2" 2 "$build/tests/property" -seed 2 -count 100
run "property seed 3" 3 "$build/tests/property" -seed 3 -count 100

# 8. petsc4py: tutorials/ex1.py (ex1.c in Python) where a petsc4py of the PETSc this library was built against imports
#    (Debian: python3-petsc4py, for the system python3); not under ASan (Python would load the ASan library late)
csrk_lib=${CSRK_LIB:-$top/lib/libcsrk.so}
py=
for p in ${PYTHON:-} /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null && "$p" -c "import petsc4py, numpy" 2>/dev/null; then py=$p; break; fi
done
petsc_so() { readelf -d "$1" 2>/dev/null | sed -n 's/.*NEEDED.*\[\(libpetsc[^]]*\)\].*/\1/p' | head -n 1; }
if [ -z "$py" ]; then
  echo "note: no python3 with petsc4py and numpy (Debian: python3-petsc4py): tutorials/ex1.py skipped"
elif [ -n "${ASAN_OPTIONS:-}" ]; then
  echo "note: tutorials/ex1.py not run under ASan"
else
  py_so=$(petsc_so "$("$py" -c "import petsc4py; petsc4py.init([]); from petsc4py import PETSc; print(PETSc.__file__)" 2>/dev/null)")
  lib_so=$(petsc_so "$csrk_lib")
  if [ -z "$lib_so" ] || [ "$py_so" != "$lib_so" ]; then
    echo "note: $py's petsc4py links ${py_so:-no libpetsc}, the library ${lib_so:-no libpetsc}: tutorials/ex1.py skipped"
  else
    for np in 1 2; do run "petsc4py tutorials/ex1.py" "$np" env CSRK_LIB="$csrk_lib" "$py" "$top/tutorials/ex1.py" -n 16; done
    run "petsc4py tutorials/ex1.py, permuted" 2 env CSRK_LIB="$csrk_lib" "$py" "$top/tutorials/ex1.py" -n 16 -permute 1
    run_grep "petsc4py: convert('csrk') takes -mat_csrk_k without setFromOptions()" "k = 3, super-row size" env CSRK_LIB="$csrk_lib" "$py" "$top/tutorials/ex1.py" -n 16 -mat_csrk_k 3
  fi
fi

# 6. unmodified PETSc tutorials with -dll_append (when PETSc's example sources are installed)
if [ -x "$top/tests/petsc-tutorials.sh" ] || [ -f "$top/tests/petsc-tutorials.sh" ]; then
  ntest=$((ntest + 1))
  out=$(bash "$top/tests/petsc-tutorials.sh" 2>&1)
  echo "$out" | grep -E '^(ok|FAIL|SKIP)' | sed 's/^/     /'
  line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  p=$(echo "$line" | awk '{print $1}')
  f=$(echo "$line" | awk '{print $3}')
  ntest=$((ntest - 1))
  pass=$((pass + ${p:-0}))
  fail=$((fail + ${f:-0}))
  if [ -z "$line" ] && ! echo "$out" | grep -q '^SKIP'; then fail=$((fail + 1)); echo "FAIL petsc-tutorials.sh printed no summary"; fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
