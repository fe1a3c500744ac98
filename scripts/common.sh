# Shared by the README's two commands: install what kjit needs from Debian's
# packages (only when something is missing), then configure and build.
# Sourced, not run.

KJIT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KJIT_BUILD=${KJIT_BUILD:-$KJIT_ROOT/build}

KJIT_PACKAGES=(
  cmake ninja-build g++ python3
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libabsl-dev libgtest-dev libbenchmark-dev libssl-dev clang-format-22
  libzstd-dev libxxhash-dev  # the disk cache: compression, checksums
  libhiredis-dev redis-server  # the fleet cache's Redis store and its tests
  libcli11-dev  # kjit-run's and kjit-cache's command lines (header-only)
  liblld-22-dev  # lld as a library: the host target links kernels in process
  patchelf  # scripts/build-bundle.sh: $ORIGIN run paths in the device bundle
  python3-dev python3-numpy  # the Python package (python/) and its tests
  clang-22 clang-tidy-22  # scripts/check-clang.sh: build-clang/, clang-tidy
)

kjit_install_packages() {
  local missing=()
  for p in "${KJIT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
      missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "kjit: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# Configures $KJIT_BUILD with the CMake options in KJIT_CMAKE_OPTIONS (an
# array, set by the caller: the sanitizer builds) and builds what "$@" says.
kjit_build() {
  local launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -G Ninja -S "$KJIT_ROOT" -B "$KJIT_BUILD" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
    ${KJIT_CMAKE_OPTIONS[@]+"${KJIT_CMAKE_OPTIONS[@]}"}
  cmake --build "$KJIT_BUILD" "$@"
}
