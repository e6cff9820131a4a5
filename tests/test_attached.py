"""What an integration attaches (camab_rag.integration):
placeholders filled in place, titles from document metadata, the chain's result type and
its groundedness verdict read back from wherever an integration put the summary."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pytest

from camab_rag import AttributionResult, AttributionSettings, GroundednessFilter
from camab_rag.errors import InputError
from camab_rag.integration import Attachment, ChainCall, Runs, groundedness_of, titles
from camab_rag.segments import Segment
from camab_rag.steps import drive


@dataclass
class Doc:
    """A framework's document: text and metadata."""

    page_content: str
    metadata: dict[str, Any] = field(default_factory=dict)


DOCS = [Doc("a", {"title": "A"}), Doc("b", {"source": "b.txt"}), Doc("c")]


def ok_result() -> AttributionResult:
    segments = [Segment(t, i, 0, 1) for i, t in enumerate("abc")]
    return AttributionResult(
        scores=np.array([0.1, 0.9, -0.2]), segments=segments, budget=8, n_documents=3
    )


def blocked() -> AttributionResult:
    gate = GroundednessFilter(mode="block")
    call = ChainCall("q", "an answer", problem=InputError("boom"))
    runs: Runs[AttributionResult] = Runs(AttributionSettings(), gate)
    return drive(runs.steps("r9", call, lambda result: result))


def test_titles_come_from_title_or_source() -> None:
    assert titles([*DOCS, "plain text"]) == ["A", "b.txt", None, None]


def test_placeholders_are_filled_in_place() -> None:
    attachment = Attachment.placeholders("r1", 3)
    held = attachment.all()  # what the answer and documents carry meanwhile
    assert [d["status"] for d in held] == ["pending"] * 4
    assert attachment.fill(ok_result(), DOCS) is attachment
    assert attachment.all() == held and all(a is b for a, b in zip(attachment.all(), held))
    assert held[0]["top_documents"] == [1, 0]  # cited, by score: not every document
    assert [d["title"] for d in held[0]["documents"]] == ["A", "b.txt", None]
    assert [d["rank"] for d in held[1:]] == [2, 1, 3]
    assert Attachment.of(ok_result(), DOCS) == attachment


def test_a_failed_attribution_keeps_no_documents_and_its_verdict() -> None:
    result = blocked()
    assert result.status == "error" and result.run_id == "r9" and result.documents == ()
    assert result.groundedness is not None and result.groundedness.blocked
    attached = Attachment.of(result, DOCS)
    assert attached.answer["run_id"] == "r9" and attached.answer["status"] == "error"
    assert [d["status"] for d in attached.documents] == ["error"] * 3
    assert AttributionResult.from_dict(result.to_dict()).groundedness == result.groundedness


def test_the_verdict_is_read_from_wherever_the_summary_was_put() -> None:
    result = blocked()
    data = Attachment.of(result, DOCS).answer

    @dataclass
    class Answer:
        response_metadata: dict[str, Any] | None = None
        metadata: dict[str, Any] | None = None

    for source in (
        result,
        data,
        {"answer": "x", "attribution": data},
        Answer(response_metadata={"attribution": data}),
        Answer(metadata={"attribution": data}),
    ):
        assert groundedness_of(source).blocked, source
    with pytest.raises(KeyError, match="no groundedness"):
        groundedness_of(AttributionResult.failed("boom"))
    with pytest.raises(KeyError, match="verdict"):
        groundedness_of({"attribution": {"status": "ok"}})


def test_an_answers_stored_result_keeps_its_verdict_and_a_blocked_one_reads_withheld() -> None:
    """``attribution_of`` gives back the verdict stored beside the result, so ``cite()``
    shows the fallback of a blocked answer, said in words to be withheld (not the
    clinic's own apology marked "Not supported"); a summary is no result."""
    from camab_rag import cite
    from camab_rag.groundedness import FilteredAnswer
    from camab_rag.integration import attribution_of
    from camab_rag.render.text import WITHHELD, notices

    verdict = FilteredAnswer(
        answer="Sorry, I can't confirm that.",
        original_answer="Dr Petrova.",
        grounded=False,
        blocked=True,
        mode="block",
        report=None,
        verdict="unsupported",
    )
    stored = replace(ok_result(), groundedness=verdict).to_dict()

    @dataclass
    class Response:
        metadata: dict[str, Any]

    result = attribution_of(Response({"attribution": stored}))
    assert result.groundedness is not None and result.groundedness.blocked
    cited = cite(result, ["a", "b", "c"])
    assert cited.withheld and cited.answer == "Sorry, I can't confirm that."
    assert notices(cited)[0] == ("fail", WITHHELD)
    assert "withheld" in cited.to_markdown() and "Not supported" not in cited.to_markdown()
    with pytest.raises(InputError, match="summaries"):
        AttributionResult.from_dict(Attachment.of(ok_result(), DOCS).answer)


def test_a_stored_verdict_reads_back_in_a_fresh_process_from_the_top_level_name() -> None:
    """``AttributionResult.from_dict`` of a judged result works after only
    ``from camab_rag import AttributionResult`` (the gate module loads itself)."""
    import json
    import subprocess
    import sys

    from camab_rag.groundedness import FilteredAnswer

    verdict = FilteredAnswer(
        answer="x",
        original_answer="x",
        grounded=False,
        blocked=True,
        mode="block",
        report=None,
        verdict="unsupported",
    )
    stored = json.dumps(replace(ok_result(), groundedness=verdict).to_dict())
    probe = (
        "import json, sys\nfrom camab_rag import AttributionResult\n"
        "r = AttributionResult.from_dict(json.loads(sys.stdin.read()))\n"
        "print(r.groundedness.verdict, r.groundedness.blocked)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], input=stored, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["unsupported", "True"]
