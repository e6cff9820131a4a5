"""A chain step's dict in and out (CamabAttributor):
reading the input (with errors that name the fix), the output with per-document entries,
a blocked answer replaced, bad input recorded; LangChain's own documents and messages,
the scorer the keyword fake."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_camab import CamabAttributor
from langchain_camab.attributor import added
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.runnables import Runnable, RunnableParallel

from camab_rag.errors import InputError, WrongTypeError
from camab_rag.groundedness import GroundednessFilter
from camab_rag.settings import CHAIN_SETTINGS
from tests.fakes import KeywordScorer

DOCS = [Document("Paris is the capital of France."), Document("Berlin is in Germany.")]


def step(**options: Any) -> CamabAttributor:
    settings = CHAIN_SETTINGS.with_changes(budget=4)
    return CamabAttributor(KeywordScorer(), settings=settings, **options)


def summary(chain: CamabAttributor) -> Runnable[Any, Any]:
    """The step under a map key (``.assign(attribution=step)``): the summary alone."""
    return RunnableParallel(attribution=chain)


def attributed(chain: CamabAttributor, input: dict[str, Any], alone: bool = False) -> Any:
    return summary(chain).invoke(input)["attribution"] if alone else chain.invoke(input)


def test_the_input_is_read_with_the_answer_as_text() -> None:
    read, prompt = step()._read({"question": "Q?", "context": DOCS, "answer": AIMessage("Paris.")})
    assert (read.question, read.documents, read.answer, prompt) == ("Q?", DOCS, "Paris.", None)
    one, prompt = step()._read({"input": "Q?", "context": "one text", "answer": "A", "prompt": "P"})
    assert one.documents == ["one text"] and prompt == "P"


@pytest.mark.parametrize(
    ("input", "message"),
    [
        ([1], r"Attributor needs a dict .* got list \(put it after .* create_retrieval_chain"),
        (
            {"q": "Q?"},
            r"no question .*\['input', 'question'\] \(the input's keys: \['q'\]\): "
            r"pass CamabAttributor\(\.\.\., question_keys=\('my_key',\)\), or rename it "
            r".*assign\(question=lambda",
        ),
        ({"question": "Q?", "docs": []}, r"no documents under 'context'.*context_key='my_key'"),
        ({"question": "Q?", "context": []}, r"no answer under 'answer'.*assign\(answer="),
        ({"question": "Q?", "context": [], "answer": 3}, "a string or a message, got int"),
    ],
)
def test_a_bad_input_says_what_is_missing_and_how_to_point_the_step(
    input: object, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        step(strict=True).invoke(input)


def test_one_key_is_one_key_and_a_key_must_be_a_string() -> None:
    assert step(question_keys="query").question_keys == ("query",)
    assert step(question_keys=["q", "query"]).question_keys == ("q", "query")
    with pytest.raises(WrongTypeError, match="question_keys must be a key"):
        step(question_keys=[3])
    with pytest.raises(WrongTypeError, match=r"context_key must be a key .* got 3"):
        step(context_key=3)


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
    input = {"question": "Q?", "context": DOCS, "answer": AIMessage("Paris.")}
    assert step(groundedness=gate).invoke(input)["answer"].text == "I cannot say."
    assert step(groundedness=gate).invoke({**input, "answer": "Paris."})["answer"] == (
        "I cannot say."
    )
    # judged before anyone sees the answer: a stream holds it back, one chunk in all
    assert len(list(step(groundedness=gate).stream(input))) == 1
    assert len(list(step().stream(input))) == 2  # passed through, then the attribution
    assert len(list(summary(step()).stream(input))) == 1  # the summary alone


def test_bad_input_is_recorded_where_it_fits() -> None:
    output: Any = attributed(step(), {"question": "Q?"}, True)
    assert output["status"] == "error" and "no documents under 'context'" in output["error"]
    with pytest.raises(ValueError, match="needs a dict"):
        step(strict=True).invoke([1])
    chain = step()
    failed = chain.invoke({"answer": AIMessage("A")})
    assert failed["attribution"]["status"] == "error"
    assert "no question" in failed["answer"].response_metadata["attribution"]["error"]
    assert chain.runs.last_result is not None and chain.runs.last_result.status == "error"
    assert chain.invoke(AIMessage("A")).response_metadata["attribution"]["status"] == "error"
    assert chain.invoke(7) == 7
    assert summary(step()).invoke(7)["attribution"]["status"] == "error"


def test_a_background_call_fills_its_placeholders_and_async_drains_progress() -> None:
    chain = step(background=True)
    input = {"question": "Which city?", "context": DOCS, "answer": "Paris."}
    output = chain.invoke(input)
    assert chain.wait().status == "ok"
    assert output["attribution"]["status"] == "ok"  # the placeholder, filled in place
    hooked: list[tuple[int, int]] = []
    inline = step(progress=lambda calls, total: hooked.append((calls, total)))
    asyncio.run(inline.ainvoke(input))
    assert hooked and hooked[-1][0] == hooked[-1][1]


def test_streamed_documents_get_the_entries_and_chunks_add_up() -> None:
    original = [Document(d.page_content) for d in DOCS]
    chunks = [
        {"question": "Which city?", "context": original},
        {"answer": AIMessageChunk(content="Paris")},
    ]
    *_, last = step().transform(iter(chunks))
    assert [d.metadata["attribution"]["rank"] for d in original] == [1, 2]  # in place
    assert last["answer"].response_metadata["attribution"] is last["attribution"]
    assert last["attribution"]["status"] == "ok"
    merged = added(added(None, {"answer": "Par", "n": [1]}), {"answer": "is", "k": object()})
    assert merged["answer"] == "Paris" and merged["n"] == [1] and "k" in merged
    assert added(1, "x") == "x"  # not addable: the newer value


def test_a_failed_run_marks_its_documents_not_the_last_runs_entries() -> None:
    """A retriever that hands back the same Documents kept the last run's ``"ok"`` entry on
    each after a failed step (fresh-user review 24): they now say the run failed."""
    stale = {"status": "ok", "score": 0.058, "rank": 1}
    docs = [Document(d.page_content, metadata={"attribution": stale}) for d in DOCS]
    failed = step().invoke({"context": docs, "answer": AIMessage("Paris.")})  # no question
    assert failed["attribution"]["status"] == "error"
    assert [d.metadata["attribution"]["status"] for d in failed["context"]] == ["error"] * 2
    assert "no question" in failed["context"][0].metadata["attribution"]["error"]
    gate = GroundednessFilter(mode="block", fallback="I cannot say.")
    blocked = step(groundedness=gate).invoke({"context": docs, "answer": "Paris."})
    assert blocked["answer"] == "I cannot say."  # fails closed, and keeps what it hid
    assert blocked["attribution"]["groundedness"]["original_answer"] == "Paris."
    one = step().invoke({"context": docs[0], "answer": "Paris."})["context"]
    assert one.metadata["attribution"]["status"] == "error"  # a single document stays one
    summary(step()).invoke({"context": docs, "answer": "Paris."})  # entries in place
    assert [d.metadata["attribution"]["status"] for d in docs] == ["error"] * 2
