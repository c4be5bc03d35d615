#!/usr/bin/env bash
# The GPU measurements of issue #47 in one command on the GPU machine (repo root, $OUT set; deps/ carried as
# configure-hooks/gpu-run.sh needs it, deps/matrices with the shared Matrix Market files, and deps/pcache/ with an
# installed PETSc packed by an earlier call, if any):
#
#   bash docs/experiments/unstructured.sh [raw] [plex] [rules] [big] [ncu] [insitu] [pack] [ex10] [rcm] [orders] [repro] [ex45] [tests]
#
#   raw:   docs/experiments/unstructured.cu (copy bandwidth first) on generated tetrahedral P1 (1.26 M rows) and P2
#          (1.37 M rows) matrices (RAWRAND=1: also in a random numbering; RAW_GEN=0: not), then on the plex phase's
#          matrices (RAW_ARGS: more options, such as -solvelike 8 -only 'ALG1|slices|solve:')
#   plex:  snes ex13's P1 and P2 (DMPlex's numbering) and femelast3d made by configure-hooks/apps.sh, on the host
#          while GPU 0 runs the raw phase (FEM_REFINE, FEM_BOX, FEM_ELAST_BOX: apps.sh's sizes; FEM_TIMEOUT: seconds a
#          matrix; PLEX_APPS: apps.sh's matrices, fem-p1,fem-p2 unless given, fem-elast for snes ex17's,
#          fem-ex12-p1,fem-ex12-p2 for snes ex12's; the later phases run on these)
#   rules: tutorials/bench with each kernel forced against auto on the matrices behind the auto rule's constants
#   big:   tutorials/bench, auto (BIG_TYPES: more) against aijcusparse on the large matrices
#   ncu:   Nsight Compute on the row kernel, cuSPARSE and the sliced kernel (generated P1)
#   insitu: Nsight Compute on aijcusparse's and csrkcuda's products inside ksp ex10's CG (generated P1)
#   pack:  the installed PETSc (stripped, with the tutorials apps.sh builds) as $OUT/petsc-cuda.tar.xz.NN, which later
#          calls carry as deps/pcache/ instead of building PETSc again
#   ex10:  ksp ex10, CG + Jacobi, 500 iterations, device vectors (-rhs random), -log_view: aijcusparse and csrkcuda on
#          the large matrices (KSPSolve time, the better of two plain runs; MatMult GPU rate from a run with
#          -log_view_gpu_time; EX10_GEN=0: the plex phase's matrices only)
#   rcm:   the same on the generated matrices in a random numbering: aijcusparse, csrkcuda, and csrkcuda with its RCM
#          copy made at set-up (-mat_csrk_setup eager); RCM_PLEX=1: also the plex phase's matrices renumbered
#          (RCM_GEN=0: those alone); RCM_VERTEX=1: also the elasticity matrices renumbered vertex by vertex
#   orders: on the plex phase's matrices, csrkcuda's MatMult rate in each order: DMPlex's (-mat_csrk_ordering
#          natural) and its RCM copy from the start (-mat_csrk_setup eager), -log_view_gpu_time
#   repro: the same ex10 run 3 times with -ksp_view_solution binary:FILE, the files compared with cmp
#   ex45:  ksp ex45 256^3 (structured), aijcusparse and csrkcuda (configure-hooks/apps.sh)
#   tests: configure-hooks/gpu-run.sh test-kernels and sanitize (SANITIZE_KERNELS) on the second GPU while the first
#          measures, then test-mpi; on a machine of one GPU after the measurements
#   autotests: the auto rule's choices of gpu-run.sh's tests alone (parity against aij with -info), on GPU 0
# Measurements run on GPU 0. Logs: $OUT/unstructured-logs.tar.gz; a summary on stdout. DEADLINE (s): no phase starts
# after it.
set -uo pipefail
top=$(pwd)
out=${OUT:-$top/out}
log=$out/u
mkdir -p "$log"
phases=" ${*:-raw plex rules big ncu pack} "
t0=$SECONDS
deadline=${DEADLINE:-560}
stamp() { echo "[$((SECONDS - t0)) s] $*"; }
# want PHASE SECONDS: the phase was asked for and that much time is left before the deadline
want() {
  case $phases in *" $1 "*) ;; *) return 1 ;; esac
  [ $((deadline - (SECONDS - t0))) -ge "$2" ] || { stamp "$1 skipped: less than $2 s left"; return 1; }
  stamp "$1"
}
finish() {
  tar -C "$out" -czf "$out/unstructured-logs.tar.gz" u 2>/dev/null
  rm -rf "$log"
  stamp "done"
}
trap finish EXIT
ngpu=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "repo root: $top; commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null); $(date -u); $ngpu GPU(s), $(nproc) cores"

