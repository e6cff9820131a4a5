"""The evaluation harness: the CAMAB paper's protocol on real data, with real peers.

* :mod:`~camab_rag.evaluation.datasets`: HotpotQA, CNN/DailyMail, TyDi QA (or any JSONL in
  their formats) as :class:`~camab_rag.evaluation.datasets.Example`.
* :mod:`~camab_rag.evaluation.metrics`: top-k log-prob drop, BERTScore consistency, gold
  alignment (P@1, F1@2, F1@k*, AUROC, AP), the HotpotQA answer check.
* :mod:`~camab_rag.evaluation.runner`: resumable runs, one JSONL line per example.
* :mod:`~camab_rag.evaluation.report`: Markdown tables with 95% CIs and PNG plots.
* :mod:`~camab_rag.evaluation.cli`: ``camab bench`` (or ``python -m camab_rag.evaluation``).

Needs the ``[bench]`` extra for BERTScore and the real peers (``shap``, ``context-cite``).
"""
