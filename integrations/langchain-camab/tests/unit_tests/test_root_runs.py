"""A traced chain's root runs attributed as they end (langchain_camab.callbacks):
documents of retrievers and tools, the entries on duplicates, the
run's metadata slot, the background placeholders and a relayed progress; LangChain's own
documents and messages, the scorer the keyword fake."""

from __future__ import annotations

from typing import Any
from uuid import uuid4

from langchain_camab.callbacks import LLMCall, RootRuns, tool_documents
from langchain_camab.native import RUN_METADATA_KEY
from langchain_core.documents import Document as Doc
from langchain_core.messages import AIMessage as Message
from langchain_core.messages import ToolMessage

from camab_rag.integration import Runs
from camab_rag.settings import CHAIN_SETTINGS
from camab_rag.steps import drive
from tests.fakes import KeywordScorer, said

QUESTION = "Which city is the capital of France?"
MODEL = {"name": "the model"}
PARIS, BERLIN = "Paris is the capital of France.", "Berlin is in Germany."


def roots(background: bool = False, cite: bool = False) -> RootRuns:
    options = {"settings": CHAIN_SETTINGS.with_changes(budget=4), "citations": cite}
    runs = Runs.of("Handler", None, {**options, "background": background})
    return RootRuns(runs, lambda call: KeywordScorer())


def cited(message: Message) -> bool:
    """Whether the answer message carries LangChain ``Citation`` annotations."""
    block = message.content[0] if isinstance(message.content, list) else None
    return isinstance(block, dict) and bool(block["annotations"])


def answered(kernel: RootRuns, root: Any, documents: list[Doc]) -> tuple[Message, list[Doc]]:
    """Two retrievers (the second returns the same texts again) and a model call under
    ``root``; the answer message and the second retriever's duplicates."""
    metadata: dict[str, Any] = {}
    kernel.on_chain_start(
        {}, run_id=root, parent_run_id=None, inputs={"question": QUESTION}, metadata=metadata
    )
    assert metadata[RUN_METADATA_KEY]["status"] == "pending"
    duplicates = [Doc(d.page_content) for d in documents]
    for retriever, returned in ((uuid4(), documents), (uuid4(), duplicates)):
        kernel.track(retriever, root).queries.append(QUESTION)
        kernel.on_retriever_end(run_id=retriever, documents=returned)
    llm, message = uuid4(), Message("Paris.")
    prompt = "\n".join(d.page_content for d in documents) + f"\n{QUESTION}"
    kernel.on_llm_start(MODEL, [prompt], run_id=llm, parent_run_id=root)
    kernel.llm_ended(llm, said("Paris.", message))
    run = kernel.get(root)
    assert run is not None and run.queries == [QUESTION, QUESTION]
    assert run.llm_calls == [LLMCall(prompt, (MODEL, {}), "Paris.", message)]
    return message, duplicates


def test_a_root_run_is_attributed_when_it_ends_and_everything_gets_its_entry() -> None:
    kernel, root = roots(cite=True), uuid4()
    first = [Doc(PARIS), Doc(BERLIN)]
    message, duplicates = answered(kernel, root, first)
    metadata = kernel.get(root).metadata  # type: ignore[union-attr]
    job = kernel.ended(root)
    assert job is not None and job[1] == []
    result = drive(job[0])
    assert result.status == "ok" and result.run_id == str(root)
    assert [d.metadata["attribution"]["rank"] for d in first] == [1, 2]
    assert [d.metadata["attribution"] for d in duplicates] == [
        d.metadata["attribution"] for d in first
    ]
    assert message.response_metadata["attribution"]["status"] == "ok" and cited(message)
    assert metadata is not None and metadata[RUN_METADATA_KEY]["status"] == "ok"
    assert kernel.runs.results[root] is result and not kernel._roots


def test_in_the_background_placeholders_are_put_first_and_filled_in_place() -> None:
    kernel, root = roots(background=True), uuid4()
    documents = [Doc(PARIS), Doc(BERLIN)]
    message, _ = answered(kernel, root, documents)
    job = kernel.ended(root)
    assert job is not None and len(job[1]) == 4  # answer, two documents, the run's slot
    assert documents[0].metadata["attribution"]["status"] == "pending"
    assert message.response_metadata["attribution"]["status"] == "pending"
    assert not cited(message)
    drive(job[0])
    assert [d.metadata["attribution"]["rank"] for d in documents] == [1, 2]
    assert all(placeholder["status"] == "ok" for placeholder in job[1])


def test_runs_that_are_not_rag_or_that_fail_leave_nothing_behind() -> None:
    kernel, root, bare = roots(), uuid4(), uuid4()
    metadata: dict[str, Any] = {}
    kernel.on_chain_start(
        {}, run_id=root, parent_run_id=None, inputs={"question": "q"}, metadata=metadata
    )
    assert kernel.ended(root) is None and metadata == {}
    kernel.on_chain_start({}, run_id=bare, parent_run_id=None, inputs="q")
    kernel.on_retriever_end(
        run_id=bare, documents=[Doc("a")]
    )  # a retriever called alone is its own root
    assert not kernel._roots
    failing, child = uuid4(), uuid4()
    kernel.on_chain_start(
        {}, run_id=failing, parent_run_id=None, inputs={"question": "q"}, metadata=metadata
    )
    kernel.on_tool_start({"name": "search"}, "", run_id=child, parent_run_id=failing)
    kernel.on_chain_error(RuntimeError(), run_id=child)
    kernel.on_chain_error(RuntimeError(), run_id=failing)
    assert not kernel._roots and metadata == {} and kernel.tool_names == {}


def test_a_tools_output_becomes_documents() -> None:
    kernel, root, tool = roots(), uuid4(), uuid4()
    kernel.on_chain_start({}, run_id=root, parent_run_id=None, inputs={"question": "q"})
    kernel.on_tool_start({"name": "search"}, "", run_id=tool, parent_run_id=root)
    kernel.on_tool_end(run_id=tool, output=ToolMessage("Paris is the capital.", tool_call_id="t"))
    run = kernel.get(root)
    assert run is not None and run.tool_documents == [
        Doc("Paris is the capital.", metadata={"source": "search"})
    ]
    docs = [Doc("a"), Doc("b")]
    assert tool_documents(ToolMessage("x", artifact=docs, tool_call_id="t"), None) == docs
    assert tool_documents(docs[0], None) == [docs[0]]
    assert tool_documents(3, None) == [Doc("3")]
    assert tool_documents("  ", "t") == []