# an installed PETSc carried from an earlier call
if ls "$top"/deps/pcache/petsc-cuda.tar.xz.* >/dev/null 2>&1 && [ ! -f "$top/deps/petsc-3.26.1-cuda/lib/pkgconfig/PETSc.pc" ]; then
  cat "$top"/deps/pcache/petsc-cuda.tar.xz.* | xz -d -T8 | tar -C "$top" -xf - && stamp "PETSc unpacked from deps/pcache"
  old=$(cat "$top/deps/pcache/root" 2>/dev/null)
  [ -n "$old" ] && [ "$old" != "$top" ] && [ ! -e "$old" ] && mkdir -p "$(dirname "$old")" && ln -s "$top" "$old" && echo "linked $old -> $top"
fi
echo "$top" >"$log/root"

export CUDA_VISIBLE_DEVICES=0
nvcc -O3 -arch=sm_90 -o "$log/copybw" configure-hooks/copybw.cu && "$log/copybw" | tee "$log/copybw.txt"
bw=$(grep -oE "[0-9.]+ GB/s" "$log/copybw.txt" | head -n 1 | cut -d' ' -f1)
nvcc -O3 -std=c++17 -arch=sm_90 -o "$log/unstructured" docs/experiments/unstructured.cu -lcusparse || exit 1
mkdir -p "$top/deps/gen"
"$log/unstructured" -gen p1 108 -write "$top/deps/gen/tet-p1.raw" -gen p2 56 -write "$top/deps/gen/tet-p2.raw" >"$log/gen.txt" 2>&1 &
genjob=$!

export OUT=$out
stamp "PETSc and plugin build"
nice -n 5 bash configure-hooks/gpu-run.sh build >"$log/build.txt" 2>&1
cat "$log/build.txt"
wait "$genjob"
cat "$log/gen.txt"
export PETSC_DIR=$top/deps/petsc-3.26.1-cuda PETSC_ARCH= PETSC_OPTIONS="-use_gpu_aware_mpi 0" BUILD=$top/build-gpu
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
b=$top/build-gpu
lib=$b/lib/libcsrk.so
bench="$b/tutorials/bench -stream 0 -solve 0 -reps 60 -warmup 5"
info_lines() { grep -hE "CSR-k set up on the device|GPU plan:|Row patterns|Block kernel|Sliced kernel" "$@" | sed -E 's/^\[[0-9]+\] //' | cut -c1-300; }
# PETSc's tutorials (from the installed PETSc, else from PETSC_SRC: deps/psrc holds those apps.sh builds and the mesh)
export PETSC_SRC=${PETSC_SRC:-$top/deps/psrc}
srcdir=$PETSC_DIR/share/petsc/examples
[ -f "$srcdir/src/ksp/ksp/tutorials/ex10.c" ] || srcdir=$PETSC_SRC
apps=$top/deps/apps/apps-bin
mkdir -p "$apps"
for ex in ksp/ksp/tutorials/ex10 ksp/ksp/tutorials/ex45 ksp/ksp/tutorials/ex2 ksp/ksp/tutorials/ex56 ksp/ksp/tutorials/bench_kspsolve snes/tutorials/ex12 snes/tutorials/ex13 snes/tutorials/ex17 snes/tutorials/ex5 snes/tutorials/ex19; do
  [ -x "$apps/$(basename $ex)" ] || mpicc -O2 "$srcdir/src/$ex.c" -o "$apps/$(basename $ex)" -I"$PETSC_DIR/include" -I/usr/local/cuda/include -L"$PETSC_DIR/lib" -Wl,-rpath,"$PETSC_DIR/lib" -lpetsc -lm >"$log/build-$(basename $ex).txt" 2>&1 &
done
wait
ls "$apps" | tr '\n' ' '; echo

