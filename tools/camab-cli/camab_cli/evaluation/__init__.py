"""The evaluation harness: the CAMAB paper's protocol on real data, with real peers.

* :mod:`~camab_cli.evaluation.datasets`: HotpotQA, CNN/DailyMail, TyDi QA (or any JSONL in
  their formats) as :class:`~camab_cli.evaluation.datasets.Example`.
* :mod:`~camab_cli.evaluation.metrics`: top-k log-prob drop, BERTScore consistency, gold
  alignment (P@1, F1@2, F1@k*, AUROC, AP), the HotpotQA answer check.
* :mod:`~camab_cli.evaluation.runner`: resumable runs, one JSONL line per example.
* :mod:`~camab_cli.evaluation.report`: Markdown tables with 95% CIs and PNG plots.
* :mod:`~camab_cli.evaluation.cli`: ``camab bench`` (or ``python -m camab_cli.evaluation``).

Needs the ``[bench]`` extra for BERTScore and the real peers (``shap``, ``context-cite``).
"""
