#!/usr/bin/env bash
# The GPU measurements of issue #47 in one command on the GPU machine (repo root, $OUT set; deps/ carried as
# configure-hooks/gpu-run.sh needs it, deps/matrices with the shared Matrix Market files, and deps/pcache/ with an
# installed PETSc packed by an earlier call, if any):
#
#   bash docs/experiments/unstructured.sh [raw] [plex] [rules] [big] [ncu] [pack]
#
#   raw:   docs/experiments/unstructured.cu on generated tetrahedral P1 (1.26 M rows) and P2 (1.37 M rows) matrices, in
#          their numbering and a random one (copy bandwidth first), run while PETSc builds
#   plex:  the same on snes ex13's P1 and P2 (DMPlex's numbering, configure-hooks/apps.sh) and the generated bs-3 matrix
#   rules: tutorials/bench with each kernel forced against auto on the matrices behind the auto rule's constants
#   big:   tutorials/bench, auto and forced kernels against aijcusparse on the large matrices
#   ncu:   Nsight Compute on the row kernel, cuSPARSE and the sliced kernel (generated P1): DRAM throughput, cache hit
#          rates, stalls
#   pack:  the installed PETSc (stripped, with the tutorials apps.sh builds) as $OUT/petsc-cuda.tar.xz.NN, which later
#          calls carry as deps/pcache/ instead of building PETSc again
# Logs: $OUT/unstructured-logs.tar.gz; a summary on stdout. DEADLINE (s): no phase starts after it.
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
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "repo root: $top; commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null); $(date -u)"
command -v ncu compute-sanitizer xz | tr '\n' ' '; echo

# an installed PETSc carried from an earlier call
if ls "$top"/deps/pcache/petsc-cuda.tar.xz.* >/dev/null 2>&1 && [ ! -f "$top/deps/petsc-3.26.1-cuda/lib/pkgconfig/PETSc.pc" ]; then
  cat "$top"/deps/pcache/petsc-cuda.tar.xz.* | xz -d -T8 | tar -C "$top" -xf - && stamp "PETSc unpacked from deps/pcache"
  old=$(cat "$top/deps/pcache/root" 2>/dev/null)
  [ -n "$old" ] && [ "$old" != "$top" ] && [ ! -e "$old" ] && mkdir -p "$(dirname "$old")" && ln -s "$top" "$old" && echo "linked $old -> $top"
fi
echo "$top" >"$log/root"

# the stand-alone programs need no PETSc
nvcc -O3 -arch=sm_90 -o "$log/copybw" configure-hooks/copybw.cu && "$log/copybw" | tee "$log/copybw.txt"
bw=$(grep -oE "[0-9.]+ GB/s" "$log/copybw.txt" | head -n 1 | cut -d' ' -f1)
nvcc -O3 -std=c++17 -arch=sm_90 -o "$log/unstructured" docs/experiments/unstructured.cu -lcusparse || exit 1
mkdir -p "$top/deps/gen"
( "$log/unstructured" -gen p1 108 -write "$top/deps/gen/tet-p1.raw" -gen p2 56 -write "$top/deps/gen/tet-p2.raw" >"$log/gen.txt" 2>&1
  case $phases in *" raw "*) "$log/unstructured" -bw "$bw" -rand "$top/deps/gen/tet-p1.raw" "$top/deps/gen/tet-p2.raw" >"$log/raw-gen.txt" 2>&1 ;; esac ) &
rawjob=$!

export OUT=$out
stamp "PETSc and plugin build"
nice -n 5 bash configure-hooks/gpu-run.sh build >"$log/build.txt" 2>&1
cat "$log/build.txt"
wait "$rawjob"
stamp "raw kernels on the generated matrices"
cat "$log/gen.txt" "$log/raw-gen.txt" 2>/dev/null
export PETSC_DIR=$top/deps/petsc-3.26.1-cuda PETSC_ARCH= PETSC_OPTIONS="-use_gpu_aware_mpi 0" BUILD=$top/build-gpu
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
b=$top/build-gpu
bench="$b/tutorials/bench -stream 0 -solve 0 -reps 60 -warmup 5"
info_lines() { grep -hE "CSR-k set up on the device|Gathers of x|GPU plan:|Row patterns|Block kernel" "$@" | sed -E 's/^\[[0-9]+\] //' | cut -c1-300; }