# the tests on the second GPU while the first measures (CUDA_VISIBLE_DEVICES=1), then test-mpi on both
testjob=
if [ "$ngpu" -ge 2 ] && want tests 0; then
  ( export CUDA_VISIBLE_DEVICES=1 OUT=$log/tests; mkdir -p "$OUT"
    bash configure-hooks/gpu-run.sh test-kernels >"$log/tests-kernels.txt" 2>&1
    SANITIZE_KERNELS=${SANITIZE_KERNELS:-scalar vector stream sliced sliced-patterns} bash configure-hooks/gpu-run.sh sanitize >"$log/tests-sanitize.txt" 2>&1 ) &
  testjob=$!
fi

if want pack 0; then
  ( p=deps/petsc-3.26.1-cuda
    cd "$top" || exit
    strip --strip-unneeded "$p"/lib/libpetsc.so.* 2>/dev/null
    keep=$(ls -d $p/share/petsc/examples/src/ksp/ksp/tutorials/{ex2,ex10,ex45,ex56,bench_kspsolve}.c $p/share/petsc/examples/src/snes/tutorials/{ex5,ex12,ex13,ex17,ex19}.c $p/share/petsc/datafiles/meshes/mesh-3d-box-innersphere.msh 2>/dev/null)
    tar -cf - --exclude="$p/share/petsc/examples" --exclude="$p/share/petsc/datafiles" "$p" $keep | nice -n 10 xz -T8 -6 >"$log/petsc.tar.xz"
    sz=$(stat -c %s "$log/petsc.tar.xz")
    [ "$sz" -lt $((56 * 1048576)) ] && split -b 15m -d "$log/petsc.tar.xz" "$out/petsc-cuda.tar.xz."
    rm -f "$log/petsc.tar.xz"
    echo "PETSc pack: $sz bytes ($(du -sh $p | cut -f1) installed)" >"$log/pack.txt" ) &
  packjob=$!
fi

# snes ex13's P1 and P2 in DMPlex's numbering (apps.sh makes them with every core) and the generated bs-3 matrix, while
# GPU 0 sweeps the generated tetrahedral matrices
plexjob=
mkdir -p "$top/deps/fem"
[ -f "$top/deps/fem/gen-femelast3d.bin" ] || "$b/tutorials/permbin" -problem femelast3d -n 56 -permute -1 -o "$top/deps/fem/gen-femelast3d.bin" >/dev/null 2>&1
for n in 48 64; do [ -f "$top/deps/fem/gen-femelast3d-$n.bin" ] || "$b/tutorials/permbin" -problem femelast3d -n $n -permute -1 -o "$top/deps/fem/gen-femelast3d-$n.bin" >/dev/null 2>&1; done
if want plex 100; then
  ( APPS=${PLEX_APPS:-fem-p1,fem-p2} REPS=1 GPUTIME=0 TYPES=aijcusparse FEM_ITS=1 FEM_TIMEOUT=${FEM_TIMEOUT:-200} FEM_DIR=$top/deps/fem OUT=$top/deps/apps bash configure-hooks/apps.sh gpu 1 >"$log/apps-make.txt" 2>&1 ) &
  plexjob=$!
fi
gens="$top/deps/gen/tet-p1.raw $top/deps/gen/tet-p2.raw"
if [ "${RAW_GEN:-1}" != 0 ] && want raw 60; then
  "$log/unstructured" -bw "$bw" -nostats ${RAWRAND:+-rand} $gens >"$log/raw.txt" 2>&1
  cat "$log/raw.txt"
fi
mats="$gens $top/deps/fem/gen-femelast3d-48.bin $top/deps/fem/gen-femelast3d.bin $top/deps/fem/gen-femelast3d-64.bin"

