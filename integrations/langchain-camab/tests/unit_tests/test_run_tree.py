"""Runs filed under their root run, and what a finished root run attributes
(langchain_camab.callbacks): pure bookkeeping over LangChain's documents and messages."""

from __future__ import annotations

import threading
from uuid import uuid4

from langchain_camab.callbacks import LLMCall, RootRun, RootRuns
from langchain_core.documents import Document as Doc
from langchain_core.messages import AIMessage, HumanMessage

from camab_rag.errors import NoContextError
from camab_rag.integration import Runs
from camab_rag.steps import drive
from tests.fakes import KeywordScorer, said

READING = RootRuns(Runs.of("Handler", None, {}))


def root(**values: object) -> RootRun:
    return RootRun(uuid4(), **values)  # type: ignore[arg-type]


def test_runs_are_filed_under_their_root() -> None:
    tree = RootRuns(Runs.of("Handler", None, {}))
    top, child, grandchild = uuid4(), uuid4(), uuid4()
    tree.track(top, None, inputs={"question": "q"})
    tree.track(child, top)
    tree.track(grandchild, child)
    tree.on_retriever_end(run_id=grandchild, documents=[Doc("a")])
    assert tree.get(grandchild) is tree.get(top)
    assert tree.pop(child) is None  # not a root: nothing forgotten
    run = tree.pop(top)
    assert run is not None
    assert [d.page_content for d in run.documents] == ["a"]
    assert run.descendants == {child, grandchild}
    assert tree.get(child) is None and not tree._roots


def test_a_run_with_an_unknown_parent_is_a_root() -> None:
    tree = RootRuns(Runs.of("Handler", None, {}))
    run = uuid4()
    tree.track(run, uuid4())  # the integration was attached below the real root
    assert tree.pop(run) is not None


def test_concurrent_roots_never_mix() -> None:
    tree = RootRuns(Runs.of("Handler", None, {}))
    roots = [uuid4() for _ in range(20)]

    def work(i: int) -> None:
        tree.track(roots[i], None, inputs=f"q{i}")
        retriever = uuid4()
        tree.track(retriever, roots[i])
        tree.on_retriever_end(run_id=retriever, documents=[Doc(f"doc {i}")])
        llm = uuid4()
        tree.on_llm_start(None, [f"prompt {i}"], run_id=llm, parent_run_id=roots[i])
        tree.llm_ended(llm, said(f"answer {i}"))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, top in enumerate(roots):
        run = tree.pop(top)
        assert run is not None
        assert run.inputs == f"q{i}"
        assert [d.page_content for d in run.documents] == [f"doc {i}"]
        assert [c.answer for c in run.llm_calls] == [f"answer {i}"]


def test_question_from_input_keys_messages_or_query() -> None:
    assert READING.question(root(inputs="plain")) == "plain"
    assert READING.question(root(inputs={"input": "a", "question": "b"})) == "a"
    assert READING.question(root(inputs={"question": "b"})) == "b"
    chat = [HumanMessage("first"), AIMessage("x"), HumanMessage("last")]
    assert READING.question(root(inputs={"messages": chat})) == "last"
    assert READING.question(root(inputs=chat)) == "last"
    assert READING.question(root(inputs={"x": 1}, queries=["from retriever"])) == "from retriever"
    keyed = RootRuns(Runs.of("Handler", None, {}), question_keys="q")
    assert keyed.question(root(inputs={"q": "c"})) == "c"
    assert READING.question(root(inputs=3)) == ""


def test_duplicate_documents_are_attributed_once() -> None:
    run = root(documents=[Doc("a"), Doc("b"), Doc("a")])
    assert [d.page_content for d in READING.documents(run)] == ["a", "b"]


def test_documents_from_tools_then_from_the_input() -> None:
    assert READING.documents(root(tool_documents=[Doc("t")])) == [Doc("t")]
    docs = [Doc("x"), Doc("y")]
    assert READING.documents(root(inputs={"input": "q", "context": docs})) == docs
    assert READING.documents(root(inputs={"context": "text"})) == []


def test_the_call_whose_prompt_holds_the_documents_is_attributed() -> None:
    docs = [Doc("Paris is the capital of France."), Doc("The Seine flows through it.")]
    answer_step = LLMCall("Context: " + " ".join(d.page_content for d in docs), answer="Paris.")
    rewrite = LLMCall("Rewrite the question", answer="capital of France?")
    unanswered = LLMCall("Context: " + docs[0].page_content + docs[1].page_content)
    run = root(inputs="q", documents=docs, llm_calls=[answer_step, rewrite, unanswered])
    assert READING.chosen_call(run, docs) is answer_step
    assert READING.problem(run, answer_step, docs) is None
    # no call saw every document: the last one answered
    assert (
        READING.chosen_call(
            root(documents=[Doc("elsewhere")], llm_calls=[answer_step, rewrite]), [Doc("elsewhere")]
        )
        is rewrite
    )
    # filed as traced, the chosen call's question, answer and prompt are attributed
    runs = RootRuns(Runs.of("Handler", None, {"budget": 4}), lambda call: KeywordScorer())
    top, retriever = uuid4(), uuid4()
    runs.on_chain_start({}, run_id=top, parent_run_id=None, inputs="q")
    runs.track(retriever, top)
    runs.on_retriever_end(run_id=retriever, documents=docs)
    for call in (answer_step, rewrite, unanswered):
        llm = uuid4()
        runs.on_llm_start(None, [str(call.prompt)], run_id=llm, parent_run_id=top)
        if call.answer is not None:
            runs.llm_ended(llm, said(call.answer))
    job = runs.ended(top)
    assert job is not None
    result = drive(job[0])
    assert (result.question, result.response, result.prompt_mode) == ("q", "Paris.", "captured")


def test_why_a_run_cannot_be_attributed() -> None:
    top = uuid4()
    READING.on_chain_start({}, run_id=top, parent_run_id=None, inputs="q")
    assert READING.ended(top) is None  # no model, no retriever: not RAG
    unanswered = READING.problem(root(), LLMCall("p"), [Doc("d")])
    assert "no LLM answer" in str(unanswered)
    found_nothing = READING.problem(root(queries=["q"]), LLMCall("p", answer="a"), [])
    assert isinstance(found_nothing, NoContextError)
    no_docs = READING.problem(root(), LLMCall("p", answer="a"), [])
    assert "no documents were captured" in str(no_docs)
    assert "a RunnableLambda is no retriever run" in str(no_docs)  # and what to do (review 16)
