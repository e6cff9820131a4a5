"""A LangChain chat model over an in-process camab-rag model, which scores with the weights
that answered; and how camab-rag reads LangChain's chat models (``llm.bind(...)``
unwrapped, a run's model rebuilt from what callbacks see of it)."""

from __future__ import annotations

import itertools
import os
import re
import weakref
from collections.abc import Iterator, Mapping
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import LangSmithParams
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

from camab_rag.errors import CredentialsRefusedError, ScorerUnavailableError
from camab_rag.integration import local_answer
from camab_rag.scorers import resolve_scorer
from camab_rag.scorers.proxy import is_openai_endpoint, register_model_reader
from langchain_camab.native import to_chat_messages

MODEL_KEY = "camab_model_key"
MODELS: weakref.WeakValueDictionary[str, CamabChatModel] = weakref.WeakValueDictionary()
"""Live models by their :data:`MODEL_KEY` invocation parameter: how callbacks find one."""
_NUMBERS = itertools.count()


class CamabChatModel(BaseChatModel):
    """Chat model answering greedily with ``generator`` (e.g. ``camab_rag.default_scorer()``:
    ``generate(prompts, max_new_tokens=...)`` and, to score too, ``score(requests)``), at
    most ``max_new_tokens``; ``stream()`` yields the answer word by word."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    generator: Any = Field(exclude=True)
    max_new_tokens: int = 64
    _key: str = PrivateAttr(default="")

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        if not callable(getattr(self.generator, "generate", None)):
            raise TypeError(
                "CamabChatModel needs generator= an object with generate(prompts, "
                "max_new_tokens=...), e.g. camab_rag.default_scorer()"
            )
        self._key = f"camab-{next(_NUMBERS)}"
        MODELS[self._key] = self

    @property
    def scorer(self) -> Any:
        if not callable(getattr(self.generator, "score", None)):
            raise TypeError(f"{type(self.generator).__name__} cannot score: it has no score()")
        return self.generator

    @property
    def _llm_type(self) -> str:
        return "camab-in-process"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model": str(getattr(self.generator, "name", type(self.generator).__name__)),
            "max_new_tokens": self.max_new_tokens,
            MODEL_KEY: self._key,
        }

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = "camab"
        params["ls_model_name"] = str(kwargs.get("model") or self._identifying_params["model"])
        params["ls_max_tokens"] = self.max_new_tokens
        return params

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = local_answer(self.generator, to_chat_messages(messages), self.max_new_tokens, stop)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        text = str(self._generate(messages, stop).generations[0].message.content)
        for piece in re.findall(r"\s*\S+", text) or [text]:  # word by word, as tokens come
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager is not None:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk


def _unbound(llm: object) -> object:
    while (bound := getattr(llm, "bound", None)) is not None and bound is not llm:
        llm = bound
    return llm


register_model_reader(_unbound)


NO_KEY_FROM_RUN = (
    "the handler rebuilt the scorer from what the framework's callbacks show of the chain's "
    "model, where its API key is only the name of an environment variable; that variable "
    "is read for OpenAI's own endpoint only, so no key was sent to this server: pass "
    "llm=<the chain's chat model> (its own key is used) or scorer=... to the handler"
)


def explain_refused_key(error: Exception) -> Exception:
    """A key refused by a server whose scorer :func:`scorer_from_run` built, explained."""
    if isinstance(error, CredentialsRefusedError):
        return ScorerUnavailableError(f"{error}. {NO_KEY_FROM_RUN}")
    return error


def scorer_from_run(
    serialized: Mapping[str, Any] | None, params: Mapping[str, Any], **options: Any
) -> Any:
    """The scorer of an LLM run's model: a :class:`CamabChatModel` by its key, else an
    OpenAI-compatible client from its serialized base URL and model (a key only for
    OpenAI's own endpoint: a serialized secret names its environment variable)."""
    model = MODELS.get(str(params.get(MODEL_KEY)))
    if model is not None:
        return model.scorer
    kwargs = dict((serialized or {}).get("kwargs") or {})
    url = kwargs.get("openai_api_base") or kwargs.get("base_url") or kwargs.get("api_base")
    name = params.get("model") or params.get("model_name") or kwargs.get("model_name")
    if not url or not name:
        ident = ".".join(str(p) for p in (serialized or {}).get("id") or []) or "unknown model"
        raise ScorerUnavailableError(
            f"cannot build a scorer from the chain's model ({ident}): it is not an "
            "OpenAI-compatible chat model with a base URL. Attribution needs the "
            "log-probabilities of a given text: pass scorer=camab_rag.default_scorer(), "
            "scorer=camab_rag.OpenAICompletionsScorer(...) or llm=<the chain's chat model>"
        )
    key = kwargs.get("openai_api_key") or kwargs.get("api_key")
    ids = key.get("id") if isinstance(key, Mapping) and key.get("type") == "secret" else None
    api_key = key if isinstance(key, str) else None
    if api_key is None and ids and is_openai_endpoint(str(url)):
        api_key = os.environ.get(str(ids[0]))
    return resolve_scorer(base_url=str(url), model=str(name), api_key=api_key, **options)