# ex10 M T TAG [options]: one run, its -log_view in $log/ex10-<M>-<T><TAG>.log
ex10() {
  local m=$1 t=$2 tag=$3
  shift 3
  timeout 120 "$apps/ex10" -f "$m" -ksp_type cg -pc_type jacobi -ksp_max_it 500 -ksp_rtol 1e-30 -ksp_divtol 1e300 -rhs random -mat_type "$t" -vec_type cuda -dll_append "$lib" -log_view -ksp_converged_reason "$@" >"$log/ex10-$(basename "${m%.*}")-$t$tag.log" 2>&1
}
field() { awk -v e="$1" -v f="$2" '$1 == e { s += $(f + 1); n++ } END { if (n) printf "%g", s; else printf "-" }' "$3"; }
# ksp_best LOG R2LOG: the KSPSolve time (both of ex10's solves) of the better of two runs (R2LOG missing: LOG's)
ksp_best() {
  if [ -f "$2" ]; then printf "%s\n%s\n" "$(field KSPSolve 3 "$1")" "$(field KSPSolve 3 "$2")" | sort -g | head -n 1
  else field KSPSolve 3 "$1"; fi
}
# ex10_table M...: aijcusparse and csrkcuda on each, KSPSolve (sum of ex10's two solves) the better of two plain runs
# (the second of each type after the first of both), the MatMult time and GPU rate of the second solve from a run
# with -log_view_gpu_time
ex10_table() {
  local m t l g ksp
  for m in "$@"; do
    for t in aijcusparse csrkcuda; do
      ex10 "$m" "$t" "" -info :mat
      ex10 "$m" "$t" -gputime -log_view_gpu_time
    done
    for t in aijcusparse csrkcuda; do
      ex10 "$m" "$t" -r2
      l=$log/ex10-$(basename "${m%.*}")-$t.log
      g=$log/ex10-$(basename "${m%.*}")-$t-gputime.log
      ksp=$(ksp_best "$l" "$log/ex10-$(basename "${m%.*}")-$t-r2.log")
      printf "%-16s %-12s %10s %10s %14s %8s %s\n" "$(basename "${m%.*}")" "$t" "$ksp" "$(field MatMult 3 "$g")" "$(awk '$1 == "MatMult" { r = $22 } END { print r }' "$g")" "$(grep -oE "iterations [0-9]+" "$l" | awk '{ s += $2 } END { print s + 0 }')" "$(grep -oE "set up on the device: kernel [a-z]+" "$l" | head -n 1 | awk '{ print $NF }')"
    done
  done
}
# the plex job's matrices, made on every core: the ex10 runs, whose set-up is host work too, wait for them
plex_wait() {
  [ -n "$plexjob" ] || return 0
  wait "$plexjob" && grep -E "made|could not" "$log/apps-make.txt"
  plexjob=
}
if want ex10 60; then
  plex_wait
  printf "%-16s %-12s %10s %10s %14s %8s %s\n" matrix type "KSPSolve s" "MatMult s" "GPU MFlop/s" its "kernel"
  [ "${EX10_GEN:-1}" = 0 ] || ex10_table $mats
fi

