#!/usr/bin/env bash
# Run every test suite: the core's (tests/), then each tool's and integration's own. pytest's
# exit code 5 ("no tests collected") is a failure here: a suite that silently collects
# nothing must not pass.
# A failed test runs once more, alone: one that passes then is named FLAKY at the end of the
# output and does not fail the run; one that fails again does, and is named there too.
#
# One vLLM server (for the HTTP-scorer and integration tests) is started here with
# `camab serve`, in the background, and shared by every suite through CAMAB_TEST_VLLM_PORT:
# the suites that need it wait for its health.
#
# The steps (`make lint` and the suites; the core's tests/ is two of them, split by file)
# run on CAMAB_TEST_JOBS workers at once (default: one more than the CPU count, at most 4),
# each taking the next step from one list, longest first: the suites are single-threaded
# Python most of the time and each also waits (on the vLLM server, on the CLI's
# subprocesses), so one worker more than the cores keeps both
# cores busy through those waits (one worker runs them one after the other). Each step's
# output goes to .pytest_cache/run_tests/STEP.log and is printed whole when the step ends,
# so two steps' lines never interleave. Each pytest run gets OMP_NUM_THREADS = cores / workers
# (torch's threads) unless OMP_NUM_THREADS is set: two workers with two torch threads each
# would fight over two cores.
#
#   scripts/run_tests.sh [PYTEST_ARGS...]         the suites
#   scripts/run_tests.sh --lint [PYTEST_ARGS...]  `make lint` as one more step (what `make
#       test` runs): about a minute of CPU with no waits, it is one of the short steps that
#       fill the tail; a lint failure fails the run once every step has ended
set -uo pipefail
# job control: each worker is its own process group, so an interrupted run stops its pytest
# processes too (stop_all)
set -m
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_WAIT_POLICY=PASSIVE
# Every Python process here (the pytest runs, the vLLM server, the CLI's subprocesses, Ray's
# workers) imports torch or vLLM: where PYTHONDONTWRITEBYTECODE is set, each one compiles
# them from source again (torch and transformers: 14 CPU-s a process, 8 of them compiling).
# The bytecode goes into .venv and .venv-vllm, the environments setup.sh made.
unset PYTHONDONTWRITEBYTECODE

server_pid=""
workers=()
stop_all() {
    local pid
    for pid in "${workers[@]}"; do
        kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null
    done
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null
        wait "$server_pid" 2>/dev/null
    fi
}
trap stop_all EXIT
trap 'exit 130' INT TERM
if [ "${CAMAB_SKIP_VLLM:-0}" != "1" ] && [ -x .venv-vllm/bin/python ] \
    && [ -z "${CAMAB_TEST_VLLM_PORT:-}" ]; then
    port="$(.venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    # the README's one command; it prints the base_url once healthy (a test checks it)
    mkdir -p .pytest_cache
    export CAMAB_TEST_VLLM_SERVE_OUT="$PWD/.pytest_cache/vllm-serve.out"
    # VLLM_ENABLE_V1_MULTIPROCESSING=0: the model runs in the engine's process, not a third
    # one (vLLM's start costs 93 CPU-s, not 126, on this 2-core machine)
    VLLM_ENABLE_V1_MULTIPROCESSING=0 .venv/bin/camab serve --venv .venv-vllm --port "$port" --no-install --log .pytest_cache/vllm.log \
        > "$CAMAB_TEST_VLLM_SERVE_OUT" 2> .pytest_cache/vllm-serve.err &
    server_pid=$!
    export CAMAB_TEST_VLLM_PORT="$port"
    echo "run_tests: shared vLLM server (camab serve) starting on 127.0.0.1:$port (pid $server_pid)"
fi

# (nproc reads OMP_NUM_THREADS as a CPU count: a caller's OMP_NUM_THREADS=1 made 2 workers)
cores="$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2>/dev/null || echo 1)"
jobs="${CAMAB_TEST_JOBS:-$((cores < 3 ? cores + 1 : 4))}"
if ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then
    echo "run_tests: CAMAB_TEST_JOBS must be a positive whole number, got '$jobs'" >&2
    exit 2
