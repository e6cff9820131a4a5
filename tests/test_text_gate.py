"""The input gate (camab_rag.text_gate, issue 50 items 1, 9 and 10): one check of every
text at every door, a typed error naming the field and position before any model call.

The doors are driven with the keyword fake scorer (it records each call) and, where a
user would meet the fault, the real HTTP scorer against a 127.0.0.1 endpoint that counts
the requests it gets (tests/test_http_faults.py's server)."""

from __future__ import annotations

import asyncio
import json
import pickle
from collections.abc import Awaitable, Iterator
from typing import Any

import pytest
from fakes import KeywordScorer, aattribute_captured, attribute_captured
from test_http_faults import FaultyServer, make_scorer, plain

from camab_rag import assess_answer, attribute, cite
from camab_rag.citations import SOURCE_KEYS
from camab_rag.errors import InputError, TextError, TextTypeError, WrongTypeError
from camab_rag.groundedness.calibration import acalibrate, calibrate
from camab_rag.integration import ChainCall, Runs
from camab_rag.scorers.base import ScoreRequest
from camab_rag.settings import CHAIN_SETTINGS
from camab_rag.steps import drive
from camab_rag.text_gate import (
    MAX_CHARS,
    MAX_DEPTH,
    RENDERED_METADATA,
    check_record,
    check_text,
    check_value,
)

DOCS = ["Paris is the capital of France.", "Bananas are yellow."]
QUESTION = "What is the capital of France?"
ANSWER = "Paris is the capital of France."
LABELLED = [(QUESTION, DOCS, ANSWER, True), (QUESTION, DOCS, "Bananas are blue.", False)]


def run(awaitable: Awaitable[Any]) -> Any:
    """Await an async entry point from a plain test."""

    async def main() -> Any:
        return await awaitable

    return asyncio.run(main())


def nested(depth: int) -> object:
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.fixture
def server() -> Iterator[FaultyServer]:
    fake = FaultyServer()
    yield fake
    fake.close()


# ---------------------------------------------------------------------- the check itself
@pytest.mark.parametrize(
    ("text", "reason", "position", "message"),
    [
        ("ab\ud800cd", "surrogate", 2, r"^the field holds a lone surrogate U\+D800 at character 2"),
        ("é\udfff", "surrogate", 1, r"lone surrogate U\+DFFF at character 1"),
        ("abc\x00", "nul", 3, r"^the field holds a NUL character \(U\+0000\) at character 3"),
        ("é\x00\ud800", "nul", 1, r"NUL character \(U\+0000\) at character 1"),  # first one
    ],
)
def test_a_refused_character_is_named_with_its_field_and_position(
    text: str, reason: str, position: int, message: str
) -> None:
    with pytest.raises(TextError, match=message) as caught:
        check_text(text, "the field")
    error = caught.value
    assert isinstance(error, InputError)
    assert (error.field, error.position, error.reason) == ("the field", position, reason)
    str(error).encode("utf-8")  # the message itself is valid text (the CLI writes it)
    again = pickle.loads(pickle.dumps(error))  # crosses process boundaries intact
    assert (type(again), again.field, again.position, str(again)) == (
        TextError,
        "the field",
        position,
        str(error),
    )


def test_text_that_passes_is_returned_unchanged_and_other_controls_are_text() -> None:
    text = "tab\tline\nbell\x07 ansi\x1b[31m bidi\u202e emoji\U0001f600 é"
    assert check_text(text, "x") is text
    assert check_text("", "x") == ""


def test_a_non_string_is_a_type_error_naming_the_field() -> None:
    with pytest.raises(TextTypeError, match=r"^the question must be a string, got None$"):
        check_text(None, "the question")
    with pytest.raises(WrongTypeError, match="got bytes"):
        check_text(b"abc", "the question")
    with pytest.raises(TypeError):  # TextTypeError is also a TypeError
        check_text(5, "x")


def test_a_text_over_the_size_limit_is_refused_by_its_length() -> None:
    assert check_text("a" * MAX_CHARS, "doc") is not None
    with pytest.raises(TextError, match=r"^doc is 4,000,001 characters long, over the limit"):
        check_text("a" * (MAX_CHARS + 1), "doc")
    with pytest.raises(TextError, match="is 6 characters long, over the limit of 5") as caught:
        check_text("abcdef", "doc", max_chars=5)
    assert caught.value.reason == "size" and caught.value.position is None


def test_structured_input_names_the_path_of_the_bad_string() -> None:
    messages = [
        {"role": "system", "content": "fine"},
        {"role": "user", "content": [{"type": "text", "text": "bad \ud83d here"}]},
    ]
    with pytest.raises(TextError, match=r"^the prompt\[1\]\.content\[0\]\.text holds a lone"):
        check_value(messages, "the prompt")
    with pytest.raises(TextError, match=r"^a key of meta holds a NUL character"):
        check_value({"ok": 1, "k\x00": 2}, "meta")
    with pytest.raises(TextError, match=r"^meta\['odd key'\] holds a NUL"):
        check_value({"odd key": "\x00"}, "meta")
    assert check_value({"n": [1, 2.5, None, True, object]}, "meta")["n"][0] == 1


