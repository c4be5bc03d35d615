#!/usr/bin/env bash
# build-petsc.sh -- build and install a PETSc release from its PyPI source
# tarball (sdist), for petsc-csrk to build against.
#
# Usage:
#   bash configure-hooks/build-petsc.sh [--cuda] [--prefix DIR] [--version V]
#                                       [--tarball FILE] [--force] [-- EXTRA...]
#
#   --cuda          build the CUDA flavour (--with-cuda-arch=90, OpenBLAS)
#   --prefix DIR    install prefix (default: <repo>/deps/petsc-<V>-<cpu|cuda>)
#   --version V     PETSc version (default: 3.26.1)
#   --tarball FILE  sdist to use (default: <repo>/deps/petsc-<V>.tar.gz; if it
#                   is missing it is fetched with `pip download` when possible.
#                   Machines without network need the tarball carried along.)
#   --force         rebuild even if <prefix>/lib/pkgconfig/PETSc.pc exists
#   -- EXTRA...     further options passed verbatim to PETSc's ./configure
#
# Environment: MPICC / MPICXX (default mpicc / mpicxx from PATH), NVCC_DIR /
# CUDA_HOME (CUDA toolkit root, used when nvcc is not on PATH), JOBS (make
# parallelism, default $(nproc)).
#
# The sources are unpacked to <repo>/deps/petsc-<V>/ and built there in
# PETSC_ARCH=arch-<flavour>-opt, then installed with `make install`.
# Afterwards use PETSC_DIR=<prefix> with an empty PETSC_ARCH, or
#   PKG_CONFIG_PATH=<prefix>/lib/pkgconfig pkg-config --cflags --libs PETSc
# No --download-* options are used: MPI and BLAS/LAPACK come from the system.
set -euo pipefail

msg()  { printf '[build-petsc] %s\n' "$*"; }
warn() { printf '[build-petsc] WARNING: %s\n' "$*" >&2; }
die()  { printf '[build-petsc] ERROR: %s\n' "$*" >&2; exit 1; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
DEPS_DIR="$REPO_ROOT/deps"

VERSION=3.26.1
FLAVOUR=cpu
PREFIX=
TARBALL=
FORCE=0
EXTRA_ARGS=()

usage() { sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --cuda)      FLAVOUR=cuda ;;
    --prefix)    [ $# -ge 2 ] || die "--prefix needs an argument"; PREFIX=$2; shift ;;
    --prefix=*)  PREFIX=${1#*=} ;;
    --version)   [ $# -ge 2 ] || die "--version needs an argument"; VERSION=$2; shift ;;
    --version=*) VERSION=${1#*=} ;;
    --tarball)   [ $# -ge 2 ] || die "--tarball needs an argument"; TARBALL=$2; shift ;;
    --tarball=*) TARBALL=${1#*=} ;;
    --force)     FORCE=1 ;;
    -h|--help)   usage; exit 0 ;;
    --)          shift; EXTRA_ARGS=("$@"); break ;;
    *)           die "unknown option '$1' (see --help)" ;;
  esac
  shift
done

abspath() { # make a path absolute without requiring it to exist
  case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$PWD/$1" ;; esac
}

[ -n "$PREFIX" ]  || PREFIX="$DEPS_DIR/petsc-$VERSION-$FLAVOUR"
[ -n "$TARBALL" ] || TARBALL="$DEPS_DIR/petsc-$VERSION.tar.gz"
PREFIX=$(abspath "$PREFIX")
TARBALL=$(abspath "$TARBALL")
SRC_DIR="$DEPS_DIR/petsc-$VERSION"
ARCH="arch-$FLAVOUR-opt"
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
PC_FILE="$PREFIX/lib/pkgconfig/PETSc.pc"

msg "PETSc $VERSION, flavour '$FLAVOUR'"
msg "  repo root : $REPO_ROOT"
msg "  tarball   : $TARBALL"
msg "  sources   : $SRC_DIR (PETSC_ARCH=$ARCH)"
msg "  prefix    : $PREFIX"
msg "  jobs      : $JOBS"

if [ -f "$PC_FILE" ] && [ "$FORCE" -eq 0 ]; then
  msg "already installed ($PC_FILE exists); nothing to do (use --force to rebuild)"
  exit 0
fi

mkdir -p "$DEPS_DIR"

# ---------------------------------------------------------------- sources
if [ ! -x "$SRC_DIR/configure" ]; then
  if [ ! -f "$TARBALL" ]; then
    msg "tarball not found; trying: pip download petsc==$VERSION --no-deps --no-binary :all:"
    tarball_dir=$(dirname "$TARBALL")
    mkdir -p "$tarball_dir"
    if python3 -m pip download "petsc==$VERSION" --no-deps --no-binary :all: \
         -d "$tarball_dir"; then
      [ -f "$TARBALL" ] || TARBALL="$tarball_dir/petsc-$VERSION.tar.gz"
    fi
    [ -f "$TARBALL" ] || die "no tarball at $TARBALL and the download failed;
  on a machine without network, carry deps/petsc-$VERSION.tar.gz (or the
  unpacked deps/petsc-$VERSION/) along, or pass --tarball FILE"
  fi
  msg "unpacking $TARBALL into $DEPS_DIR"
  top=$(tar -tzf "$TARBALL" | head -n 1 | cut -d/ -f1) || true
  [ "$top" = "petsc-$VERSION" ] || die "unexpected tarball layout (top dir '$top', expected petsc-$VERSION)"
  tar -xzf "$TARBALL" -C "$DEPS_DIR"
  [ -x "$SRC_DIR/configure" ] || die "no configure script in $SRC_DIR after unpacking"
