#!/usr/bin/env bash
# tests/petsc-tutorials.sh: PETSc's own tutorials, compiled unmodified, run with aij and with the csrk plugin.
#
# Every case runs one unmodified PETSc tutorial twice with the same options: once as it is (aij),
# once with the plugin loaded (-dll_append $CSRK_LIB -mat_type csrk, -dm_mat_type csrk for DM
# programs, or the same through PETSC_OPTIONS). The two runs must print the same converged reasons,
# iteration counts and text, the same residual/error norms to ~6 significant digits, pick the same
# solver and preconditioner types, and the plugin run must really have used seqaijcsrk/mpiaijcsrk.
#
#   bash tests/petsc-tutorials.sh                # PETSc from PETSC_DIR/PETSC_ARCH, else pkg-config
#   PETSC_DIR=$PWD/deps/petsc-3.26.1-cpu PETSC_ARCH= CSRK_LIB=/tmp/b326/lib/libcsrk.so BUILD=/tmp/b326 \
#     bash tests/petsc-tutorials.sh
#
# Environment: PETSC_DIR, PETSC_ARCH; PETSC_SRC (PETSc source tree or examples folder, used when the
# installed examples are not found); DATAFILESPATH (folder holding matrices/...); CSRK_LIB (default
# <repo>/lib/libcsrk.so); BUILD (default <repo>/build; programs and logs go to $BUILD/petsc-tutorials);
# MPIEXEC; CSRK_TUT_RTOL (default 1e-6), CSRK_TUT_ATOL (default 0), CSRK_TUT_SERIES_RTOL (default 1e-10,
# see numcmp), CSRK_TUT_TIMEOUT (s, default 120);
# CSRK_TUT_ONLY (regex: run only the cases whose name matches).
# Prints "ok <name>" / "FAIL <name>: <why>" / "SKIP <what>: <why>" lines, then "N passed, N failed".
# Exit status: 0 when nothing failed (also when the PETSc examples are not found), 1 otherwise.

set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

skip_all() { echo "SKIP petsc-tutorials: $*"; echo "0 passed, 0 failed"; exit 0; }

# ---------------------------------------------------------------- PETSc, the way the makefile finds it
PETSC_DIR=${PETSC_DIR:-}
PETSC_ARCH=${PETSC_ARCH:-}
[ -n "$PETSC_DIR" ] || PETSC_DIR=$(pkg-config --variable=prefix PETSc 2>/dev/null || true)
CONF=
for f in "$PETSC_DIR/${PETSC_ARCH:+$PETSC_ARCH/}lib/petsc/conf/petscvariables" "$PETSC_DIR/lib/petsc/conf/petscvariables"; do
  if [ -n "$PETSC_DIR" ] && [ -f "$f" ]; then CONF=$f; break; fi
done

PCC='' PINC='' PLIB='' PMPIEXEC=''
if [ -n "$CONF" ] && command -v make >/dev/null 2>&1; then
  # let make expand the variables (they refer to each other with $(...) and ${...})
  # shellcheck disable=SC2016
  vars=$(printf 'include %s\npv:\n\t@printf "%%s\\n" "$(PCC)" "$(PETSC_CC_INCLUDES)" "$(PETSC_LIB)" "$(MPIEXEC)"\n' "$CONF" |
         make -s --no-print-directory -f - PETSC_DIR="$PETSC_DIR" PETSC_ARCH="$PETSC_ARCH" pv 2>/dev/null)
  { read -r PCC; read -r PINC; read -r PLIB; read -r PMPIEXEC; } <<<"$vars"
fi
if [ -z "$PLIB" ] && pkg-config --exists PETSc 2>/dev/null; then
  PINC=$(pkg-config --cflags PETSc); PLIB=$(pkg-config --libs PETSc)
  PCC=$(pkg-config --variable=ccompiler PETSc 2>/dev/null || true)