# rcm: the generated P1, P2 and femelast3d 64^3 in a random numbering (row by row), ex10 as above with
# aijcusparse, csrkcuda (default options: the RCM copy after the products that pay for it) and csrkcuda with the RCM
# copy made at its set-up (-mat_csrk_setup eager: the rate of the product in RCM order); the order's time (MatCSRKOrder,
# from the -log_view_gpu_time run, whose events end on a synchronised stream) and MatMult rates of each stage; KSPSolve
# the better of two plain runs, the second of aijcusparse and csrkcuda after the first of every type
if want rcm 130; then
  plex_wait
  # randmat OUT PERMBIN-OPTIONS...: a random renumbering (tutorials/permbin -permute 1), made once
  randmat() { local o=$1; shift; [ -f "$o" ] || "$b/tutorials/permbin" "$@" -permute 1 -o "$o" >/dev/null 2>&1; }
  printf "%-10s %-16s %10s %6s %-22s %s\n" matrix type "KSPSolve s" its "MatCSRKOrder s (each)" "MatMult GPU MFlop/s (each stage)"
  rmats=
  if [ "${RCM_GEN:-1}" != 0 ]; then
    for g in p1 p2; do randmat "$top/deps/gen/$g-rand.bin" -fbin "$top/deps/gen/tet-$g.raw"; done
    randmat "$top/deps/gen/el-rand.bin" -problem femelast3d -n 64
    rmats="$top/deps/gen/p1-rand.bin $top/deps/gen/p2-rand.bin $top/deps/gen/el-rand.bin"
  fi
  # RCM_PLEX=1: also the plex phase's matrices (PLEX_APPS) renumbered at random, row by row
  if [ "${RCM_PLEX:-0}" = 1 ]; then
    for f in $(echo "${PLEX_APPS:-fem-p1,fem-p2}" | tr , ' '); do
      [ -f "$top/deps/fem/$f.raw" ] && randmat "$top/deps/fem/$f-rand.bin" -fbin "$top/deps/fem/$f.raw" -consistent && rmats="$rmats $top/deps/fem/$f-rand.bin"
    done
  fi
  # RCM_VERTEX=1: also femelast3d 64^3 (and, with RCM_PLEX=1, ex17) renumbered at random vertex by vertex, the 3 rows of
  # a vertex kept together
  if [ "${RCM_VERTEX:-0}" = 1 ]; then
    randmat "$top/deps/gen/el-vrand.bin" -problem femelast3d -n 64 -permute_bs 3 && rmats="$rmats $top/deps/gen/el-vrand.bin"
    [ "${RCM_PLEX:-0}" = 1 ] && [ -f "$top/deps/fem/fem-elast.raw" ] && randmat "$top/deps/fem/fem-elast-vrand.bin" -fbin "$top/deps/fem/fem-elast.raw" -permute_bs 3 -consistent && rmats="$rmats $top/deps/fem/fem-elast-vrand.bin"
  fi
  for m in $rmats; do
    for t in aijcusparse csrkcuda csrkcuda-eager; do
      case $t in
        csrkcuda-eager) ex10 "$m" csrkcuda -eager -info :mat -mat_csrk_setup eager; ex10 "$m" csrkcuda -eager-gputime -log_view_gpu_time -mat_csrk_setup eager ;;
        *) ex10 "$m" $t "" -info :mat; ex10 "$m" $t -gputime -log_view_gpu_time ;;
      esac
    done
    # a second plain run of the default types after the first of each: KSPSolve is the better of the two
    for t in aijcusparse csrkcuda; do ex10 "$m" $t -r2; done
    for t in aijcusparse csrkcuda csrkcuda-eager; do
      l=$log/ex10-$(basename "${m%.*}")-$t.log
      g=$log/ex10-$(basename "${m%.*}")-$t-gputime.log
      ksp=$(ksp_best "$l" "$log/ex10-$(basename "${m%.*}")-$t-r2.log")
      printf "%-10s %-16s %10s %6s %-22s %s\n" "$(basename "${m%.*}")" "$t" "$ksp" "$(grep -oE "iterations [0-9]+" "$l" | awk '{ s += $2 } END { print s + 0 }')" "$(awk '$1 == "MatCSRKOrder" { printf "%s ", $4 }' "$g")" "$(awk '$1 == "MatMult" { printf " %s", $22 }' "$g")"
      info_lines "$l" | grep -E "RCM|set up on the device" | sort | uniq -c | cut -c1-200
    done
  done
fi

# ksp ex45 256^3, CG + Jacobi 300 its, DMDA (apps.sh's command line), KSPSolve from a plain run, MatMult from one with
# -log_view_gpu_time
if want ex45 40; then
  for t in aijcusparse csrkcuda; do
    for g in "" -log_view_gpu_time; do
      timeout 100 "$apps/ex45" -da_grid_x 256 -da_grid_y 256 -da_grid_z 256 -ksp_type cg -pc_type jacobi -ksp_max_it 300 -ksp_rtol 1e-30 -dm_mat_type "$t" -dm_vec_type cuda -dll_append "$lib" -log_view $g >"$log/ex45-$t$g.log" 2>&1
    done
    echo "ex45 256^3 $t: KSPSolve $(field KSPSolve 3 "$log/ex45-$t.log") s, MatMult $(field MatMult 3 "$log/ex45-$t-log_view_gpu_time.log") s at $(awk '$1 == "MatMult" { r = $22 } END { print r }' "$log/ex45-$t-log_view_gpu_time.log") GPU MFlop/s"
  done
fi

