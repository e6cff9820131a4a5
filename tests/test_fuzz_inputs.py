"""Hostile input at the core's doors, property-based (issue 50 item 7).

Arbitrary Unicode (lone surrogates, C0/C1 controls, format and separator characters, XSS
and terminal payloads), lists nested past the limit, strings past the size limit and
values of the wrong type are thrown at ``attribute``, ``assess_answer``, ``calibrate``,
the record checks a tool reads its lines with, and the renderers. What must hold:

* only typed errors come out (``InputError``: ``TextError``, ``WrongTypeError``...), and
  the gate's refusals come before any model call;
* every message and every rendered output is valid Unicode (it can be written to a file);
* rendered output is inert: no control or reordering character survives, the HTML holds
  only the renderer's own tags, no event handler and no link but its own anchors, the
  Markdown renders (CommonMark) to no tag or link the text asked for.

A bounded number of derandomised examples (the suite's time stays flat and a failure
replays), the keyword fake scorer: no model.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Sequence
from html.parser import HTMLParser
from typing import Any

import numpy as np
import pytest
from fakes import KeywordScorer
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from camab_rag import assess_answer, attribute, cite
from camab_rag.citations import CitedAnswer
from camab_rag.errors import AttributionWarning, InputError, TextError
from camab_rag.groundedness.calibration import calibrate
from camab_rag.result import AttributionResult, StatementAttribution
from camab_rag.scorers.base import ResponseLogprobs, ScoreRequest, prompt_texts
from camab_rag.segments import Segment
from camab_rag.text_gate import (
    MAX_CHARS,
    MAX_DEPTH,
    RECORD_TEXT_KEYS,
    RENDERED_METADATA,
    check_record,
)

FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example],
)

PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '"><svg onload=alert(1)>',
    "javascript:alert(1)",
    "[click](javascript:alert(1))",
    "![x](http://evil.example/x.png)",
    "<http://evil.example>",
    "\x1b[2J\x1b]0;pwned\x07",
    "\u202egnp.exe",
    "&lt;b&gt; &#x3c;script&#x3e;",
    "**bold** _em_ `code` ~~s~~ $x$ | a |",
    "# heading\n- item\n1. step\n> quote",
    "\r\n\u2028\u2029",
    "Paris is the capital of France.",
    " ",
]
SHOWN = st.one_of(  # odd but text: the gate passes them, the renderers must neutralise them
    st.characters(categories=["Cc"], exclude_characters="\x00"),
    st.characters(categories=["Cf", "Zl", "Zp", "Zs", "Co"]),
)
REFUSED = st.one_of(st.characters(categories=["Cs"]), st.just("\x00"))
PLAIN = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12)
PASSING = st.lists(st.one_of(PLAIN, st.sampled_from(PAYLOADS), SHOWN), max_size=6).map("".join)
"""Hostile text the gate lets through."""
HOSTILE = st.lists(st.one_of(PLAIN, st.sampled_from(PAYLOADS), SHOWN, REFUSED), max_size=6).map(
    "".join
)
"""Hostile text, a lone surrogate or NUL now and then."""
SENTENCES = ["Paris is the capital of France.", "Bananas are yellow.", "It opened in 1889."]
PROSE = st.tuples(st.sampled_from(SENTENCES), PASSING).map(" ".join)
"""A sentence the scorer can read, with hostile text after it (passes the gate)."""
HUGE = "a" * (MAX_CHARS + 1)


def nested(depth: int) -> object:
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


DEEP = st.integers(MAX_DEPTH - 1, 3 * MAX_DEPTH).map(nested)
WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.binary(max_size=8),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    DEEP,
)
TEXT = st.one_of(PROSE, PROSE, PROSE, PROSE, HOSTILE, WRONG, st.just(HUGE))
METADATA = st.dictionaries(
    st.sampled_from(["title", "url", "source", "file_path", "other"]),
    st.one_of(PASSING, st.just("https://example.org/a?b=<c>"), HOSTILE, DEEP, WRONG),
    max_size=3,
)
LINKED = st.fixed_dictionaries(
    {"text": PROSE},
    optional={
        "title": PASSING,
        "url": st.sampled_from(["https://example.org/x", "javascript:alert(1)", "http://a b"]),
    },
)
DOCUMENT = st.one_of(
    PROSE,
    PROSE,
    LINKED,
    LINKED,
    st.fixed_dictionaries(
        {"text": TEXT}, optional={"title": TEXT, "url": TEXT, "metadata": METADATA}
    ),
    WRONG,
)
CONTEXT = st.one_of(st.lists(DOCUMENT, min_size=1, max_size=4), TEXT)
GOOD_CONTEXT = st.lists(st.one_of(PROSE, LINKED), min_size=1, max_size=4)
BAD = st.one_of(HOSTILE, WRONG, st.just(HUGE))
INJECTED = st.tuples(PROSE, REFUSED, PASSING).map("".join)
"""Readable text with one lone surrogate or NUL in it."""
INJECTED_CONTEXT = st.tuples(
    GOOD_CONTEXT,
    st.one_of(
        INJECTED,
        st.fixed_dictionaries({"text": PROSE, "title": INJECTED}),
        st.fixed_dictionaries(
            {"text": PROSE, "metadata": st.fixed_dictionaries({"url": INJECTED})}
        ),
    ),
).map(lambda parts: [*parts[0], parts[1]])
CALL = st.one_of(
    st.tuples(PROSE, GOOD_CONTEXT, PROSE),  # passes the gate: a result, rendered
    st.tuples(PROSE, GOOD_CONTEXT, PROSE),
    st.tuples(INJECTED, GOOD_CONTEXT, PROSE),  # one refused character in one field
    st.tuples(PROSE, INJECTED_CONTEXT, PROSE),
    st.tuples(PROSE, GOOD_CONTEXT, INJECTED),
    st.tuples(BAD, GOOD_CONTEXT, PROSE),  # one hostile field
    st.tuples(PROSE, CONTEXT, PROSE),
    st.tuples(PROSE, GOOD_CONTEXT, BAD),
    st.tuples(TEXT, CONTEXT, TEXT),  # anything at all
)
"""A call's (question, context, response or answer)."""
STORED = st.tuples(HOSTILE, st.sampled_from(SENTENCES), HOSTILE).map(" ".join)
"""Text a stored result may hold (never checked): a lone surrogate or NUL now and then."""

UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069"
    "\ufeff\ud800-\udfff]"
)
"""What no rendered output may hold: controls (but tab and line feed), the characters
that reorder or hide text, lone surrogates."""
HTML_TAGS = {"a", "body", "div", "head", "html", "li", "mark", "meta", "ol", "p", "span"}
HTML_TAGS |= {"style", "title"}
MARKDOWN_TAGS = {"a", "blockquote", "em", "p", "strong"}


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attrs: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs += [(name, value or "") for name, value in attrs]


def parsed(html: str) -> Tags:
    parser = Tags()
    parser.feed(html)
    parser.close()
    return parser


def assert_links_are_own(page: Tags) -> None:
    for name, value in page.attrs:
        assert not name.startswith("on"), name
        if name in ("href", "src"):
            assert value.startswith("#camab-") or re.match(r"https?://[^\s]+$", value), value
            assert "javascript" not in value.lower()


def assert_inert(cited: CitedAnswer) -> None:
    """Every renderer's output is valid, cleaned text with nothing active in it."""
    html = cited.to_html()
    markdown = cited.to_markdown()
    terminal = cited.to_terminal(color=False)
    for output in (html, markdown, terminal):
        output.encode("utf-8")  # no lone surrogate: it can be written out
        assert not UNSAFE.search(output), repr(UNSAFE.search(output))
    assert "\x1b" not in terminal
    page = parsed(html)
    assert page.tags <= HTML_TAGS, page.tags - HTML_TAGS
    assert_links_are_own(page)
    markdown_it = pytest.importorskip("markdown_it")
    rendered = parsed(markdown_it.MarkdownIt("commonmark").render(markdown))
    assert rendered.tags <= MARKDOWN_TAGS, rendered.tags - MARKDOWN_TAGS
    assert_links_are_own(rendered)
    json.dumps(cited.to_dict(), allow_nan=False)  # plain data (the front end escapes it)


