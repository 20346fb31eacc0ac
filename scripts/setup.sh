# Shared set-up for scripts/run and scripts/test (sourced, not executed).
# Installs missing Debian packages when run as root, else prints the apt-get line;
# then configures and builds the release preset into build/.

RNICSIM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Build: compiler, CMake, and the libraries the code links against (Boost.MPI
# and Open MPI: the engine's ranks over MPI).
RNICSIM_BUILD_PACKAGES="g++ cmake ninja-build pkg-config libgtest-dev libgmock-dev
  libpcap-dev libyaml-cpp-dev libibverbs-dev librdmacm-dev libisal-dev libns3-dev libcli11-dev nlohmann-json3-dev
  libboost-mpi-dev libopenmpi-dev"
# Tests: real RDMA programs, the protocol decoder and an independent ICRC implementation;
# matplotlib for `rnicsim plot` (and its test); iproute2 (ss; ip for the hosts' network) and util-linux
# (setpriv) for the shim tests; ucx-utils (ucx_info) and libfabric-bin (fi_pingpong) for the hosts' tests;
# openmpi-bin (mpirun) for the cluster test and the engine's ranks over MPI;
# clang and its runtime libraries (libFuzzer, sanitizers) for the fuzz preset's fuzzers.
RNICSIM_TEST_PACKAGES="ibverbs-utils rdmacm-utils perftest python3-pyverbs tshark python3-scapy python3-matplotlib iproute2 util-linux
  ucx-utils libfabric-bin openmpi-bin clang libclang-rt-14-dev"

rnicsim_missing_packages() {
  local missing="" p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing="$missing $p"
    fi
  done
  echo "$missing"
}

rnicsim_install() {
  local missing
  # shellcheck disable=SC2086
  missing=$(rnicsim_missing_packages $RNICSIM_BUILD_PACKAGES "$@")
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "rnicsim: missing Debian packages. Run as root:" >&2
    echo "  apt-get update && apt-get install -y$missing" >&2
    exit 1
  fi
  echo "rnicsim: installing$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >&2
}

# The test suite is configured only when its packages are installed: scripts/run
# installs the build packages alone, and a fresh machine has no tshark yet.
rnicsim_build() {
  local jobs tests=ON
  jobs=$(nproc 2>/dev/null || echo 2)
  # shellcheck disable=SC2086
  [ -z "$(rnicsim_missing_packages $RNICSIM_TEST_PACKAGES)" ] || tests=OFF
  cmake --preset release -G Ninja -S "$RNICSIM_ROOT" -DRNICSIM_TESTS="$tests" >/dev/null
  cmake --build "$RNICSIM_ROOT/build" -j "$jobs"
}
