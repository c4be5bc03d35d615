#!/usr/bin/env bash
# Checks what `make check-race` needs and, on Debian/Ubuntu as root, installs what is missing (as install-deps.sh does):
#   clang (RACE_CC, default clang) with its ThreadSanitizer runtime, and LLVM's OpenMP runtime with the Archer tool
#   (libomp-dev: libomp.so and libarcher.so). Then builds and runs a two-thread OpenMP program under TSan with Archer.
# Otherwise it prints the packages to install and fails.
set -euo pipefail

cc=${RACE_CC:-clang}
. "$(dirname "$0")/apt.sh"
hint="or set RACE_CC to a clang with TSan and libomp"

command -v "$cc" >/dev/null || apt_install "$hint" clang
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
printf '#include <omp.h>\n#include <stdio.h>\nint main(void) { int a[2] = {0, 0};\n#pragma omp parallel num_threads(2)\n  a[omp_get_thread_num()] = 1;\n  printf("%%d\\n", a[0] + a[1]); return 0; }\n' >"$d/t.c"
links() { "$cc" -g -fopenmp=libomp -fsanitize=thread "$d/t.c" -o "$d/t" >"$d/cc.log" 2>&1; }
archer() {
  local omp
  omp=$(ldd "$d/t" 2>/dev/null | awk '/libomp\.so/ {print $3; exit}')
  [ -n "$omp" ] && [ -f "$(dirname "$(readlink -f "$omp")")/libarcher.so" ] && echo "$(dirname "$(readlink -f "$omp")")/libarcher.so"
}
if ! links || [ -z "$(archer)" ]; then
  major=$("$cc" -dumpversion | cut -d. -f1)
  pkgs=()
  for p in "libomp-$major-dev" libomp-dev; do
    if apt-cache show "$p" >/dev/null 2>&1; then pkgs+=("$p"); break; fi
  done
  [ ${#pkgs[@]} -gt 0 ] || { echo "$cc cannot link -fopenmp=libomp -fsanitize=thread and no libomp-dev package was found" >&2; cat "$d/cc.log" >&2; exit 1; }
  apt_install "$hint" "${pkgs[@]}"
  links || { echo "$cc still cannot link -fopenmp=libomp -fsanitize=thread after installing ${pkgs[*]}" >&2; cat "$d/cc.log" >&2; exit 1; }
fi
lib=$(archer)
[ -n "$lib" ] || { echo "libarcher.so not found next to the libomp of $cc" >&2; exit 1; }
out=$(OMP_TOOL_LIBRARIES=$lib ARCHER_OPTIONS=verbose=1 TSAN_OPTIONS=ignore_noninstrumented_modules=1 "$d/t" 2>&1) || {
  echo "a ThreadSanitizer program does not run here:" >&2
  echo "$out" >&2
  echo "(\"unexpected memory mapping\": the kernel's ASLR is too wide for this TSan; run with setarch \$(uname -m) -R, or sysctl vm.mmap_rnd_bits=28)" >&2
  exit 1
}
echo "$out" | grep -q "^Archer detected" || { echo "Archer ($lib) did not start: $out" >&2; exit 1; }
echo "race dependencies: $("$cc" --version | head -n 1), TSan + libomp + Archer ($lib) run"