# the auto rule's choices as the GPU tests check them (configure-hooks/gpu-run.sh), on one GPU: parity against aij
if want autotests 20; then
  for c in "lap3d7 -n 72:Sliced kernel over row patterns" "lap3d7 -n 40:kernel stream" "fem3d -n 72:kernel sliced" "fem3d -n 72 -permute 1:kernel sliced" "femelast3d -n 48:kernel block" "femelast3d -n 64:kernel sliced" "fem3d -n 30:kernel stream" "powerlaw -n 5000:kernel merge" "elasticity3d -n 14:kernel stream"; do
    if "$b/tests/parity" -problem ${c%%:*} -ctype csrkcuda -info >"$log/autotest.txt" 2>&1 && grep -q "${c#*:}" "$log/autotest.txt"; then echo "ok   parity auto on ${c%%:*}: ${c#*:}"
    else echo "FAIL parity auto on ${c%%:*}: expected ${c#*:}"; grep -E "set up on the device|PETSC ERROR" "$log/autotest.txt" | head -n 3 | cut -c1-200; fi
    cat "$log/autotest.txt" >>"$log/autotests.txt"
  done
fi

plex_wait
pm=
for f in $(echo "${PLEX_APPS:-fem-p1,fem-p2}" | tr , ' '); do [ -f "$top/deps/fem/$f.bin" ] && pm="$pm $top/deps/fem/$f.bin"; done
if [ -n "$pm" ] && want raw 40; then
  # shellcheck disable=SC2086
  "$log/unstructured" -bw "$bw" -nostats ${RAW_ARGS:-} $pm >"$log/raw-plex.txt" 2>&1
  cat "$log/raw-plex.txt"
fi
if [ -n "$pm" ] && want ex10 30; then
  ex10_table $pm
  mats="$mats $pm"
fi

if [ -n "$pm" ] && want orders 40; then
  printf "%-16s %-22s %s\n" matrix order "MatMult GPU MFlop/s (each stage)"
  for m in $pm; do
    ex10 "$m" csrkcuda -natural -log_view_gpu_time -mat_csrk_ordering natural
    ex10 "$m" csrkcuda -eager-gputime -log_view_gpu_time -mat_csrk_setup eager
    for o in natural eager-gputime; do
      printf "%-16s %-22s %s\n" "$(basename "${m%.*}")" "${o%-gputime}" "$(awk '$1 == "MatMult" { printf " %s", $22 }' "$log/ex10-$(basename "${m%.*}")-csrkcuda-$o.log")"
    done
  done
fi

if want repro 20; then
  m=$top/deps/fem/fem-p1.bin
  [ -f "$m" ] || m=$top/deps/gen/tet-p1.raw
  for i in 1 2 3; do ex10 "$m" csrkcuda "-repro$i" -ksp_view_solution "binary:$log/x$i.bin"; done
  if cmp "$log/x1.bin" "$log/x2.bin" && cmp "$log/x1.bin" "$log/x3.bin"; then echo "reproducible: the 3 solutions of ex10 on $(basename "$m") (csrkcuda) are bitwise identical ($(stat -c %s "$log/x1.bin") bytes)"
  else echo "NOT reproducible: the solutions of ex10 on $(basename "$m") differ"; fi
  rm -f "$log"/x?.bin*
fi

if want big 40; then
  timeout ${BIG_TIMEOUT:-150} $bench -f "$(echo $mats | tr ' ' ,)" -types aijcusparse,csrkcuda${BIG_TYPES:+,$BIG_TYPES},aijcusparse,csrkcuda -o "$log/big.csv" -info :mat >"$log/big.txt" 2>&1
  awk -F, 'NR > 1 { printf "%-16s %8d %10d %-34s %8.2f us %6.1f GFLOP/s\n", substr($1, length($1) > 16 ? length($1) - 15 : 1), $2, $3, $6, $10 * 1e6, $13 }' "$log/big.csv"
  info_lines "$log/big.txt" | grep -E "set up on the device" | sed -E 's/, block.*//' | sort | uniq -c
fi