def test_nesting_deeper_than_the_limit_is_refused_and_a_cycle_too() -> None:
    assert check_value(nested(MAX_DEPTH), "meta") is not None
    with pytest.raises(TextError, match=rf"^meta is nested more than {MAX_DEPTH} levels deep"):
        check_value(nested(MAX_DEPTH + 1), "meta")
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(TextError, match="nested more than") as caught:
        check_value(loop, "meta")
    assert caught.value.reason == "depth"
    with pytest.raises(TextError, match="nested more than"):  # 20,000 deep: no RecursionError
        check_value(nested(20_000), "meta")


# ---------------------------------------------------------------------- a tool's records
def test_a_record_is_checked_whole_with_fields_named_from_its_top() -> None:
    record = json.loads(
        '{"id": "b", "question": "Q", "documents": ["d", {"text": "t", "title": "T\\udfff"}],'
        ' "response": "r"}'
    )
    with pytest.raises(TextError, match=r"^documents\[1\]\.title holds a lone surrogate U\+DFFF"):
        check_record(record)
    with pytest.raises(TextError, match=r"^id holds a lone surrogate U\+D800 at character 2"):
        check_record(json.loads('{"id": "b-\\ud800", "question": "Q"}'))
    with pytest.raises(TextTypeError, match=r"^line 3 must be a JSON object, got list"):
        check_record([1], "line 3")
    with pytest.raises(TextError, match=r"^documents is nested more than 100 levels") as deep:
        check_record({"documents": nested(150)})
    assert deep.value.field == "documents"  # its top field, not a path 100 levels long
    nul_elsewhere = {"question": "Q", "documents": ["d"], "notes": "a\x00b", "k\x00": 1}
    assert check_record(nul_elsewhere) is nul_elsewhere  # JSON output holds a NUL
    with pytest.raises(TextError, match=r"^documents\[0\]\.metadata\.x holds a NUL"):
        check_record({"question": "Q", "documents": [{"text": "d", "metadata": {"x": "\x00"}}]})
    with pytest.raises(TextError, match=r"^notes holds a lone surrogate"):  # no output can
        check_record({"question": "Q", "notes": "\udfff"})
    two_bad = {"id": "a", "question": "Q\x00", "documents": ["d", "e\x00"], "response": "\x00"}
    with pytest.raises(TextError, match=r"^question holds a NUL"):  # the first, in order
        check_record(two_bad)
    good = {"id": 1, "question": "Q", "documents": ["d"], "response": "r", "extra": {"n": 2}}
    assert check_record(good) is good


def test_every_metadata_key_a_renderer_shows_is_checked() -> None:
    assert {"title", *SOURCE_KEYS} <= set(RENDERED_METADATA)


# ---------------------------------------------------------------------- the core's doors
@pytest.mark.parametrize(
    ("question", "context", "response", "error", "message"),
    [
        ("Q \ud800", DOCS, ANSWER, TextError, r"^the question holds a lone surrogate U\+D800"),
        (QUESTION, DOCS, "Paris\x00", TextError, r"^the response holds a NUL character"),
        (None, DOCS, ANSWER, TextTypeError, r"^the question must be a string, got None$"),
        (QUESTION, DOCS, 42, TextTypeError, r"^the response must be a string, got int$"),
        (
            QUESTION,
            [DOCS[0], {"text": "Bananas\x00", "title": "Fruit"}],
            ANSWER,
            TextError,
            r"^document 1 \('Fruit'\) holds a NUL character \(U\+0000\) at character 7",
        ),
        (
            QUESTION,
            [{"text": DOCS[0], "metadata": {"url": "https://x.org/\udc80"}}],
            ANSWER,
            TextError,
            r"^document 0's metadata 'url' holds a lone surrogate U\+DC80 at character 14",
        ),
        (
            QUESTION,
            [{"text": DOCS[0], "title": nested(150)}],
            ANSWER,
            TextError,
            r"^document 0's metadata 'title' is nested more than 100 levels",
        ),
        (
            QUESTION,
            ["a" * (MAX_CHARS + 1)],
            ANSWER,
            TextError,
            r"^document 0 is 4,000,001 characters long",
        ),
    ],
)
def test_attribute_refuses_bad_text_before_any_model_call(
    question: object, context: object, response: object, error: type, message: str
) -> None:
    scorer = KeywordScorer()
    with pytest.raises(error, match=message):
        attribute(question, context, response, scorer, budget=4)  # type: ignore[arg-type]
    with pytest.raises(error, match=message):
        run(_aattribute(question, context, response, scorer))
    assert scorer.calls == []


async def _aattribute(question: Any, context: Any, response: Any, scorer: Any) -> Any:
    from camab_rag import aattribute

    return await aattribute(question, context, response, scorer, budget=4)


