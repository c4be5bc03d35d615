#!/usr/bin/env bash
# PETSc's own tutorials, unmodified, with each matrix type in turn: the end-to-end table of docs/performance.md.
#
#   bash configure-hooks/apps.sh gpu|cpu [NP]
#
# Builds ksp ex45, ksp bench_kspsolve, ksp ex56, snes ex5 and snes ex19 from $PETSC_DIR's examples (or from the PETSc
# source tree at $PETSC_SRC) and runs each with every type of the mode on NP MPI ranks (gpu: 1 rank per GPU, types
# aijcusparse sellcuda csrkcuda; cpu: NP ranks of one thread, types aij sell csrk; TYPES replaces them, an entry
# type/-option/value adding options to the type), REPS times interleaved, under
# -log_view. Prints one table (best solve time of the repetitions) and writes $OUT/apps-<mode>[-APPS_TAG].csv; the
# logs go to $OUT/apps-logs/. APPS=ex45,ex5 runs a subset; APPS_SIZE=small runs sizes for a 2-core machine; EX45_ITS
# sets the iterations of ex45 (a short solve), EX45_N its grid and EX45_NZ its z extent (weak scaling).
#
# Unstructured finite-element matrices: ksp ex10 (CG + Jacobi, FEM_ITS iterations) on matrices that PETSc's own
# DMPlex tutorials assemble on PETSc's tetrahedral mesh file, refined in parallel and saved with -ksp_view_mat, in
# the tutorial's numbering and randomly renumbered (tutorials/permbin), and on the generated problems fem3d and
# femelast3d (src/mat/utils/problems.c):
#   fem-p1, fem-p2:    snes ex13 Poisson, P1 (-dm_refine 4) and P2 (-dm_refine 3); FEM_REFINE=5 refines once more
#                      (P1: about 3 M rows; with a FEM_DIR of its own, since the matrices are kept by name);
#                      FEM_BOX=N: on DMPlex's box mesh of N^3 hexahedra, refined, then cut into tetrahedra,
#                      instead of the mesh file (PETSc 3.26; FEM_BOX=13 FEM_REFINE=3: P1 and P2 of about 1.1 M rows)
#   fem-elast:         snes ex17 linear elasticity (-sol_type elas_quad), P1, block size 3 (-dm_refine 3: PetscFE's
#                      assembly of a fourth refinement takes minutes); FEM_ELAST_BOX=N: its own box (FEM_BOX otherwise;
#                      FEM_ELAST_BOX=18 FEM_REFINE=3: about 1.1 M rows)
#   fem-elast-p2:      the same in P2 (-dm_refine 3: about 1.2 M rows of about 80 nonzeros)
#   fem-ex12-p1, fem-ex12-p2: snes ex12 Poisson, P1 and P2 (refined as fem-p1 and fem-p2), its coefficient a P0
#                      checkerboard jumping by 10^3 (-variable_coefficient checkerboard_0 -k 3)
#   gen-fem3d, gen-femelast3d: the generated problems (n 100 and 56; 80 and 40 with APPS_SIZE=small)
#   NAME-rand:         NAME randomly renumbered
#   plex-p1, plex-p2, plex-elast, plex-ex12-p1, plex-ex12-p2: the same DMPlex tutorials run as the application, the type given to their DM
#                      (-dm_mat_type T, and -dm_vec_type cuda on the GPU), one Newton step of FEM_ITS CG + Jacobi
#                      iterations (KSPSolve), with PETSc's simple partitioner (the default one distributes this mesh
#                      differently from run to run in PETSc 3.18); on FEM_BOX's mesh where it is set
# ex10 -f solves the system twice (its two stages, load and set-up included): the solve time is the sum of both
# KSPSolve events. It loads the right-hand side from the file as a host vector, so on the GPU its solution stays on
# the host and every CG iteration copies a vector to the host; FEM_RHS=random (ex10's -rhs random) makes both vectors
# with MatCreateVecs instead, on the device, as an application that keeps its vectors there. The matrices are made
# once into FEM_DIR (default $OUT/fem) with every core of the machine. GPUTIME=0 leaves out the -log_view_gpu_time
# run of the GPU mode (scaling runs).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-cpu}
np=${2:-1}
out=${OUT:-$top/out}
lib=${CSRK_LIB:-${BUILD:-$top/build}/lib/libcsrk.so}
[ -f "$lib" ] || lib=$top/lib/libcsrk.so
reps=${REPS:-2}
logs=$out/apps-logs
mkdir -p "$logs" "$out/apps-bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=1

