"""No fault of a server makes camab-rag show a credential (issue 37).

Every fault mode of the scripted endpoint on 127.0.0.1 (``test_http_faults.FaultyServer``),
most of them echoing the credentials back, runs through the core, the renderers and both
integrations (the command line: ``tools/camab-cli/tests/test_cli_secrets.py``) with a known
API key, a password in the base URL and a token in a header. Then every log record
(camab's, httpx's, the integrations'), error (with its traceback and any chained
exception), result, metadata and rendering is searched for them.
"""

from __future__ import annotations

import base64
import json
import logging
import traceback
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import numpy as np
import pytest
from credential_echo import URLS, CredentialEcho
from test_http_faults import PROMPT, RESPONSE, FaultyServer, plain

from camab_rag import cite
from camab_rag.attributor import Attributor
from camab_rag.errors import InputError, ScorerError
from camab_rag.redaction import Secrets
from camab_rag.result import AttributionResult
from camab_rag.scorers.base import ScoreRequest
from camab_rag.scorers.openai_completions import OpenAICompletionsScorer

KEY = "sk-KNOWN-KEY-1f4c9e"
PASSWORD = "url-PASSWORD-77ab3d"
TOKEN = "hdr-TOKEN-5c0de2"
SECRETS = (KEY, PASSWORD, TOKEN)
ECHO = f"upstream refused Bearer {KEY} (token {TOKEN}) at http://admin:{PASSWORD}@db:5432"
DOCUMENTS = ["Paris is the capital of France.", "Rome is the capital of Italy."]
QUESTION = "What is the capital of France?"

FAULTS: dict[str, tuple[Any, ...]] = {
    "ok": ("ok",),
    "500 echoing": ("status", 500, {}, {"error": {"message": ECHO}}),
    "429 echoing": ("status", 429, {"Retry-After": "0.01"}, {"error": {"message": ECHO}}),
    "400 echoing": ("status", 400, {}, {"error": {"message": ECHO}}),
    "400 logprobs echoing": ("status", 400, {}, {"error": {"message": f"logprobs: {ECHO}"}}),
    "401 echoing": ("status", 401, {}, {"error": {"message": ECHO}}),
    "403 echoing": ("status", 403, {}, {"error": {"message": ECHO}}),
    "404 echoing": ("status", 404, {}, {"detail": ECHO}),
    "404 chat model echoing": ("status", 404, {}, {"error": {"message": f"not supported {ECHO}"}}),
    "502 text echoing": ("raw", 502, ECHO.encode()),
    "200 text echoing": ("raw", 200, ECHO.encode()),
    "200 without choices echoing": ("status", 200, {}, {"error": ECHO}),
    "invalid json": ("invalid_json",),
    "truncated": ("truncated",),
    "no logprobs": ("no_logprobs",),
    "miscounted": ("miscounted",),
    "positive log-prob": ("positive",),
    "slow": ("slow", 1.0),
    "trickle": ("trickle", 0.05),
}


class FixedPrompt:
    """Every subset gets the recorded prompt (so the recorded echo fits): the attribution
    succeeds against the "ok" server and its result can be rendered."""

    n_segments = len(DOCUMENTS)

    def build(self, mask: Any) -> str:
        return PROMPT


@pytest.fixture
def server() -> Iterator[FaultyServer]:
    fake = FaultyServer()
    yield fake
    fake.close()


def secret_url(server: FaultyServer) -> str:
    with_password = server.base_url.replace("http://", f"http://admin:{PASSWORD}@")
    return f"{with_password}/?api-version=2024-10-21"  # sent after each request's path


def make_scorer(url: str) -> OpenAICompletionsScorer:
    return OpenAICompletionsScorer(
        url,
        "smollm2",
        api_key=KEY,
        timeout=0.3,
        max_retries=1,
        backoff_base=0.01,
        retry_budget_s=0.5,
        chat_template_renderer=plain,
        default_headers={"X-Upstream-Token": TOKEN},
    )


