#!/usr/bin/env bash
# tutorials/apps.sh (make apps): PETSc's own tutorials, unmodified, timed end to end with -dm_mat_type aij, sell and
# csrk on the same MPI ranks, one OpenMP thread each, the way PETSc users run them. Prints the Markdown table of
# README.md (best of APPS_REPS runs of each type, the runs of the types interleaved) and writes it as CSV.
#
#   make apps                                     # builds ksp ex45, snes ex5 and ex19, then runs this script
#   APPS_NP=4 APPS_REPS=5 make apps               # another rank count, more runs
#
# Environment: APPS_DIR (the built tutorials: ksp-ex45, snes-ex5, snes-ex19), CSRK_LIB (libcsrk.so), MPIEXEC,
# APPS_NP (ranks, default 2), APPS_THREADS (OpenMP threads per rank, default 1), APPS_REPS (default 3),
# APPS_TYPES (default "aij sell csrk"; the first is the reference of the speedups), APPS_ONLY (regex on the app
# names: ex45, ex5, ex19), APPS_EXTRA (options added to every run, e.g. "-dm_vec_type cuda" for GPU types),
# APPS_EX45_N (grid points per direction, default 100), APPS_EX45_ITS (200), APPS_EX5_N (512), APPS_EX19_N (257),
# APPS_CSV (default $APPS_DIR/apps.csv, overwritten), APPS_LOGS (default $APPS_DIR/logs),
# APPS_IDLE (on a shared machine: before each run, wait until the CPUs were at least this many percent idle for 3 s
# in a row, at most APPS_IDLE_WAIT s, default 600; the table says how many runs started on a busy machine).
# The solve time is the KSPSolve or SNESSolve line of each run's -log_view (maximum over the ranks); it includes the
# matrix assembly and, for csrk, the structure build (ex45 assembles inside KSPSolve; ex5 and ex19 inside SNESSolve).
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
APPS_DIR=${APPS_DIR:-$TOP/build/apps}
CSRK_LIB=${CSRK_LIB:-$TOP/lib/libcsrk.so}
MPIEXEC=${MPIEXEC:-mpiexec}
NP=${APPS_NP:-2}
REPS=${APPS_REPS:-3}
read -r -a TYPES <<<"${APPS_TYPES:-aij sell csrk}"
CSV=${APPS_CSV:-$APPS_DIR/apps.csv}
LOGS=${APPS_LOGS:-$APPS_DIR/logs}
export OMP_NUM_THREADS=${APPS_THREADS:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$LOGS"
[ -f "$CSRK_LIB" ] || { echo "apps: $CSRK_LIB not found (run make first)" >&2; exit 1; }

# name | executable | solve event | options (the matrix type is added)
N45=${APPS_EX45_N:-100} I45=${APPS_EX45_ITS:-200} N5=${APPS_EX5_N:-512} N19=${APPS_EX19_N:-257}
REF=${TYPES[0]}
CSRKT=; for t in "${TYPES[@]}"; do [[ $t == csrk* ]] && { CSRKT=$t; break; }; done
APPS=(
  "ex45|ksp-ex45|KSPSolve|-da_grid_x $N45 -da_grid_y $N45 -da_grid_z $N45 -ksp_type cg -pc_type jacobi -ksp_max_it $I45 -ksp_rtol 1e-30"
  "ex5|snes-ex5|SNESSolve|-da_grid_x $N5 -da_grid_y $N5 -ksp_type cg -pc_type jacobi -ksp_rtol 1e-6 -snes_rtol 1e-8"
  "ex19|snes-ex19|SNESSolve|-da_grid_x $N19 -da_grid_y $N19 -ksp_type gmres -pc_type jacobi -ksp_max_it 400"
)
DESC_ex45="ksp ex45: 3D Laplacian (7-point), ${N45}^3, CG + Jacobi, $I45 iterations"
DESC_ex5="snes ex5: Bratu, ${N5}^2, Newton + CG + Jacobi (new Jacobian values every step)"
DESC_ex19="snes ex19: driven cavity, ${N19}^2 (4 fields), Newton + GMRES + Jacobi"

declare -A BEST=() RUNS=() MULTS=()
total=0
for a in "${APPS[@]}"; do
  name=${a%%|*}
  if [ -n "${APPS_ONLY:-}" ] && ! [[ $name =~ $APPS_ONLY ]]; then continue; fi
  exe=${a#*|}; exe=${exe%%|*}
  [ -x "$APPS_DIR/$exe" ] || { echo "apps: $APPS_DIR/$exe not built (make apps builds it)" >&2; exit 1; }
  total=$((total + REPS * ${#TYPES[@]}))
done

# percent of idle CPU time over the next second (all CPUs, /proc/stat)
idle_percent() {
  local a b
  a=$(awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit }' /proc/stat)
  sleep 1
  b=$(awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit }' /proc/stat)
  awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); t = y[2] - x[2]; print (t > 0 ? int(100 * (y[1] - x[1]) / t) : 100) }'
}
# waits for 3 idle seconds in a row (APPS_IDLE percent); returns 1 when APPS_IDLE_WAIT ran out first
busy_starts=0
wait_idle() {
  [ -n "${APPS_IDLE:-}" ] || return 0
  local quiet=0 t0
  t0=$(date +%s)
  while [ $quiet -lt 3 ]; do
    if [ "$(idle_percent)" -ge "$APPS_IDLE" ]; then quiet=$((quiet + 1)); else quiet=0; fi
    if [ $(($(date +%s) - t0)) -ge "${APPS_IDLE_WAIT:-600}" ]; then busy_starts=$((busy_starts + 1)); return 1; fi
  done
}

# one run: prints "<solve seconds> <MatMult count>"; fails on a non-zero exit or a missing event line
run_one() {
  local name=$1 exe=$2 event=$3 type=$4 rep=$5 opts=$6 log
  log=$LOGS/$name-$type-$rep.log
  # shellcheck disable=SC2086
  if ! $MPIEXEC -n "$NP" "$APPS_DIR/$exe" $opts ${APPS_EXTRA:-} -dm_mat_type "$type" -dll_append "$CSRK_LIB" -log_view >"$log" 2>&1; then
    echo "apps: $name with $type failed, see $log" >&2; tail -n 15 "$log" >&2; return 1
  fi
  if [[ $type == csrk* ]] && ! awk '$1 == "MatCSRKBuild" && $2 > 0 { f = 1 } END { exit !f }' "$log"; then
    echo "apps: $name with $type built no CSR-k structure (no MatCSRKBuild event in $log)" >&2; return 1
  fi
  awk -v ev="$event" '$1 == ev { t = $4 } $1 == "MatMult" { m = $2 } END { if (t == "") exit 1; print t, m }' "$log" ||
    { echo "apps: no $event line in $log" >&2; return 1; }
}

machine() {
  local cpu
  cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
  echo "${cpu:-unknown CPU}, $(getconf _NPROCESSORS_ONLN) cores"
}

done_runs=0
start=$(date +%s)
load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
for a in "${APPS[@]}"; do
  IFS='|' read -r name exe event opts <<<"$a"
  if [ -n "${APPS_ONLY:-}" ] && ! [[ $name =~ $APPS_ONLY ]]; then continue; fi
  for ((rep = 1; rep <= REPS; rep++)); do
    for type in "${TYPES[@]}"; do
      wait_idle || echo "apps: the machine stayed busy for ${APPS_IDLE_WAIT:-600} s: running anyway" >&2
      out=$(run_one "$name" "$exe" "$event" "$type" "$rep" "$opts") || exit 1
      read -r t m <<<"$out"
      done_runs=$((done_runs + 1))
      RUNS[$name,$type]="${RUNS[$name,$type]:-}${RUNS[$name,$type]:+ }$t"
      MULTS[$name,$type]=$m
      if [ -z "${BEST[$name,$type]:-}" ] || awk -v a="$t" -v b="${BEST[$name,$type]}" 'BEGIN { exit !(a < b) }'; then BEST[$name,$type]=$t; fi
      printf '[apps %d/%d, %d s] %s %s run %d: %s %.3f s\n' "$done_runs" "$total" $(($(date +%s) - start)) "$name" "$type" "$rep" "$event" "$t" >&2
    done
  done
done

# the table and the CSV
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else printf "-" }'; }
MACHINE=$(machine) DATE=$(date +%Y-%m-%d)
echo "machine,date,ranks,threads,app,event,type,best_s,runs_s,matmults,ref,speedup_vs_ref" >"$CSV"
echo
echo "$MACHINE, $NP MPI ranks x $OMP_NUM_THREADS OpenMP thread$([ "$OMP_NUM_THREADS" = 1 ] || echo s), $DATE; best of $REPS (interleaved), seconds"
echo
hdr="| app | event |"; sep="| --- | --- |"
for type in "${TYPES[@]}"; do hdr="$hdr $type |"; sep="$sep --- |"; done
if [ -n "$CSRKT" ]; then
  for type in "${TYPES[@]}"; do [ "$type" = "$CSRKT" ] || { hdr="$hdr $CSRKT vs $type |"; sep="$sep --- |"; }; done
fi
echo "$hdr"; echo "$sep"
for a in "${APPS[@]}"; do
  IFS='|' read -r name exe event opts <<<"$a"
  if [ -n "${APPS_ONLY:-}" ] && ! [[ $name =~ $APPS_ONLY ]]; then continue; fi
  desc=DESC_$name
  row="| ${!desc} | $event |"
  for type in "${TYPES[@]}"; do
    row="$row $(printf '%.3f' "${BEST[$name,$type]}") |"
    echo "\"$MACHINE\",$DATE,$NP,$OMP_NUM_THREADS,$name,$event,$type,${BEST[$name,$type]},${RUNS[$name,$type]},${MULTS[$name,$type]},$REF,$(awk -v a="${BEST[$name,$REF]}" -v b="${BEST[$name,$type]}" 'BEGIN { printf "%.4f", a / b }')" >>"$CSV"
    if [ "${MULTS[$name,$type]}" != "${MULTS[$name,${TYPES[0]}]}" ]; then
      echo "WARNING: $name: $type made ${MULTS[$name,$type]} MatMults, ${TYPES[0]} ${MULTS[$name,${TYPES[0]}]}" >&2
    fi
  done
  if [ -n "$CSRKT" ]; then
    for type in "${TYPES[@]}"; do [ "$type" = "$CSRKT" ] || row="$row $(ratio "${BEST[$name,$type]}" "${BEST[$name,$CSRKT]}") |"; done
  fi
  echo "$row"
done
echo
echo "Commands: $MPIEXEC -n $NP <app> <options> ${APPS_EXTRA:+$APPS_EXTRA }-dm_mat_type <type> -dll_append $CSRK_LIB -log_view, OMP_NUM_THREADS=$OMP_NUM_THREADS, with"
for a in "${APPS[@]}"; do
  IFS='|' read -r name exe event opts <<<"$a"
  if [ -n "${APPS_ONLY:-}" ] && ! [[ $name =~ $APPS_ONLY ]]; then continue; fi
  echo "  $exe: $opts"
done
echo "Load average (1, 5, 15 min) at the start: ${load0:-?}, at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null) (other jobs on the machine make the times noisy)"
[ -z "${APPS_IDLE:-}" ] || echo "Each run started after 3 s of at least $APPS_IDLE % idle CPUs ($busy_starts of $done_runs started on a busy machine after waiting ${APPS_IDLE_WAIT:-600} s)"
echo "CSV: $CSV; logs: $LOGS"
