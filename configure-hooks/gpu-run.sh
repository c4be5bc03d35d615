#!/usr/bin/env bash
# One command on a GPU machine without network: builds PETSc with CUDA from the carried PyPI tarball, METIS from
# carried Debian packages, the plugin with MATCSRKCUDA, then runs the GPU tests and the GPU benchmark.
#
#   bash configure-hooks/gpu-run.sh [build] [test] [test-kernels] [test-mpi] [sanitize] [bench] [profile] [scaling]
#                                   [cpu] [apps] [cpuapps] [tune]     (default: build test bench)
#
# Needs in the checkout: deps/petsc-<V>.tar.gz (pip download petsc==<V> --no-deps --no-binary :all:) and
# deps/debs/libmetis5_*.deb, libmetis-dev_*.deb (apt-get download libmetis5 libmetis-dev).
# Results go to $OUT (or out/): gpu-tests.log, bench-*.csv, tune-*.csv, logview-*.txt, and a summary on stdout.
#   test:    test-kernels (every kernel on one GPU; TEST_KERNELS and TEST_KS narrow its loops, TEST_PART=loops or rest runs
#            the loops or the tests after them, for parts side by side) and test-mpi (a rank per GPU on every GPU of the machine, each
#            rank's device checked with -device_view; 2 ranks on one GPU where the machine has one)
#   profile: CG + Jacobi under -log_view for each GPU type (host-device traffic per event, where the solve time goes)
#   scaling: strong and weak scaling of PETSc's tutorials on 1, 2, 4, ... GPUs up to every GPU of the machine, a rank
#            per GPU (configure-hooks/apps.sh gpu: ex45 at EX45_N^3 and, for weak scaling, EX45_N^2 x EX45_N*NP;
#            the unstructured matrices, SCALING_APPS; ex45 with the VecScatter halo exchange); writes
#            $OUT/apps-gpu-strong[-halo]-npN.csv and apps-gpu-weak-npN.csv, and the tables (scaling-table.sh)
#   cpu:     the CPU types on the host cores: aij and sell on one MPI rank per core, csrk on one rank, a thread per core
#   apps:    PETSc's own tutorials on the GPU with aijcusparse, sellcuda and csrkcuda (configure-hooks/apps.sh gpu), on
#            one GPU and on every GPU of the machine (APPS_NP: the rank counts)
#   cpuapps: the same tutorials on the host, one MPI rank per core, with aij, sell and csrk (configure-hooks/apps.sh cpu)
# BENCH_PROBLEMS / TUNE_PROBLEMS: comma lists of problem:n (tutorials/bench -problem); TUNE_SIZES: sizes swept.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$top/out}
mkdir -p "$out"
phases=${*:-build test bench}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export PETSC_OPTIONS="${PETSC_OPTIONS:-} -use_gpu_aware_mpi 0"
version=${PETSC_VERSION:-3.26.1}
export PETSC_DIR=$top/deps/petsc-$version-cuda PETSC_ARCH=
build=${GPU_BUILD:-$top/build-gpu}   # GPU_BUILD: another build folder (a branch beside another)
export BUILD=$build
jobs=$(nproc)
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$ngpu" -ge 1 ] || ngpu=1
# rank counts of the multi-GPU runs: 2, 4, ... up to every GPU, and every GPU itself
gpunps() {
  local np=2 list=""
  while [ $np -lt "$ngpu" ]; do list="$list $np"; np=$((np * 2)); done
  echo "$list $ngpu" | tr ' ' '\n' | awk '$1 > 1 && !s[$1]++' | tr '\n' ' '
}

# METIS: the Debian packages unpacked into deps/metis
metis_dir=$top/deps/metis
if [ ! -f "$metis_dir/include/metis.h" ]; then
  rm -rf "$top/deps/metis-root" && mkdir -p "$top/deps/metis-root" "$metis_dir"
  for d in "$top"/deps/debs/libmetis*.deb; do dpkg -x "$d" "$top/deps/metis-root"; done
  ln -sfn "$top/deps/metis-root/usr/include" "$metis_dir/include"
  ln -sfn "$top/deps/metis-root/usr/lib/x86_64-linux-gnu" "$metis_dir/lib"
fi
export METIS_DIR=$metis_dir

case " $phases " in *" build "*)
  t0=$(date +%s)
  bash "$top/configure-hooks/build-petsc.sh" --cuda --version "$version" --tarball "$top/deps/petsc-$version.tar.gz" >"$out/build-petsc.log" 2>&1 || { tail -n 40 "$out/build-petsc.log"; exit 1; }
  t1=$(date +%s)
  make -C "$top" -j"$jobs" BUILD="$build" LIBDIR="$build/lib" >"$out/build-plugin.log" 2>&1 || { grep -E "error|warning" "$out/build-plugin.log" | head -n 40; exit 1; }
  echo "built: PETSc $version with CUDA in $((t1 - t0)) s, plugin in $(($(date +%s) - t1)) s"
  grep -c "warning" "$out/build-plugin.log" | sed 's/^/compiler warnings in the plugin build: /'
  ;;
esac

pass=0 fail=0
run() { # run NAME NP CMD...
  local name=$1 np=$2
  shift 2
  if mpiexec -n "$np" "$@" >>"$out/gpu-tests.log" 2>&1; then pass=$((pass + 1)); echo "ok   $name (np $np)"
  else fail=$((fail + 1)); echo "FAIL $name (np $np): $*"; fi
}