def test_a_captured_chat_prompt_goes_through_the_gate_too() -> None:
    prompt = [{"role": "user", "content": f"Context: {' '.join(DOCS)}\n\nQ: {QUESTION} \udc00"}]
    scorer = KeywordScorer()
    with pytest.raises(TextError, match=r"^the prompt\[0\]\.content holds a lone surrogate"):
        attribute(QUESTION, DOCS, ANSWER, scorer, budget=4, prompt=prompt)
    with pytest.raises(TextError, match=r"^captured prompt 1\[0\]\.content holds a lone"):
        attribute_captured(QUESTION, DOCS, ANSWER, scorer, prompts=["fine", prompt])
    with pytest.raises(TextError, match=r"^the question holds a lone surrogate"):
        run(aattribute_captured(f"{QUESTION}\ud800", DOCS, ANSWER, scorer))
    judge_only = CHAIN_SETTINGS.with_changes(budget=0)
    with pytest.raises(TextError, match=r"^the response holds a NUL"):
        attribute_captured(QUESTION, DOCS, "Paris\x00", scorer, judge_only, groundedness=True)
    assert scorer.calls == []


def test_cite_refuses_documents_the_gate_refuses() -> None:
    result = attribute(QUESTION, DOCS, ANSWER, KeywordScorer(), budget=4)
    with pytest.raises(TextError, match=r"^document 1's metadata 'title' holds a NUL"):
        cite(result, [DOCS[0], {"text": DOCS[1], "title": "\x00"}])


def test_assess_answer_refuses_a_surrogate_at_once_and_never_asks_the_server(
    server: FaultyServer,
) -> None:
    """Issue 50 item 9: it retried for 1-2.6 s, then blamed the server with
    ``TransientScorerError: malformed response body: UnicodeEncodeError``."""
    scorer = make_scorer(server, chat_template_renderer=plain)
    with pytest.raises(TextError, match=r"^the answer holds a lone surrogate U\+D800 at char"):
        assess_answer("q", ["d"], "x \ud800", scorer)
    with pytest.raises(TextError, match=r"^labelled example 1's answer holds a lone surrogate"):
        calibrate(scorer, [LABELLED[0], ("q", ["d"], "x \ud800", False)])
    with pytest.raises(TextError, match=r"^document 0 holds a lone surrogate U\+DFFF"):
        run(acalibrate(scorer, [(QUESTION, ["d \udfff"], ANSWER, True), LABELLED[1]]))
    assert server.completions == [] and server.tokenize_calls == 0


def test_the_http_scorer_blames_the_input_not_the_server_for_unencodable_text(
    server: FaultyServer,
) -> None:
    """Behind the gate, a caller that scores a lone surrogate itself (a stored result's
    response, a tool) got ``TransientScorerError: malformed response body`` after the
    retries; it is a TextError at once, and no completion is asked for."""
    scorer = make_scorer(server)
    with pytest.raises(TextError, match=r"cannot be encoded as UTF-8 .*not the server") as caught:
        scorer.score([ScoreRequest("Context: Paris.\nAnswer:", " Paris \ud800")])
    assert caught.value.reason == "surrogate"
    assert server.completions == []  # (its /tokenize probe sent the prompt, which is fine)


def test_calibrate_and_assess_answer_name_a_wrong_argument() -> None:
    """Issue 50 item 10: ``calibrate(5)`` was a raw TypeError, a ``None`` question the
    text "None"."""
    scorer = KeywordScorer()
    with pytest.raises(TextTypeError, match=r"^examples must be a list of labelled answers.*int$"):
        calibrate(scorer, 5)  # type: ignore[arg-type]
    with pytest.raises(TextTypeError, match=r"got str$"):
        calibrate(scorer, "question, context, answer")  # type: ignore[arg-type]
    with pytest.raises(TextTypeError, match=r"^labelled example 0's question must be a string"):
        calibrate(scorer, [(None, DOCS, ANSWER, True), LABELLED[1]])
    mapping = {"question": None, "context": DOCS, "answer": ANSWER, "supported": True}
    with pytest.raises(TextTypeError, match=r"^labelled example 0's question must be a string"):
        calibrate(scorer, iter([mapping, LABELLED[1]]))
    with pytest.raises(TextTypeError, match=r"^the question must be a string, got None$"):
        assess_answer(None, DOCS, ANSWER, scorer)  # type: ignore[arg-type]
    assert scorer.calls == []
    fitted = calibrate(scorer, iter(LABELLED))  # a generator is read once, still fitted
    assert fitted.n_supported == 1 and fitted.n_unsupported == 1


# ---------------------------------------------------------------------- the integrations
def test_the_kernel_records_a_refused_source_as_the_failed_result() -> None:
    """The core of both integrations: reading the sources through the gate happened
    outside the guard, so a refused document broke the host's query."""
    runs: Runs[Any] = Runs()
    sources = [DOCS[0], {"text": "Bananas are \udcff yellow.", "title": "Fruit"}]
    call = ChainCall(QUESTION, ANSWER, sources, scorer=KeywordScorer)
    result = drive(runs.steps(None, call, lambda result: result))
    assert result.status == "error" and result.prompt_mode == "none"
    assert "document 1 ('Fruit') holds a lone surrogate U+DCFF at character 12" in result.error
