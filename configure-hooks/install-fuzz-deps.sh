#!/usr/bin/env bash
# Checks what `make fuzz` needs and, on Debian/Ubuntu as root, installs what is missing (as install-deps.sh does):
#   clang (FUZZ_CC, default clang) and its compiler-rt with libFuzzer (libclang-rt-<major>-dev on Debian >= 12,
#   part of libclang-common-<major>-dev before).
# Otherwise it prints the packages to install and fails.
set -euo pipefail

cc=${FUZZ_CC:-clang}
. "$(dirname "$0")/apt.sh"
hint="or set FUZZ_CC to a clang with libFuzzer"
# does $cc link a libFuzzer target?
links_fuzzer() {
  local d; d=$(mktemp -d)
  printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$d/t.c"
  "$cc" -fsanitize=fuzzer,address,undefined "$d/t.c" -o "$d/t" >/dev/null 2>&1; local rc=$?
  rm -rf "$d"; return $rc
}

command -v "$cc" >/dev/null || apt_install "$hint" clang
if ! links_fuzzer; then
  major=$("$cc" -dumpversion | cut -d. -f1)
  pkgs=()
  for p in "libclang-rt-$major-dev" "libclang-common-$major-dev"; do
    if ! have_pkg "$p" && apt-cache show "$p" >/dev/null 2>&1; then pkgs+=("$p"); break; fi
  done
  [ ${#pkgs[@]} -gt 0 ] || { echo "$cc cannot link -fsanitize=fuzzer and no libclang-rt-$major-dev package was found" >&2; exit 1; }
  apt_install "$hint" "${pkgs[@]}"
  links_fuzzer || { echo "$cc still cannot link -fsanitize=fuzzer after installing ${pkgs[*]}" >&2; exit 1; }
fi
echo "fuzz dependencies: $("$cc" --version | head -n 1), libFuzzer links"
