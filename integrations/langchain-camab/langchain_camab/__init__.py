"""LangChain integration of camab-rag: which retrieved documents did the answer come from?
A callback handler (:class:`CamabCallbackHandler`), a chain step (:class:`CamabAttributor`),
an in-process chat model (:class:`CamabChatModel`) and ``Citation`` annotations."""

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
