#!/usr/bin/env bash
# Assemble gpu/ (git-ignored), what a lent GPU machine needs for the scorer benchmark and
# cannot fetch: SmolLM2's tokenizer and chat template, and the first 50 HotpotQA dev lines.
# Then, with the device tool: carry ["gpu"] and run
#   CAMAB_BENCH_DATA=gpu python -m benchmarks scorer \
#       --shape llama-3.1-8b --tokenizer gpu/tokenizer --threads 4 --repeats 5 [--attention dense]
#   CAMAB_BENCH_DATA=gpu python -m benchmarks attention --shape llama-3.1-8b --tokenizer gpu/tokenizer
# The device machine gets the session's main checkout: to measure a branch, copy its
# camab_rag/, benchmarks/ and BENCHMARKS.md under gpu/src/ and run from there.
set -euo pipefail
cd "$(dirname "$0")/.."
model_dir="$(.venv/bin/python -c 'from camab_rag.scorers.models import ensure_model; print(ensure_model("smollm2"))')"
mkdir -p gpu/tokenizer
for f in tokenizer.json tokenizer_config.json chat_template.jinja special_tokens_map.json; do
    [ -e "$model_dir/$f" ] && cp "$model_dir/$f" gpu/tokenizer/
done
head -n 50 "${CAMAB_BENCH_DATA:-../shared/data}/hotpotqa_distractor_dev.jsonl" > gpu/hotpotqa_distractor_dev.jsonl
du -sh gpu
