"""CamabAttributor as an LCEL step, with a fake model and scorer."""

from __future__ import annotations

import asyncio
import threading
import time
import warnings
from typing import Any

import pytest
from langchain_camab import (
    AsyncCamabCallbackHandler,
    CamabAttributor,
    CamabCallbackHandler,
    groundedness_of,
)
from langchain_core.documents import Document
from langchain_core.messages import AIMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough

from camab_rag import AttributionResult
from camab_rag.errors import (
    AttributionCancelledError,
    AttributionPendingError,
    AttributionWarning,
    InputError,
)
from camab_rag.settings import CHAIN_SETTINGS
from tests.fakes import FailingScorer, KeywordRetriever, KeywordScorer, chat_messages

DOCS = [
    Document("Paris is the capital of France.", metadata={"title": "Paris"}),
    Document("Berlin is the capital of Germany.", metadata={"title": "Berlin"}),
    Document("The Louvre is a museum in the capital.", metadata={"title": "Louvre"}),
]
PROMPT = ChatPromptTemplate.from_messages(
    [("system", "Use the context."), ("human", "Context:\n{context}\n\nQuestion: {input}")]
)


def _answer(values: dict[str, Any]) -> AIMessage:
    return AIMessage("Paris is the capital of France.", response_metadata={"model": "fake"})


def _rag(answer: Any = _answer) -> Any:
    """create_retrieval_chain's shape: {"input", "context": [Document], "answer"}."""
    retriever = KeywordRetriever(documents=DOCS, k=3)
    return RunnablePassthrough.assign(context=lambda x: retriever.invoke(x["input"])).assign(
        answer=RunnableLambda(answer)
    )


QUESTION = {"input": "What is the capital city of France?"}


def test_pipe_returns_the_dict_with_attribution_everywhere() -> None:
    out = (
        _rag() | CamabAttributor(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=8))
    ).invoke(QUESTION)
    assert set(out) == {"input", "context", "answer", "attribution"}
    data = out["attribution"]
    assert data["status"] == "ok" and data["top_documents"][0] == 0
    assert data["prompt_mode"] == "template"  # no prompt was given
    assert isinstance(out["answer"], AIMessage)
    assert out["answer"].content == "Paris is the capital of France."
    assert out["answer"].response_metadata == {"model": "fake", "attribution": data}
    entries = [d.metadata["attribution"] for d in out["context"]]
    assert entries[0]["rank"] == 1 and entries[0]["score"] > entries[1]["score"]
    assert entries[0]["supporting_sentences"] == ["Paris is the capital of France."]
    assert [d.metadata["title"] for d in out["context"]] == ["Paris", "Berlin", "Louvre"]


def test_assign_gives_just_the_attribution() -> None:
    out = (
        _rag()
        .assign(
            attribution=CamabAttributor(
                KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=8)
            )
        )
        .invoke(QUESTION)
    )
    assert set(out) == {"input", "context", "answer", "attribution"}
    assert out["attribution"]["status"] == "ok"
    assert "input" not in out["attribution"]
    assert out["context"][0].metadata["attribution"]["rank"] == 1  # annotated in place


def test_under_a_map_key_the_step_returns_the_summary_alone() -> None:
    state = _rag().invoke(QUESTION)
    step = CamabAttributor(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6))
    only = RunnableParallel(attribution=step).invoke(state)["attribution"]
    assert only["status"] == "ok" and "answer" not in only


def test_the_real_prompt_from_a_template_or_the_input() -> None:
    scorer = KeywordScorer()
    out = (
        _rag()
        | CamabAttributor(scorer, settings=CHAIN_SETTINGS.with_changes(budget=6), prompt=PROMPT)
    ).invoke(QUESTION)
    assert out["attribution"]["prompt_mode"] == "captured"
    assert all(
        chat_messages(call.prompt)[0]["content"] == "Use the context." for call in scorer.calls
    )
    state = _rag().invoke(QUESTION)
    state["prompt"] = PROMPT.invoke(
        {"input": state["input"], "context": "\n\n".join(d.page_content for d in state["context"])}
    )
    out = CamabAttributor(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6)).invoke(
        state
    )
    assert out["attribution"]["prompt_mode"] == "captured"


def test_string_answer_and_question_key() -> None:
    chain = RunnablePassthrough.assign(
        context=lambda x: DOCS, answer=lambda x: "Berlin is the capital of Germany."
    )
    out = (
        chain | CamabAttributor(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6))
    ).invoke({"question": "Capital of Germany?"})
    assert out["answer"] == "Berlin is the capital of Germany."
    assert out["attribution"]["top_documents"][0] == 1