if want rules 100; then
  m=$top/deps/matrices
  I="-info :mat"
  timeout 60 $bench -problem lap3d7,lap3d7,lap3d7,lap3d27,elasticity3d -n 50,64,80,64,30 -types aijcusparse,csrkcuda,csrkcuda:kernel=sliced,csrkcuda:kernel=stream -o "$log/rules-stencils.csv" $I >"$log/rules-stencils.txt" 2>&1
  timeout 60 $bench -problem fem3d,fem3d,femelast3d -n 50,80,48 -types aijcusparse,csrkcuda,csrkcuda:kernel=sliced,csrkcuda:kernel=stream,csrkcuda:kernel=vector,csrkcuda:kernel=block -o "$log/rules-fem3d.csv" $I >"$log/rules-fem3d.txt" 2>&1
  timeout 60 $bench -f $m/4elt.mtx,$m/fe_4elt2.mtx,$m/wing.mtx,$m/delaunay_n15.mtx,$m/rgg_n_2_15_s0.mtx,$m/astro-ph.mtx,$m/bayer10.mtx -types aijcusparse,csrkcuda -o "$log/rules-files.csv" $I >"$log/rules-files.txt" 2>&1
  for f in "$log"/rules-*.csv; do
    echo "== $(basename "$f")"
    awk -F, 'NR > 1 { printf "%-16s %8d %-34s %8.2f\n", substr($1, length($1) > 16 ? length($1) - 15 : 1), $2, $6, $10 * 1e6 }' "$f"
  done
  info_lines "$log"/rules-*.txt | grep -E "set up on the device" | sed -E 's/\(.*//' | sort | uniq -c
fi

if want ncu 45; then
  f=$top/deps/gen/tet-p1.raw
  for v in "row w8 b128 u16 1sum" "cusparse CSR_ALG1" "sliced (32-row slices)" "sliced, 4 slices a warp"; do
    timeout 60 ncu --clock-control none --cache-control none --launch-skip 25 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section Occupancy --section LaunchStats \
      "$log/unstructured" -bw "$bw" -reps 10 -only "$v" "$f" >"$log/ncu-$(echo "$v" | tr -c 'A-Za-z0-9\n' _).txt" 2>&1
  done
  for g in "$log"/ncu-*.txt; do
    echo "== $(basename "$g")"
    grep -E "DRAM Throughput|L1/TEX Hit Rate|L2 Hit Rate|Duration|Achieved Occupancy|Waves Per SM|Warp Cycles Per Issued" "$g" | head -n 12
  done
fi

# insitu: Nsight Compute on the products inside ksp ex10's CG (generated P1, 200 iterations, the caches as the solve
# leaves them): the duration of cuSPARSE's kernel and of csrkcuda's sliced kernel in the user's numbering
if want insitu 60; then
  for t in aijcusparse csrkcuda; do
    timeout 100 ncu --clock-control none --cache-control none --kernel-name regex:"CSRKSliced|csrmv|spmv|SpMV" --launch-skip 150 --launch-count 3 --metrics gpu__time_duration.sum,dram__bytes_read.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active \
      "$apps/ex10" -f "$top/deps/gen/tet-p1.raw" -ksp_type cg -pc_type jacobi -ksp_max_it 200 -ksp_rtol 1e-30 -ksp_divtol 1e300 -rhs random -vec_type cuda -dll_append "$lib" -mat_type $t -mat_csrk_ordering natural >"$log/insitu-$t.txt" 2>&1
    echo "== $t in ex10's CG: $(awk '/gpu__time_duration.sum/ { printf " %s us", $NF }' "$log/insitu-$t.txt")"
  done
fi

if [ -n "$testjob" ]; then
  stamp "waiting for the tests on GPU 1"
  wait "$testjob"
fi
export CUDA_VISIBLE_DEVICES=
unset CUDA_VISIBLE_DEVICES
if case $phases in *" tests "*) true ;; *) false ;; esac; then
  if [ -z "$testjob" ] && want tests 120; then
    OUT=$log/tests bash configure-hooks/gpu-run.sh test-kernels >"$log/tests-kernels.txt" 2>&1
    want tests 60 && SANITIZE_KERNELS=${SANITIZE_KERNELS:-vector sliced} OUT=$log/tests bash configure-hooks/gpu-run.sh sanitize >"$log/tests-sanitize.txt" 2>&1
  fi
  want tests 30 && OUT=$log/tests bash configure-hooks/gpu-run.sh test-mpi >"$log/tests-mpi.txt" 2>&1
  for f in "$log"/tests-*.txt; do
    echo "== $(basename "$f"): $(grep -c '^ok' "$f") ok, $(grep -c '^FAIL' "$f") FAIL"
    grep -E "^FAIL|gpu tests:" "$f" | head -n 20
  done
fi

[ -n "${packjob:-}" ] && wait "$packjob" && cat "$log/pack.txt"
ls -la "$out"
