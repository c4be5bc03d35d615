#!/usr/bin/env bash
# docs/experiments/ex10rcm.sh: on a randomly permuted matrix, does csrk with its defaults beat aij run on PETSc's own
# whole-problem RCM permutation, in MatMult and end-to-end? PETSc's ksp ex10 (compiled unmodified from PETSc's
# examples) reads a PETSc binary matrix and right-hand side; -permute rcm computes MatGetOrdering(RCM) of the matrix and
# solves P A P^T (MatPermute, VecPermute) instead. Each matrix is written randomly permuted by tutorials/permbin.c; then, in
# ROUNDS interleaved rounds, on each rank count of NPS and for each iteration count of ITS (CG + Jacobi, -ksp_rtol
# 1e-30 and -ksp_convergence_test skip: exactly that many iterations, where CG's recursive residual on these matrices
# falls by 1e-30 in about 100), the configurations below, and a table of the best of the rounds (docs/design.md,
# "Against PETSc's whole-problem RCM").
#
#   bash docs/experiments/ex10rcm.sh [OUT]      (OUT default build/ex10rcm: binaries, logs, runs.csv, table.md)
#
# Environment: ROUNDS=3, NPS="1 2", ITS="60 500", LAP_N=64 (the 7- and 27-point Laplacians, n^3 rows), MATRICES (folder
# of the Matrix Market files, default ../shared/matrices beside the repository), FILES="4elt wing fe_4elt2
# delaunay_n15" (not bayer10: unsymmetric and indefinite, CG stops after 2 iterations), QUIET_WAIT=60 / QUIET_BUSY=10 (each run first waits, at most QUIET_WAIT s, for a second in which the
# CPUs were at most QUIET_BUSY % busy; the CSV keeps the busy share seen). DIAG=1 adds two configurations that
# take the matrix in ex10's RCM order and build csrk's structure at the first product: in that order (csrk-on-rcm: no
# vector permutation in the products) and renumbered by csrk's own RCM (csrk-rcm-on-rcm: its two vector permutations
# per product over an already banded matrix); one rank only: on 2 ranks ex10 -permute with -mat_type csrk stops in
# MatPermute_MPIAIJ (a new nonzero caused a malloc), where aij runs.
#
# ex10 with -f solves its system twice, each loaded afresh ("Load System 0/1", "KSPSolve 0/1" stages): the second is
# read (the first warms the code and the page tables). Times from -log_view, slowest rank: MatMult and KSPSolve in the
# stage "KSPSolve 1" (a csrk build happens inside MatMult there), MatGetOrdering and the permutation (the stage "Load
# System 1" less MatLoad and VecLoad: MatGetOrdering, MatPermute, VecPermute) in "Load System 1".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/build/ex10rcm}
rounds=${ROUNDS:-3}
nps=${NPS:-"1 2"}
itss=${ITS:-"60 500"}
lapn=${LAP_N:-64}
matrices=${MATRICES:-$top/../shared/matrices}
files=${FILES-"4elt wing fe_4elt2 delaunay_n15"}
lib=$top/lib/libcsrk.so
examples=${PETSC_EXAMPLES:-/usr/share/petsc/3.18/share/petsc/examples}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mpiexec=${MPIEXEC:-mpiexec}
mkdir -p "$out" || exit 1
[ -f "$lib" ] || { echo "ex10rcm: $lib not found (make)"; exit 1; }

cflags=$(pkg-config --cflags PETSc) libs=$(pkg-config --libs PETSc)
rpath=$(for w in $libs; do case $w in -L*) printf -- '-Wl,-rpath,%s ' "${w#-L}" ;; esac; done)
# shellcheck disable=SC2086
{
  [ -x "$out/ex10" ] || mpicc -O2 $cflags "$examples/src/ksp/ksp/tutorials/ex10.c" -o "$out/ex10" $libs $rpath -lm || exit 1
}

# the randomly permuted binaries (seed 1), made once
mats=()
mk() { # mk NAME PERMBIN-ARGS...
  local name=$1
  shift
  [ -f "$out/$name.bin" ] || "$top/build/tutorials/permbin" "$@" -permute 1 -o "$out/$name.bin" || { echo "ex10rcm: permbin $name failed"; return; }
  mats+=("$name")
}
mk "lap3d7-$lapn" -problem lap3d7 -n "$lapn"
mk "lap3d27-$lapn" -problem lap3d27 -n "$lapn"
for f in $files; do
  if [ -f "$matrices/$f.mtx" ]; then mk "$f" -f "$matrices/$f.mtx"; else echo "ex10rcm: $matrices/$f.mtx not found, skipped"; fi
done

# the configurations: aij on ex10's RCM permutation, aij on the permuted matrix as it is, and csrk on it: the
# defaults (set-up budget, auto ordering), the structure built at the first product, and the orderings csrk offers
names=(aij-rcm aij csrk csrk-rcm csrk-eager csrk-eager-rcm csrk-eager-bandk)
opts=("-permute rcm" "" "-mat_type csrk" "-mat_type csrk -mat_csrk_ordering rcm" "-mat_type csrk -mat_csrk_setup eager" \
  "-mat_type csrk -mat_csrk_setup eager -mat_csrk_ordering rcm" "-mat_type csrk -mat_csrk_setup eager -mat_csrk_ordering bandk")
if [ "${DIAG:-0}" = 1 ]; then
  names+=(csrk-on-rcm csrk-rcm-on-rcm)
  opts+=("-permute rcm -mat_type csrk -mat_csrk_setup eager -mat_csrk_ordering natural" "-permute rcm -mat_type csrk -mat_csrk_setup eager -mat_csrk_ordering rcm")
