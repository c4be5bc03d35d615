#!/usr/bin/env bash
# Checks what petsc-csrk needs and, on Debian/Ubuntu as root, installs what is missing:
#   PETSc (petsc-dev, unless PETSC_DIR is set), METIS (libmetis-dev, unless METIS_DIR is set), Open MPI (openmpi-bin),
#   zlib, pkg-config, PETSc's example sources (libpetsc*-dev-examples, for the unmodified-tutorial tests and make apps),
#   valgrind (for make check-valgrind) and, with Debian's PETSc, its petsc4py for the system python3 (python3-petsc4py,
#   for tutorials/ex1.py).
# Otherwise it prints the packages to install and fails.
set -euo pipefail

missing=()
. "$(dirname "$0")/apt.sh"

if [ -n "${PETSC_DIR:-}" ]; then
  conf="$PETSC_DIR/${PETSC_ARCH:-}/lib/petsc/conf/petscvariables"
  [ -f "$conf" ] || conf="$PETSC_DIR/lib/petsc/conf/petscvariables"
  if [ ! -f "$conf" ]; then
    echo "PETSC_DIR=$PETSC_DIR PETSC_ARCH=${PETSC_ARCH:-} does not hold a configured PETSc (no lib/petsc/conf/petscvariables)" >&2
    exit 1
  fi
elif ! pkg-config --exists PETSc 2>/dev/null; then
  missing+=(petsc-dev)
fi
if [ -z "${PETSC_DIR:-}" ] && command -v dpkg-query >/dev/null; then
  # the example sources of the installed Debian PETSc (version-specific package name)
  ver=$(pkg-config --modversion PETSc 2>/dev/null | cut -d. -f1,2 || true)
  if [ -n "$ver" ] && ! have_pkg "libpetsc${ver}-dev-examples"; then missing+=("libpetsc${ver}-dev-examples"); fi
fi
if [ -n "${METIS_DIR:-}" ]; then
  [ -f "$METIS_DIR/include/metis.h" ] || { echo "METIS_DIR=$METIS_DIR has no include/metis.h" >&2; exit 1; }
elif ! pkg-config --exists metis 2>/dev/null && [ ! -f /usr/include/metis.h ]; then
  missing+=(libmetis-dev)
fi
# petsc4py only matches Debian's PETSc: a PETSC_DIR build needs its own (configure PETSc with --with-petsc4py)
if [ -z "${PETSC_DIR:-}" ] && command -v dpkg-query >/dev/null && ! have_pkg python3-petsc4py; then missing+=(python3-petsc4py); fi
command -v mpiexec >/dev/null || missing+=(openmpi-bin)
command -v pkg-config >/dev/null || missing+=(pkg-config)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
command -v valgrind >/dev/null || missing+=(valgrind)

if [ ${#missing[@]} -eq 0 ]; then
  echo "dependencies: all present"
  exit 0
fi
apt_install "or set PETSC_DIR/PETSC_ARCH and METIS_DIR" "${missing[@]}"
# petsc-dev was missing: its examples package is named after the version it brought
if [[ " ${missing[*]} " == *" petsc-dev "* ]]; then
  ver=$(pkg-config --modversion PETSc | cut -d. -f1,2)
  apt-get install -y -qq --no-install-recommends "libpetsc${ver}-dev-examples" >/dev/null || echo "note: libpetsc${ver}-dev-examples not available: the unmodified-tutorial tests will be skipped"
fi
echo "dependencies: installed"