if want pack 0; then
  ( p=deps/petsc-3.26.1-cuda
    cd "$top" || exit
    strip --strip-unneeded "$p"/lib/libpetsc.so.* 2>/dev/null
    keep=$(ls -d $p/share/petsc/examples/src/ksp/ksp/tutorials/{ex2,ex10,ex45,ex56,bench_kspsolve}.c $p/share/petsc/examples/src/snes/tutorials/{ex5,ex13,ex17,ex19}.c $p/share/petsc/datafiles/meshes/mesh-3d-box-innersphere.msh 2>/dev/null)
    tar -cf - --exclude="$p/share/petsc/examples" --exclude="$p/share/petsc/datafiles" "$p" $keep | nice -n 10 xz -T8 -6 >"$log/petsc.tar.xz"
    sz=$(stat -c %s "$log/petsc.tar.xz")
    [ "$sz" -lt $((56 * 1048576)) ] && split -b 15m -d "$log/petsc.tar.xz" "$out/petsc-cuda.tar.xz."
    rm -f "$log/petsc.tar.xz"
    echo "PETSc pack: $sz bytes ($(du -sh $p | cut -f1) installed)" >"$log/pack.txt" ) &
  packjob=$!
fi

if want plex 150; then
  # snes ex13's P1 and P2 in DMPlex's numbering (apps.sh makes them with every core), and the generated bs-3 matrix
  APPS=fem-p1,fem-p2,gen-femelast3d REPS=1 GPUTIME=0 TYPES=aijcusparse FEM_ITS=1 FEM_TIMEOUT=150 FEM_DIR=$top/deps/fem OUT=$top/deps/apps bash configure-hooks/apps.sh gpu 1 >"$log/apps-make.txt" 2>&1
  cp -r "$top/deps/apps/apps-logs" "$log/" 2>/dev/null
  grep -E "made|could not" "$log/apps-make.txt"
  "$log/unstructured" -bw "$bw" -rand "$top/deps/fem/fem-p1.bin" "$top/deps/fem/fem-p2.bin" >"$log/raw-plex.txt" 2>&1
  "$log/unstructured" -bw "$bw" "$top/deps/fem/gen-femelast3d.bin" >>"$log/raw-plex.txt" 2>&1
  cat "$log/raw-plex.txt"
fi

