#!/usr/bin/env bash
# Install torch into a virtual environment, choosing the build (called by `make install`).
#
#   tools/install_torch.sh PYTHON MODE VERSION INDEX
#     MODE   auto — the CPU build on Linux without an NVIDIA GPU (nvidia-smi absent or failing),
#                   PyPI's default build elsewhere (macOS and Windows wheels on PyPI carry no CUDA);
#            cpu  — always the CPU build;
#            gpu  — PyPI's default build (on Linux x86_64: the CUDA build plus its nvidia-* wheels).
#     INDEX  where the CPU build comes from (default in the Makefile: https://download.pytorch.org/whl/cpu).
#
# CPU build, in this order: INDEX when it answers within 5 s; else the configured indexes if they
# already list VERSION+cpu (a local mirror, as on the project's CI machine); else — and said so on
# stderr — the plain pin, which on Linux x86_64 PyPI is the CUDA build.
# DRY_RUN=1 prints the pip command instead of running it (tests/test_install_torch.py).
set -euo pipefail
py=$1 mode=$2 version=$3 index=$4

run() {
  echo "torch: $*" >&2
  if [ "${DRY_RUN:-0}" = 1 ]; then echo "$*"; else "$@"; fi
}

case "$mode" in
  gpu) run "$py" -m pip install -q "torch==$version"; exit ;;
  cpu) ;;
  auto)
    if [ "$(uname -s)" != Linux ] || { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }; then
      echo "torch: TORCH=auto: $( [ "$(uname -s)" != Linux ] && echo "not Linux" || echo "an NVIDIA GPU answers nvidia-smi"): PyPI's default build" >&2
      run "$py" -m pip install -q "torch==$version"; exit
    fi ;;
  *) echo "torch: TORCH=$mode: expected auto, cpu or gpu" >&2; exit 2 ;;
esac

# Whether the configured indexes list VERSION+cpu. The listing is read whole before grep looks at it:
# with pipefail, `pip … | grep -q` fails at random (grep stops at the first match, pip then dies of a
# broken pipe).
cpu_build_listed() {
  local listed
  listed=$("$py" -m pip index versions torch 2>/dev/null || true)
  grep -Eq "(^|[ ,])${version//./\\.}\+cpu(,|$)" <<<"$listed"
}

if "$py" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1].rstrip('/') + '/torch/', timeout=5)" \
     "$index" >/dev/null 2>&1; then
  run "$py" -m pip install -q --index-url "$index" "torch==$version"
elif cpu_build_listed; then
  echo "torch: $index does not answer; the configured indexes list torch $version+cpu: installing that" >&2
  run "$py" -m pip install -q "torch==$version+cpu"
else
  echo "torch: WARNING: $index does not answer and no index lists torch $version+cpu;" \
       "falling back to torch==$version, which on Linux x86_64 is the CUDA build (~527 MB plus nvidia-* wheels)." \
       "Stop now (Ctrl-C) and set TORCH_INDEX=<a reachable CPU index> to avoid it." >&2
  run "$py" -m pip install -q "torch==$version"
fi
