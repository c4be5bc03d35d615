#!/usr/bin/env bash
# The CPU tables of the GPU machine's 16-core host in one command (repo root, $OUT set; deps/ carried as
# configure-hooks/gpu-run.sh needs it, deps/pcache with an installed PETSc packed by docs/experiments/unstructured.sh,
# deps/psrc with PETSc's tutorial sources):
#
#   bash docs/experiments/host16.sh          (EX45_PAIRS=N: N more interleaved aij/csrk pairs of ksp ex45;
#                                             FEW_RANKS=1 [FEW_ROUNDS=N MATRICES=dir]: the never-slower cases
#                                             on 1 and 2 ranks)
#
# Builds the plugin (build-gpu), writes its machine file (tutorials/tune on one rank per core), then runs PETSc's
# tutorials with configure-hooks/apps.sh on one rank per core: the structured ones with aij, csrk and csrk without the
# machine file; ksp ex10 on the generated unstructured matrices with aij and csrk; and ksp ex45 three times with csrk,
# its solutions compared byte for byte. Tables and logs under $OUT.
set -uo pipefail
top=$(pwd)
out=${OUT:-$top/out}
mkdir -p "$out"
export PETSC_SRC=${PETSC_SRC:-$top/deps/psrc}
if ls "$top"/deps/pcache/petsc-cuda.tar.xz.* >/dev/null 2>&1 && [ ! -f "$top/deps/petsc-3.26.1-cuda/lib/pkgconfig/PETSc.pc" ]; then
  cat "$top"/deps/pcache/petsc-cuda.tar.xz.* | xz -d -T8 | tar -C "$top" -xf -
  old=$(cat "$top/deps/pcache/root" 2>/dev/null)
  [ -n "$old" ] && [ "$old" != "$top" ] && [ ! -e "$old" ] && mkdir -p "$(dirname "$old")" && ln -s "$top" "$old"
fi
export PETSC_DIR=$top/deps/petsc-3.26.1-cuda PETSC_ARCH= BUILD=$top/build-gpu
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
np=$(nproc)
bash configure-hooks/gpu-run.sh build >"$out/build.txt" 2>&1 || { tail -n 20 "$out/build.txt"; exit 1; }
lscpu | grep -E "Model name" | sed 's/  */ /g'
mpiexec -n "$np" --bind-to core "$BUILD/tutorials/tune" -o "$BUILD/lib/csrk-machine.txt" | tail -n 2
grep -v "^#" "$BUILD/lib/csrk-machine.txt"
APPS=${STRUCTURED:-ex45,bench_kspsolve,ex5} TYPES="aij csrk csrk/-mat_csrk_machine_file/none" REPS=${REPS:-2} OUT=$out/s \
  bash configure-hooks/apps.sh cpu "$np"
APPS=${UNSTRUCTURED:-gen-femelast3d,gen-fem3d} TYPES="aij csrk" REPS=${REPS:-2} FEM_ITS=${FEM_ITS:-500} FEM_DIR=$out/fem \
  OUT=$out/u bash configure-hooks/apps.sh cpu "$np"
for i in 1 2 3; do
  mpiexec -n "$np" --bind-to core "$out/s/apps-bin/ex45" -da_grid_x 160 -da_grid_y 160 -da_grid_z 160 -ksp_type cg -pc_type jacobi \
    -ksp_max_it 200 -ksp_rtol 1e-30 -dm_mat_type csrk -dll_append "$BUILD/lib/libcsrk.so" -ksp_view_solution "binary:$out/x$i.bin" >/dev/null 2>&1
