"""The paper-protocol harness (``python -m benchmarks eval``; was ``camab bench``): metrics,
runner, report, the real peers and the reward store; see benchmarks/results/eval/README.md.
Needs the repository's ``[bench]`` extra for BERTScore and the real peers."""
