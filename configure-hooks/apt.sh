# Shared by the install-*.sh scripts (sourced): Debian package checks and installation.
#   have_pkg PKG             - PKG is installed
#   apt_install HINT PKG...  - as root with apt-get: installs the packages; otherwise prints them with HINT and exits 1
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
apt_install() {
  local hint=$1
  shift
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "installing: $*"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null
  else
    echo "missing: $*" >&2
    echo "install them with: sudo apt-get install $*   ($hint)" >&2
    exit 1
  fi
}
