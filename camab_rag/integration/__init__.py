"""The kernel every framework integration builds on: a captured prompt in, a result out.

An integration does two things of its own: it *captures* a chain call (callbacks, events,
spans: the question, the answer, the documents, the prompts its model received) and it
*attaches* the result to its framework's types. Everything between is here:

* :class:`ChainCall` (what was captured), attributed by :class:`Runs` (inline, or in the
  background as a :class:`~camab_rag.attributor.Pending` kept by key: ``runs.job(key).result()``)
  with one :class:`~camab_rag.AttributionSettings`, built from an object's keyword
  options (:class:`AttributorOptions`, :class:`ChainOptions`: the knobs of
  :func:`camab_rag.attribute` with one meaning) by :class:`ChainParts`, its scorer chosen
  by :class:`~camab_rag.integration.options.ScorerSource` (the one resolver, each scorer
  built once);
* :class:`ChainAttribution` (a result plus its run) and :class:`Attachment` (the answer's
  summary and the documents' entries, pending then filled in place), under
  :data:`METADATA_KEY`; :func:`native_citations` for the frameworks' citation types;
  :func:`attribution_of` / :func:`groundedness_of` read them back;
* :func:`chat_messages` / :func:`content_text` (a framework's messages as prompts),
  :class:`LocalModel` (answering with an in-process model), :class:`ProgressRelay`.

A minimal integration::

    runs = Runs(AttributionSettings(budget=16))
    call = ChainCall(question, answer, documents, scorer=lambda: my_scorer)
    result = runs.run(runs.steps(run_id, call, lambda attributed: attributed.result))
"""

from __future__ import annotations

from camab_rag.integration.kernel import (
    METADATA_KEY,
    Attachment,
    ChainAttribution,
    ChainCall,
    Runs,
    attribution_of,
    groundedness_of,
    native_citations,
    prompt_holds,
)
from camab_rag.integration.messages import (
    LocalModel,
    ProgressRelay,
    chat_messages,
    content_text,
)
from camab_rag.integration.options import (
    AttributorOptions,
    ChainOptions,
    ChainParts,
)
from camab_rag.scorers.base import Prompt
from camab_rag.steps import Steps

__all__ = [
    "METADATA_KEY",
    "Attachment",
    "AttributorOptions",
    "ChainAttribution",
    "ChainCall",
    "ChainOptions",
    "ChainParts",
    "LocalModel",
    "ProgressRelay",
    "Prompt",
    "Runs",
    "Steps",
    "attribution_of",
    "chat_messages",
    "content_text",
    "groundedness_of",
    "native_citations",
    "prompt_holds",
]