fi
threads="${OMP_NUM_THREADS:-$((cores / jobs > 0 ? cores / jobs : 1))}"

lint=0
if [ "${1:-}" = "--lint" ]; then
    lint=1
    shift
fi
# each step's log names its slowest tests (what to trim when make test grows)
set -- --durations=10 --durations-min=5 "$@"

# tests/ is two steps of about the same CPU time: tests:a runs these files (model tests
# that need no vLLM server, so it works from the start while the server boots), tests:b
# the rest of tests/ (a new file lands there). Each pytest start costs about 20 CPU-s of
# imports, so the split is in two, not more.
core_a=(test_transformers_scorer.py test_gate.py test_gate_word_rules.py test_conflicts.py
    test_prior.py test_auto_spends_budget.py test_auto_small_contexts.py test_auto_ties.py
    test_auto_lexical_prior.py)

# The steps, the longest in wall time first (on 2 cores, 3 workers, 2026-11: camab-cli
# 470 s for 130 CPU-s, as it waits on subprocesses and the server; langchain 280 CPU-s;
# tests/ 430 CPU-s in two; post-processor 185; lint 50; llms 55; embeddings 40), so the
# short ones fill the tail: a worker that ends a step takes the next one. The other suites
# (the llms and embeddings adapters, and any new one) follow these five, then lint.
steps=(tools/camab-cli integrations/langchain-camab tests:a tests:b
    integrations/llama-index-postprocessor-camab)
for pkg in tools/*/ integrations/*/; do
    pkg="${pkg%/}"
    if [ -d "$pkg/tests" ]; then
        case " ${steps[*]} " in *" $pkg "*) ;; *) steps+=("$pkg") ;; esac
    fi
done
[ "$lint" = 1 ] && steps+=(lint)
steps+=(benchmarks)

logs=.pytest_cache/run_tests
rm -rf "$logs"
mkdir -p "$logs"
echo 0 > "$logs/next"
: > "$logs/status"
echo "run_tests: ${#steps[@]} steps on $jobs workers (OMP_NUM_THREADS=$threads for pytest): ${steps[*]}"

# One step, behind "${timer[@]}" (/usr/bin/time writing its CPU seconds, where there is one);
# a pytest step runs only the tests in "${again[@]}" (node ids) where that is not empty.
run_step() {
    local step="$1"
    shift
    if [ "$step" = lint ]; then
        "${timer[@]}" "${MAKE:-make}" lint
        return
    fi
    local where=. python=.venv/bin/python
    local -a targets
    case "$step" in
        tests:a) targets=("${core_a[@]/#/tests/}") ;;
        tests:b) targets=(tests "${core_a[@]/#/--ignore=tests/}") ;;
        # the development benchmarks' pure-logic tests (their model smoke run is left to a
        # developer)
        benchmarks) targets=(benchmarks/tests -m "not model") ;;
        *) where="$step" python=../../.venv/bin/python targets=(tests) ;;
    esac
    [ "${#again[@]}" -gt 0 ] && targets=("${again[@]}")
    (cd "$where" && OMP_NUM_THREADS="$threads" "${timer[@]}" "$python" -m pytest \
        "${targets[@]}" "$@")
}

# A step's log, by the step's name.
step_log() {
    echo "$logs/${1//[\/:]/_}.log"
}

# pytest's summary lines of a log's failed and erroring tests, and their node ids.
failed_lines() {
    grep -E '^(FAILED|ERROR) ' "$1"
}
failed_ids() {
    failed_lines "$1" | sed -E 's/^(FAILED|ERROR) //; s/ - .*$//' | sort -u
}