def shown_by_the_core(scorer: OpenAICompletionsScorer) -> list[str]:
    """The result or error of one attribution, and everything rendered from it."""
    shown = [repr(scorer), str(scorer), scorer.base_url]
    try:
        door = Attributor(scorer, budget=4, prompt_builder=FixedPrompt())
        result = door.run(QUESTION, DOCUMENTS, RESPONSE)
    except Exception as error:
        shown += ["".join(traceback.format_exception(error))]
        result = AttributionResult.failed(error, question=QUESTION, response=RESPONSE)
    shown.append(json.dumps(result.to_dict()))
    if result.status == "ok":
        cited = cite(result, DOCUMENTS)
        shown += [cited.to_html(), cited.to_markdown(), cited.to_terminal(), cited.to_json()]
    return shown


def shown_by_langchain(scorer: OpenAICompletionsScorer) -> list[str]:
    pytest.importorskip("langchain_camab")
    from langchain_camab import CamabCallbackHandler
    from langchain_core.documents import Document
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda

    from camab_rag.settings import CHAIN_SETTINGS

    docs = [Document(text) for text in DOCUMENTS]
    prompt = ChatPromptTemplate.from_messages([("human", "{context}\n\nQ: {question}")])

    def fill(x: dict[str, Any]) -> dict[str, Any]:
        return {"context": "\n".join(d.page_content for d in x["docs"]), **x}

    chain = RunnableLambda(fill) | prompt | FakeListChatModel(responses=[RESPONSE])
    # the documents: the input's "docs"
    handler = CamabCallbackHandler(scorer, settings=CHAIN_SETTINGS.with_changes(budget=4))
    message = chain.invoke({"question": QUESTION, "docs": docs}, {"callbacks": [handler]})
    shown = [json.dumps(message.response_metadata, default=str)]
    if handler.last_result is not None:
        shown.append(json.dumps(handler.last_result.to_dict(), default=str))
    return shown


def shown_by_llamaindex(scorer: OpenAICompletionsScorer) -> list[str]:
    pytest.importorskip("llama_index.postprocessor.camab")
    from llama_index.core.base.response.schema import Response
    from llama_index.core.schema import NodeWithScore, TextNode
    from llama_index.postprocessor.camab import attribute_response

    from camab_rag.settings import CHAIN_SETTINGS

    nodes = [NodeWithScore(node=TextNode(text=text), score=1.0) for text in DOCUMENTS]
    response = Response(response=RESPONSE, source_nodes=nodes)
    settings = CHAIN_SETTINGS.with_changes(budget=4)
    attribute_response(response, QUESTION, scorer=scorer, settings=settings)
    return [json.dumps(response.metadata, default=str)] + [
        json.dumps(n.node.metadata, default=str) for n in response.source_nodes
    ]


@pytest.mark.parametrize("fault", list(FAULTS))
def test_no_fault_makes_a_credential_show(
    server: FaultyServer, fault: str, caplog: pytest.LogCaptureFixture
) -> None:
    server.default = FAULTS[fault]
    url = secret_url(server)
    shown: list[str] = []
    asked: list[int] = []  # requests each path made: a path that never asks proves nothing
    with caplog.at_level(logging.DEBUG):
        for path in (shown_by_the_core, shown_by_langchain, shown_by_llamaindex):
            before = len(server.completions)
            shown += path(make_scorer(url))
            asked.append(len(server.completions) - before)
        shown += [caplog.text, *(str(record.args) for record in caplog.records)]
    assert all(asked), f"{fault}: requests per path {asked}"
    # the credentials did reach their own server
    assert server.headers[0]["X-Upstream-Token"] == TOKEN
    assert server.headers[0]["Authorization"].startswith("Basic ")
    assert server.paths[0] == "/v1/completions?api-version=2024-10-21"
    for text in shown:
        for secret in SECRETS:
            assert secret not in text, f"{fault}: {secret} shown in {text[:300]!r}"


def test_an_unreachable_server_shows_no_credential(caplog: pytest.LogCaptureFixture) -> None:
    from vllm_server import free_port

    url = f"http://admin:{PASSWORD}@127.0.0.1:{free_port()}/v1"
    with caplog.at_level(logging.DEBUG):
        shown = shown_by_the_core(make_scorer(url))
    assert any("connection error" in text for text in shown)
    for text in [*shown, caplog.text]:
        for secret in SECRETS:
            assert secret not in text


def test_the_ok_fault_mode_really_attributes(server: FaultyServer) -> None:
    """The "ok" mode above goes through a successful attribution and its renderings."""
    door = Attributor(make_scorer(secret_url(server)), budget=4, prompt_builder=FixedPrompt())
    result = door.run(QUESTION, DOCUMENTS, RESPONSE)
    assert result.status == "ok" and np.all(np.isfinite(result.scores))