# run_info NAME TEXT CMD...: CMD with -info passes and prints TEXT (which kernel ran)
run_info() {
  local name=$1 text=$2
  shift 2
  if "$@" -info >"$out/run-info.log" 2>&1 && grep -q -- "$text" "$out/run-info.log"; then pass=$((pass + 1)); echo "ok   $name"
  else fail=$((fail + 1)); echo "FAIL $name: $* (expected '$text' in the -info output)"; tail -n 5 "$out/run-info.log"; fi
  cat "$out/run-info.log" >>"$out/gpu-tests.log"
}

# run_error NAME TEXT CMD...: CMD fails cleanly (a PETSc error, no signal) with TEXT in its output
run_error() {
  local name=$1 text=$2 rc
  shift 2
  "$@" >"$out/run-error.log" 2>&1
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q -- "$text" "$out/run-error.log"; then pass=$((pass + 1)); echo "ok   $name"
  else fail=$((fail + 1)); echo "FAIL $name: exit $rc, expected a PETSc error with '$text'"; tail -n 5 "$out/run-error.log"; fi
  cat "$out/run-error.log" >>"$out/gpu-tests.log"
}

case " $phases " in *" test "* | *" test-kernels "* | *" test-mpi "*)
  : >"$out/gpu-tests.log"
  export PETSC_OPTIONS="$PETSC_OPTIONS -mat_csrk_setup eager"   # host kernels from the first product (tests/setup checks the budget)
  ;;
esac