fi
[ -n "$PLIB" ] || skip_all "PETSc not found (set PETSC_DIR/PETSC_ARCH, or install Debian's petsc-dev)"
PCC=${PCC:-mpicc}
# run-time paths for every -L directory, as the makefile does
RPATH=
for w in $PLIB; do case $w in -L*) RPATH="$RPATH -Wl,-rpath,${w#-L}" ;; esac; done

# PETSc configuration macros (version, index size, scalar type) from the headers themselves
# shellcheck disable=SC2086
MACROS=$(printf '#include <petscsys.h>\n' | $PCC $PINC -E -dM -x c - 2>/dev/null) ||
  skip_all "cannot preprocess <petscsys.h> with '$PCC $PINC'"
macro() { awk -v m="$1" '$1 == "#define" && $2 == m { print $3; exit }' <<<"$MACROS"; }
VMAJ=$(macro PETSC_VERSION_MAJOR) VMIN=$(macro PETSC_VERSION_MINOR) VSUB=$(macro PETSC_VERSION_SUBMINOR)
IDXBITS=32; [ -n "$(macro PETSC_USE_64BIT_INDICES)" ] && IDXBITS=64
SCALAR=real; [ -n "$(macro PETSC_USE_COMPLEX)" ] && SCALAR=complex
PREC=
[ -n "$(macro PETSC_USE_REAL_DOUBLE)" ] && PREC=float64
[ -n "$(macro PETSC_USE_REAL_SINGLE)" ] && PREC=float32
[ -n "$(macro PETSC_USE_REAL___FLOAT128)" ] && PREC=float128

# ---------------------------------------------------------------- example sources and data files
EXAMPLES=
for d in "/usr/share/petsc/$VMAJ.$VMIN/share/petsc/examples" "$PETSC_DIR/share/petsc/examples" \
         "$PETSC_DIR" "${PETSC_SRC:-}" "${PETSC_SRC:+$PETSC_SRC/share/petsc/examples}"; do
  if [ -n "$d" ] && [ -f "$d/src/ksp/ksp/tutorials/ex2.c" ]; then EXAMPLES=$(cd "$d" && pwd); break; fi
done
[ -n "$EXAMPLES" ] || skip_all "PETSc $VMAJ.$VMIN example sources not found (Debian: libpetsc$VMAJ.$VMIN-dev-examples; else set PETSC_SRC to the PETSc source tree)"

# PETSc's data-file folders, in the order they are searched (matrices for ex10, the mesh for ex13 and ex17)
DATADIRS=("${DATAFILESPATH:-}" "/usr/share/petsc/$VMAJ.$VMIN/share/petsc/datafiles" "$PETSC_DIR/share/petsc/datafiles"
          "$EXAMPLES/../datafiles" "$EXAMPLES/share/petsc/datafiles" "${PETSC_SRC:+$PETSC_SRC/share/petsc/datafiles}")
DATAFILES=
for d in "${DATADIRS[@]}"; do
  if [ -n "$d" ] && [ -d "$d/matrices" ]; then DATAFILES=$(cd "$d" && pwd); break; fi
done

