"""In-process scorer on a transformers causal LM, from local files only: exact
teacher-forced log-probs, many requests at once (:mod:`.prefix_batches`), greedy answers."""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from camab_rag.errors import ContextTooLongError, InputError, ScorerError
from camab_rag.scorers.base import (
    BaseScorer,
    Prompt,
    ResponseLogprobs,
    ScoreRequest,
    check_messages,
)
from camab_rag.scorers.models import quiet_loading, resolve_model_path, set_offline_flags
from camab_rag.scorers.prefix_batches import PrefixBatcher, use_lower_right
from camab_rag.text_gate import check_text


@dataclass(frozen=True)
class EncodedRequest:
    """One request's token ids, and where each response token starts in the response."""

    prompt_ids: tuple[int, ...]
    response_ids: tuple[int, ...]
    offsets: tuple[int, ...]
    tokens: tuple[str, ...]


def _usable(text: str, field: str) -> str:
    return check_text(text, field, max_chars=sys.maxsize, nul=False)  # lone surrogates


class RequestEncoder:
    """Encodes requests with a fast tokenizer (prompts rendered by ``render``) as the model
    generates them: the prompt, then the response; the last ``kept_responses`` are kept."""

    def __init__(
        self, tokenizer: Any, render: Callable[[Prompt], str], *, kept_responses: int = 64
    ) -> None:
        self.tokenizer = tokenizer
        self.render = render
        self._response = functools.lru_cache(kept_responses)(self._tokenize_response)

    def prompt_ids(self, prompts: Sequence[Prompt]) -> list[list[int]]:
        """Token ids of each rendered prompt (an empty prompt is the BOS token alone)."""
        texts = [_usable(self.render(p), f"prompt {i}") for i, p in enumerate(prompts)]
        return self._prompt_ids(texts, [isinstance(p, str) for p in prompts])

    def encode(self, requests: Sequence[ScoreRequest]) -> list[EncodedRequest]:
        """Prompt and response token ids of each request."""
        for i, request in enumerate(requests):
            if not isinstance(request.response, str) or not request.response:
                raise InputError("ScoreRequest.response must be a non-empty string")
            _usable(request.response, f"request {i}'s response")
        texts = [
            _usable(self.render(r.prompt), f"request {i}'s prompt") for i, r in enumerate(requests)
        ]
        plain = [isinstance(r.prompt, str) for r in requests]
        prompts = self._prompt_ids(texts, plain)
        alone = [self._response(r.response) for r in requests]
        # the joint text is tokenized only where the response alone is altered
        whole = [i for i, tokens in enumerate(alone) if not tokens[2]]
        joint = [texts[i] + requests[i].response for i in whole]
        joints = dict(zip(whole, self._tokenize(joint, [plain[i] for i in whole])))
        return [
            self._split(len(texts[i]), prompts[i], alone[i], joints.get(i), r.response)
            for i, r in enumerate(requests)
        ]

    def _tokenize(self, texts: Sequence[str], plain: Sequence[bool]) -> list[dict[str, Any]]:
        """One batched tokenizer call per kind of text (with or without special tokens)."""
        out: list[dict[str, Any]] = [{} for _ in texts]
        for special in (True, False):
            if where := [i for i, p in enumerate(plain) if p is special]:
                chosen = [texts[i] for i in where]
                batch = self.tokenizer(
                    chosen, add_special_tokens=special, return_offsets_mapping=True
                )
                for k, i in enumerate(where):
                    out[i] = {key: batch[key][k] for key in batch}
        return out

    def _prompt_ids(self, texts: Sequence[str], plain: Sequence[bool]) -> list[list[int]]:
        ids = [[int(i) for i in e["input_ids"]] for e in self._tokenize(texts, plain)]
        bos = self.tokenizer.bos_token_id
        if bos is None and not all(ids):
            raise InputError("the prompt is empty and the model has no BOS token to start from")
        return [row or [int(bos)] for row in ids]

    def _tokenize_response(self, response: str) -> tuple[list[int], list[Any], bool]:
        """Ids, spans, and whether the ids decode to the response (no prefix space added)."""
        enc = self.tokenizer(response, add_special_tokens=False, return_offsets_mapping=True)
        ids = [int(i) for i in enc["input_ids"]]
        decoded = self.tokenizer.decode(
            ids, skip_special_tokens=False, clean_up_tokenization_spaces=False
        )
        return ids, list(enc["offset_mapping"]), decoded == response

    @staticmethod
    def _split(
        cut: int, prompt_ids: list[int], alone: tuple[Any, ...], joint: Any, response: str
    ) -> EncodedRequest:
        response_ids, spans = list(alone[0]), [(int(a), int(b)) for a, b in alone[1]]
        if joint is not None:  # the response alone is altered (a SentencePiece prefix space)
            joint_spans = [(int(a), int(b)) for a, b in joint["offset_mapping"]]
            if any(a < cut < b for a, b in joint_spans):
                raise ScorerError(
                    "cannot split the response's tokens from the prompt's: the tokenizer "
                    "merges the prompt's last characters with the response's first ones and "
                    "alters the response when tokenized alone"
                )
            ids = [int(i) for i in joint["input_ids"]]
            first = next(
                (k for k, (a, b) in enumerate(joint_spans) if a >= cut and b > a), len(ids)
            )
            response_ids = ids[first:]
            spans = [(a - cut, b - cut) for a, b in joint_spans[first:]]
            prompt_ids = ids[:first] or prompt_ids
        if not response_ids:
            raise InputError("the response has no tokens to score")
        offsets = tuple(max(0, min(a, len(response))) for a, _ in spans)
        tokens = tuple(response[a:b] for a, b in spans)
        return EncodedRequest(tuple(prompt_ids), tuple(response_ids), offsets, tokens)


