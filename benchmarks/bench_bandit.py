"""Bandit time per round (no model): CAMAB's posterior update + Thompson sample.

For N = 50, 200, 1000 segments, runs the CAMAB sampler against a free synthetic reward and
reports milliseconds per round, next to a naive round that inverts the precision matrix
afresh (O(N^3)), which the rank-one Cholesky update avoids.

    .venv/bin/python benchmarks/bench_bandit.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._report import markdown_table, write_section
from camab_rag.methods import Camab

ROUNDS = 60


def per_round_ms(n: int, rounds: int = ROUNDS) -> float:
    rng = np.random.default_rng(0)
    weights = rng.normal(0, 0.1, n)
    sampler = Camab().sampler(n, rounds, rng)
    start = time.perf_counter()
    while (masks := sampler.next_masks()) is not None:
        sampler.observe(masks, masks.astype(float) @ weights - 2.0)
    return (time.perf_counter() - start) / rounds * 1e3


def naive_round_ms(n: int, rounds: int = 5) -> float:
    """One round done the textbook way: invert B, Cholesky the covariance, sample."""
    rng = np.random.default_rng(0)
    precision = np.eye(n + 1)
    information = np.zeros(n + 1)
    start = time.perf_counter()
    for _ in range(rounds):
        covariance = np.linalg.inv(precision)
        mean = covariance @ information
        w = rng.multivariate_normal(mean, covariance)
        x = np.concatenate(([1.0], w[1:] > 0))
        precision += np.outer(x, x) / 0.01
        information += -2.0 * x / 0.01
    return (time.perf_counter() - start) / rounds * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print, leave BENCHMARKS.md")
    args = parser.parse_args()
    rows = []
    for n in (50, 200, 1000):
        ours, naive = per_round_ms(n), naive_round_ms(n)
        rows.append([n, f"{ours:.2f}", f"{naive:.2f}", f"{naive / ours:.1f}x"])
        print(f"N={n}: {ours:.2f} ms/round (rank-one Cholesky), {naive:.2f} ms/round (naive)")
    body = (
        f"CAMAB sampler alone (posterior sample + subset + rank-one update), {ROUNDS} rounds, "
        "no model calls. 'naive' inverts the precision and factors the covariance every "
        "round (O(N^3)).\n\n"
        + markdown_table(["N segments", "ms / round", "naive ms / round", "speed-up"], rows)
    )
    if not args.no_write:
        write_section("bandit", "Bandit time per round", body)


if __name__ == "__main__":
    main()