def refused(value: object, depth: int = 0, nul: bool = True) -> bool:
    """Whether the gate must refuse a decoded JSON value (written apart from it)."""
    if isinstance(value, str):
        return (nul and "\x00" in value) or any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, list):
        return depth >= MAX_DEPTH or any(refused(v, depth + 1, nul) for v in value)
    if isinstance(value, dict):
        return depth >= MAX_DEPTH or any(
            refused(k, 0, nul) or refused(v, depth + 1, nul) for k, v in value.items()
        )
    return False


FIELDS = [*RECORD_TEXT_KEYS, "id", "extra"]


def refused_record(record: dict[Any, Any]) -> bool:
    """Whether the gate must refuse a record: NUL only where the model reads."""
    return any(
        refused(k, 0, False) or refused(v, 1, k in RECORD_TEXT_KEYS) for k, v in record.items()
    )


def shown_texts(question: Any, context: Any, response: Any) -> list[Any]:
    """What the gate must have checked in a call that went through: the question, the
    response, each document's text and the metadata renderers show."""
    texts = [question, response]
    for document in context if isinstance(context, list) else [context]:
        if isinstance(document, dict):
            metadata = document.get("metadata")
            shown = {**(metadata if isinstance(metadata, dict) else {}), **document}
            texts += [shown.get(key) for key in ("text", *RENDERED_METADATA)]
        else:
            texts.append(document)
    return texts


class EncodingScorer(KeywordScorer):
    """The keyword scorer that first encodes what it is sent, as a tokenizer or an HTTP
    client does: a lone surrogate raises ``UnicodeEncodeError`` here, as it did there."""

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        for request in requests:
            for text in (*prompt_texts(request.prompt), request.response):
                text.encode("utf-8")
        return super().score(requests)


