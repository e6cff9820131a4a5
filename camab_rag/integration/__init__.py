"""The public API for integrating camab-rag into a framework (LangChain, LlamaIndex...).

An integration does two things of its own: it *captures* a chain call (callbacks, events,
spans: the question, the answer, the documents, the prompts the model received) and it
*attaches* the result to the framework's types (metadata, native citations). Everything
between is here, and an integration imports nothing else of the core:

* run: :class:`ChainCall` (what was captured) and :class:`ChainRuns` (one object's
  attributions: sync, async or background, the result store, the never-break-the-chain
  and fail-closed policies), over one :class:`AttributionSettings` (the integrations'
  default: :data:`CHAIN_SETTINGS`, whole documents and a deadline; every integration
  object also takes the knobs ``budget``, ``method``, ``granularity``, ``deadline_s``,
  ``groundedness`` as keywords, merged by :func:`checked_options`);
* attach: :func:`answer_summary` (the answer's metadata),
  :func:`~camab_rag.captured.document_summary` (the per-document entry: score, rank,
  supporting sentences, disputes),
  :func:`native_citations` (the data of the frameworks' citation types), :func:`pending` /
  :func:`fill` (placeholders filled in place when a background attribution ends),
  :func:`~camab_rag.captured.reached_the_model` (which LLM call saw the documents);
* scorers: :func:`~camab_rag.scorers.resolve_scorer` (the chain's own model, or a proxy
  named as such), :class:`ScorerSource` (built once per model); :class:`MiniLMEmbedder` (the
  embedded sentence embedder, for offline retrieval);
* capture and attach helpers: :class:`RunTree` (a traced call's runs filed under their
  root) and :class:`RunReading` (what a finished root run attributes), :class:`Attachment`
  (the answer's and documents' dicts, pending then filled) and :class:`ChainAttribution`;
* one code path for sync and async: :data:`Steps`, :func:`drive`, :func:`~camab_rag.steps.adrive`,
  :func:`synced`, :func:`asynced`;
* spans (LlamaIndex): :class:`SpanRecords` files model calls and retrievals under the
  query span enclosing them; :func:`streaming_for` / :func:`read_for` for streamed answers.

* framework-shaped kernels: :class:`ChainStep` and :class:`RootRuns` (a chain step and
  callback handlers, LangChain-shaped), :class:`AnswerAttributor` (a framework's answer
  object and its engines, LlamaIndex-shaped), over one options list
  (:class:`ChainOptions`, checked by :func:`checked_options`) and one scorer rule
  (:func:`~camab_rag.scorers.resolve_scorer`, kept per object by :class:`ScorerSource`).

A minimal integration::

    runs = ChainRuns(AttributionSettings(budget=16))
    call = ChainCall(question, answer, documents, scorer=lambda: my_scorer)
    result = runs.run(runs.steps(run_id, call, lambda attributed: attributed.result))
"""

from __future__ import annotations

from camab_rag.captured import (
    CapturedAttribution,
)
from camab_rag.citations import CitationRule
from camab_rag.embeddings import MiniLMEmbedder
from camab_rag.errors import CredentialsRefusedError, InputError, NoContextError
from camab_rag.groundedness import FilteredAnswer, GroundednessFilter
from camab_rag.groundedness.filter import check_groundedness_filter
from camab_rag.integration.answer_attributor import (
    AnswerAttribution,
    AnswerAttributor,
    answer_documents,
)
from camab_rag.integration.answer_metadata import (
    attribution_info,
    attribution_of,
    await_attribution,
    set_attribution,
    wait_for_attribution,
)
from camab_rag.integration.attached import (
    METADATA_KEY,
    Attachment,
    ChainAttribution,
    KeptResults,
    WaitedResults,
    groundedness_of,
)
from camab_rag.integration.background import cancelled, fill, pending
from camab_rag.integration.chain_options import (
    AttributorOptions,
    ChainOptions,
    ChainParts,
    checked_options,
)
from camab_rag.integration.chain_runs import (
    ChainCall,
    ChainRuns,
    answer_summary,
    await_on,
    failed_attribution,
    native_citations,
    wait_on,
)
from camab_rag.integration.chain_scorers import (
    NO_KEY_FROM_RUN,
    ScorerSource,
    ScorerUnavailableError,
)
from camab_rag.integration.chain_step import (
    ChainStep,
    NativeTypes,
    StepCall,
    StepInput,
    StepKeys,
    added,
)
from camab_rag.integration.chat_messages import (
    as_prompt,
    chat_messages,
    chat_prompt,
    content_text,
    last_user_text,
)
from camab_rag.integration.local_answers import (
    answer_text,
    checked_generator,
    generator_name,
    generator_scorer,
    word_pieces,
)
from camab_rag.integration.model_registry import ModelRegistry
from camab_rag.integration.progress_relay import ProgressHook, ProgressRelay
from camab_rag.integration.root_runs import RootRuns, tool_documents
from camab_rag.integration.run_tree import (
    CONTEXT_KEYS,
    QUESTION_KEYS,
    LLMCall,
    RunReading,
    RunTree,
)
from camab_rag.integration.score_filter import Missing, ScoreFilter, finite_number
from camab_rag.integration.span_records import (
    SpanRecord,
    SpanRecords,
    aread_for,
    read_for,
    streaming_for,
)
from camab_rag.result import AttributionResult
from camab_rag.scorers.base import Prompt
from camab_rag.scorers.proxy import resolve_scorer
from camab_rag.segments import SourceDocument
from camab_rag.settings import CHAIN_SETTINGS, AttributionSettings
from camab_rag.steps import Steps, asynced, drive, synced

__all__ = [
    "CHAIN_SETTINGS",
    "CONTEXT_KEYS",
    "METADATA_KEY",
    "NO_KEY_FROM_RUN",
    "QUESTION_KEYS",
    "AnswerAttribution",
    "AnswerAttributor",
    "Attachment",
    "AttributionResult",
    "AttributionSettings",
    "AttributorOptions",
    "CapturedAttribution",
    "ChainAttribution",
    "ChainCall",
    "ChainOptions",
    "ChainParts",
    "ChainRuns",
    "ChainStep",
    "CitationRule",
    "CredentialsRefusedError",
    "FilteredAnswer",
    "GroundednessFilter",
    "InputError",
    "KeptResults",
    "LLMCall",
    "MiniLMEmbedder",
    "Missing",
    "ModelRegistry",
    "NativeTypes",
    "NoContextError",
    "ProgressHook",
    "ProgressRelay",
    "Prompt",
    "RootRuns",
    "RunReading",
    "RunTree",
    "ScoreFilter",
    "ScorerSource",
    "ScorerUnavailableError",
    "SourceDocument",
    "SpanRecord",
    "SpanRecords",
    "StepCall",
    "StepInput",
    "StepKeys",
    "Steps",
    "WaitedResults",
    "added",
    "answer_documents",
    "answer_summary",
    "answer_text",
    "aread_for",
    "as_prompt",
    "asynced",
    "attribution_info",
    "attribution_of",
    "await_attribution",
    "await_on",
    "cancelled",
    "chat_messages",
    "chat_prompt",
    "check_groundedness_filter",
    "checked_generator",
    "checked_options",
    "content_text",
    "drive",
    "failed_attribution",
    "fill",
    "finite_number",
    "generator_name",
    "generator_scorer",
    "groundedness_of",
    "last_user_text",
    "native_citations",
    "pending",
    "read_for",
    "resolve_scorer",
    "set_attribution",
    "streaming_for",
    "synced",
    "tool_documents",
    "wait_for_attribution",
    "wait_on",
    "word_pieces",
]
