"""The evaluation harness: the CAMAB paper's protocol on real data, with real peers.

* :mod:`benchmarks.data`: HotpotQA, CNN/DailyMail, TyDi QA (or any JSONL in
  their formats) as :class:`~benchmarks.data.Example`.
* :mod:`~benchmarks.evaluation.metrics`: top-k log-prob drop, BERTScore consistency, gold
  alignment (P@1, F1@2, F1@k*, AUROC, AP), the HotpotQA answer check.
* :mod:`~benchmarks.evaluation.runner`: resumable runs, one JSONL line per example.
* :mod:`~benchmarks.evaluation.report`: Markdown tables with 95% CIs and PNG plots.
* :mod:`~benchmarks.evaluation.cli`: ``python -m benchmarks eval`` (was ``camab bench``).

Needs the repository's ``[bench]`` extra for BERTScore and the real peers (``shap``,
``context-cite``).
"""