CSRK_LIB=${CSRK_LIB:-$TOP/lib/libcsrk.so}
case $CSRK_LIB in /*) ;; *) CSRK_LIB=$PWD/$CSRK_LIB ;; esac
[ -f "$CSRK_LIB" ] || { echo "FAIL setup: plugin $CSRK_LIB not found (run make)"; echo "0 passed, 1 failed"; exit 1; }

OUTDIR=${BUILD:-$TOP/build}/petsc-tutorials
mkdir -p "$OUTDIR" && OUTDIR=$(cd "$OUTDIR" && pwd) || exit 1

# ---------------------------------------------------------------- MPI
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}   # 3 ranks on a small machine: no thread oversubscription
MPIEXEC=${MPIEXEC:-${PMPIEXEC:-mpiexec}}
if $MPIEXEC --version 2>&1 | grep -qiE 'open ?mpi|openrte|open-mpi'; then
  case " $MPIEXEC " in *" --oversubscribe "*) ;; *) MPIEXEC="$MPIEXEC --oversubscribe" ;; esac
fi
TIMEOUT=
command -v timeout >/dev/null 2>&1 && TIMEOUT="timeout ${CSRK_TUT_TIMEOUT:-120}"
RTOL=${CSRK_TUT_RTOL:-1e-6}
ATOL=${CSRK_TUT_ATOL:-0}
SERIES_RTOL=${CSRK_TUT_SERIES_RTOL:-1e-10}

echo "# PETSc $VMAJ.$VMIN.$VSUB ($SCALAR, $PREC, int$IDXBITS) from ${CONF:-pkg-config}"
echo "# examples $EXAMPLES; data files ${DATAFILES:-none}"
echo "# plugin $CSRK_LIB; output in $OUTDIR; $MPIEXEC"

PASS=0 FAIL=0 SKIP=0
ok()   { PASS=$((PASS + 1)); echo "ok $1"; }
fail() { FAIL=$((FAIL + 1)); echo "FAIL $1: $2"; }
skip() { SKIP=$((SKIP + 1)); echo "SKIP $1: $2"; }
indent() { sed -e 's/^/    /' | head -n "${1:-40}"; }

# ---------------------------------------------------------------- build
declare -A BUILT=()   # example name -> "yes" or "no"
build() { # build <ex name> <path under src/>
  local name=$1 src=$EXAMPLES/src/$2 exe=$OUTDIR/$1
  [ -n "${BUILT[$name]:-}" ] && return
  if [ ! -f "$src" ]; then BUILT[$name]=no; skip "$name" "$src not found"; return; fi
  rm -f "$exe"
  # shellcheck disable=SC2086
  if $PCC ${CSRK_TUT_CFLAGS:--O2} $PINC "$src" -o "$exe" $PLIB $RPATH >"$OUTDIR/$name.build.log" 2>&1; then
    BUILT[$name]=yes
  else
    BUILT[$name]=no
    fail "build-$name" "$PCC $src failed ($OUTDIR/$name.build.log)"
    indent 20 <"$OUTDIR/$name.build.log"
  fi
}

# ---------------------------------------------------------------- running and comparing
# run <tag> <np> <env assignment or ""> <exe> <args...>: writes $OUTDIR/<tag>.{out,err,view,rc}
run() {
  local tag=$1 np=$2 envset=$3 exe=$4; shift 4
  rm -f "$OUTDIR/$tag.out" "$OUTDIR/$tag.err" "$OUTDIR/$tag.view"
  local rc=0
  # shellcheck disable=SC2086
  (cd "$OUTDIR" && { [ -z "$envset" ] || export "${envset?}"; } &&
    exec $TIMEOUT $MPIEXEC -n "$np" "$exe" "$@") >"$OUTDIR/$tag.out" 2>"$OUTDIR/$tag.err" || rc=$?
  echo "$rc" >"$OUTDIR/$tag.rc"
  { echo "${envset:+$envset }$MPIEXEC -n $np $exe $*"; echo "exit $rc"; } >"$OUTDIR/$tag.cmd"
  return "$rc"
}

# The plugin's own lines in a Mat view that a program prints itself (ex23 calls KSPView): the
# one-line "CSR-k options: ..." and "CSR-k structure: not built ...", the "CSR-k ...:" header and what
# follows it indented deeper (or "ordering ..." at column 0, as the viewer prints it now), dropped;
# seqaijcsrk/mpiaijcsrk read as seqaij/mpiaij.
strip_plugin_view() {
  awk 'BEGIN { hdr = -1 }
       hdr >= 0 { match($0, /^[ \t]*/); if (RLENGTH > hdr || $0 ~ /^ordering /) next; hdr = -1 }
       /^[ \t]*CSR-k .*:[ \t]*$/ { match($0, /^[ \t]*/); hdr = RLENGTH; next }
       /^[ \t]*CSR-k [a-z -]*: / { next }
       { print }' "$1" | sed -E 's/(seq|mpi)aijcsrk/\1aij/g'
}