# the examples: an installed PETSc has them under share/petsc/examples, Debian's under /usr/share/petsc/<v>/
# (Debian's 3.18 lacks bench_kspsolve: PETSC_SRC, a newer source tree, supplies what the first lacks)
srcs=""
for d in "${PETSC_DIR:-/nonexistent}/share/petsc/examples" "${PETSC_DIR:-/nonexistent}" /usr/share/petsc/*/share/petsc/examples "${PETSC_SRC:-/nonexistent}"; do
  [ -f "$d/src/ksp/ksp/tutorials/ex45.c" ] && srcs="$srcs $d"
done
[ -n "$srcs" ] || { echo "apps: no PETSc examples found (set PETSC_SRC)"; exit 1; }
if [ -n "${PETSC_DIR:-}" ] && [ -f "$PETSC_DIR/include/petscconf.h" ]; then
  cflags="-I$PETSC_DIR/include -I/usr/local/cuda/include"
  libs="-L$PETSC_DIR/lib -Wl,-rpath,$PETSC_DIR/lib -lpetsc"
else
  cflags=$(pkg-config --cflags PETSc)
  libs=$(pkg-config --libs PETSc)
fi
for ex in ksp/ksp/tutorials/ex45 ksp/ksp/tutorials/bench_kspsolve ksp/ksp/tutorials/ex56 snes/tutorials/ex5 snes/tutorials/ex19 ksp/ksp/tutorials/ex10 snes/tutorials/ex12 snes/tutorials/ex13 snes/tutorials/ex17; do
  b=$out/apps-bin/$(basename "$ex")
  src=""
  for d in $srcs; do [ -z "$src" ] && [ -f "$d/src/$ex.c" ] && src=$d; done
  [ -x "$b" ] || [ -z "$src" ] || mpicc -O2 "$src/src/$ex.c" -o "$b" $cflags $libs -lm >"$logs/build-$(basename "$ex").log" 2>&1 || echo "apps: could not build $ex"
done

if [ "$mode" = gpu ]; then
  types=${TYPES:-aijcusparse sellcuda csrkcuda}
  vec="-dm_vec_type cuda"
  # sizes as in the issue that set the targets (H100/H200)
  ex45n=${EX45_N:-256} ex45its=${EX45_ITS:-300} bkn=150 ex5n=2048 ex19n=513 ex56ne=39 femref=${FEM_REFINE:-4} femgen=100,56
else
  types=${TYPES:-aij sell csrk}
  vec=""
  ex45n=${EX45_N:-160} ex45its=${EX45_ITS:-200} bkn=100 ex5n=1024 ex19n=257 ex56ne=47 femref=${FEM_REFINE:-4} femgen=100,56
  if [ "${APPS_SIZE:-}" = small ]; then ex45n=${EX45_N:-96} ex45its=200 bkn=60 ex5n=512 ex19n=129 ex56ne=23 femgen=80,40; fi
fi
ex45nz=${EX45_NZ:-$ex45n}
femits=${FEM_ITS:-500}
femdir=${FEM_DIR:-$out/fem}
permbin=${PERMBIN:-${BUILD:-$top/build}/tutorials/permbin}

# PETSc's unstructured tetrahedral mesh file: in a source tree or a prefix install beside share/petsc/examples
mesh=""
for d in $srcs; do
  for m in "$d/share/petsc/datafiles/meshes" "$d/../datafiles/meshes"; do
    [ -z "$mesh" ] && [ -f "$m/mesh-3d-box-innersphere.msh" ] && mesh=$m/mesh-3d-box-innersphere.msh
  done
done

# boxmesh N: DMPlex's box of N^3 hexahedra, refined, then each cut into tetrahedra (DMPlex's simplex box needs
# TetGen; PETSc 3.26's phases)
boxmesh() { echo "-dm_plex_dim 3 -dm_plex_simplex 0 -dm_plex_box_faces $1,$1,$1 -dm_plex_option_phases sim_ -sim_dm_refine 1 -sim_dm_plex_transform_type refine_tosimplex"; }
ex12coeff="-variable_coefficient checkerboard_0 -k 3 -mat_petscspace_degree 0"

# femmat NAME: makes $femdir/NAME.bin (the matrix and a random right-hand side) unless it exists
femmat() {
  local name=$1 base=${1%-rand} f=$femdir/$1.bin perm=-1 plex gnp
  gnp=$(nproc); [ "$gnp" -gt 16 ] && gnp=16
  [ -f "$f" ] && return 0
  mkdir -p "$femdir"
  [ "$base" != "$name" ] && perm=1
  plex="-dm_plex_filename $mesh"
  local box=${FEM_BOX:-}
  case $base in fem-elast*) box=${FEM_ELAST_BOX:-$box} ;; esac
  [ -n "$box" ] && plex=$(boxmesh "$box")
  plex="$plex -dm_plex_boundary_label marker -snes_max_it 1 -ksp_type preonly -pc_type none -ksp_view_mat binary:$femdir/$base.raw"
  if [ ! -f "$femdir/$base.raw" ]; then
    local t0=$SECONDS
    case $base in
      fem-p1) timeout "${FEM_TIMEOUT:-300}" mpiexec -n "$gnp" "$out/apps-bin/ex13" $plex -dm_refine "$femref" -potential_petscspace_degree 1 ;;
      fem-p2) timeout "${FEM_TIMEOUT:-300}" mpiexec -n "$gnp" "$out/apps-bin/ex13" $plex -dm_refine $((femref - 1)) -potential_petscspace_degree 2 ;;
      fem-elast) timeout "${FEM_TIMEOUT:-300}" mpiexec -n "$gnp" "$out/apps-bin/ex17" $plex -dm_refine $((femref - 1)) -sol_type elas_quad -displacement_petscspace_degree 1 ;;
      fem-ex12-p1) timeout "${FEM_TIMEOUT:-300}" mpiexec -n "$gnp" "$out/apps-bin/ex12" $plex $ex12coeff -dm_refine "$femref" -petscspace_degree 1 ;;
      fem-ex12-p2) timeout "${FEM_TIMEOUT:-300}" mpiexec -n "$gnp" "$out/apps-bin/ex12" $plex $ex12coeff -dm_refine $((femref - 1)) -petscspace_degree 2 ;;
      fem-elast-p2) timeout "${FEM_TIMEOUT:-300}" mpiexec -n "$gnp" "$out/apps-bin/ex17" $plex -dm_refine $((femref - 1)) -sol_type elas_quad -displacement_petscspace_degree 2 ;;
      gen-fem3d) "$permbin" -problem fem3d -n "${femgen%,*}" -permute -1 -o "$femdir/$base.raw" ;;
      gen-femelast3d) "$permbin" -problem femelast3d -n "${femgen#*,}" -permute -1 -o "$femdir/$base.raw" ;;
    esac >"$logs/make-$base.log" 2>&1 </dev/null || { echo "apps: could not make $base (see $logs/make-$base.log)"; return 1; }
    echo "apps: made $base in $((SECONDS - t0)) s"
  fi
  # b = A x: where the boundary label does not reach the refined mesh (PETSc 3.18) the operator is a pure Neumann
  # one, singular, and b must be in its range
  "$permbin" -fbin "$femdir/$base.raw" -permute "$perm" -consistent -o "$f" >>"$logs/make-$base.log" 2>&1 || { echo "apps: could not write $f"; return 1; }
}

# app NAME SOLVE-EVENT ARGS...: the command line of each app, with T for the type
declare -A cmd ev
cmd[ex45]="ex45 -da_grid_x $ex45n -da_grid_y $ex45n -da_grid_z $ex45nz -ksp_type cg -pc_type jacobi -ksp_max_it $ex45its -ksp_rtol 1e-30 -dm_mat_type T $vec"
ev[ex45]=KSPSolve
cmd[bench_kspsolve]="bench_kspsolve -n $bkn -mat_type T -ksp_type cg -pc_type jacobi -ksp_rtol 1e-8"
ev[bench_kspsolve]=KSPSolve
cmd[ex5]="ex5 -da_grid_x $ex5n -da_grid_y $ex5n -ksp_type cg -pc_type jacobi -ksp_rtol 1e-6 -snes_rtol 1e-8 -dm_mat_type T $vec"
ev[ex5]=SNESSolve
cmd[ex19]="ex19 -da_grid_x $ex19n -da_grid_y $ex19n -ksp_type gmres -pc_type jacobi -ksp_max_it 400 -dm_mat_type T $vec"
ev[ex19]=SNESSolve
v56=""; [ "$mode" = gpu ] && v56="-vec_type cuda"
cmd[ex56]="ex56 -ne $ex56ne -alpha 1.e-3 -ksp_type cg -pc_type gamg -pc_gamg_agg_nsmooths 1 -use_mat_nearnullspace -ksp_rtol 1e-8 -mat_type T $v56"
ev[ex56]=KSPSolve
for m in fem-p1 fem-p2 fem-ex12-p1 fem-ex12-p2 fem-elast fem-elast-p2 gen-fem3d gen-femelast3d; do
  for v in "" -rand; do
    cmd[$m$v]="ex10 -f $femdir/$m$v.bin -ksp_type cg -pc_type jacobi -ksp_max_it $femits -ksp_rtol 1e-30 -mat_type T $v56${FEM_RHS:+ -rhs $FEM_RHS -ksp_divtol 1e300}"
    ev[$m$v]=KSPSolve
  done
done
# the DMPlex tutorials themselves, the matrix type given to their DM (-dm_mat_type, and -dm_vec_type on the GPU):
# PetscFE assembles on the host, then one Newton step solves with FEM_ITS CG iterations (KSPSolve)
plexmesh="-dm_plex_filename $mesh"; [ -n "${FEM_BOX:-}" ] && plexmesh=$(boxmesh "$FEM_BOX")
plexapp="$plexmesh -dm_plex_boundary_label marker -petscpartitioner_type simple -snes_max_it 1 -ksp_type cg -pc_type jacobi -ksp_max_it $femits -ksp_rtol 1e-30 -dm_mat_type T $vec"
cmd[plex-p1]="ex13 $plexapp -dm_refine $femref -potential_petscspace_degree 1"
cmd[plex-p2]="ex13 $plexapp -dm_refine $((femref - 1)) -potential_petscspace_degree 2"
cmd[plex-elast]="ex17 $plexapp -dm_refine $((femref - 1)) -sol_type elas_quad -displacement_petscspace_degree 1"
cmd[plex-ex12-p1]="ex12 $plexapp $ex12coeff -dm_refine $femref -petscspace_degree 1"
cmd[plex-ex12-p2]="ex12 $plexapp $ex12coeff -dm_refine $((femref - 1)) -petscspace_degree 2"
for m in plex-p1 plex-p2 plex-elast plex-ex12-p1 plex-ex12-p2; do ev[$m]=KSPSolve; done
apps=$(echo "${APPS:-ex45,bench_kspsolve,ex5,ex19,ex56}" | tr , ' ')
# ex56 decomposes its cube into a cube of ranks: the largest cube number of ranks up to NP, for every type
np56=1; while [ $(((np56 + 1) ** 3)) -le "$np" ]; do np56=$((np56 + 1)); done; np56=$((np56 ** 3))

# field F (1-based, after the name) of event E's line in log L, summed over stages
field() { awk -v e="$1" -v f="$2" '$1 == e { s += $(f + 1); n++ } END { if (n) printf "%g", s; else printf "-" }' "$3"; }

csv=$out/apps-$mode${APPS_TAG:+-$APPS_TAG}.csv
echo "app,type,np,rep,solve_s,matmult_s,matmult_count,matmult_mflops,setup_s,cpu2gpu_count,cpu2gpu_mb,gpu2cpu_count,gpu2cpu_mb,iterations,devmem_mb,status" >"$csv"
# on the GPU, event times need -log_view_gpu_time, which synchronises every event: one more run of each gives the
# MatMult time and rate (rep "gputime"), the others the solve time
extra_rep=""; [ "$mode" = gpu ] && [ "${GPUTIME:-1}" = 1 ] && extra_rep=gputime
for app in $apps; do
  case $app in fem-* | gen-*) femmat "$app" || continue ;; esac
  for rep in $(seq 1 "$reps") $extra_rep; do
    for t in $types; do
      [ "$app" = bench_kspsolve ] && [ "${t%%/*}" = sellcuda ] && continue   # PETSc's SELL has no COO assembly
      case $app in fem-* | gen-*) case ${t%%/*} in sell | sellcuda) continue ;; esac ;; esac # nor MatLoad
      [ -x "$out/apps-bin/${cmd[$app]%% *}" ] || continue
      log=$logs/$app-$(echo "$t" | tr -c 'A-Za-z0-9_\n-' _)-np$np-$rep.log
      # an entry type/-option/value/... adds options to the type
      tn=${t%%/*}
      extra=$(echo "${t#"$tn"}" | tr / ' ')
      c=${cmd[$app]//-mat_type T/-mat_type $tn}
      c=${c//-dm_mat_type T/-dm_mat_type $tn}
      c="$c $extra"
      mem=-
      if [ "$mode" = gpu ]; then
        nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 50 >"$logs/mem.txt" 2>/dev/null &
        smi=$!
        sleep 0.3
      fi
      # shellcheck disable=SC2086
      n=$np; [ "$app" = ex56 ] && n=$np56
      gt=""; [ "$rep" = gputime ] && gt=-log_view_gpu_time
      timeout "${APP_TIMEOUT:-200}" mpiexec -n "$n" --bind-to core "$out/apps-bin/"$c -dll_append "$lib" -log_view $gt -ksp_converged_reason >"$log" 2>&1
      rc=$?
      if [ "$mode" = gpu ]; then
        kill $smi 2>/dev/null; wait $smi 2>/dev/null
        mem=$(sort -n "$logs/mem.txt" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print hi - lo }')
      fi
      e=${ev[$app]}
      solve=$(field "$e" 3 "$log")
      mm=$(field MatMult 3 "$log")
      mmc=$(field MatMult 1 "$log")
      # setup: the events that build each type's device or CSR-k copy
      setup=$(awk '$1 == "MatCUSPARSCopyTo" || $1 == "MatCSRKBuild" || $1 == "MatSELLCUDACopyTo" || $1 == "MatCSRKCUDACopyTo" { s += $4 } END { printf "%g", s + 0 }' "$log")
      if [ "$mode" = gpu ]; then
        rate=$(awk -v e=MatMult '$1 == e { print $22; exit }' "$log")
        c2g=$(field "$e" 22 "$log"); c2gs=$(field "$e" 23 "$log"); g2c=$(field "$e" 24 "$log"); g2cs=$(field "$e" 25 "$log")
      else
        rate=$(awk -v e=MatMult '$1 == e { print $21; exit }' "$log")
        c2g=-; c2gs=-; g2c=-; g2cs=-
      fi
      its=$(grep -oE "iterations [0-9]+" "$log" | awk '{ s += $2 } END { print s + 0 }')
      status=ok; [ $rc -eq 0 ] || status="exit$rc"
      echo "$app,$t,$n,$rep,$solve,$mm,$mmc,$rate,$setup,$c2g,$c2gs,$g2c,$g2cs,$its,$mem,$status" >>"$csv"
    done
  done
done

# the table: best solve time over the repetitions, ratios to the first type
awk -F, -v first="${types%% *}" 'NR > 1 && $16 == "ok" && $4 == "gputime" { mm[$1 SUBSEP $2] = $6; rate[$1 SUBSEP $2] = $8; su[$1 SUBSEP $2] = $9; next }
  NR > 1 && $16 == "ok" {
    k = $1 SUBSEP $2
    if (!(k in best) || $5 < best[k]) { best[k] = $5; row[k] = $0 }
    if (!($1 in seen)) { seen[$1] = 1; order[++na] = $1 }
    if (!($2 in tseen)) { tseen[$2] = 1; torder[++nt] = $2 }
  }
  NR > 1 && $16 != "ok" { failed[$1 SUBSEP $2] = $16 }
  END {
    printf "%-15s %-12s %9s %7s %9s %9s %9s %11s %11s %6s %8s\n", "app", "type", "solve s", "x " first, "MatMult s", "MFlop/s", "setup s", "to GPU MB", "to CPU MB", "its", "dev MB"
    for (a = 1; a <= na; a++) for (t = 1; t <= nt; t++) {
      k = order[a] SUBSEP torder[t]
      if (!(k in row)) { if (k in failed) printf "%-15s %-12s %s\n", order[a], torder[t], failed[k]; continue }
      split(row[k], f, ",")
      if (k in mm) { f[6] = mm[k]; f[8] = rate[k]; f[9] = su[k] }
      ref = best[order[a] SUBSEP first]
      printf "%-15s %-12s %9.4f %7.2f %9.4f %9s %9.4f %11s %11s %6s %8s\n", f[1], f[2], f[5], (ref > 0 ? ref / f[5] : 0), f[6], f[8], f[9], f[11], f[13], f[14], f[15]
    }
  }' "$csv"
