"""Grouping of runs under their root run (pure bookkeeping)."""

from __future__ import annotations

import threading
from uuid import uuid4

from langchain_camab._capture import Capture, CaptureStore, LLMCall
from langchain_core.documents import Document


def test_runs_are_filed_under_their_root() -> None:
    store = CaptureStore()
    root, child, grandchild = uuid4(), uuid4(), uuid4()
    store.track(root, None, inputs={"question": "q"})
    store.track(child, root)
    store.track(grandchild, child)
    store.add_documents(grandchild, [Document("a")])
    assert store.get(grandchild) is store.get(root)
    assert store.is_root(root) and not store.is_root(child)
    capture = store.pop(root)
    assert capture is not None
    assert [d.page_content for d in capture.documents] == ["a"]
    assert capture.descendants == {child, grandchild}
    assert store.get(child) is None and len(store) == 0


def test_a_run_with_an_unknown_parent_is_a_root() -> None:
    store = CaptureStore()
    run = uuid4()
    store.track(run, uuid4())  # the handler was attached below the real root
    assert store.is_root(run)


def test_concurrent_roots_never_mix() -> None:
    store = CaptureStore()
    roots = [uuid4() for _ in range(20)]

    def work(i: int) -> None:
        store.track(roots[i], None, inputs=f"q{i}")
        retriever = uuid4()
        store.track(retriever, roots[i])
        store.add_documents(retriever, [Document(f"doc {i}")])
        llm = uuid4()
        store.track(llm, roots[i])
        store.add_llm_call(llm, LLMCall(f"prompt {i}", answer=f"answer {i}"))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, root in enumerate(roots):
        capture = store.pop(root)
        assert capture is not None
        assert capture.inputs == f"q{i}"
        assert [d.page_content for d in capture.documents] == [f"doc {i}"]
        assert [c.answer for c in capture.llm_calls] == [f"answer {i}"]


def test_question_from_input_keys_or_query() -> None:
    assert Capture(uuid4(), inputs="plain").question() == "plain"
    assert Capture(uuid4(), inputs={"input": "a", "question": "b"}).question() == "a"
    assert Capture(uuid4(), inputs={"question": "b"}).question() == "b"
    assert Capture(uuid4(), inputs={"x": 1}, queries=["from retriever"]).question() == (
        "from retriever"
    )
    assert Capture(uuid4(), inputs={"q": "c"}).question(("q",)) == "c"
    assert Capture(uuid4(), inputs=3).question() == ""


def test_duplicate_documents_are_attributed_once() -> None:
    capture = Capture(uuid4(), documents=[Document("a"), Document("b"), Document("a")])
    assert [d.page_content for d in capture.unique_documents()] == ["a", "b"]


def test_documents_from_the_input_when_no_retriever_ran() -> None:
    docs = [Document("x"), Document("y")]
    capture = Capture(uuid4(), inputs={"input": "q", "context": docs})
    assert capture.unique_documents() == docs
    assert Capture(uuid4(), inputs={"context": "text"}).unique_documents() == []