# Numbers compared to RTOL (relative) or ATOL, allowing one unit in the last printed digit when a value
# is printed with >= 4 significant digits; in a monitor series ("  5 KSP Residual norm ...") also to
# SERIES_RTOL times the series' iteration-0 value (residuals near round-off are noise: AIJ's I-node
# kernels and the csrk kernels sum in different orders). Integers and all other text compared exactly.
numcmp() {
  awk -v rtol="$RTOL" -v atol="$ATOL" -v srtol="$SERIES_RTOL" '
    function ulp(t,   m, e, p) {
      e = 0; m = t
      if (match(t, /[eE]/)) { e = substr(t, RSTART + 1) + 0; m = substr(t, 1, RSTART - 1) }
      p = index(m, ".")
      return 10 ^ (e - (p ? length(m) - p : 0))
    }
    function nsig(t,   m) { m = t; sub(/[eE].*/, "", m); gsub(/[^0-9]/, "", m); sub(/^0+/, "", m); return length(m) }
    function abs(x) { return x < 0 ? -x : x }
    function max(x, y) { return x > y ? x : y }
    # one token pair: 1 if they agree
    function tokeq(s, t, atol,   ps, pt, ns, nt, x, y, tol) {
      if (s == t) return 1
      if (!match(s, NUM)) return 0
      ps = substr(s, 1, RSTART - 1); ns = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
      if (!match(t, NUM)) return 0
      pt = substr(t, 1, RSTART - 1); nt = substr(t, RSTART, RLENGTH); t = substr(t, RSTART + RLENGTH)
      if (ps != pt || s != t) return 0          # text around the number, e.g. "0.5," or "(12)"
      if (ns !~ /[.eE]/ || nt !~ /[.eE]/) return 0   # integers: iteration counts, sizes
      x = ns + 0; y = nt + 0
      tol = max(rtol * max(abs(x), abs(y)), atol)
      if (nsig(ns) >= 4 && nsig(nt) >= 4) tol = max(tol, 1.001 * max(ulp(ns), ulp(nt)))
      return abs(x - y) <= tol
    }
    BEGIN { NUM = "[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?" }
    NR == FNR { a[++na] = $0; next }
    { b[++nb] = $0 }
    END {
      bad = 0
      if (na != nb) { printf "%d lines vs %d lines\n", na, nb; bad = 1 }
      for (i = 1; i <= (na < nb ? na : nb); i++) {
        ka = split(a[i], ta); kb = split(b[i], tb)
        lineatol = atol
        if (a[i] ~ /^[ \t]*[0-9]+ [A-Za-z ]*[Nn]orm/ && ka > 0 && match(ta[ka], NUM) && ta[ka] ~ /[.eE]/) {
          key = a[i]; gsub(NUM, "#", key)                    # the series: its text, indentation included
          if (ta[1] == "0") scale[key] = abs(substr(ta[ka], RSTART, RLENGTH) + 0)
          if (key in scale) lineatol = max(atol, srtol * scale[key])
        }
        if (a[i] == b[i]) continue
        same = (ka == kb)
        for (j = 1; same && j <= ka; j++) same = tokeq(ta[j], tb[j], lineatol)
        if (!same) { if (bad++ < 5) printf "line %d differs beyond tolerance: \"%s\" vs \"%s\"\n", i, a[i], b[i] }
      }
      exit bad ? 1 : 0
    }' "$1" "$2"
}

