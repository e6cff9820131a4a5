"""LangChain integration of camab-rag: which retrieved documents did the answer come from?

* :class:`CamabCallbackHandler` / :class:`AsyncCamabCallbackHandler`: add to any chain's
  ``config={"callbacks": [...]}``; attributes each root run's answer when it ends, against
  the exact prompt the LLM received.
* :class:`CamabAttributor`: an LCEL step / LangGraph node placed after the answer.
* :class:`CamabChatModel`: a chat model over camab-rag's in-process model (offline RAG).
* :func:`to_citations`: LangChain ``Citation`` annotations from an attribution.
"""

from camab_rag.errors import ScorerUnavailableError
from camab_rag.integration import groundedness_of
from langchain_camab.attributor import CamabAttributor
from langchain_camab.callbacks import AsyncCamabCallbackHandler, CamabCallbackHandler
from langchain_camab.chat_models import CamabChatModel
from langchain_camab.native import to_citations, with_citations

__all__ = [
    "AsyncCamabCallbackHandler",
    "CamabAttributor",
    "CamabCallbackHandler",
    "CamabChatModel",
    "ScorerUnavailableError",
    "groundedness_of",
    "to_citations",
    "with_citations",
]
