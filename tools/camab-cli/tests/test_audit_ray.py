"""The Ray Data engine on a local Ray instance gives the single-process engine's output."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray", reason="the [ray] extra is not installed")
pytest.importorskip("ray.data", reason="the [ray] extra is not installed")

import ray

from camab_cli.audit import AuditConfig, ScorerSpec, audit
from camab_cli.audit.lines import without_timing
from camab_cli.audit.outputs import iter_lines

DOCS = [
    "Ann met Bob in Paris. They talked about music.",
    "Cy ran a marathon in Berlin.",
    "Dee plays the violin.",
]
ROWS: list[Any] = [
    {"id": f"r{i}", "question": "Who met whom?", "documents": DOCS, "response": response}
    for i, response in enumerate(
        ["Ann met Bob.", "Cy ran in Berlin.", "Dee plays violin.", "Zebras fly.", "Ann ran."]
    )
]
ROWS.insert(2, {"id": "bad", "question": "Q?", "documents": 5, "response": "x"})


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    # Ray runs its workers at nice 15; beside the other test steps they got ~1/30 of a core
    # (5 min for this test, 40 s alone), so they run at the test's own priority here
    for attempt in (1, 2):  # Ray waits 30 s (fixed) for its raylet: a busy machine can miss it
        try:
            ray.init(
                num_cpus=2,
                include_dashboard=False,
                logging_level=logging.WARNING,
                _system_config={"worker_niceness": 0},
            )
            break
        except Exception as error:
            ray.shutdown()
            if attempt == 2 or "timed out during startup" not in str(error):
                raise
    yield
    ray.shutdown()


def comparable(path: Path) -> dict[str, Any]:
    return {line["id"]: without_timing(line) for line in iter_lines(path)}


def test_ray_engine_matches_the_single_process_engine(tmp_path: Path, local_ray: None) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    spec = ScorerSpec(kind="simulated")
    config = AuditConfig(budget=8, seed=3)
    local = audit(source, tmp_path / "local.jsonl", spec=spec, config=config, progress=False)
    distributed = audit(
        source,
        tmp_path / "ray.jsonl",
        spec=spec,
        config=config,
        engine="ray",
        ray_actors=2,
        ray_batch_size=2,
        progress=False,
    )
    expected = comparable(tmp_path / "local.jsonl")
    assert sorted(expected) == ["r0", "r1", "r2", "r3", "r4"]
    assert comparable(tmp_path / "ray.jsonl") == expected  # same seeds, same scores
    for key in ("records", "groundedness", "documents", "bad_records"):
        assert distributed[key] == local[key], key
    assert distributed["cost"]["queries"] == local["cost"]["queries"] > 0
    assert distributed["records"]["bad_input_lines"] == 1
    assert not (tmp_path / "ray.jsonl.ray-work").exists()  # the work shards are cleaned up

    # resuming on Ray skips what is done and redoes a torn last line
    out = tmp_path / "ray.jsonl"
    raw = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(raw[:-1]) + raw[-1][:10])
    # one actor: each costs a Ray worker process (about 12 CPU-s of start-up here)
    again = audit(source, out, spec=spec, config=config, engine="ray", ray_actors=1, progress=False)
    assert again["records"]["audited_this_run"] == 1
    assert again["records"]["skipped_already_done"] == 4
    assert comparable(out) == expected
