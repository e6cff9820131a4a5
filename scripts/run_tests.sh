#!/usr/bin/env bash
# Run every test suite: the core's (tests/), then each tool's and integration's own. pytest's
# exit code 5 ("no tests collected") is a failure here: a suite that silently collects
# nothing must not pass.
#
# One vLLM server (for the HTTP-scorer and integration tests) is started here with
# `camab serve`, in the background, and shared by every suite through CAMAB_TEST_VLLM_PORT:
# the suites that need it wait for its health.
#
#   scripts/run_tests.sh [PYTEST_ARGS...]         the suites
#   scripts/run_tests.sh --lint [PYTEST_ARGS...]  `make lint` first, then the suites (what
#       `make test` runs): the server boots (about a minute of CPU) while mypy checks
#       types, instead of while the tests wait for it; a lint failure stops here
set -uo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_WAIT_POLICY=PASSIVE

server_pid=""
stop_server() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null
        wait "$server_pid" 2>/dev/null
    fi
}
trap stop_server EXIT
if [ "${CAMAB_SKIP_VLLM:-0}" != "1" ] && [ -x .venv-vllm/bin/python ] \
    && [ -z "${CAMAB_TEST_VLLM_PORT:-}" ]; then
    port="$(.venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    # the README's one command; it prints the base_url once healthy (a test checks it)
    mkdir -p .pytest_cache
    export CAMAB_TEST_VLLM_SERVE_OUT="$PWD/.pytest_cache/vllm-serve.out"
    .venv/bin/camab serve --venv .venv-vllm --port "$port" --no-install --log .pytest_cache/vllm.log \
        > "$CAMAB_TEST_VLLM_SERVE_OUT" 2> .pytest_cache/vllm-serve.err &
    server_pid=$!
    export CAMAB_TEST_VLLM_PORT="$port"
    echo "run_tests: shared vLLM server (camab serve) starting on 127.0.0.1:$port (pid $server_pid)"
fi

# Each step prints its seconds, so a CI log shows where the time goes.
timed() {
    local name="$1" began=$SECONDS rc=0
    shift
    "$@" || rc=$?
    echo "run_tests: $name took $((SECONDS - began)) s (exit status $rc)"
    return "$rc"
}
suite() {
    (cd "$1" && shift && ../../.venv/bin/python -m pytest tests "$@")
}

if [ "${1:-}" = "--lint" ]; then
    shift
    timed "make lint" "${MAKE:-make}" lint || exit $?
fi

status=0
timed "tests/" .venv/bin/python -m pytest tests "$@" || status=$?
for pkg in tools/*/ integrations/*/; do
    if [ -d "$pkg/tests" ]; then
        timed "${pkg}tests/" suite "$pkg" "$@" || status=$?
    fi
done
# the development benchmarks' pure-logic tests (their model smoke run is left to a developer)
timed "benchmarks/tests/" .venv/bin/python -m pytest benchmarks/tests -m "not model" "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "run_tests: pytest collected no tests" >&2
fi
echo "run_tests: $SECONDS s in all"
exit "$status"