case " $phases " in *" test "* | *" test-kernels "*)
  m=$top/../shared/matrices
  [ -d "$m" ] || m=$top/deps/matrices   # a copy carried to the GPU machine
  # TEST_PART=loops: the kernel loops alone; rest: the tests after them (parts run side by side on one GPU)
  part=${TEST_PART:-all}
  [ "$part" = rest ] || for k in ${TEST_KS:-2 3}; do
    for kern in ${TEST_KERNELS:-scalar vector stream sliced merge block bsliced}; do
      o="-ctype csrkcuda -kmin $k -kmax $k -mat_csrk_cuda_kernel $kern"
      run "parity lap3d27 k=$k $kern vs aijcusparse" 1 "$build/tests/parity" -problem lap3d27 -n 24 -rtype aijcusparse $o
      run "parity lap3d27 k=$k $kern vs aij" 1 "$build/tests/parity" -problem lap3d27 -n 24 $o
      run "parity elasticity3d k=$k $kern" 1 "$build/tests/parity" -problem elasticity3d -n 12 $o
      run "parity random k=$k $kern" 1 "$build/tests/parity" -problem random -n 3000 $o
      run "parity permuted lap3d7 k=$k $kern" 1 "$build/tests/parity" -problem lap3d7 -n 20 -permute 1 $o
      run "parity randrect k=$k $kern" 1 "$build/tests/parity" -problem randrect -n 2000 $o
      run "parity powerlaw k=$k $kern" 1 "$build/tests/parity" -problem powerlaw -n 5000 $o
      # the layout in an RCM order found on the device (x permuted in, y out): a renumbered mesh, bs-3 rows, random rows
      run "parity RCM on the device, fem3d renumbered k=$k $kern" 1 "$build/tests/parity" -problem fem3d -n 20 -permute 1 -mat_csrk_ordering rcm $o
      [ $k = 3 ] && run "parity RCM on the device, femelast3d renumbered $kern" 1 "$build/tests/parity" -problem femelast3d -n 10 -permute 1 -mat_csrk_ordering rcm $o
      [ $k = 3 ] && run "parity RCM on the device, random $kern" 1 "$build/tests/parity" -problem random -n 3000 -mat_csrk_ordering rcm $o
      [ $k = 3 ] && run "parity RCM on the device, power-law rows sorted by length $kern" 1 "$build/tests/parity" -problem powerlaw -n 5000 -mat_csrk_ordering rcm $o
      # the stream kernel holds a block's nonzeros in shared memory: forced on the arrow (a row of 46,500 entries)
      # it must refuse with a PETSc error
      [ $k = 3 ] && for f in "$m"/*.mtx "$m"/*.mtx.gz; do
        [ -e "$f" ] || continue
        if [ "$kern" = stream ] && [ "$(basename "$f")" = arrow.mtx.gz ]; then
          run_error "parity arrow.mtx.gz k=$k stream: does not fit" "The stream kernel needs the nonzeros" "$build/tests/parity" -f "$f" $o
        else run "parity $(basename "$f") k=$k $kern" 1 "$build/tests/parity" -f "$f" $o; fi
      done
    done
  done
  if [ "$part" != loops ]; then
  # vector kernel lanes from the mean row length: 7, 27, 81 entries
  for pr in "lap3d7 -n 20" "lap3d27 -n 16" "elasticity3d -n 10"; do run "parity vector $pr" 1 "$build/tests/parity" -problem $pr -ctype csrkcuda -kmin 3 -kmax 3 -mat_csrk_cuda_kernel vector; done
  # the device set-up of the sliced kernel: row patterns found on the device (stencils and block size 3 in natural
  # order), plain columns where patterns are off or the rows do not fit the dictionary (random rows, scrambled
  # stencils: more distinct rows than the dictionary holds), empty rows, a rectangular block
  for pr in "lap3d27 -n 40" "lap3d7 -n 48" "elasticity3d -n 14" "lap2d5 -n 300"; do
    run_info "parity sliced, device row patterns: $pr" "Sliced kernel over row patterns" "$build/tests/parity" -problem $pr -ctype csrkcuda -mat_csrk_cuda_kernel sliced
    run_info "parity sliced, patterns off: $pr" "set up on the device: kernel sliced" "$build/tests/parity" -problem $pr -ctype csrkcuda -mat_csrk_cuda_kernel sliced -mat_csrk_row_patterns 0
  done
  # the auto rule, from the rows and the device alone (no timing): a stencil that fills the device (373 k rows, over
  # CSRK_GPU_MIN_ROWS_PER_SM rows a multiprocessor) takes the sliced kernel over row patterns, a small one (64 k rows)
  # the stream kernel
  run_info "parity auto on a large stencil: sliced over row patterns" "Sliced kernel over row patterns" "$build/tests/parity" -problem lap3d7 -n 72 -ctype csrkcuda
  run_info "parity auto on a small stencil: stream" "set up on the device: kernel stream" "$build/tests/parity" -problem lap3d7 -n 40 -ctype csrkcuda
  # unstructured rows of nearly equal length without row patterns: the sliced kernel in a block that fills the device
  # (in either numbering; bs-3 rows in nodes take the block kernel first, below CSRK_GPU_SLICES_MIN_ROWS_PER_SM rows a
  # multiprocessor), the stream kernel in a small one
  run_info "parity auto on unstructured rows: sliced" "set up on the device: kernel sliced" "$build/tests/parity" -problem fem3d -n 72 -ctype csrkcuda
  run_info "parity auto on unstructured rows, renumbered: sliced" "set up on the device: kernel sliced" "$build/tests/parity" -problem fem3d -n 72 -permute 1 -ctype csrkcuda
  run_info "parity auto on unstructured bs-3 rows filling the device: block" "set up on the device: kernel block" "$build/tests/parity" -problem femelast3d -n 48 -ctype csrkcuda
  # a row of 400 entries among 14.6 on average: the sliced kernel's thread for it would end long after the others
  # (CSRK_SLICED_TAIL_NNZ_PER_SM), so the vector kernel takes the block
  run_info "parity auto on unstructured rows with one long row: not sliced" "Sliced kernel not taken: a row of" "$build/tests/parity" -problem fem3d -n 72 -long 400 -ctype csrkcuda
  run_info "parity auto on unstructured rows, small block: stream" "set up on the device: kernel stream" "$build/tests/parity" -problem fem3d -n 30 -ctype csrkcuda
  # rows of very different lengths (power-law, cv above CSRK_MERGE_MIN_CV): the merge kernel
  run_info "parity auto on power-law rows: merge" "set up on the device: kernel merge" "$build/tests/parity" -problem powerlaw -n 5000 -ctype csrkcuda
  run_info "parity sliced, too many patterns (random)" "do not fit the dictionary" "$build/tests/parity" -problem random -n 3000 -ctype csrkcuda -mat_csrk_cuda_kernel sliced
  run_info "parity sliced, too many patterns (scrambled 27-point)" "do not fit the dictionary" "$build/tests/parity" -problem lap3d27 -n 24 -permute 1 -ctype csrkcuda -mat_csrk_cuda_kernel sliced
  run "parity sliced, rectangular" 1 "$build/tests/parity" -problem randrect -n 3000 -ctype csrkcuda -mat_csrk_cuda_kernel sliced
  # the block kernel: nodes of rows with one column list, found on the device. Auto takes it on block matrices whose
  # rows have no row patterns (elasticity renumbered vertex by vertex: -permute_bs 3 moves the 3 rows of a vertex
  # together; the unstructured femelast3d), not on stencils in natural order (the sliced kernel over row patterns);
  # forced: 16-bit offsets and 32-bit columns, every lane count, nodes of 1 to 7 rows (randnodes: runs of 7 cut in
  # 4 + 3), nodes of one row (a random renumbering scatters a vertex's rows), the transposes (parity and state check them)
  pb="-problem elasticity3d -n 12 -permute 1 -permute_bs 3"
  run_info "parity block, auto on elasticity3d renumbered by vertex" "set up on the device: kernel block" "$build/tests/parity" $pb -ctype csrkcuda
  run_info "parity block, auto on femelast3d" "set up on the device: kernel block" "$build/tests/parity" -problem femelast3d -n 16 -ctype csrkcuda
  run_info "parity block, auto not on elasticity3d in natural order (row patterns; a small block: stream)" "set up on the device: kernel stream" "$build/tests/parity" -problem elasticity3d -n 14 -ctype csrkcuda
  run_info "parity block, auto not on a renumbered stencil (no nodes)" "Block kernel not taken" "$build/tests/parity" -problem lap3d27 -n 24 -permute 1 -ctype csrkcuda
  run_info "parity block, 16-bit offsets" "16-bit offsets from each node's base" "$build/tests/parity" $pb -ctype csrkcuda -mat_csrk_cuda_kernel block
  run_info "parity block, 32-bit columns" "as 32-bit columns" "$build/tests/parity" $pb -ctype csrkcuda -mat_csrk_cuda_kernel block -mat_csrk_compress_indices 0
  run_info "parity block, nodes of 1 to 7 rows (randnodes)" "Block kernel: " "$build/tests/parity" -problem randnodes -n 5000 -ctype csrkcuda -mat_csrk_cuda_kernel block
  # the levels on the GPU, told by -info at each set-up: k = 2 (set after the conversion) is one super-row a block
  run_info "levels: k = 2 on the GPU" "k = 2: single super-rows" "$build/tests/parity" -problem lap3d7 -n 20 -ctype csrkcuda -kmin 2 -kmax 2
  run_info "levels: k = 3 on the GPU" "k = 3: super-super-rows" "$build/tests/parity" -problem lap3d7 -n 20 -ctype csrkcuda -kmin 3 -kmax 3
  run "parity block, elasticity3d randomly renumbered (nodes of one row)" 1 "$build/tests/parity" -problem elasticity3d -n 10 -permute 1 -ctype csrkcuda -mat_csrk_cuda_kernel block
  for lanes in 2 4 8 16 32; do
    run "parity block, $lanes lanes per node" 1 "$build/tests/parity" $pb -ctype csrkcuda -mat_csrk_cuda_kernel block -mat_csrk_sr_size $lanes
  done
  run "parity block femelast3d" 1 "$build/tests/parity" -problem femelast3d -n 16 -ctype csrkcuda -mat_csrk_cuda_kernel block
  run "state csrkcuda block" 1 "$build/tests/state" -ctype csrkcuda -problem elasticity3d -n 8 -mat_csrk_cuda_kernel block
  run "state csrkcuda block femelast3d" 1 "$build/tests/state" -ctype csrkcuda -problem femelast3d -n 16
  # the block-sliced kernel: rows in dense bs x bs blocks (the matrix's block size), checked on the device. Auto takes
  # it on such rows in a block of at least CSRK_GPU_SLICES_MIN_ROWS_PER_SM rows a multiprocessor (femelast3d 64: 786 k
  # rows; 48 takes the block kernel, above), in the user's numbering or renumbered vertex by vertex; forced: the
  # products, the transposes, value refreshes, shifts and the diagonal; where the rows are not in blocks, the auto rule's
  # kernel (-info says so)
  run_info "parity bsliced, forced on femelast3d" "Block-sliced kernel: " "$build/tests/parity" -problem femelast3d -n 16 -ctype csrkcuda -mat_csrk_cuda_kernel bsliced
  run_info "parity bsliced, forced on elasticity3d renumbered by vertex" "Block-sliced kernel: " "$build/tests/parity" $pb -ctype csrkcuda -mat_csrk_cuda_kernel bsliced
  for bs in 2 4 5 6; do run_info "parity bsliced, forced on fem3d-bs$bs" "Block-sliced kernel: " "$build/tests/parity" -problem fem3d-bs$bs -n 12 -ctype csrkcuda -mat_csrk_cuda_kernel bsliced; done
  run_info "parity auto on bs-2 rows filling the device: bsliced" "set up on the device: kernel bsliced" "$build/tests/parity" -problem fem3d-bs2 -n 80 -ctype csrkcuda
  run_info "parity auto on bs-6 rows filling the device: sliced (CSRK_BSLICED_AUTO_MAX_BS)" "set up on the device: kernel sliced" "$build/tests/parity" -problem fem3d-bs6 -n 56 -ctype csrkcuda
  run_info "parity auto on bs-3 rows beyond the block kernel's rows a multiprocessor: bsliced" "set up on the device: kernel bsliced" "$build/tests/parity" -problem femelast3d -n 64 -ctype csrkcuda
  run_info "parity auto on bs-3 rows renumbered by vertex: bsliced" "set up on the device: kernel bsliced" "$build/tests/parity" -problem femelast3d -n 64 -permute 1 -permute_bs 3 -ctype csrkcuda
  run_info "parity bsliced forced on rows of block size 1: the auto rule's kernel" "cannot hold these rows" "$build/tests/parity" -problem random -n 3000 -ctype csrkcuda -mat_csrk_cuda_kernel bsliced
  run_info "parity bsliced forced on bs-3 rows renumbered row by row: the auto rule's kernel" "cannot hold these rows" "$build/tests/parity" -problem elasticity3d -n 10 -permute 1 -ctype csrkcuda -mat_csrk_cuda_kernel bsliced -mat_csrk_ordering natural
  run "state csrkcuda bsliced" 1 "$build/tests/state" -ctype csrkcuda -problem elasticity3d -n 8 -mat_csrk_cuda_kernel bsliced
  run "state csrkcuda bsliced femelast3d" 1 "$build/tests/state" -ctype csrkcuda -problem femelast3d -n 16 -mat_csrk_cuda_kernel bsliced
  run "ksp csrkcuda bsliced" 1 "$build/tests/ksp" -ctype csrkcuda -problem elasticity3d -n 12 -pcs jacobi,default -mat_csrk_cuda_kernel bsliced
  run "ksp csrkcuda block" 1 "$build/tests/ksp" -ctype csrkcuda -problem elasticity3d -n 12 -pcs jacobi,default -mat_csrk_cuda_kernel block
  # forced orderings: the device's RCM (levels from a seed per 16,384 rows; restarts in components not reached: the
  # shared matrices with many components; a block beyond the level cap keeps the user's ordering), the products
  # still in the user's ordering
  run_info "parity csrkcuda, -mat_csrk_ordering rcm: on the device" "RCM order of 64000 rows found on the device" "$build/tests/parity" -problem lap3d7 -n 40 -permute 2 -mat_csrk_ordering rcm -ctype csrkcuda
  run_info "parity csrkcuda, -mat_csrk_ordering bandk: the device's RCM" "RCM order of" "$build/tests/parity" -problem fem3d -n 24 -permute 2 -mat_csrk_ordering bandk -ctype csrkcuda
  for f in "$m"/*.mtx "$m"/*.mtx.gz; do
    [ -e "$f" ] || continue
    run "parity RCM on the device $(basename "$f")" 1 "$build/tests/parity" -f "$f" -ctype csrkcuda -mat_csrk_ordering rcm
  done
  awk 'BEGIN { n = 100000; print "%%MatrixMarket matrix coordinate real general"; print n, n, 3 * n - 2; for (i = 1; i <= n; i++) { if (i > 1) print i, i - 1, -1; print i, i, 2.5; if (i < n) print i, i + 1, -1 } }' >"$out/chain.mtx"
  run_info "RCM on the device given up beyond the level cap (a chain of 100,000 rows)" "no RCM order within 1024 levels" "$build/tests/parity" -f "$out/chain.mtx" -ctype csrkcuda -mat_csrk_ordering rcm
  # the auto ordering: a renumbered mesh that fills the device (its slices gather about a sector of x a nonzero) in
  # RCM order, at the first product under eager set-up; its natural numbering and a small renumbered block not
  run_info "auto ordering on the device: renumbered fem3d" "RCM order of 373248 rows found on the device" "$build/tests/parity" -problem fem3d -n 72 -permute 1 -ctype csrkcuda
  run_info "auto ordering on the device: renumbered femelast3d" "RCM order of" "$build/tests/parity" -problem femelast3d -n 48 -permute 1 -ctype csrkcuda
  run_info "auto ordering on the device: fem3d in its own numbering stays" "set up on the device: kernel sliced" "$build/tests/parity" -problem fem3d -n 72 -ctype csrkcuda -ordering auto
  if grep -q "RCM order of" "$out/run-info.log"; then fail=$((fail + 1)); echo "FAIL auto ordering reordered fem3d in its own numbering"; else pass=$((pass + 1)); echo "ok   auto ordering: no RCM on fem3d in its own numbering"; fi
  # with the set-up's budget, the RCM copy only after the products that pay for it
  run_info "auto ordering on the device waits under the budget" "the device copy in RCM order after" "$build/tests/parity" -problem fem3d -n 72 -permute 1 -ctype csrkcuda -ordering auto -mat_csrk_setup budget
  if grep -q "RCM order of" "$out/run-info.log"; then fail=$((fail + 1)); echo "FAIL the RCM copy was made before its wait"; else pass=$((pass + 1)); echo "ok   no RCM copy before its wait"; fi
  # (1500 iterations, the copy changing order after about 1,200 products, CSRK_GPU_RCM_PASSES and CSRK_GPU_RCM_NNZ: in
  # another order the sums round differently, so CG would stop an iteration apart; the solutions are compared); values
  # changed and shifted while the copy waits (a check is two products)
  run_info "ksp csrkcuda RCM after its wait" "RCM order of 373248 rows found on the device" "$build/tests/ksp" -ctype csrkcuda -problem fem3d -n 72 -permute 1 -pcs jacobi -mat_csrk_setup budget -max_it 1500 -rtol 1e-30
  # rows of varied lengths (cv 0.3-1) in a scattered numbering take the merge kernel while the RCM copy waits, not the
  # vector kernel (random nodes renumbered: nodes of one row, too padded for the sliced kernel)
  run_info "auto while the RCM copy waits, varied rows: merge" "set up on the device: kernel merge" "$build/tests/parity" -problem randnodes -n 400000 -permute 1 -ctype csrkcuda -mat_csrk_setup budget
  run "state csrkcuda, values while the RCM copy waits" 1 "$build/tests/state" -ctype csrkcuda -problem fem3d -n 72 -permute 1 -mat_csrk_setup budget -rcm_wait 2000
  run "state csrkcuda, values while the RCM copy waits (P2-like rows: sorted by length)" 1 "$build/tests/state" -ctype csrkcuda -problem powerlaw -n 30000 -permute 1 -rcm_wait 200 -mat_csrk_ordering rcm
  run "state csrkcuda RCM on the device" 1 "$build/tests/state" -ctype csrkcuda -mat_csrk_ordering rcm
  for kern in sliced block vector; do
    run "state csrkcuda RCM on the device, $kern" 1 "$build/tests/state" -ctype csrkcuda -problem elasticity3d -n 8 -mat_csrk_ordering rcm -mat_csrk_cuda_kernel $kern
  done
  # the GPU type's host fallback: host vectors (parity's vectors are otherwise the tested type's, device vectors)
  run "parity csrkcuda, host vectors" 1 "$build/tests/parity" -problem lap3d27 -n 20 -ctype csrkcuda -ref_vectors
  run "parity csrkcuda one rank" 1 "$build/tests/parity" -problem lap3d7 -n 20 -ctype csrkcuda -kmin 2 -kmax 3
  run "state csrkcuda" 1 "$build/tests/state" -ctype csrkcuda
  run "ksp csrkcuda" 1 "$build/tests/ksp" -ctype csrkcuda -problem lap3d27 -n 30 -pcs jacobi,default
  run "state csrkcuda bandk" 1 "$build/tests/state" -ctype csrkcuda -mat_csrk_ordering bandk
  # value refresh on the device and MatBindToCPU, for each layout kind (sliced with patterns, sliced plain, CSR kernels)
  for kern in sliced stream merge vector block; do
    run "state csrkcuda $kern" 1 "$build/tests/state" -ctype csrkcuda -mat_csrk_cuda_kernel $kern
  done
  run "state csrkcuda auto on irregular rows (merge)" 1 "$build/tests/state" -ctype csrkcuda -problem powerlaw -n 3000
  run "state csrkcuda sliced, plain columns" 1 "$build/tests/state" -ctype csrkcuda -mat_csrk_cuda_kernel sliced -mat_csrk_row_patterns 0
  run "state csrkcuda elasticity" 1 "$build/tests/state" -ctype csrkcuda -problem elasticity3d -n 8
  # set-up and refresh scratch of tens of MiB, given back to the device's memory pool (state checks the pool)
  run "state csrkcuda fem3d 72, scratch given back" 1 "$build/tests/state" -ctype csrkcuda -problem fem3d -n 72
  run "apiparity csrkcuda" 1 "$build/tests/apiparity" -ctype csrkcuda -problem lap2d5,randrect,elasticity3d,random -n 10,60,3,80 -ks 2,3
  fi
  ;;
esac

case " $phases " in *" test "* | *" test-mpi "*)
  # a rank per GPU on every GPU of the machine (and 2 ranks on one GPU where it has one): PETSc gives rank r the
  # device r mod ngpu; -device_view shows each rank's
  nps=$(gpunps)
  [ "$ngpu" = 1 ] && nps=2
  for np in $nps; do
    dv=$(mpiexec -n "$np" "$build/tests/parity" -problem lap3d7 -n 12 -ctype csrkcuda -device_view 2>&1)
    ids=$(echo "$dv" | grep -oE "^ *id: [0-9]+" | sort -u | wc -l)
    want=$np; [ "$np" -gt "$ngpu" ] && want=$ngpu
    if [ "$ids" = "$want" ]; then pass=$((pass + 1)); echo "ok   $np ranks on $want GPU(s), a device each (-device_view)"
    else fail=$((fail + 1)); echo "FAIL $np ranks: $ids distinct devices in -device_view, expected $want"; fi
    echo "$dv" >>"$out/gpu-tests.log"
    run "parity csrkcuda MPI" "$np" "$build/tests/parity" -problem lap3d7 -n 20 -ctype csrkcuda -kmin 2 -kmax 3
    run "state csrkcuda" "$np" "$build/tests/state" -ctype csrkcuda
    run "ksp csrkcuda" "$np" "$build/tests/ksp" -ctype csrkcuda -problem lap3d27 -n 30 -pcs jacobi,default
    # the public-API parity suite on the device type (device vectors): every operation's products against aij's
    run "apiparity csrkcuda" "$np" "$build/tests/apiparity" -ctype csrkcuda -problem lap2d5,randrect,elasticity3d,random -n 10,60,3,80 -ks 2,3
    # the MPI product's own halo exchange (pinned host buffers; the default): a 3D stencil's planes (two neighbours
    # a rank), random rows and a rectangular matrix (every rank a neighbour of every other), unstructured
    # finite-element rows (fem3d, femelast3d: neighbours of a mesh partition), natural and renumbered; and MPIAIJ's
    # VecScatter instead
    run_info "MPI halo through pinned buffers (np $np)" "halo exchange through pinned host buffers" mpiexec -n "$np" "$build/tests/parity" -problem lap3d7 -n 20 -ctype csrkcuda
    run "parity csrkcuda MPI random" "$np" "$build/tests/parity" -problem random -n 3000 -ctype csrkcuda
    run "parity csrkcuda MPI randrect" "$np" "$build/tests/parity" -problem randrect -n 2000 -ctype csrkcuda
    for pr in "fem3d -n 24" "femelast3d -n 12" "fem3d -n 24 -permute 1" "femelast3d -n 12 -permute 1"; do
      run "parity csrkcuda MPI $pr" "$np" "$build/tests/parity" -problem $pr -ctype csrkcuda
    done
    run "parity csrkcuda MPI, RCM on the device" "$np" "$build/tests/parity" -problem fem3d -n 24 -permute 1 -ctype csrkcuda -mat_csrk_ordering rcm
    run "parity csrkcuda MPI, VecScatter halo" "$np" "$build/tests/parity" -problem lap3d7 -n 20 -ctype csrkcuda -kmin 2 -kmax 3 -mat_csrk_cuda_halo_pinned 0
    # the block kernel on each rank's diagonal block (elasticity renumbered vertex by vertex), forced and by auto
    pb="-problem elasticity3d -n 12 -permute 1 -permute_bs 3"
    run "parity block MPI" "$np" "$build/tests/parity" $pb -ctype csrkcuda -mat_csrk_cuda_kernel block
    run "parity block MPI, auto" "$np" "$build/tests/parity" $pb -ctype csrkcuda
    run "state csrkcuda block MPI" "$np" "$build/tests/state" -ctype csrkcuda -problem elasticity3d -n 8 -mat_csrk_cuda_kernel block
  done
  # more ranks than GPUs: two ranks share each device
  run "parity csrkcuda MPI random, 2 ranks a GPU" $((2 * ngpu)) "$build/tests/parity" -problem random -n 3000 -ctype csrkcuda
  # unmodified PETSc tutorials with the plugin: csrkcuda with CUDA vectors
  ex2=$PETSC_DIR/share/petsc/examples/src/ksp/ksp/tutorials/ex2.c
  if [ -f "$ex2" ]; then
    mkdir -p "$build/ex"
    ( cd "$build/ex" && cp "$ex2" . && mpicc -O2 ex2.c -o ex2 -I"$PETSC_DIR/include" -I/usr/local/cuda/include -L"$PETSC_DIR/lib" -Wl,-rpath,"$PETSC_DIR/lib" -lpetsc ) >>"$out/gpu-tests.log" 2>&1
    for np in 1 $nps; do
      ref=$(mpiexec -n $np "$build/ex/ex2" -m 40 -n 40 -ksp_type cg -pc_type jacobi -options_left 0 2>&1 | tail -n 1)
      got=$(mpiexec -n $np "$build/ex/ex2" -m 40 -n 40 -ksp_type cg -pc_type jacobi -dll_append "$build/lib/libcsrk.so" -mat_type csrkcuda -vec_type cuda -mat_view ::ascii_info -options_left 0 2>&1)
      if echo "$got" | grep -q "aijcsrkcuda" && echo "$got" | grep -q "GPU plan.*: kernel" && [ "$(echo "$got" | tail -n 1)" = "$ref" ]; then pass=$((pass + 1)); echo "ok   ksp ex2 -mat_type csrkcuda -vec_type cuda (np $np): $ref"
      else fail=$((fail + 1)); echo "FAIL ksp ex2 csrkcuda (np $np): aij '$ref', csrkcuda '$(echo "$got" | tail -n 1)'"; fi
    done
  fi
  ;;
esac
case " $phases " in *" test "* | *" test-kernels "* | *" test-mpi "*) echo "gpu tests: $pass passed, $fail failed" ;; esac

case " $phases " in *" sanitize "*)
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  # san WHAT LOG CMD...: CMD (compute-sanitizer in it) exits 0, its summary printed, else its log's tail
  san() {
    local what=$1 log=$2
    shift 2
    if "$@" >"$log" 2>&1; then echo "ok   compute-sanitizer $tool ($what): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1)"
    else echo "FAIL compute-sanitizer $tool ($what)"; tail -n 20 "$log"; fi
  }
  for tool in memcheck racecheck; do
    # parity multiplies device vectors (the tested type's): the kernels run under the sanitizer. Random rows exercise
    # every path but the sliced kernel's row patterns, which need a stencil (sliced-patterns), and the block kernel's
    # nodes of several rows, which need a block matrix (block-nodes; random rows make nodes of one row), the
    # block-sliced kernel, which needs dense blocks (bsliced), and the auto rule's set-up: the row patterns of a small stencil then left to the stream kernel (auto-patterns), irregular rows
    # (auto-irregular)
    for kern in ${SANITIZE_KERNELS:-scalar vector stream sliced sliced-patterns merge block block-nodes bsliced auto-patterns auto-irregular}; do
      prob="-problem random -n 3000" # its dense row (3000 entries) is a long row
      [ "$kern" = sliced-patterns ] || [ "$kern" = auto-patterns ] && prob="-problem lap3d27 -n 14"
      [ "$kern" = auto-irregular ] && prob="-problem powerlaw -n 3000"
      [ "$kern" = block-nodes ] && prob="-problem elasticity3d -n 8 -permute 1 -permute_bs 3"
      [ "$kern" = bsliced ] && prob="-problem femelast3d -n 12"
      san "$kern kernel" "$out/sanitizer-$tool-$kern.log" "$cs" --tool $tool --error-exitcode 9 "$build/tests/parity" $prob -ctype csrkcuda -kmin 3 -kmax 3 -mat_csrk_cuda_kernel "${kern%%-*}"
    done
    # the RCM order found on the device after its wait (memcheck only: 2,000 products of 373 k rows): its levels, the
    # sliced layout giving back its CSR arrays (tocsr), the copy in the new order, values changed while it waits
    [ $tool = memcheck ] && san "RCM order after its wait" "$out/sanitizer-$tool-rcm.log" "$cs" --tool $tool --error-exitcode 9 "$build/tests/state" -ctype csrkcuda -problem fem3d -n 72 -permute 1 -mat_csrk_setup budget -rcm_wait 2000
    # the MPI product on 2 ranks: the halo exchange's gather and copies
    san "MPI product, 2 ranks" "$out/sanitizer-$tool-mpi.log" mpiexec -n 2 "$cs" --tool $tool --error-exitcode 9 "$build/tests/parity" -problem random -n 300 -ctype csrkcuda -kmin 3 -kmax 3
  done
  ;;
esac

case " $phases " in *" bench "*)
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
  types=${BENCH_TYPES:-aijcusparse,sellcuda,csrkcuda,csrkcuda:compress=0}
  for p in $(echo "${BENCH_PROBLEMS:-lap3d27:200,lap3d7:256,elasticity3d:100,powerlaw:4000000}" | tr , ' '); do
    timeout 200 "$build/tutorials/bench" -problem "${p%%:*}" -n "${p##*:}" -types "$types" -ref aijcusparse -reps 200 -warmup 20 -stream 0 -solve "${BENCH_SOLVE:-1}" -o "$out/bench-gpu.csv" 2>/dev/null | tail -n 14
  done
  for f in ${BENCH_FILES:-}; do
    timeout 60 "$build/tutorials/bench" -f "$top/deps/matrices/$f" -types "$types" -ref aijcusparse -reps 200 -warmup 20 -stream 0 -solve 0 -o "$out/bench-gpu-files.csv" 2>/dev/null | tail -n 10
  done
  ;;
esac

case " $phases " in *" profile "*)
  # CG + Jacobi under -log_view, one type per run: MatMult must move nothing between host and device
  p=${PROFILE_PROBLEM:-lap3d27:150}
  for t in ${PROFILE_TYPES:-aijcusparse sellcuda csrkcuda}; do
    # PROFILE_OPTS=-log_view_gpu_time gives each event its GPU time (at the price of a synchronisation per event)
    timeout 120 "$build/tutorials/bench" -problem "${p%%:*}" -n "${p##*:}" -types "$t" -ref "$t" -reps 20 -warmup 2 -stream 0 -log_view ":$out/logview-$t.txt" ${PROFILE_OPTS:-} >"$out/profile-$t.log" 2>&1
    echo "== $t: CG + Jacobi on $p"; grep -E "^$t " "$out/profile-$t.log" | head -n 1
    grep -E "^(KSPSolve|MatMult |PCApply|VecTDot|VecNorm|VecAXPY|VecAYPX|VecPointwiseMult|MatGetDiagonal|MatCUSPARSCopyTo|MatCSRKBuild|MatConvert)" "$out/logview-$t.txt"
    if [ -n "${PROFILE_NSYS:-}" ] && command -v nsys >/dev/null; then
      timeout 120 nsys profile -o "$out/nsys-$t" --force-overwrite true --stats=true "$build/tutorials/bench" -problem "${p%%:*}" -n "${p##*:}" -types "$t" -ref "$t" -reps 20 -warmup 2 -stream 0 >"$out/nsys-$t.txt" 2>&1
      grep -A 12 "cuda_gpu_kern_sum" "$out/nsys-$t.txt" | cut -c1-160
    fi
  done
  ;;
esac

case " $phases " in *" scaling "*)
  # strong scaling: the same problems on 1, 2, 4, ... GPUs; weak: ex45 grown along z with the GPUs (EX45_N^2 x
  # EX45_N*NP, so that each rank keeps an EX45_N^3 block)
  n45=${EX45_N:-256}
  sapps=${SCALING_APPS:-ex45,fem-p1,fem-elast,gen-fem3d,gen-femelast3d}
  for np in 1 $(gpunps); do
    APPS=$sapps APPS_TAG=strong-np$np GPUTIME=0 REPS=${SCALING_REPS:-1} OUT=$out bash "$top/configure-hooks/apps.sh" gpu "$np"
    [ "$np" = 1 ] && continue
    # the halo exchange through MPIAIJ's VecScatter instead of the pinned buffers that overlap the diagonal product
    APPS=ex45 TYPES=csrkcuda/-mat_csrk_cuda_halo_pinned/0 APPS_TAG=strong-halo-np$np GPUTIME=0 REPS=${SCALING_REPS:-1} OUT=$out bash "$top/configure-hooks/apps.sh" gpu "$np"
    APPS=ex45 EX45_NZ=$((n45 * np)) APPS_TAG=weak-np$np GPUTIME=0 REPS=${SCALING_REPS:-1} OUT=$out bash "$top/configure-hooks/apps.sh" gpu "$np"
  done
  bash "$top/configure-hooks/scaling-table.sh" "$out"
  ;;
esac

case " $phases " in *" cpu "*)
  # the CPU types on the host: aij and sell with an MPI rank per core, csrk with one rank and a thread per core
  cores=$(nproc)
  # entries problem:n or problem:n:seed (a random symmetric permutation with that seed)
  for p in $(echo "${CPU_PROBLEMS:-lap3d7:160,lap3d7:160:1,lap3d27:128,elasticity3d:72}" | tr , ' '); do
    name=${p%%:*} rest=${p#*:} perm=-1
    n=${rest%%:*}
    [ "$rest" != "$n" ] && perm=${rest#*:}
    echo "== CPU $name n=$n permute $perm on $cores cores"
    OMP_NUM_THREADS=1 timeout 150 mpiexec -n "$cores" --bind-to core "$build/tutorials/bench" -problem "$name" -n "$n" -permute "$perm" -types aij,sell -reps 50 -solve 0 -o "$out/cpu-ranks.csv" 2>&1 | grep -E "^(aij|sell|STREAM|type)"
    OMP_NUM_THREADS=$cores OMP_PROC_BIND=close OMP_PLACES=cores timeout 200 mpiexec -n 1 --bind-to none "$build/tutorials/bench" -problem "$name" -n "$n" -permute "$perm" -types "${CPU_TYPES:-aij,csrk}" -reps 50 -solve 0 -o "$out/cpu-threads.csv" 2>&1 | grep -E "^(aij|csrk|STREAM|type|  csrk)"
  done
  for f in ${CPU_FILES:-}; do
    echo "== CPU $f"
    OMP_NUM_THREADS=1 timeout 60 mpiexec -n "$cores" --bind-to core "$build/tutorials/bench" -f "$top/deps/matrices/$f" -types aij,sell -reps 50 -solve 0 -o "$out/cpu-ranks.csv" 2>&1 | grep -E "^(aij|sell)"
    OMP_NUM_THREADS=$cores OMP_PROC_BIND=close OMP_PLACES=cores timeout 60 mpiexec -n 1 --bind-to none "$build/tutorials/bench" -f "$top/deps/matrices/$f" -types "${CPU_TYPES:-aij,csrk}" -reps 50 -solve 0 -o "$out/cpu-threads.csv" 2>&1 | grep -E "^(aij|csrk)"
  done
  ;;
esac

case " $phases " in *" apps "*)
  for np in $(echo "${APPS_NP:-1 $ngpu}" | tr " " "\n" | awk '!s[$1]++'); do
    APPS_TAG=np$np OUT=$out bash "$top/configure-hooks/apps.sh" gpu "$np"
  done
  ;;
esac

case " $phases " in *" cpuapps "*)
  OUT=$out bash "$top/configure-hooks/apps.sh" cpu "$(nproc)"
  ;;
esac

case " $phases " in *" tune "*)
  # sweep of the CSR-3 sizes and kernels, the data of the Hopper model in docs/tuning.md
  sizes=${TUNE_SIZES:-"4 8 12 16 24 32"}
  for p in $(echo "${TUNE_PROBLEMS:-lap3d7:150,lap3d27:100,elasticity3d:60,random:2000000}" | tr , ' '); do
    types=""
    for ssr in $sizes; do for sr in $sizes; do types="$types,csrkcuda:k=3:sr=$sr:ssr=$ssr"; done; done
    types="$types,csrkcuda:k=3:kernel=vector"
    timeout 150 "$build/tutorials/bench" -problem "${p%%:*}" -n "${p##*:}" -types "aijcusparse${types}" -ref aijcusparse -reps 30 -warmup 5 -stream 0 -solve 0 -o "$out/tune-gpu.csv" >/dev/null 2>&1
    echo "tuned $p"
  done
  ;;
esac
exit $((fail > 0))