# the "type:" lines of a -ksp_view/-snes_view, and those of the PC and Mat objects alone
view_types() { sed -n -E 's/^[[:space:]]*type: *([^[:space:]]*).*/\1/p' "$1"; }
obj_types()  { awk -v obj="$2" '$0 ~ obj " Object" { want = 1; next }
                                want && /^[ \t]*type: / { print $2; want = 0 }' "$1"; }

declare -A REF=()   # reference (aij) run key -> tag
# check <name> <np> <how: mat_type|dm_mat_type|env|load> <example> <view option> <args...>
check() {
  local name=$1 np=$2 how=$3 ex=$4 viewopt=$5; shift 5
  if [ -n "${CSRK_TUT_ONLY:-}" ] && ! [[ $name =~ $CSRK_TUT_ONLY ]]; then return; fi
  [ "${BUILT[$ex]:-no}" = yes ] || return
  local exe=$OUTDIR/$ex key="$ex|$np|$viewopt|$*" ref new=$name envset=
  ref=${REF[$key]:-}
  if [ -z "$ref" ]; then
    ref=ref-$name; REF[$key]=$ref
    run "$ref" "$np" "" "$exe" "$@" "$viewopt" "ascii:$OUTDIR/$ref.view"
  fi
  local -a plug=()
  case $how in
    mat_type)    plug=(-dll_append "$CSRK_LIB" -mat_type csrk) ;;
    dm_mat_type) plug=(-dll_append "$CSRK_LIB" -dm_mat_type csrk) ;;
    load)        plug=(-dll_append "$CSRK_LIB") ;;
    env)         envset="PETSC_OPTIONS=${PETSC_OPTIONS:+$PETSC_OPTIONS }-dll_append $CSRK_LIB -mat_type csrk" ;;
  esac
  run "$new" "$np" "$envset" "$exe" "${plug[@]}" "$@" "$viewopt" "ascii:$OUTDIR/$new.view"
  local rr rn; rr=$(cat "$OUTDIR/$ref.rc") rn=$(cat "$OUTDIR/$new.rc")
  local cmd; cmd=$(head -n 1 "$OUTDIR/$new.cmd")
  if [ "$rr" != 0 ]; then
    fail "$name" "the aij run exited $rr: $(head -n 1 "$OUTDIR/$ref.cmd")"
    cat "$OUTDIR/$ref.out" "$OUTDIR/$ref.err" | tail -n 20 | indent; return
  fi
  if [ "$rn" != 0 ]; then
    fail "$name" "exited $rn: $cmd"; cat "$OUTDIR/$new.out" "$OUTDIR/$new.err" | tail -n 30 | indent; return
  fi
  if grep -qE 'PETSC ERROR|WARNING!' "$OUTDIR/$new.err" "$OUTDIR/$new.out"; then
    fail "$name" "PETSc error or warning printed: $cmd"; grep -hE -A5 'PETSC ERROR|WARNING!' "$OUTDIR/$new.err" "$OUTDIR/$new.out" | indent; return
  fi
  if [ ! -s "$OUTDIR/$new.view" ] || [ ! -s "$OUTDIR/$ref.view" ]; then
    fail "$name" "no $viewopt output in $OUTDIR/$new.view or $OUTDIR/$ref.view: $cmd"; return
  fi
  # the matrix type: csrk where asked for, untouched where the plugin is only loaded
  local want=seqaijcsrk mats; [ "$np" -gt 1 ] && want=mpiaijcsrk
  mats=$(obj_types "$OUTDIR/$new.view" Mat | sort -u | tr '\n' ' ')
  if [ "$how" = load ]; then
    if grep -q csrk <<<"$mats"; then fail "$name" "plugin loaded without -mat_type changed the matrix type to: $mats; $cmd"; return; fi
  elif ! grep -qw "$want" <<<"$mats"; then
    fail "$name" "matrix was not $want (Mat types in the view: ${mats:-none}): $cmd"; return
  fi
  # the same solvers and preconditioners
  local pr pn
  pr=$(obj_types "$OUTDIR/$ref.view" PC | tr '\n' ' ') pn=$(obj_types "$OUTDIR/$new.view" PC | tr '\n' ' ')
  if [ "$pr" != "$pn" ]; then fail "$name" "preconditioner types differ: aij '$pr' vs '$pn': $cmd"; return; fi
  if ! diff <(view_types "$OUTDIR/$ref.view") <(view_types "$OUTDIR/$new.view" | sed -E 's/^(seq|mpi)aijcsrk$/\1aij/') >"$OUTDIR/$name.typediff"; then
    fail "$name" "object types in $viewopt differ (csrk types mapped to aij): $cmd"; indent <"$OUTDIR/$name.typediff"; return
  fi
  # the program's own output, monitors and converged reasons
  local why
  strip_plugin_view "$OUTDIR/$new.out" >"$OUTDIR/$new.out.cmp"
  if ! why=$(numcmp "$OUTDIR/$ref.out" "$OUTDIR/$new.out.cmp"); then
    fail "$name" "output differs: $cmd"
    echo "$why" | indent 8
    diff -u "$OUTDIR/$ref.out" "$OUTDIR/$new.out.cmp" | indent 40; return
  fi
  if ! grep -qE 'solve converged due to' "$OUTDIR/$new.out"; then
    fail "$name" "no converged solve in the output: $cmd"; tail -n 10 "$OUTDIR/$new.out" | indent; return
  fi
  ok "$name"
}