done
if cmp "$out/x1.bin" "$out/x2.bin" && cmp "$out/x1.bin" "$out/x3.bin"; then echo "ksp ex45 160^3 on $np ranks, csrk: 3 solutions byte-identical"
else echo "ksp ex45 160^3 on $np ranks, csrk: the solutions DIFFER"; fi
# EX45_PAIRS=N: N more interleaved runs of ksp ex45 160^3, aij then csrk, with the events that tell the vector
# operations' speed from the product's ($out/ex45-pairs.csv)
if [ "${EX45_PAIRS:-0}" -gt 0 ]; then
  echo "pair,type,KSPSolve_s,MatMult_s,VecAXPY_s,VecTDot_s" >"$out/ex45-pairs.csv"
  for i in $(seq "$EX45_PAIRS"); do
    for t in aij csrk; do
      mpiexec -n "$np" --bind-to core "$out/s/apps-bin/ex45" -da_grid_x 160 -da_grid_y 160 -da_grid_z 160 -ksp_type cg -pc_type jacobi \
        -ksp_max_it 200 -ksp_rtol 1e-30 -dm_mat_type $t -dll_append "$BUILD/lib/libcsrk.so" -log_view 2>&1 |
        awk -v i="$i" -v t=$t '$1 == "KSPSolve" { k = $4 } $1 == "MatMult" { m = $4 } $1 == "VecAXPY" { a = $4 } $1 == "VecTDot" { d = $4 } END { print i "," t "," k "," m "," a "," d }' >>"$out/ex45-pairs.csv"
    done
  done
  awk -F, 'NR > 1 { v[$1, $2] = $3; n = $1 } END { for (i = 1; i <= n; i++) printf "ex45 pair %d: aij %s s, csrk %s s, %.2fx\n", i, v[i, "aij"], v[i, "csrk"], v[i, "aij"] / v[i, "csrk"] }' "$out/ex45-pairs.csv"
fi
# FEW_RANKS=1: the never-slower cases on 1 and 2 ranks of this host, with the machine file of all its cores, as a
# user who tuned once runs a small job: ksp ex10 (CG + Jacobi) on femelast3d 40^3 and fem3d 80^3 in their own numbering
# and renumbered at random (300 its), on the randomly permuted wave.mtx of MATRICES (600 its) and ksp ex45 96^3;
# FEW_ROUNDS interleaved rounds, each solution's md5 beside its times ($out/few-ranks.csv)
if [ "${FEW_RANKS:-0}" = 1 ]; then
  pb=$BUILD/tutorials/permbin m=$out/few-mats
  mkdir -p "$m"
  "$pb" -problem femelast3d -n 40 -permute -1 -o "$m/e.raw" >/dev/null && "$pb" -problem fem3d -n 80 -permute -1 -o "$m/f.raw" >/dev/null
  for c in e f; do
    "$pb" -fbin "$m/$c.raw" -permute -1 -consistent -o "$m/${c^^}.bin" >/dev/null && "$pb" -fbin "$m/$c.raw" -permute 1 -consistent -o "$m/${c^^}R.bin" >/dev/null
  done
  wave=${MATRICES:-$top/../shared/matrices}/wave.mtx.gz
  gzip -dc "$wave" >"$m/wave.mtx" && "$pb" -f "$m/wave.mtx" -permute 1 -o "$m/W.bin" >/dev/null
  declare -A C
  for c in E ER F FR; do C[$c]="ex10 -f $m/$c.bin -ksp_max_it 300"; done
  C[W]="ex10 -f $m/W.bin -ksp_max_it 600 -ksp_divtol 1e300"
  C[X]="ex45 -da_grid_x 96 -da_grid_y 96 -da_grid_z 96 -ksp_max_it 200"
  echo "round,np,case,type,KSPSolve_s,MatMult_s,md5" >"$out/few-ranks.csv"
  for r in $(seq "${FEW_ROUNDS:-3}"); do
    for p in 1 2; do for c in E ER F FR W X; do for t in aij csrk; do
      mo="-mat_type $t"; [ $c = X ] && mo="-dm_mat_type $t"
      mpiexec -n $p --bind-to core "$out"/s/apps-bin/${C[$c]} -ksp_type cg -pc_type jacobi -ksp_rtol 1e-30 $mo -dll_append "$BUILD/lib/libcsrk.so" \
        -log_view -ksp_view_solution "binary:$m/x.bin" >"$m/log.txt" 2>&1
      s=$(md5sum <"$m/x.bin" | cut -c1-12)
      awk -v r=$r -v p=$p -v c=$c -v t=$t -v s=$s '$1=="MatMult"{m=$4} $1=="KSPSolve"{k=$4} END{printf "%d,%d,%s,%s,%s,%s,%s\n",r,p,c,t,k,m,s}' "$m/log.txt" >>"$out/few-ranks.csv"
      rm -f "$m"/x.bin*
    done; done; done
  done
  rm -rf "$m"
fi
rm -rf "$out"/x?.bin* "$out/fem" "$out/fem-small" "$out"/s/apps-bin "$out"/u/apps-bin
