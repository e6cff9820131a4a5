"""A chain step's dict in and out (langchain_camab.step):
reading the input (with errors that name the fix), the output with per-document entries,
a blocked answer replaced, bad input recorded; LangChain's own documents and messages,
the scorer the keyword fake."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest
from langchain_camab.step import ChainStep, StepInput, StepKeys, added
from langchain_core.documents import Document
from langchain_core.messages import AIMessage

from camab_rag.errors import InputError, WrongTypeError
from camab_rag.groundedness import GroundednessFilter
from camab_rag.integration import ChainParts
from camab_rag.settings import CHAIN_SETTINGS
from tests.fakes import KeywordScorer

KEYS = StepKeys(step="Step", after="a retrieval chain", rename="rename({key})")
DOCS = [Document("Paris is the capital of France."), Document("Berlin is in Germany.")]


def step(settings: Any = CHAIN_SETTINGS, background: bool = False, **options: Any) -> ChainStep:
    chosen = {"settings": settings.with_changes(budget=4), "background": background, **options}
    return ChainStep(KEYS, ChainParts.of("Step", None, chosen))


def no_prompt(input: Mapping[str, Any], read: StepInput) -> None:
    return None


def attributed(chain: ChainStep, input: dict[str, Any], summary: bool = False) -> Any:
    call = chain.start(input, "r1", KeywordScorer, no_prompt)
    chain.run(call)
    return chain.output(input, call, summary)


def test_the_input_is_read_with_the_answer_as_text() -> None:
    read = KEYS.read({"question": "Q?", "context": DOCS, "answer": AIMessage("Paris.")})
    assert (read.question, read.documents, read.answer, read.prompt) == ("Q?", DOCS, "Paris.", None)
    one = KEYS.read({"input": "Q?", "context": "one text", "answer": "A", "prompt": "P"})
    assert one.documents == ["one text"] and one.prompt == "P"


@pytest.mark.parametrize(
    ("input", "message"),
    [
        ([1], r"Step needs a dict .* got list \(put it after .* e.g. a retrieval chain\)"),
        (
            {"q": "Q?"},
            r"no question .*\['input', 'question'\] \(the input's keys: \['q'\]\): "
            r"pass Step\(\.\.\., question_keys=\('my_key',\)\), or rename it .*rename\(question\)",
        ),
        ({"question": "Q?", "docs": []}, r"no documents under 'context'.*context_key='my_key'"),
        ({"question": "Q?", "context": []}, r"no answer under 'answer'.*rename\(answer\)"),
        ({"question": "Q?", "context": [], "answer": 3}, "a string or a message, got int"),
    ],
)
def test_a_bad_input_says_what_is_missing_and_how_to_point_the_step(
    input: object, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        KEYS.read(input)


def test_one_key_is_one_key_and_a_key_must_be_a_string() -> None:
    assert StepKeys(question_keys="query").question_keys == ("query",)
    assert StepKeys(question_keys=["q", "query"]).question_keys == ("q", "query")
    with pytest.raises(WrongTypeError, match="question_keys must be a key"):
        StepKeys(question_keys=[3])  # type: ignore[list-item]
    with pytest.raises(WrongTypeError, match=r"context_key must be a key .* got 3"):
        StepKeys(context_key=3)  # type: ignore[arg-type]


def test_the_output_carries_the_summary_and_each_documents_entry() -> None:
    input = {
        "question": "Which city is the capital of France?",
        "context": DOCS,
        "answer": AIMessage("Paris is the capital."),
    }
    output = attributed(step(), input)
    assert output["attribution"]["status"] == "ok"
    assert output["answer"].response_metadata["attribution"] is output["attribution"]
    assert isinstance(output["answer"].content, str)  # no citations unless asked
    cited = attributed(step(citations=True), input)["answer"]
    assert cited.content[0]["annotations"][0]["cited_text"] == DOCS[0].page_content
    entries = [d.metadata["attribution"] for d in output["context"]]
    assert [e["rank"] for e in entries] == [1, 2]
    assert all("attribution" not in d.metadata for d in DOCS)  # copies, not the input's
    summary = attributed(
        step(), {**input, "context": [Document(d.page_content) for d in DOCS]}, True
    )
    assert summary["status"] == "ok" and "context" not in summary


def test_a_blocked_answer_is_replaced_by_the_fallback_in_its_own_type() -> None:
    # every answer blocked: a score no answer reaches, read strictly (block_on="any")
    gate = GroundednessFilter(mode="block", threshold=1e9, fallback="I cannot say.", block_on="any")
    blocking = step(groundedness=gate)
    assert not blocking.passes_through(False)  # judged before anyone sees the answer
    assert step().passes_through(False) and not step().passes_through(True)
    input = {"question": "Q?", "context": DOCS, "answer": AIMessage("Paris.")}
    assert attributed(blocking, input)["answer"].text == "I cannot say."
    assert attributed(blocking, {**input, "answer": "Paris."})["answer"] == "I cannot say."


def test_bad_input_is_recorded_where_it_fits() -> None:
    chain = step()
    output: Any = chain.start({"question": "Q?"}, "r8", KeywordScorer, no_prompt, summary=True)
    assert output["status"] == "error" and "no documents under 'context'" in output["error"]
    with pytest.raises(ValueError, match="needs a dict"):
        step(strict=True).start([1], None, KeywordScorer, no_prompt)
    failed = chain.failed({"answer": AIMessage("A")}, ValueError("no question"), "r9", False)
    assert failed["attribution"]["status"] == "error"
    assert failed["answer"].response_metadata["attribution"]["error"] == "ValueError: no question"
    assert chain.runs.last_result is not None and chain.runs.last_result.status == "error"
    assert chain.failed(AIMessage("A"), ValueError("x"), None, False).response_metadata[
        "attribution"
    ]
    assert chain.failed(7, ValueError("x"), None, False) == 7
    assert chain.failed(7, ValueError("x"), None, True)["status"] == "error"


def test_a_background_call_fills_its_placeholders_and_async_drains_progress() -> None:
    chain = step(background=True)
    input = {"question": "Which city?", "context": DOCS, "answer": "Paris."}
    call = chain.start(input, None, KeywordScorer, no_prompt)
    chain.run(call)
    assert chain.runs.job().result().status == "ok"
    assert call.attachment.answer["status"] == "ok"
    sent: list[dict[str, Any]] = []

    async def emit(data: dict[str, Any]) -> None:
        sent.append(data)

    hooked: list[int] = []
    inline = step(progress=lambda calls, total: hooked.append(calls))
    call = inline.start(input, "r2", KeywordScorer, no_prompt, emit)
    asyncio.run(inline.arun(call))
    assert sent and sent[-1]["calls"] == sent[-1]["total"] and sent[-1]["run_id"] == "r2"
    assert hooked == [data["calls"] for data in sent]


def test_streamed_documents_get_the_entries_and_chunks_add_up() -> None:
    original, entry = Document("a"), {"attribution": {"rank": 1}}
    streamed = {"context": [original], "answer": AIMessage("x")}
    output = {"context": [Document("a", metadata=entry)], "attribution": {"status": "ok"}}
    last = step().last_chunk(streamed, output, dict, lambda answer, data: (answer.text, data))
    assert original.metadata == entry
    assert last == {"attribution": {"status": "ok"}, "answer": ("x", {"status": "ok"})}
    assert step().last_chunk(streamed, "not a dict") == {}
    merged = added(added(None, {"answer": "Par", "n": [1]}), {"answer": "is", "k": object()})
    assert merged["answer"] == "Paris" and merged["n"] == [1] and "k" in merged
    assert added(1, "x") == "x"  # not addable: the newer value