# ---------------------------------------------------------------- the cases
KSPOPT=(-ksp_converged_reason -ksp_monitor)
SNESOPT=(-snes_converged_reason -snes_monitor -ksp_converged_reason)

build ex2 ksp/ksp/tutorials/ex2.c
build ex10 ksp/ksp/tutorials/ex10.c
build ex23 ksp/ksp/tutorials/ex23.c
build ex50 ksp/ksp/tutorials/ex50.c
build ex56 ksp/ksp/tutorials/ex56.c
build ex5 snes/tutorials/ex5.c
build ex19 snes/tutorials/ex19.c
build ex13 snes/tutorials/ex13.c
build ex17 snes/tutorials/ex17.c

# ex2: 2D Laplacian, MatCreate + MatSetFromOptions + preallocation; GMRES with ILU / block Jacobi+ILU
A2=(-m 20 -n 20 "${KSPOPT[@]}")
check ex2-np1             1 mat_type ex2 -ksp_view "${A2[@]}"
check ex2-np3             3 mat_type ex2 -ksp_view "${A2[@]}"
check ex2-np1-env         1 env      ex2 -ksp_view "${A2[@]}"
check ex2-np3-env         3 env      ex2 -ksp_view "${A2[@]}"
check ex2-np1-loaded-only 1 load     ex2 -ksp_view "${A2[@]}"
check ex2-np1-cg-icc      1 mat_type ex2 -ksp_view "${A2[@]}" -ksp_type cg -pc_type icc
check ex2-np3-cg-asm      3 mat_type ex2 -ksp_view "${A2[@]}" -ksp_type cg -pc_type asm -sub_pc_type icc

# ex10: MatLoad of a binary matrix from PETSc's datafiles
F10=
for kind in spd hpd; do
  f=$DATAFILES/matrices/$kind-$SCALAR-int$IDXBITS-$PREC
  if [ -n "$DATAFILES" ] && [ -n "$PREC" ] && [ -f "$f" ]; then F10=$f; break; fi
done
if [ "${BUILT[ex10]:-no}" = yes ] && [ -z "$F10" ]; then
  skip ex10 "no matrices/{spd,hpd}-$SCALAR-int$IDXBITS-${PREC:-?} under ${DATAFILES:-any datafiles folder} (set DATAFILESPATH)"
else
  check ex10-np1          1 mat_type ex10 -ksp_view -f "$F10" "${KSPOPT[@]}"
  check ex10-np3          3 mat_type ex10 -ksp_view -f "$F10" "${KSPOPT[@]}"
  check ex10-np1-rcm      1 mat_type ex10 -ksp_view -f "$F10" "${KSPOPT[@]}" -permute rcm -ksp_type cg -pc_type jacobi
fi

# ex23: 1D Laplacian, MatSetUp without preallocation (hash-based assembly on PETSc >= 3.19)
A23=(-n 100 "${KSPOPT[@]}")
check ex23-np1            1 mat_type ex23 -ksp_view "${A23[@]}"
check ex23-np3            3 mat_type ex23 -ksp_view "${A23[@]}"

