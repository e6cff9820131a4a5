"""The scorer benchmarks' one workload (``scorer``, ``attention``): a HotpotQA-size
prompt and random-init models of a real model's shape (benchmarks/results/speed/README.md)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from benchmarks.data import hotpot_rows

if TYPE_CHECKING:
    from camab_rag.scorers.base import ScoreRequest

SHAPES: dict[str, dict[str, Any]] = {
    "llama-3.1-8b": {
        "vocab_size": 128_256,
        "hidden_size": 4096,
        "intermediate_size": 14_336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "max_position_embeddings": 131_072,
        "rope_theta": 500_000.0,
    },
    "smollm2-135m": {
        "vocab_size": 49_152,
        "hidden_size": 576,
        "intermediate_size": 1536,
        "num_hidden_layers": 30,
        "num_attention_heads": 9,
        "num_key_value_heads": 3,
        "max_position_embeddings": 8192,
        "tie_word_embeddings": True,
    },
}
"""LLaMA-architecture shapes for ``--shape`` (the compute of the real weights)."""


def add_shape_arguments(parser: argparse.ArgumentParser, default: str | None) -> None:
    """``--shape`` (a random-init model of that shape), ``--device``, ``--dtype``, a tokenizer."""
    parser.add_argument("--shape", choices=sorted(SHAPES), default=default)
    parser.add_argument("--device", default="cuda", help="with --shape: the torch device")
    parser.add_argument("--dtype", default="bfloat16", help="with --shape: the torch dtype")
    parser.add_argument("--tokenizer", help="with --shape: a tokenizer directory")


def hotpot_requests(n: int, pattern: str = "loo") -> list[ScoreRequest]:
    """``n`` score requests on one HotpotQA example, each without one context sentence
    (``"loo"``) or keeping each with probability 1/2 (``"random"``, seeded)."""
    import numpy as np

    from camab_rag.prompts import DEFAULT_SYSTEM_PROMPT, DEFAULT_USER_TEMPLATE
    from camab_rag.scorers.base import ScoreRequest

    row = bench_row()

    def prompt(row: dict[str, Any], dropped: set[int]) -> list[dict[str, str]]:
        paragraphs, k = [], 0
        for title, sentences in row["context"]:
            kept = [s for j, s in enumerate(sentences, k) if j not in dropped]
            k += len(sentences)
            paragraphs.append(f"{title}: {''.join(kept).strip()}")
        user = DEFAULT_USER_TEMPLATE.format(
            context="\n\n".join(paragraphs), question=row["question"]
        )
        return [
            {"role": "system", "content": DEFAULT_SYSTEM_PROMPT},
            {"role": "user", "content": user},
        ]

    if pattern == "loo":
        drops = [{drop} for drop in range(n)]
    else:
        rng = np.random.default_rng(0)
        total = sum(len(sents) for _, sents in row["context"])
        drops = [set(np.flatnonzero(rng.random(total) < 0.5).tolist()) for _ in range(n)]
    return [ScoreRequest(prompt(row, dropped), str(row["answer"])) for dropped in drops]


def _size(row: dict[str, Any]) -> int:
    return sum(len(s) for _, sents in row["context"] for s in sents)


def bench_row() -> dict[str, Any]:
    """The one of the first 50 HotpotQA rows whose prompt is closest to ~1,300 tokens."""
    return min(hotpot_rows(50), key=lambda r: abs(_size(r) - 4700))


def shaped_model(
    shape: str, device: str, dtype: str, tokenizer_dir: str | None, threads: int | None = None
) -> tuple[Any, Any]:
    """A random-init (seed 0) model of ``shape`` and the tokenizer of ``tokenizer_dir``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig

    from camab_rag.scorers.models import ensure_model

    if threads:
        torch.set_num_threads(threads)
    source = tokenizer_dir or ensure_model("smollm2")
    tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
    config = LlamaConfig(**SHAPES[shape])
    torch.manual_seed(0)
    factory: Any = AutoModelForCausalLM
    with torch.device(device):
        model = factory.from_config(config, dtype=getattr(torch, dtype))
    return model, tokenizer
