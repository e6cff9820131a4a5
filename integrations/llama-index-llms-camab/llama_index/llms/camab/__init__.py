"""camab-rag's in-process LLM for LlamaIndex: ``CamabLocalLLM(scorer)`` answers with the
scorer's weights (default: the embedded SmolLM2) and carries the scorer, so the
``llama-index-postprocessor-camab`` engines attribute its answers with ``scorer=None``."""

from llama_index.llms.camab.base import CamabLocalLLM

__all__ = ["CamabLocalLLM"]