# ex50: DMDA + KSPSetComputeOperators (Neumann problem with a null space)
A50=(-da_grid_x 33 -da_grid_y 33 "${KSPOPT[@]}")
check ex50-np1            1 dm_mat_type ex50 -ksp_view "${A50[@]}"
check ex50-np3            3 dm_mat_type ex50 -ksp_view "${A50[@]}"
check ex50-np1-mat_type   1 mat_type    ex50 -ksp_view "${A50[@]}"
check ex50-np3-mg         3 dm_mat_type ex50 -ksp_view -da_grid_x 9 -da_grid_y 9 -da_refine 2 -pc_type mg "${KSPOPT[@]}"

# ex56: 3D elasticity (block size 3) with GAMG, whose coarse operators and prolongators are csrk too, on 8 ranks (a
# cube of them), under the default set-up budget (the other cases build at the first product): blocks with rows but
# no nonzeros of their own on some ranks, structures built and filled by parts, value changes
check ex56-np8-gamg-budget 8 mat_type ex56 -ksp_view -ne 11 -alpha 1.e-3 -ksp_type cg -pc_type gamg -pc_gamg_agg_nsmooths 1 -use_mat_nearnullspace -ksp_rtol 1e-8 -mat_csrk_setup budget "${KSPOPT[@]}"

# ex13 and ex17: DMPlex finite elements on PETSc's unstructured tetrahedral mesh file, Poisson and linear elasticity
# (block size 3) in P1 and P2: every row its own column list and values, assembled by PetscFE into the DM's matrix
# type. On 3 ranks, where PETSc 3.18 applies the mesh's Dirichlet label (on one rank its operator is singular), with
# PETSc's simple partitioner (the default one distributes this mesh differently from run to run).
MESH=
for d in "${DATADIRS[@]}"; do
  if [ -n "$d" ] && [ -f "$d/meshes/mesh-3d-box-innersphere.msh" ]; then MESH=$d/meshes/mesh-3d-box-innersphere.msh; break; fi
done
if [ -z "$MESH" ]; then
  skip ex13-ex17 "no meshes/mesh-3d-box-innersphere.msh under PETSc's data files (set DATAFILESPATH)"
else
  APLEX=(-dm_plex_filename "$MESH" -dm_plex_boundary_label marker -petscpartitioner_type simple -ksp_type cg -pc_type jacobi -ksp_rtol 1e-10 "${SNESOPT[@]}")
  check ex13-np3-p1       3 dm_mat_type ex13 -snes_view "${APLEX[@]}" -dm_refine 2 -potential_petscspace_degree 1
  check ex13-np3-p2       3 dm_mat_type ex13 -snes_view "${APLEX[@]}" -dm_refine 1 -potential_petscspace_degree 2
  check ex17-np3-p1       3 dm_mat_type ex17 -snes_view "${APLEX[@]}" -dm_refine 1 -displacement_petscspace_degree 1
  check ex17-np3-p2       3 dm_mat_type ex17 -snes_view "${APLEX[@]}" -displacement_petscspace_degree 2
fi

# ex5: Bratu problem on a DMDA, Newton
check ex5-np1             1 dm_mat_type ex5 -snes_view "${SNESOPT[@]}"
check ex5-np3             3 dm_mat_type ex5 -snes_view "${SNESOPT[@]}"
check ex5-np1-galerkin-mg 1 dm_mat_type ex5 -snes_view -da_grid_x 17 -da_grid_y 17 -pc_type mg -pc_mg_levels 3 -pc_mg_galerkin pmat "${SNESOPT[@]}"

# ex19: driven cavity, 4 fields per DMDA node
A19=(-da_grid_x 17 -da_grid_y 17 "${SNESOPT[@]}")
check ex19-np1            1 dm_mat_type ex19 -snes_view "${A19[@]}"
check ex19-np3            3 dm_mat_type ex19 -snes_view "${A19[@]}"
check ex19-np3-mat_type   3 mat_type    ex19 -snes_view "${A19[@]}"

[ "$SKIP" -eq 0 ] || echo "# $SKIP skipped"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