def typed_outcome(work: Any, scorer: KeywordScorer) -> Any:
    """``work()``'s result, or ``None`` when it raised a typed input error (a refusal of
    the gate before any model call); any other exception fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AttributionWarning)
        try:
            return work()
        except InputError as error:
            event(type(error).__name__)
            str(error).encode("utf-8")  # a message the CLI can write
            if isinstance(error, TextError):
                assert scorer.calls == [], "the gate refused after a model call"
            return None


# ---------------------------------------------------------------------- the doors
@FUZZ
@given(call=CALL)
def test_attribute_gives_a_result_or_a_typed_error(call: tuple[Any, Any, Any]) -> None:
    question, context, response = call
    scorer = EncodingScorer()
    result = typed_outcome(
        lambda: attribute(question, context, response, scorer, budget=4, granularity="chunk"),
        scorer,
    )
    if result is None:
        return
    assert not any(map(refused, shown_texts(question, context, response)))
    json.dumps(result.to_dict(), ensure_ascii=False, allow_nan=False).encode("utf-8")
    cited = typed_outcome(lambda: cite(result, context), scorer)
    if cited is not None:
        event("rendered")
        assert_inert(cited)


@FUZZ
@given(question=PROSE, context=GOOD_CONTEXT, response=PROSE)
def test_hostile_text_the_gate_passes_is_attributed_judged_and_rendered_inert(
    question: str, context: list[Any], response: str
) -> None:
    """The success path, every example: odd but valid text (controls, bidi, payloads)."""
    scorer = EncodingScorer()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AttributionWarning)
        result = attribute(question, context, response, scorer, budget=4, granularity="chunk")
        assert_inert(cite(result, context))
        report = assess_answer(question, context, response, scorer)
    json.dumps(report.to_dict(), ensure_ascii=False).encode("utf-8")


@FUZZ
@given(call=CALL)
def test_assess_answer_gives_a_report_or_a_typed_error(call: tuple[Any, Any, Any]) -> None:
    question, context, answer = call
    scorer = EncodingScorer()
    report = typed_outcome(lambda: assess_answer(question, context, answer, scorer), scorer)
    if report is not None:
        event("judged")
        assert not any(map(refused, shown_texts(question, context, answer)))
        json.dumps(report.to_dict(), ensure_ascii=False).encode("utf-8")


EXAMPLE = st.one_of(
    CALL.map(lambda call: (*call, True)),
    CALL.map(lambda call: (*call, False)),
    st.tuples(PROSE, GOOD_CONTEXT, PROSE, WRONG),
)


GOOD_EXAMPLE = st.tuples(PROSE, GOOD_CONTEXT, PROSE)
LABELLED = st.one_of(
    WRONG,
    HOSTILE,
    st.lists(EXAMPLE, min_size=2, max_size=3),
    st.tuples(GOOD_EXAMPLE, EXAMPLE, GOOD_EXAMPLE).map(
        lambda three: [(*three[0], True), three[1], (*three[2], False)]
    ),
)


@FUZZ
@given(examples=LABELLED)
def test_calibrate_gives_a_verdict_model_or_a_typed_error(examples: Any) -> None:
    scorer = EncodingScorer()
    fitted = typed_outcome(lambda: calibrate(scorer, examples), scorer)
    if fitted is not None:
        event("fitted")  # a verdict model of finite weights and probability cuts
        assert np.isfinite([*fitted.weights, fitted.bias]).all()
        assert 0.0 < fitted.flag_at <= fitted.block_at < 1.0


JSON_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), HOSTILE),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(HOSTILE, inner, max_size=3)
    ),
    max_leaves=12,
)


@FUZZ
@given(
    record=st.one_of(
        JSON_VALUE,
        st.dictionaries(st.one_of(st.sampled_from(FIELDS), HOSTILE), JSON_VALUE, max_size=5),
        DEEP.map(lambda deep: {"documents": deep}),
    )
)
@example(record={"\ud800\udc00": None})  # a surrogate pair: one character once decoded
def test_a_tools_record_check_passes_clean_records_and_names_the_rest(record: Any) -> None:
    # a JSONL line: surrogates escaped; a high + low pair decodes to one character, so the
    # oracle reads the decoded record
    decoded = json.loads(json.dumps(record))
    if not isinstance(record, dict):
        with pytest.raises(TextError, match=r"^a record must be a JSON object"):
            check_record(decoded)
        return
    try:
        checked = check_record(decoded)
    except TextError as error:
        str(error).encode("utf-8")  # a message the CLI can write
        event(error.reason)
        assert refused_record(decoded), error
        return
    assert not refused_record(decoded) and checked == decoded


# ---------------------------------------------------------------------- the renderers
@FUZZ
@given(
    question=HOSTILE,
    response=STORED,
    texts=st.lists(STORED, min_size=1, max_size=4),
    conflicting=st.booleans(),
)
def test_renderers_stay_inert_whatever_text_a_stored_result_holds(
    question: str, response: str, texts: list[str], conflicting: bool
) -> None:
    """A result read back from storage (``AttributionResult.from_dict``) never went
    through the gate: whatever text it holds, rendering it stays inert."""
    n = len(texts)
    scores = np.linspace(1.0, -0.2, n)
    result = AttributionResult(
        scores=scores,
        segments=[Segment(text, i, 0, len(text)) for i, text in enumerate(texts)],
        question=question,
        response=response,
        statements=[StatementAttribution(response, 0, len(response), scores)],
        n_documents=n,
        masks=np.array([np.ones(n, bool), np.zeros(n, bool)]),
        rewards=np.array([-0.5, -2.0 if conflicting else -0.6]),
    )
    assert_inert(cite(result))


@FUZZ
@given(
    texts=st.lists(STORED, min_size=1, max_size=3),
    titles=st.lists(st.one_of(PASSING, HOSTILE, st.none()), min_size=3, max_size=3),
    urls=st.lists(
        st.one_of(HOSTILE, st.sampled_from(["https://example.org/a b", "http://x.org/\"'<>"])),
        min_size=3,
        max_size=3,
    ),
)
def test_cited_documents_titles_and_links_render_inert_or_are_refused(
    texts: list[str], titles: list[str | None], urls: list[str]
) -> None:
    documents = [
        {"text": text, "title": title, "url": url} for text, title, url in zip(texts, titles, urls)
    ]
    clean = [re.sub("[\x00\ud800-\udfff]", "", text) or "x" for text in texts]
    n = len(clean)
    result = AttributionResult(
        scores=np.linspace(1.0, -0.2, n),
        segments=[Segment(text, i, 0, len(text)) for i, text in enumerate(clean)],
        question="Q?",
        response="Paris is the capital of France.",
        n_documents=n,
    )
    scorer = EncodingScorer()
    cited = typed_outcome(
        lambda: cite(result, [{**d, "text": c} for d, c in zip(documents, clean)]), scorer
    )
    if cited is not None:
        event("rendered")
        assert_inert(cited)