def test_failures_leave_the_answer_unchanged() -> None:
    out = (
        _rag() | CamabAttributor(FailingScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6))
    ).invoke(QUESTION)
    assert out["answer"].content == "Paris is the capital of France."
    assert out["attribution"]["status"] == "error"
    assert out["attribution"]["error"] == "RuntimeError: scorer is down"
    assert out["answer"].response_metadata["attribution"]["status"] == "error"
    assert out["context"][0].metadata["attribution"]["status"] == "error"


def test_bad_input_is_recorded_not_raised() -> None:
    attributor = CamabAttributor(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6))
    out = attributor.invoke({"input": "q", "answer": "a"})
    assert out["attribution"]["status"] == "error"
    assert "no documents under 'context'" in out["attribution"]["error"]
    error = out["attribution"]["error"]
    assert "the input's keys: ['answer', 'input']" in error  # what it got, and the two fixes
    assert "CamabAttributor(..., context_key='my_key')" in error
    assert "RunnablePassthrough.assign(context=lambda x: x['my_key'])" in error
    mapped = CamabAttributor(
        KeywordScorer(),
        settings=CHAIN_SETTINGS.with_changes(budget=6),
        question_keys=("query",),
        context_key="docs",
        answer_key="reply",
    ).invoke({"query": "Capital of France?", "docs": DOCS, "reply": "Paris is the capital."})
    assert mapped["attribution"]["status"] == "ok" and len(mapped["attribution"]["documents"]) == 3
    message = AIMessage("just a message")
    back = attributor.invoke(message)
    assert back.content == "just a message"
    assert "needs a dict" in back.response_metadata["attribution"]["error"]
    # review 16: a context that is no list of documents is named, and the failure records
    # the step's own method and budget (it said method 'camab', budget 0)
    step = CamabAttributor(KeywordScorer(), budget=8, method="loo")
    failed = step.invoke({"input": "x", "context": 42, "answer": "y"})["attribution"]
    assert failed["error"].startswith("WrongTypeError: the documents under 'context' must be")
    assert (failed["method"], failed["budget"]) == ("loo", 8)


def test_a_context_already_formatted_into_one_string_warns() -> None:
    """Joined for the prompt, the documents are one: chunk attribution runs ('ok', one
    score) but can say nothing about which document the answer came from."""
    joined = "\n\n".join(d.page_content for d in DOCS)
    step = CamabAttributor(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6))
    with pytest.warns(AttributionWarning, match="pass them as a list") as caught:
        out = step.invoke({**QUESTION, "context": joined, "answer": "Paris is the capital."})
    assert caught[0].filename == __file__  # the user's invoke, not langchain_core's line
    assert out["attribution"]["status"] == "ok" and len(out["attribution"]["documents"]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", AttributionWarning)  # the documents one by one: none
        step.invoke({**QUESTION, "context": DOCS, "answer": "Paris is the capital."})


def test_no_scorer_and_no_model_fails_when_the_step_is_built() -> None:
    """A step cannot see the chain's model: with no scorer, llm or proxy every call would
    fail, so the step is refused at once rather than on every answer."""
    with pytest.raises(InputError, match=r"CamabAttributor needs scorer=.*llm=.*proxy="):
        CamabAttributor(settings=CHAIN_SETTINGS.with_changes(budget=6))
    assert CamabAttributor(proxy=KeywordScorer()).scorers.proxy is not None  # the proxy scores


def test_strict_mode_raises() -> None:
    with pytest.raises(RuntimeError, match="scorer is down"):
        (
            _rag()
            | CamabAttributor(
                FailingScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6), strict=True
            )
        ).invoke(QUESTION)
    with pytest.raises(ValueError, match="needs a dict"):
        CamabAttributor(KeywordScorer(), strict=True).invoke("text")


async def test_async_and_abatch() -> None:
    chain = _rag() | CamabAttributor(
        KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6)
    )
    out = await chain.ainvoke(QUESTION)
    assert out["attribution"]["status"] == "ok"
    outs = await chain.abatch([QUESTION, {"input": "Capital of Germany?"}])
    assert [o["attribution"]["status"] for o in outs] == ["ok", "ok"]


def test_background_sync() -> None:
    attributor = CamabAttributor(
        KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6), background=True
    )
    out = (_rag() | attributor).invoke(QUESTION)
    data = out["attribution"]
    run_id = data["run_id"]
    result = attributor.wait(run_id, timeout=30)
    assert result.status == "ok"
    assert data["status"] == "ok" and data["top_documents"][0] == 0  # filled in place
    assert out["context"][0].metadata["attribution"]["rank"] == 1


class SlowScorer(KeywordScorer):
    def score(self, requests: Any) -> Any:
        time.sleep(0.2)
        return super().score(requests)