def _load(
    model: str | os.PathLike[str], tokenizer: Any, dtype: str, device: str
) -> tuple[Any, Any, str]:
    set_offline_flags()  # before transformers is imported
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    path = resolve_model_path(model)
    try:
        if tokenizer is None:
            tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        with quiet_loading():
            loaded: Any = AutoModelForCausalLM.from_pretrained(
                path, dtype=getattr(torch, dtype), local_files_only=True
            )
    except OSError as error:
        raise InputError(
            f"cannot load model {str(model)!r} from local files (nothing is fetched): {error}"
        ) from error
    return loaded.to(device), tokenizer, device


def _adopt(model: Any, tokenizer: Any, dtype: str | None, device: str) -> tuple[Any, str, str]:
    """A loaded causal LM, checked: (model, device, dtype)."""
    if tokenizer is None:
        raise InputError(
            "a loaded model needs its tokenizer: TransformersScorer(model, tokenizer=tokenizer), "
            "or pass a model name or directory"
        )
    if getattr(model, "config", None) is None or not callable(getattr(model, "forward", None)):
        raise InputError(
            f"model must be a transformers causal LM (with a config), a model name or a "
            f"directory, got {type(model).__name__}"
        )
    own_dtype = str(getattr(model, "dtype", "")).removeprefix("torch.")
    if dtype is not None and dtype != own_dtype:
        raise InputError(
            f"the loaded model is {own_dtype}; dtype={dtype!r} cannot change it (load the "
            "model in that dtype, or leave dtype out)"
        )
    dispatched = bool(getattr(model, "hf_device_map", None))
    if dispatched and device != "auto":
        raise InputError(
            "the model is dispatched over devices (device_map): it stays where it is, so "
            "leave device='auto'"
        )
    if device == "auto" or dispatched:
        return model, str(model.device), own_dtype
    return model.to(device), device, own_dtype