if want rules 100; then
  m=$top/deps/matrices
  I="-info :mat"
  # regular rows with row patterns, by size (the rows a multiprocessor from which the sliced kernel fills the device)
  timeout 60 $bench -problem lap3d7,lap3d7,lap3d7,lap3d7,lap3d27,lap3d27,elasticity3d,elasticity3d -n 40,50,64,80,40,64,14,30 -types aijcusparse,csrkcuda,csrkcuda:kernel=sliced,csrkcuda:kernel=stream,csrkcuda:kernel=vector:sr=8:ssr=2,csrkcuda:kernel=scalar:sr=8:ssr=16 -o "$log/rules-stencils.csv" $I >"$log/rules-stencils.txt" 2>&1
  # unstructured rows: the shared meshes and fem3d by size, natural and renumbered
  timeout 60 $bench -f $m/4elt.mtx,$m/fe_4elt2.mtx,$m/wing.mtx,$m/delaunay_n15.mtx,$m/rgg_n_2_15_s0.mtx,$m/wave.mtx.gz -types aijcusparse,csrkcuda,csrkcuda:kernel=sliced,csrkcuda:kernel=stream,csrkcuda:kernel=vector:sr=8:ssr=2,csrkcuda:kernel=vector:sr=8:ssr=8,csrkcuda:kernel=scalar:sr=8:ssr=16 -o "$log/rules-meshes.csv" $I >"$log/rules-meshes.txt" 2>&1
  timeout 60 $bench -problem fem3d,fem3d,fem3d -n 30,50,80 -types aijcusparse,csrkcuda,csrkcuda:kernel=sliced,csrkcuda:kernel=stream,csrkcuda:kernel=vector:sr=8:ssr=2,csrkcuda:kernel=vector:sr=8:ssr=8,csrkcuda:kernel=vector:sr=8:ssr=32 -o "$log/rules-fem3d.csv" $I >"$log/rules-fem3d.txt" 2>&1
  timeout 40 $bench -problem fem3d -n 80 -permute 1 -types aijcusparse,csrkcuda,csrkcuda:kernel=sliced,csrkcuda:kernel=stream,csrkcuda:kernel=vector:sr=8:ssr=2,csrkcuda:kernel=vector:sr=8:ssr=8 -o "$log/rules-fem3d-perm.csv" $I >"$log/rules-fem3d-perm.txt" 2>&1
  # irregular rows: power-law by size, the graphs
  timeout 60 $bench -problem powerlaw,powerlaw,powerlaw -n 5000,100000,1000000 -types aijcusparse,csrkcuda,csrkcuda:kernel=merge,csrkcuda:kernel=vector:sr=8:ssr=2,csrkcuda:kernel=stream -o "$log/rules-irregular.csv" $I >"$log/rules-irregular.txt" 2>&1
  timeout 40 $bench -f $m/astro-ph.mtx,$m/ca-CondMat.mtx.gz,$m/bayer10.mtx,$m/PGPgiantcompo.mtx.gz,$m/arrow.mtx.gz -types aijcusparse,csrkcuda,csrkcuda:kernel=merge,csrkcuda:kernel=vector:sr=8:ssr=2,csrkcuda:kernel=stream -o "$log/rules-graphs.csv" $I >"$log/rules-graphs.txt" 2>&1
  for f in "$log"/rules-*.csv; do
    echo "== $(basename "$f")"
    awk -F, 'NR > 1 { printf "%-14s %8d %-34s %8.2f\n", substr($1, length($1) > 14 ? length($1) - 13 : 1), $2, $6, $10 * 1e6 }' "$f"
  done
  info_lines "$log"/rules-*.txt | sort | uniq -c | sort -rn | head -n 30
fi

if want big 60; then
  fs=$top/deps/gen/tet-p1.raw,$top/deps/gen/tet-p2.raw
  [ -f "$top/deps/fem/fem-p1.bin" ] && fs=$fs,$top/deps/fem/fem-p1.bin,$top/deps/fem/fem-p2.bin,$top/deps/fem/gen-femelast3d.bin
  timeout 120 $bench -f "$fs" -types aijcusparse,csrkcuda,csrkcuda:kernel=vector:sr=8:ssr=2,csrkcuda:kernel=vector:sr=8:ssr=32,csrkcuda:kernel=sliced,csrkcuda:kernel=stream,aijcusparse,csrkcuda -o "$log/big.csv" -info :mat >"$log/big.txt" 2>&1
  awk -F, 'NR > 1 { printf "%-16s %8d %-34s %8.2f us %6.1f GFLOP/s\n", substr($1, length($1) > 16 ? length($1) - 15 : 1), $2, $6, $10 * 1e6, $13 }' "$log/big.csv"
  info_lines "$log/big.txt" | sort | uniq -c | head -n 20
fi

if want ncu 45; then
  f=$top/deps/gen/tet-p1.raw
  for v in "row w8 b128 u16 2sums" "row w8 b128 u256 2sums" "cusparse CSR_ALG1" "sliced (32-row slices)"; do
    timeout 60 ncu --clock-control none --cache-control none --launch-skip 25 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section Occupancy \
      "$log/unstructured" -bw "$bw" -reps 10 -only "$v" "$f" >"$log/ncu-$(echo "$v" | tr -c 'A-Za-z0-9\n' _).txt" 2>&1
  done
  for g in "$log"/ncu-*.txt; do
    echo "== $(basename "$g")"
    grep -E "DRAM Throughput|Memory Throughput|L1/TEX Hit Rate|L2 Hit Rate|Duration|Achieved Occupancy|Mem Busy|Max Bandwidth|Warp Cycles Per Issued|Stall|stall" "$g" | head -n 24
  done
fi

[ -n "${packjob:-}" ] && wait "$packjob" && cat "$log/pack.txt"
ls -la "$out"