async def test_background_async() -> None:
    attributor = CamabAttributor(
        SlowScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6), background=True
    )
    out = await (_rag() | attributor).ainvoke(QUESTION)
    assert out["attribution"]["status"] == "pending"
    result = await asyncio.wait_for(attributor.await_result(), 30)
    assert result.status == "ok" and out["attribution"]["status"] == "ok"


def test_an_async_background_step_whose_loop_ends_first_is_cancelled() -> None:
    """Issue 37: asyncio.run returns before the step's attribution: "cancelled", with how
    to wait for it, never "pending" for ever."""
    attributor = CamabAttributor(
        SlowScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6), background=True
    )
    out = asyncio.run((_rag() | attributor).ainvoke(QUESTION))
    assert out["attribution"]["status"] == "cancelled"
    assert "await_result()" in out["attribution"]["error"]
    assert out["context"][0].metadata["attribution"]["status"] == "cancelled"
    with pytest.raises(AttributionCancelledError, match=r"cancelled.*await_result"):
        AttributionResult.from_dict(out["attribution"])


class HeldScorer(KeywordScorer):
    """The keyword scorer, held until the test sets ``gate``."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def score(self, requests: Any) -> Any:
        assert self.gate.wait(30), "the test never opened the gate"
        return super().score(requests)


def test_reading_a_background_result_still_running_says_it_is_pending() -> None:
    """The placeholder read as a result, or for its verdict, is a typed error that says
    to wait (it was KeyError: 'scores'); once waited for, it reads."""
    scorer = HeldScorer()
    attributor = CamabAttributor(scorer, budget=6, background=True)
    out = (_rag() | attributor).invoke(QUESTION)
    assert out["attribution"]["status"] == "pending"
    with pytest.raises(AttributionPendingError, match=r"not finished yet.*wait\(run_id\)"):
        AttributionResult.from_dict(out["attribution"])
    with pytest.raises(AttributionPendingError, match="'pending'"):
        groundedness_of(out)
    scorer.gate.set()
    assert attributor.wait(out["attribution"]["run_id"], timeout=30).top_documents(1) == [0]
    assert out["attribution"]["status"] == "ok"  # filled in place


def test_citations_option_annotates_the_answer_message() -> None:
    out = (
        _rag()
        | CamabAttributor(
            KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=8), citations=True
        )
    ).invoke(QUESTION)
    [block] = out["answer"].content_blocks
    assert block["text"] == "Paris is the capital of France."
    assert [c["title"] for c in block["annotations"]] == ["Paris"]
    assert out["answer"].response_metadata["attribution"]["status"] == "ok"
    plain = (
        _rag() | CamabAttributor(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=8))
    ).invoke(QUESTION)
    assert plain["answer"].content == "Paris is the capital of France."  # opt-in only


@pytest.mark.parametrize("make", [CamabAttributor, CamabCallbackHandler])
def test_a_misspelled_method_or_option_fails_at_construction(make: Any) -> None:
    with pytest.raises(InputError, match="unknown method 'camba'"):
        make(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(method="camba"))
    with pytest.raises(InputError, match="bad options"):
        make(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(batchsize=2))


@pytest.mark.parametrize("make", [CamabAttributor, CamabCallbackHandler, AsyncCamabCallbackHandler])
def test_the_everyday_knobs_are_keywords_with_attributes_meaning(make: Any) -> None:
    """budget, method, granularity, deadline_s, groundedness as keywords (no
    CHAIN_SETTINGS import); the chain defaults (chunks, 120 s) stay; a keyword wins over
    settings=; a misspelled one is a TypeError naming it."""
    from camab_rag import GroundednessFilter

    gate = GroundednessFilter()
    settings = make(KeywordScorer(), budget=12).settings
    assert settings == CHAIN_SETTINGS.with_changes(budget=12)
    made = make(
        KeywordScorer(),
        budget=3,
        method="loo",
        granularity="sentence",
        deadline_s=30,
        groundedness=gate,
        settings=CHAIN_SETTINGS.with_changes(budget=40, seed=5),
    )
    every = made.settings
    assert (every.budget, every.method_instance.name, every.granularity) == (3, "loo", "sentence")
    assert (every.deadline_s, every.seed, made.runs.gate) == (30.0, 5, gate)
    with pytest.raises(TypeError, match="unexpected keyword argument 'budjet'"):
        make(KeywordScorer(), budjet=12)
    with pytest.raises(InputError, match="unknown method 'camba'"):
        make(KeywordScorer(), method="camba")


def test_the_step_attributes_with_its_keywords() -> None:
    step = CamabAttributor(KeywordScorer(), budget=6, method="loo", granularity="sentence")
    data = (_rag() | step).invoke(QUESTION)["attribution"]
    assert data["status"] == "ok" and (data["method"], data["budget"]) == ("loo", 6)
    assert data["n_queries"] == 4  # leave-one-out over the 3 one-sentence documents