fi

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
    [ "$busy" -le "${QUIET_BUSY:-10}" ] || [ $((SECONDS - t0)) -ge "${QUIET_WAIT:-60}" ] && return
  done
}
# ev STAGE EVENT LOG: the slowest rank's time of an event in one stage of -log_view (0 when absent)
ev() {
  awk -v st="$1" -v e="$2" '/^--- Event Stage/ { n = split($0, w, ": "); on = (w[n] == st) }
    on && $1 == e && NF > 5 { t += $4 } END { print t + 0 }' "$3"
}
# stage STAGE LOG: the time of a stage (Summary of Stages)
stage() { awk -v st="$1" '$1 ~ /^[0-9]+:$/ && index($0, " " st ": ") { sub(".*" st ": *", ""); split($0, a, " "); print a[1]; exit }' "$2"; }

csv=$out/runs.csv
[ -f "$csv" ] || echo "matrix,np,max_it,config,round,its,ksp_s,mult_s,ordering_s,perm_s,build_s,busy" >"$csv"
for ((r = 1; r <= rounds; r++)); do
  echo "round $r: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  for m in "${mats[@]}"; do
    for np in $nps; do
      for its in $itss; do
        for i in "${!names[@]}"; do
          c=${names[$i]} log=$out/$m-np$np-$its-${names[$i]}-$r.log
          [[ $c == *-on-rcm && $np != 1 ]] && continue
          # shellcheck disable=SC2206
          extra=(${opts[$i]})
          [[ $c == csrk* ]] && extra=(-dll_append "$lib" "${extra[@]}")
          quiet
          $mpiexec -n "$np" --bind-to core "$out/ex10" -f "$out/$m.bin" -ksp_type cg -pc_type jacobi -ksp_max_it "$its" -ksp_rtol 1e-30 -ksp_convergence_test skip \
            "${extra[@]}" -log_view >"$log" 2>&1 || { echo "ex10rcm: $m np $np $c failed, see $log"; continue; }
          done_its=$(grep "Number of iterations" "$log" | tail -n 1 | awk '{ print $NF }')
          load=$(stage "Load System 1" "$log")
          perm=$(awk -v s="$load" -v l="$(ev "Load System 1" MatLoad "$log")" -v v="$(ev "Load System 1" VecLoad "$log")" 'BEGIN { print s - l - v }')
          echo "$m,$np,$its,$c,$r,$done_its,$(ev "KSPSolve 1" KSPSolve "$log"),$(ev "KSPSolve 1" MatMult "$log"),$(ev "Load System 1" MatGetOrdering "$log"),$perm,$(ev "KSPSolve 1" MatCSRKBuild "$log"),$busy" >>"$csv"
        done
      done
    done
  done
done

# best of the rounds of each quantity, as markdown: times in ms, and each configuration against aij-rcm
python3 - "$csv" "${names[*]}" <<'EOF' | tee "$out/table.md"
import csv, sys, collections
names = sys.argv[2].split()
best = collections.OrderedDict()
for r in csv.DictReader(open(sys.argv[1])):
    k = (r["matrix"], int(r["np"]), int(r["max_it"]))
    b = best.setdefault(k, {}).setdefault(r["config"], {})
    perm = float(r["perm_s"]) if r["config"] in ("aij-rcm", "csrk-on-rcm", "csrk-rcm-on-rcm") else 0.0
    for q, v in (("mult", float(r["mult_s"])), ("ksp", float(r["ksp_s"])), ("order", float(r["ordering_s"])), ("perm", perm),
                 ("total", float(r["ksp_s"]) + perm), ("build", float(r["build_s"]))):
        b[q] = min(b.get(q, 1e30), v)
    b["its"] = r["its"]
def ratio(ref, c, n, q):  # * marks a run that did not take aij-rcm's iterations
    return f"{ref[q] / c[n][q]:.2f}" + ("*" if c[n]["its"] != ref["its"] else "") if n in c else "-"
print("MatMult in KSPSolve, ms (aij-rcm) and aij-rcm time / this configuration's time (> 1: faster than aij-rcm)\n")
print("| matrix | ranks | its | aij-rcm ms | " + " | ".join(names[1:]) + " |")
print("| --- | --- | --- | --- | " + " | ".join("---" for _ in names[1:]) + " |")
for (m, np, its), c in best.items():
    ref = c["aij-rcm"]
    print(f"| {m} | {np} | {its} | {1e3 * ref['mult']:.1f} | " + " | ".join(ratio(ref, c, n, "mult") for n in names[1:]) + " |")
print("\nEnd to end, KSPSolve plus, for ex10's RCM, its permutation (MatGetOrdering + MatPermute + VecPermute; csrk's build and\n"
      "ordering are inside KSPSolve), ms (aij-rcm: total = solve + permutation (of which MatGetOrdering)) and aij-rcm total / this\n"
      "configuration's total\n")
print("| matrix | ranks | its | aij-rcm ms | " + " | ".join(names[1:]) + " |")
print("| --- | --- | --- | --- | " + " | ".join("---" for _ in names[1:]) + " |")
for (m, np, its), c in best.items():
    ref = c["aij-rcm"]
    print(f"| {m} | {np} | {its} | {1e3 * ref['total']:.0f} = {1e3 * ref['ksp']:.0f} + {1e3 * ref['perm']:.0f} ({1e3 * ref['order']:.0f}) | "
          + " | ".join(ratio(ref, c, n, "total") for n in names[1:]) + " |")
EOF