# One worker: take the next step (under a lock), run it into its log, print the log whole
# (under the lock) with its seconds, record its exit status; until no step is left. A pytest
# step whose tests failed runs those tests once more, alone: where they pass, the step passes
# and the run names them as flaky at the end (a load-dependent test must not stop a landing
# unseen, nor hide); where one fails again, the step fails.
worker() {
    local index step log began rc name cpu timer
    local -a again
    while true; do
        index="$(flock "$logs/next" sh -c 'i=$(cat "$1"); echo $((i + 1)) > "$1"; echo "$i"' \
            _ "$logs/next")"
        [ "$index" -lt "${#steps[@]}" ] || return 0
        step="${steps[$index]}"
        log="$(step_log "$step")"
        name="$(basename "$log" .log)"
        began=$SECONDS
        rc=0
        timer=()
        again=()
        [ -x /usr/bin/time ] && timer=(/usr/bin/time -f "%U %S" -o "$PWD/$logs/$name.cpu")
        run_step "$step" "$@" > "$logs/$name.log" 2>&1 < /dev/null || rc=$?
        # the file's last line is "USER SYSTEM" (a failing command's status line comes first)
        cpu="$(tail -n 1 "$logs/$name.cpu" 2>/dev/null | awk '{printf ", %.0f CPU-s", $1 + $2}')"
        if [ "$rc" -eq 1 ] && [ "$step" != lint ]; then
            mapfile -t again < <(failed_ids "$logs/$name.log")
        fi
        if [ "${#again[@]}" -gt 0 ]; then
            timer=()
            if run_step "$step" "$@" > "$logs/$name.again.log" 2>&1 < /dev/null; then
                rc=0
                printf '%s\n' "${again[@]}" > "$logs/$name.flaky"
            fi
        fi
        {
            flock 9
            cat "$logs/$name.log"
            if [ "${#again[@]}" -gt 0 ]; then
                echo "run_tests: $step: the failed tests once more, alone:"
                cat "$logs/$name.again.log"
            fi
            label="$step/"
            [ "$step" = lint ] && label="make lint"
            [[ "$step" = tests:* ]] && label="tests/ (${step#tests:})"
            echo "run_tests: $label took $((SECONDS - began)) s$cpu (exit status $rc)"
            echo "$index $rc" >> "$logs/status"
        } 9> "$logs/print.lock"
    done
}

for _ in $(seq "$jobs"); do
    worker "$@" &
    workers+=($!)
done
for pid in "${workers[@]}"; do
    wait "$pid"
done
workers=()

# the run's status: the first failing step's, in the list's order. Each failing step is named
# again at the end, with its failed tests (or its log's last lines): a CI page that shows only
# the output's tail must still say what failed.
status=0
while read -r index rc; do
    if [ "$rc" -ne 0 ]; then
        [ "$status" -eq 0 ] && status=$rc
        step="${steps[$index]}"
        log="$(step_log "$step")"
        echo "run_tests: FAILED step $step (exit status $rc):"
        [ -f "${log%.log}.again.log" ] && log="${log%.log}.again.log"
        lines="$(failed_lines "$log" | head -n 20)"
        if [ -n "$lines" ]; then
            echo "$lines" | cut -c 1-300
        else
            tail -n 6 "$log" | cut -c 1-300
        fi
    fi
done < <(sort -n "$logs/status")
for flaky in "$logs"/*.flaky; do
    [ -f "$flaky" ] || continue
    echo "run_tests: FLAKY: failed, then passed when run again alone ($(basename "$flaky" .flaky)):"
    cut -c 1-300 "$flaky"
done
if [ "$(wc -l < "$logs/status")" -ne "${#steps[@]}" ]; then
    echo "run_tests: only $(wc -l < "$logs/status") of ${#steps[@]} steps ended" >&2
    [ "$status" -eq 0 ] && status=1
fi
if [ "$status" -eq 5 ]; then
    echo "run_tests: pytest collected no tests" >&2
fi
echo "run_tests: $SECONDS s in all"
exit "$status"