@pytest.mark.parametrize("name", ["api-key", "access_token", "sig", "code"])
def test_a_credential_in_the_query_string_is_refused_unshown(
    server: FaultyServer, name: str
) -> None:
    """HTTP clients log each request's URL, so a key in the base URL's query string would
    be printed: it is refused, masked in the message, and nothing is sent."""
    secret = "qs-QUERY-KEY-9a7e11"
    url = f"{server.base_url}?{name}={secret}&api-version=2024-10-21"
    with pytest.raises(InputError, match="send it as a header") as caught:
        make_scorer(url)
    assert secret not in str(caught.value) and f"{name}=***" in str(caught.value)
    assert "api-version=2024-10-21" in str(caught.value)
    assert server.completions == []


# ------------------------------------------- percent-encoded user-info (issue 50, item 5)
@pytest.mark.parametrize("case", list(URLS))
def test_a_url_credential_is_masked_in_every_form_the_server_echoes(
    case: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A password that needs encoding (``pa%40ss%2Fw0rd``) or a token given as the user
    reaches the server decoded; echoed back in a 500, on main it showed in clear in the
    error, the INFO retry log and both integrations' metadata."""
    with CredentialEcho(500) as echo, caplog.at_level(logging.DEBUG):
        url = echo.url(URLS[case])
        scorer = OpenAICompletionsScorer(
            url, "smollm2", max_retries=1, backoff_base=0.01, retry_budget_s=0.5
        )
        with pytest.raises(ScorerError, match="HTTP 500: rejected credentials") as info:
            scorer.score([ScoreRequest(QUESTION, RESPONSE)])
        shown = ["".join(traceback.format_exception(info.value)), repr(scorer)]
        shown += shown_by_langchain(make_scorer(url)) + shown_by_llamaindex(make_scorer(url))
        shown += [caplog.text, *(str(record.args) for record in caplog.records)]
        forms = echo.forms(case)
    assert "retrying in" in caplog.text  # the INFO retry log was written, masked
    userinfo = unquote(URLS[case])  # what the server got, as Basic auth
    assert set(echo.received) == {userinfo if ":" in userinfo else f"{userinfo}:"}
    metadata = json.loads(shown[2])  # LangChain's response_metadata
    assert metadata["attribution"]["status"] == "error", metadata
    for text in shown:
        for form in forms:
            assert form not in text, f"{case}: {form!r} shown in {text[:300]!r}"


def test_every_spelling_of_a_url_credential_is_masked() -> None:
    """The forms a server or proxy may echo besides the one the URL was written in: decoded,
    re-encoded (lower-case hex, ``/`` kept) and the Basic token without its padding."""
    secrets = Secrets.of("http://svc:pa%40ss%2Fw0rd@127.0.0.1:9/v1")
    token = base64.b64encode(b"svc:pa@ss/w0rd").decode()
    forms = ["pa@ss/w0rd", "pa%40ss%2Fw0rd", "pa%40ss%2fw0rd", "pa%40ss/w0rd"]
    for form in [*forms, token, token.rstrip("=")]:
        assert secrets.clean(f"got <{form}>") == "got <***>", form
    assert secrets.clean("svc at 127.0.0.1:9") == "svc at 127.0.0.1:9"  # 3 letters: kept


@pytest.mark.parametrize(
    "url", ["svc:pa%40ss%2Fw0rd@127.0.0.1:9/v1", "ftp://svc:pa%40ss%2Fw0rd@127.0.0.1:9/v1"]
)
def test_a_base_url_refused_for_its_scheme_shows_no_credential(url: str) -> None:
    """On main the refusal quoted the whole URL, user-info included."""
    from types import SimpleNamespace

    from camab_rag.scorers import resolve_scorer

    with pytest.raises(InputError, match="must be an http") as direct:
        OpenAICompletionsScorer(url, "smollm2")
    client = SimpleNamespace(base_url=url, model="smollm2")
    with pytest.raises(InputError, match="must be an http") as from_client:
        resolve_scorer(llm=client)
    for text in (str(direct.value), str(from_client.value)):
        assert "127.0.0.1:9/v1" in text
        assert "w0rd" not in text and "pa%40ss" not in text and "pa@ss" not in text, text
