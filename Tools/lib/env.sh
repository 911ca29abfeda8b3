# Shared set-up for Tools/test, Tools/demo and other scripts: sourced, not run.
# Installs what the project needs when missing, so each works on a fresh machine.
export PATH=/opt/swift/usr/bin:$PATH
BUMBLE_VERSION=0.0.236

# Debian packages: libserialport (serial transport), zlib (DFU packages), tshark (capture checks),
# plus any extra names passed in.
herald_ensure_apt() {
  local wanted=()
  pkg-config --exists libserialport 2>/dev/null || wanted+=(libserialport-dev)
  pkg-config --exists zlib 2>/dev/null || wanted+=(zlib1g-dev)
  command -v tshark >/dev/null 2>&1 || wanted+=(tshark)
  for extra in "$@"; do
    dpkg -s "$extra" >/dev/null 2>&1 || wanted+=("$extra")
  done
  [ ${#wanted[@]} -eq 0 ] && return 0
  echo "== installing ${wanted[*]} =="
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${wanted[@]}" >/dev/null
}

# A .venv with the pinned Bumble and pytest; pytest-xdist runs the interop modules two at a time
# (their simulations are paced to wall-clock time, so they mostly wait).
XDIST_VERSION=3.8.0
herald_ensure_venv() {
  if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import bumble, pytest, xdist, sys; from importlib.metadata import version; sys.exit(version('bumble') != '$BUMBLE_VERSION' or version('pytest-xdist') != '$XDIST_VERSION')" 2>/dev/null; then
    echo "== creating .venv with bumble==$BUMBLE_VERSION =="
    python3 -m venv .venv
    .venv/bin/pip install -q --disable-pip-version-check "bumble==$BUMBLE_VERSION" pytest pytest-timeout "pytest-xdist==$XDIST_VERSION"
  fi
}
