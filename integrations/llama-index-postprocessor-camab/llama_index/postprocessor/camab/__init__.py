"""camab-rag for LlamaIndex: which retrieved nodes did the answer come from?
(``CamabQueryEngine``, ``CamabChatEngine``, ``CamabEventHandler``, ``CamabNodePostprocessor``)
"""

from llama_index.postprocessor.camab.answers import (
    ATTRIBUTION_KEY,
    await_attribution,
    to_citation_blocks,
    wait_for_attribution,
)
from llama_index.postprocessor.camab.attributor import aattribute_response, attribute_response
from llama_index.postprocessor.camab.base import CamabNodePostprocessor
from llama_index.postprocessor.camab.engines import (
    CamabChatEngine,
    CamabEventHandler,
    CamabQueryEngine,
)
from llama_index.postprocessor.camab.spans import AttributionProgressEvent

from camab_rag import AttributionSettings
from camab_rag.integration import attribution_of, groundedness_of

__all__ = [
    "ATTRIBUTION_KEY",
    "AttributionProgressEvent",
    "AttributionSettings",
    "CamabChatEngine",
    "CamabEventHandler",
    "CamabNodePostprocessor",
    "CamabQueryEngine",
    "aattribute_response",
    "attribute_response",
    "attribution_of",
    "await_attribution",
    "groundedness_of",
    "to_citation_blocks",
    "wait_for_attribution",
]
