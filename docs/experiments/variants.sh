#!/usr/bin/env bash
# docs/experiments/variants.sh: does each CPU variant of csrk earn its place end-to-end, run the way PETSc users run
# (NP MPI ranks, one thread each)? Runs PETSc's own tutorials (ksp ex45, snes ex5, compiled unmodified from PETSc's
# examples) with -dll_append lib/libcsrk.so -dm_mat_type csrk -log_view, and tutorials/bench on the elasticity
# (block size 3) and 27-point problems, natural and randomly permuted, once per variant switched against the default,
# in ROUNDS interleaved rounds; prints the best time of each configuration and writes every run to OUT/runs.csv.
# Also the equal-cores comparison behind the thread default: ex45 on NP ranks against one rank of NP threads.
#
#   bash docs/experiments/variants.sh [OUT]        (OUT default build/variants; ROUNDS=3 NP=2 SKIP="bench ex5 ..." )
#
# Sizes (environment): EX45_N=100 and EX45_ITS=100 (grid points per direction, CG + Jacobi iterations), EX5_N=1024
# and EX5_ITS=50 (Bratu, Newton with 3 steps of that many CG + Jacobi iterations), ELAST_N=40, LAP27_N=64 (bench, CG +
# Jacobi to 1e-6). On a machine shared with other work, every run first waits (at most QUIET_WAIT=300 s) for a second
# in which the CPUs were at most QUIET_BUSY=10 % busy, and the CSV keeps the busy share seen last; take more rounds too.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/build/variants}
rounds=${ROUNDS:-3}
np=${NP:-2}
skip=" ${SKIP:-} "
lib=$top/lib/libcsrk.so
examples=${PETSC_EXAMPLES:-/usr/share/petsc/3.18/share/petsc/examples}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mpiexec=${MPIEXEC:-mpiexec}
mkdir -p "$out" || exit 1
csv=$out/runs.csv
[ -f "$csv" ] || echo "program,problem,config,round,solve_s,mult_s,build_s,setup_s,its,busy" >"$csv"
[ -f "$lib" ] || { echo "variants: $lib not found (make)"; exit 1; }

# the PETSc tutorials, compiled as tests/petsc-tutorials.sh does
cflags=$(pkg-config --cflags PETSc) libs=$(pkg-config --libs PETSc)
rpath=$(for w in $libs; do case $w in -L*) printf -- '-Wl,-rpath,%s ' "${w#-L}" ;; esac; done)
for e in ksp/ksp/tutorials/ex45 snes/tutorials/ex5; do
  # shellcheck disable=SC2086
  [ -x "$out/$(basename $e)" ] || mpicc -O2 $cflags "$examples/src/$e.c" -o "$out/$(basename $e)" $libs $rpath -lm || exit 1
done

# the variants, as PETSc options (ex45, ex5) and as bench -types entries
names=(aij sell csrk offsets-off patterns-off slices-off nodes-off k3)
opts=("" "-dm_mat_type sell" "" "-mat_csrk_compress_indices 0" "-mat_csrk_row_patterns 0" "-mat_csrk_row_slices 0" \
  "-mat_csrk_row_nodes 0" "-mat_csrk_k 3")
types="aij,sell,csrk,csrk:compress=0,csrk:patterns=0,csrk:slices=0,csrk:nodes=0,csrk:k=3"

# quiet: waits for a second in which the CPUs were at most QUIET_BUSY % busy (others' work), at most QUIET_WAIT s;
# sets busy to the share seen last
busy=0
quiet() {
  local t0=$SECONDS a b
  while :; do
    read -r -a a </proc/stat
    sleep 1
    read -r -a b </proc/stat
    local tot=0 idle=$((b[4] - a[4] + b[5] - a[5]))
    for k in 1 2 3 4 5 6 7 8; do tot=$((tot + b[k] - a[k])); done
    busy=$(((tot - idle) * 100 / (tot > 0 ? tot : 1)))
    [ "$busy" -le "${QUIET_BUSY:-10}" ] || [ $((SECONDS - t0)) -ge "${QUIET_WAIT:-300}" ] && return
  done
}

# event EVENT LOG: the slowest rank's time of a -log_view event (0 when absent)
event() { awk -v e="$1" '$1 == e && NF > 5 { t = $4 } END { print t ? t : 0 }' "$2"; }

