"""Span records (llama_index.postprocessor.camab.spans): model calls and
retrievals filed under the query spans enclosing them, concurrent queries apart, the
inner of two nested calls kept, a streamed answer's late call filed by streaming_for.
Pure logic: spans and models are plain objects."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from types import SimpleNamespace

from llama_index.postprocessor.camab.spans import (
    STREAMING_FOR,
    SpanRecords,
    aread_for,
    read_for,
    streaming_for,
)


class Model:
    """Stands in for a framework's LLM instance."""


def tree() -> SpanRecords:
    """Two queries q1 and q2, each with a retriever and an LLM span under it."""
    records = SpanRecords(lambda instance: isinstance(instance, Model))
    for query in ("q1", "q2"):
        records.open_span(query, None)
        records.open_record(query, f"question {query}")
        records.open_span(f"{query}/retrieve", query)
        records.open_span(f"{query}/llm", query, Model())
    return records


def test_calls_and_documents_go_to_their_own_query() -> None:
    records = tree()
    records.add_documents("q1/retrieve", ["doc a"])
    records.add_documents("q2/retrieve", ["doc b"])
    call = records.add_call("q1/llm", "prompt 1")
    records.add_call("q2/llm", [{"role": "user", "content": "prompt 2"}])
    [q1] = records.records_for("q1/retrieve")
    [q2] = records.records_for("q2/llm")
    assert (q1.question, q1.documents, q1.prompts) == ("question q1", ["doc a"], ["prompt 1"])
    assert q2.documents == ["doc b"] and q2.prompts == [[{"role": "user", "content": "prompt 2"}]]
    assert call is not None and isinstance(q1.model, Model) and q1.model is not q2.model
    assert records.chain("q1/llm") == ["q1/llm", "q1"]


def test_a_call_inside_another_replaces_it_and_the_nearest_model_is_kept() -> None:
    records = tree()
    inner_model = Model()
    records.open_span("q1/llm/complete", "q1/llm", inner_model)
    records.open_span("q1/llm/complete/helper", "q1/llm/complete")
    records.add_call("q1/llm", "chat messages")
    records.add_call("q1/llm/complete/helper", "the prompt the model received")
    [q1] = records.records_for("q1")
    assert q1.prompts == ["the prompt the model received"]
    assert q1.model is inner_model


def test_closing_a_query_span_drops_its_record_and_managed_sticks() -> None:
    records = tree()
    assert records.open_record("q1", "ignored", managed=True).question == "question q1"
    assert records.open_record("q1").managed  # a later open keeps it managed
    records.close_span("q1")
    assert records.records_for("q1/llm") == []
    assert records.add_call("q1/llm", "late") is None  # no query takes it


def test_a_late_call_of_a_stream_goes_to_the_streaming_record() -> None:
    records = tree()
    [q1] = records.records_for("q1")
    records.close_span("q1")
    records.open_span("lazy/llm", None, Model())
    ended: list[str] = []

    def tokens() -> Iterator[str]:
        assert STREAMING_FOR.get() is q1  # pulled while the record is named
        records.add_call("lazy/llm", "streamed prompt")
        yield "a"
        yield "b "

    out = list(read_for(q1, tokens(), ended.append))
    assert out == ["a", "b "] and ended == ["ab "]
    assert q1.prompts == ["streamed prompt"]
    assert STREAMING_FOR.get() is None  # reset after reading
    with streaming_for(None):
        assert records.add_call("lazy/llm", "nobody's") is None


def test_an_async_stream_is_read_for_its_record_then_ended() -> None:
    records = tree()
    [q2] = records.records_for("q2")
    seen: list[object] = []
    ended: list[str] = []

    async def tokens() -> AsyncIterator[str]:
        for token in ("x", "y"):
            seen.append(STREAMING_FOR.get())
            yield token

    async def read() -> list[str]:
        return [t async for t in aread_for(q2, tokens(), ended.append)]

    assert asyncio.run(read()) == ["x", "y"]
    assert seen == [q2, q2] and ended == ["xy"]


def test_an_empty_written_answer_makes_the_frameworks_text_a_placeholder() -> None:
    records = tree()
    records.add_call("q1/llm", "prompt 1")
    records.add_call("q2/llm", "prompt 2")
    [q1] = records.records_for("q1")
    [q2] = records.records_for("q2")
    assert q1.placeholder("Empty Response") is None  # the call has not ended: unknown
    records.add_answer("q1/llm", SimpleNamespace(text=" "))  # a completion response
    records.add_answer("q2/llm", SimpleNamespace(message=SimpleNamespace(content="Paris.")))
    assert [c.answer for c in q1.calls + q2.calls] == [" ", "Paris."]
    problem = q1.placeholder("Empty Response")
    assert problem is not None and "'Empty Response' is the framework's placeholder" in str(problem)
    assert q1.placeholder("") is None  # an empty answer is reported as such elsewhere
    assert q2.placeholder("Paris.") is None
    records.open_span("q2/refine", "q2", Model())  # a later call (a refine step) ...
    records.add_call("q2/refine", "refine prompt")
    records.add_answer("q2/refine", SimpleNamespace(text=""))  # ... writes nothing
    assert [c.answer for c in q2.calls] == ["Paris.", ""]
    assert q2.placeholder("Paris.") is None  # the earlier call's answer stands