class TransformersScorer(BaseScorer):
    """Score and generate with a causal LM loaded in this process.

    Args:
        model: an embedded model's short name (``"smollm2"``, ``"qwen2.5-0.5b"``), a local
            transformers directory, a ``.gguf`` file, a hub id in the local cache, or a
            causal LM already loaded (with its ``tokenizer=``; it keeps its dtype and device).
        dtype: ``"float32"`` (default, exact), ``"bfloat16"`` or ``"float16"``.
        num_threads: torch intra-op threads (process-wide; ``None`` keeps it).
        batch_size: requests per forward pass; off the CPU also :attr:`parallel_requests`.
        device: a torch device, or ``"auto"``: CUDA when available, else the CPU.
        prefix_cache_mib: memory for the prompts' keys/values kept between calls.
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | Any = "smollm2",
        *,
        tokenizer: Any = None,
        dtype: str | None = None,
        num_threads: int | None = None,
        batch_size: int = 8,
        device: str = "auto",
        prefix_cache_mib: float = 256,
    ) -> None:
        if dtype not in (None, "float32", "bfloat16", "float16"):
            raise InputError(f"dtype must be float32, bfloat16 or float16, got {dtype!r}")
        if batch_size < 1:
            raise InputError(f"batch_size must be at least 1, got {batch_size}")
        if num_threads is not None and num_threads < 1:
            raise InputError(f"num_threads must be at least 1, got {num_threads}")
        if prefix_cache_mib < 0:
            raise InputError(f"prefix_cache_mib must be at least 0, got {prefix_cache_mib}")
        import torch

        if num_threads is not None:
            torch.set_num_threads(num_threads)
        if isinstance(model, (str, os.PathLike)):
            self.dtype = dtype or "float32"
            self.model, tokenizer, device = _load(model, tokenizer, self.dtype, device)
            self.model_name = str(model)
        else:
            self.model, device, self.dtype = _adopt(model, tokenizer, dtype, device)
            self.model_name = str(getattr(model, "name_or_path", "") or type(model).__name__)
        self.model.eval()
        if str(device).split(":")[0] == "cuda":
            use_lower_right(self.model)  # flash attention for the cached-prefix passes
        self.tokenizer: Any = tokenizer
        self.device, self.batch_size, self.prefix_cache_mib = device, batch_size, prefix_cache_mib
        self.max_length = getattr(self.model.config, "max_position_embeddings", None)
        self._lock = threading.Lock()
        pads = (tokenizer.pad_token_id, tokenizer.eos_token_id)
        self.pad_token_id = int(next((p for p in pads if p is not None), 0))
        self.prefix = PrefixBatcher(self.model, device, self.pad_token_id, prefix_cache_mib)
        self._encoder = RequestEncoder(self.tokenizer, self.render_prompt)

    @property
    def parallel_requests(self) -> int:
        """``batch_size`` off the CPU; 1 on the CPU (a batch of k takes k times as long)."""
        return 1 if str(self.device).split(":")[0] == "cpu" else int(self.batch_size)

    def clear_prefix_cache(self) -> None:
        with self._lock:
            self.prefix.store.clear()

    def __repr__(self) -> str:
        return f"TransformersScorer(model={self.model_name!r}, dtype={self.dtype!r})"

    def render_prompt(self, prompt: Prompt) -> str:
        """A string verbatim; messages through the chat template (else ``role: content``
        lines), the assistant header appended."""
        if isinstance(prompt, str):
            return prompt
        messages = check_messages(prompt)
        if getattr(self.tokenizer, "chat_template", None):
            template = self.tokenizer.apply_chat_template
            return str(template(messages, tokenize=False, add_generation_prompt=True))
        lines = [f"{m['role']}: {m['content']}" for m in messages]
        return "\n\n".join([*lines, "assistant: "])

    def encode(self, request: ScoreRequest) -> EncodedRequest:
        return self._encoder.encode([request])[0]

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        """Teacher-forced log-probs of each response, batched ``batch_size`` at a time."""
        encoded = self._encoder.encode(requests)
        total = max((len(e.prompt_ids) + len(e.response_ids) for e in encoded), default=0)
        if self.max_length and total > self.max_length:
            raise ContextTooLongError(
                f"a request has {total} tokens, more than the model's limit {self.max_length}"
            )
        with self._lock:
            pairs = [(e.prompt_ids, e.response_ids) for e in encoded]
            logprobs = self.prefix.score(pairs, self.batch_size)
        return [
            ResponseLogprobs(values, np.asarray(e.offsets, np.int64), e.tokens, len(e.prompt_ids))
            for e, values in zip(encoded, logprobs)
        ]

    def generate(self, prompts: Sequence[Prompt], *, max_new_tokens: int = 128) -> list[str]:
        """Greedy answers to ``prompts`` (special tokens removed, whitespace stripped)."""
        import torch
        from transformers import GenerationConfig

        if max_new_tokens < 1:
            raise InputError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
        encoded = self._encoder.prompt_ids(prompts)
        sources = (self.model.generation_config.eos_token_id, self.tokenizer.eos_token_id)
        eos = {int(i) for s in sources for i in ([s] if isinstance(s, int) else s or ())}
        greedy = dict(do_sample=False, num_beams=1, pad_token_id=self.pad_token_id)
        config = GenerationConfig(max_new_tokens=max_new_tokens, eos_token_id=sorted(eos), **greedy)
        outputs: list[list[int]] = []
        for start in range(0, len(encoded), self.batch_size):
            chunk = encoded[start : start + self.batch_size]
            width = max(len(ids) for ids in chunk)
            input_ids = torch.full((len(chunk), width), self.pad_token_id, dtype=torch.long)
            attention_mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for row, ids in enumerate(chunk):
                input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
                attention_mask[row, width - len(ids) :] = 1
            with self._lock, torch.inference_mode():  # one call at a time on the model
                output = self.model.generate(
                    input_ids=input_ids.to(self.device),
                    attention_mask=attention_mask.to(self.device),
                    generation_config=config,
                )
            outputs += output[:, width:].tolist()
        return [
            str(self.tokenizer.decode(ids, skip_special_tokens=True)).strip() for ids in outputs
        ]