else
  msg "using already unpacked sources in $SRC_DIR"
fi

# ---------------------------------------------------------------- toolchain
MPICC=${MPICC:-mpicc}
MPICXX=${MPICXX:-mpicxx}
command -v "$MPICC"  >/dev/null || die "$MPICC not found on PATH (install Open MPI, e.g. libopenmpi-dev)"
command -v "$MPICXX" >/dev/null || die "$MPICXX not found on PATH"
command -v python3   >/dev/null || die "python3 not found (PETSc's configure needs it)"
command -v make      >/dev/null || die "make not found"
msg "MPI C compiler  : $(command -v "$MPICC") ($("$MPICC" --version 2>/dev/null | head -n 1))"
msg "MPI C++ compiler: $(command -v "$MPICXX")"

have_lib() { # have_lib libfoo: is libfoo.so in the C compiler's search path?
  local f
  f=$("$MPICC" -print-file-name="$1.so" 2>/dev/null) || return 1
  [ "$f" != "$1.so" ] && [ -e "$f" ]
}

apt_install() { # apt_install pkg...: only when root and apt-get exists
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    msg "installing with apt-get: $*"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" \
      || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"; }
  else
    return 1
  fi
}

CONF_ARGS=(
  --prefix="$PREFIX"
  PETSC_ARCH="$ARCH"
  --with-cc="$MPICC"
  --with-cxx="$MPICXX"
  --with-fc=0
  --with-debugging=0
  --with-shared-libraries=1
  --with-x=0
  --with-c2html=0
  --with-make-np="$JOBS"
  COPTFLAGS=-O3
  CXXOPTFLAGS=-O3
)

if [ "$FLAVOUR" = cuda ]; then
  if ! have_lib libopenblas; then
    apt_install libopenblas-dev || die "OpenBLAS (libopenblas.so) not found; install libopenblas-dev"
  fi
  if ! command -v nvcc >/dev/null; then
    for d in "${NVCC_DIR:-}" "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
      if [ -n "$d" ] && [ -x "$d/bin/nvcc" ]; then export PATH="$d/bin:$PATH"; break; fi
    done
  fi
  command -v nvcc >/dev/null || die "nvcc not found (put the CUDA toolkit's bin/ on PATH or set CUDA_HOME)"
  msg "nvcc            : $(command -v nvcc) ($(nvcc --version | tail -n 1))"
  CONF_ARGS+=(
    --with-cuda=1
    --with-cuda-arch=90
    CUDAOPTFLAGS=-O3
    --with-blaslapack-lib=-lopenblas
  )
else
  # nvcc may exist on a CPU machine too; keep configure from picking it up.
  CONF_ARGS+=(--with-cuda=0 --with-cudac=0)
  if ! have_lib liblapack && ! have_lib libopenblas; then
    apt_install liblapack-dev libblas-dev || die "no BLAS/LAPACK found; install liblapack-dev (or libopenblas-dev)"
  fi
fi
CONF_ARGS+=("${EXTRA_ARGS[@]+"${EXTRA_ARGS[@]}"}")

# Open MPI refuses to run as root unless told otherwise; configure runs MPI
# test programs.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# A stray PETSC_DIR/PETSC_ARCH in the environment would confuse configure.
unset PETSC_DIR PETSC_ARCH
unset PETSC_CONFIGURE_OPTIONS

cd "$SRC_DIR"
if [ "$FORCE" -eq 1 ] && [ -d "$ARCH" ]; then
  msg "--force: removing previous build directory $SRC_DIR/$ARCH"
  rm -rf "$ARCH"
fi

fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# ---------------------------------------------------------------- configure
msg "configure: ./configure ${CONF_ARGS[*]}"
t0=$SECONDS
if ! python3 ./configure "${CONF_ARGS[@]}"; then
  die "configure failed after $(fmt_time $((SECONDS - t0))); see $SRC_DIR/configure.log"
fi
t_conf=$((SECONDS - t0))
msg "configure finished in $(fmt_time "$t_conf")"

# ---------------------------------------------------------------- build
t0=$SECONDS
msg "build: make -j$JOBS PETSC_DIR=$SRC_DIR PETSC_ARCH=$ARCH all"
make -j"$JOBS" PETSC_DIR="$SRC_DIR" PETSC_ARCH="$ARCH" all \
  || die "make failed; see $SRC_DIR/$ARCH/lib/petsc/conf/make.log"
t_make=$((SECONDS - t0))
msg "make finished in $(fmt_time "$t_make")"

# ---------------------------------------------------------------- install
t0=$SECONDS
msg "install: make PETSC_DIR=$SRC_DIR PETSC_ARCH=$ARCH install"
make PETSC_DIR="$SRC_DIR" PETSC_ARCH="$ARCH" install || die "make install failed"
t_inst=$((SECONDS - t0))
msg "make install finished in $(fmt_time "$t_inst")"

[ -f "$PC_FILE" ] || die "install did not produce $PC_FILE"
if command -v pkg-config >/dev/null; then
  msg "pkg-config PETSc version: $(PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" pkg-config --modversion PETSc)"
fi
msg "done: configure $(fmt_time "$t_conf"), make $(fmt_time "$t_make"), install $(fmt_time "$t_inst")"
msg "use: PETSC_DIR=$PREFIX PETSC_ARCH= (or PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig)"