# tutorial PROGRAM PROBLEM CONFIG ROUND OPTIONS...: one run on NP ranks bound to cores (RANKS=1 THREADS=n: one rank
# of n threads, unbound), its -log_view times into the CSV
tutorial() {
  local prog=$1 problem=$2 config=$3 round=$4 log solve its
  shift 4
  log=$out/$prog-$config-$round.log
  quiet
  # shellcheck disable=SC2086
  if [ -n "${THREADS:-}" ]; then
    OMP_NUM_THREADS=$THREADS $mpiexec -n 1 --bind-to none "$out/$prog" "$@" -log_view >"$log" 2>&1
  else
    $mpiexec -n "$np" --bind-to core "$out/$prog" "$@" -log_view >"$log" 2>&1
  fi || { echo "variants: $prog $config failed, see $log"; return; }
  if [ "$prog" = ex5 ]; then solve=$(event SNESSolve "$log"); else solve=$(event KSPSolve "$log"); fi
  its=$(grep -oE "iterations [0-9]+" "$log" | awk '{ s += $2 } END { print s + 0 }')
  echo "$prog,$problem,$config,$round,$solve,$(event MatMult "$log"),$(event MatCSRKBuild "$log"),,$its,$busy" >>"$csv"
}

ex45opt=(-da_grid_x "${EX45_N:-100}" -da_grid_y "${EX45_N:-100}" -da_grid_z "${EX45_N:-100}" -ksp_type cg -pc_type jacobi -ksp_max_it "${EX45_ITS:-100}" -ksp_rtol 1e-30 -ksp_converged_reason)
ex5opt=(-da_grid_x "${EX5_N:-1024}" -da_grid_y "${EX5_N:-1024}" -ksp_type cg -pc_type jacobi -ksp_max_it "${EX5_ITS:-50}" -snes_max_it 3 -snes_max_linear_solve_fail 10 -ksp_converged_reason -snes_converged_reason)
for ((r = 1; r <= rounds; r++)); do
  echo "round $r: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  for i in "${!names[@]}"; do
    c=${names[$i]}
    plug=()
    case $c in aij | sell) ;; *) plug=(-dll_append "$lib" -dm_mat_type csrk) ;; esac
    # shellcheck disable=SC2206
    extra=(${opts[$i]})
    [[ $skip == *" ex45 "* ]] || tutorial ex45 "7-point ${EX45_N:-100}^3" "$c" "$r" "${ex45opt[@]}" "${plug[@]}" "${extra[@]}"
    [[ $skip == *" ex5 "* ]] || tutorial ex5 "Bratu ${EX5_N:-1024}^2" "$c" "$r" "${ex5opt[@]}" "${plug[@]}" "${extra[@]}"
  done
  # equal cores: NP ranks of one thread against one rank of NP threads
  if [[ $skip != *" threads "* ]]; then
    THREADS=$np tutorial ex45 "7-point ${EX45_N:-100}^3" "csrk-1rank-${np}threads" "$r" "${ex45opt[@]}" -dll_append "$lib" -dm_mat_type csrk
    THREADS=1 tutorial ex45 "7-point ${EX45_N:-100}^3" "aij-1rank" "$r" "${ex45opt[@]}"
  fi
  if [[ $skip != *" bench "* ]]; then
    for p in "elasticity3d ${ELAST_N:-40} 0" "lap3d27 ${LAP27_N:-64} 0" "elasticity3d ${ELAST_N:-40} 1" "lap3d27 ${LAP27_N:-64} 1"; do
      read -r prob n perm <<<"$p"
      b=$out/bench-$prob-$perm-$r.csv
      rm -f "$b"
      args=(-problem "$prob" -n "$n" -types "$types" -reps 20 -warmup 3 -stream 0 -o "$b")
      [ "$perm" = 1 ] && args+=(-permute 1)
      quiet
      $mpiexec -n "$np" --bind-to core "$top/build/tutorials/bench" "${args[@]}" >"$out/bench-$prob-$perm-$r.log" 2>&1 || echo "variants: bench $prob failed"
      # the CSV's types in the order of names[] (aij, the reference, first)
      awk -F, -v prob="$prob-$perm" -v r="$r" -v busy="$busy" -v names="${names[*]}" 'BEGIN { split(names, nm, " ") }
        NR > 1 { k++; print "bench," prob "," nm[k] "," r "," $20 "," $10 ",," $7 "," $19 "," busy }' "$b" >>"$csv"
    done
  fi
done

# best of the rounds: solve time (KSPSolve, SNESSolve; bench: set-up + CG), and MatMult
python3 - "$csv" <<'EOF'
import csv, sys, collections
best = collections.OrderedDict()
for r in csv.DictReader(open(sys.argv[1])):
    key = (r["program"], r["problem"], r["config"])
    solve = float(r["solve_s"] or 0) + float(r["setup_s"] or 0)
    mult = float(r["mult_s"] or 0)
    b = best.setdefault(key, [1e30, 1e30])
    b[0], b[1] = min(b[0], solve), min(b[1], mult)
for (prog, prob, conf), (s, m) in best.items():
    ref = best.get((prog, prob, "csrk"), [s, m])
    print(f"{prog:6s} {prob:22s} {conf:24s} solve {s:9.4f} s ({ref[0] / s:5.3f} x csrk)   MatMult {m:9.5f} s ({ref[1] / m:5.3f} x csrk)")
EOF
