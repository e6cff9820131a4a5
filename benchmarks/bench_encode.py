"""Host-side encoding per request: the tokenizer work the in-process scorer does before a
forward pass.

The requests are the ones ``method="auto"`` asks about on HotpotQA distractor examples
(the gold answer attributed, sentence granularity, default prompt, budget 40), recorded
without a model (a word-overlap reward stands in). Each is encoded two ways by
:class:`camab_rag.scorers.encoding.RequestEncoder`, with the SmolLM2 tokenizer and chat
template:

* one request at a time, nothing kept: the prompt, the joint text and the response are
  tokenized for every request (what the scorer did before the encoder);
* the call's requests together, as ``TransformersScorer.score`` now does: the prompts in
  one batched tokenizer call, the response and the boundary check (the template's tail
  after its last special token + the response) once, kept for later calls.

Wall time per request, the best of ``--repeats`` passes. The forward time a request of the
same size needs at the raw rate an H100 measured for a LLaMA-3.1-8B-shaped model in issue
#24 (32.4k tok/s at batch 1) is shown for scale: host work that rivals it keeps the GPU
idle.

    .venv/bin/python benchmarks/bench_encode.py --examples 3
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._report import markdown_table, write_section  # noqa: E402
from benchmarks.bench_prefix_reuse import DATA, WordOverlap, documents_of  # noqa: E402
from camab_rag import AttributionSettings  # noqa: E402
from camab_rag.methods import Auto  # noqa: E402
from camab_rag.scorers.base import BaseScorer, ResponseLogprobs, ScoreRequest  # noqa: E402

H100_8B_RAW_TOK_S = 32_400
"""Raw forward rate of a LLaMA-3.1-8B-shaped model at batch 1 on an H100 (issue #24)."""


class Recorder(BaseScorer):
    """Keeps every request, answers with the word-overlap reward."""

    def __init__(self) -> None:
        self.calls: list[list[ScoreRequest]] = []
        self.inner = WordOverlap()

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        self.calls.append(list(requests))
        return self.inner.score(requests)


def recorded_calls(n_examples: int, budget: int, batch_size: int) -> list[list[ScoreRequest]]:
    import camab_rag

    with DATA.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for _, line in zip(range(n_examples), handle)]
    calls: list[list[ScoreRequest]] = []
    for row in rows:
        recorder = Recorder()
        camab_rag.attribute(
            row["question"],
            documents_of(row),
            str(row["answer"]),
            recorder,
            budget=budget,
            method=Auto(batch_size=batch_size),
            settings=AttributionSettings(seed=0, statements=False),
        )
        calls += recorder.calls
    return calls


def one_request_encoder(scorer: Any) -> Any:
    """The work the scorer did per request before the encoder: a fresh encoder (nothing
    kept: the response tokenized and decoded again) without special-token splitting, so
    the whole joint text is tokenized for the boundary flag, as it was."""
    from camab_rag.scorers.encoding import RequestEncoder

    encoder = RequestEncoder(scorer.tokenizer, scorer.render_prompt)
    encoder._splitters = ()  # the boundary flag from the whole joint text, as before
    return encoder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=3)
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    from camab_rag.scorers import TransformersScorer
    from camab_rag.scorers.encoding import RequestEncoder

    scorer = TransformersScorer("smollm2", num_threads=1)
    rows = []
    for q in (1, 8):
        calls = recorded_calls(args.examples, args.budget, q)
        requests = [r for call in calls for r in call]
        tokens = sum(
            len(e.prompt_ids) + len(e.response_ids)
            for e in RequestEncoder(scorer.tokenizer, scorer.render_prompt).encode(requests)
        )
        alone_s = together_s = float("inf")
        for _ in range(args.repeats):
            started = time.perf_counter()
            for request in requests:
                one_request_encoder(scorer).encode([request])
            alone_s = min(alone_s, time.perf_counter() - started)
            encoder = RequestEncoder(scorer.tokenizer, scorer.render_prompt)
            started = time.perf_counter()
            for call in calls:
                encoder.encode(call)
            together_s = min(together_s, time.perf_counter() - started)
        per_request = tokens / len(requests)
        rows.append(
            [
                q,
                len(requests),
                f"{per_request:.0f}",
                f"{1e3 * alone_s / len(requests):.2f}",
                f"{1e3 * together_s / len(requests):.2f}",
                f"{alone_s / together_s:.1f}x",
                f"{1e3 * per_request / H100_8B_RAW_TOK_S:.1f}",
            ]
        )
    header = [
        "requests per call (q)",
        "requests",
        "tokens/request",
        "one at a time ms/request",
        "per call ms/request",
        "speed-up",
        "H100 8B raw forward ms/request",
    ]
    body = markdown_table(header, rows) + (
        f"\n\n{args.examples} HotpotQA distractor dev example(s) from the top of the file, "
        f'`method="auto"`, budget {args.budget}, the requests of each call as the engine '
        "sends them (q = Thompson draws per round), recorded with a word-overlap reward. "
        "SmolLM2's tokenizer and chat template; wall time, best of "
        f"{args.repeats} passes, on this machine's shared cores. 'One at a time' tokenizes "
        "each request's prompt, joint text and response (the scorer before the encoder); "
        "'per call' is `RequestEncoder` as `TransformersScorer.score` uses it (prompts "
        "batched, the response and the boundary check once): the ids are the same "
        "(tests/test_encoding.py). The last column is the forward time a request "
        "of that size needs at 32.4k tok/s, the raw rate of a LLaMA-3.1-8B-shaped model at "
        "batch 1 on an H100 (issue #24), for scale."
    )
    print(body)
    write_section("encode", "Host-side encoding per request (in-process scorer)", body)


if __name__ == "__main__":
    main()
