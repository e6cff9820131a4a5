"""In-process scorer on a Hugging Face transformers causal LM, from local files only.

Exact teacher-forced log-probs of given responses, many requests at once (shared prompt
prefixes computed once: :mod:`.prefix_batches`), and greedy answers; tokenization at the
prompt/response boundary: :mod:`.encoding`.
"""

from __future__ import annotations

import inspect
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from camab_rag import deadline
from camab_rag.errors import InputError
from camab_rag.scorers.base import (
    BaseScorer,
    Prompt,
    ResponseLogprobs,
    ScoreRequest,
    check_messages,
)
from camab_rag.scorers.encoding import EncodedRequest, RequestEncoder
from camab_rag.scorers.model_loading import DTYPES, load_causal_lm
from camab_rag.scorers.prefix_batches import (
    PrefixBatcher,
    right_padded,
    supports_prefix_reuse,
)

if TYPE_CHECKING:
    import torch

_PLAIN_GREEDY_SETTINGS = frozenset(
    "_from_model_config transformers_version bos_token_id eos_token_id pad_token_id "  # noqa: SIM905
    "decoder_start_token_id use_cache output_attentions output_hidden_states "
    "return_dict_in_generate max_length max_new_tokens do_sample num_beams temperature "
    "top_k top_p min_p typical_p".split()
)
"""``generation_config`` settings that leave greedy decoding a plain argmax; any other
(``repetition_penalty``...) makes :meth:`generate` use ``model.generate``."""


class TransformersScorer(BaseScorer):
    """Score and generate with a causal LM loaded in this process.

    Args:
        model: an embedded model's short name (``"smollm2"``, ``"qwen2.5-0.5b"``), a local
            transformers directory, a ``.gguf`` file, a hub id in the local cache, or a
            causal LM already loaded (with ``tokenizer``; it keeps its dtype and device).
        tokenizer: the tokenizer of a loaded ``model``.
        dtype: ``"float32"`` (default, exact), ``"bfloat16"`` or ``"float16"``.
        num_threads: torch intra-op threads (a process-wide setting; ``None`` keeps it).
        batch_size: requests per forward pass; off the CPU also :attr:`parallel_requests`.
        device: a torch device, or ``"auto"``: CUDA when available, else the CPU.
        max_length: refuse longer requests (default: ``max_position_embeddings``).
        prefix_cache: compute each shared prompt prefix once and keep prompts' keys/values
            between calls (:mod:`.prefix_batches`; same log-probs up to ~1e-5; needs
            transformers 4.56+). ``False`` computes every token.
        prefix_cache_mib: memory for the kept keys/values (least recently used dropped).
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
        max_length: int | None = None,
        prefix_cache: bool = True,
        prefix_cache_mib: float = 256,
    ) -> None:
        if dtype is not None and dtype not in DTYPES:
            raise InputError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
        if batch_size < 1:
            raise InputError(f"batch_size must be at least 1, got {batch_size}")
        if num_threads is not None and num_threads < 1:
            raise InputError(f"num_threads must be at least 1, got {num_threads}")
        if prefix_cache_mib < 0:
            raise InputError(f"prefix_cache_mib must be at least 0, got {prefix_cache_mib}")
        import torch

        if num_threads is not None:
            torch.set_num_threads(num_threads)
        loaded = load_causal_lm(model, tokenizer=tokenizer, dtype=dtype, device=device)
        self.model: Any = loaded.model
        self.tokenizer: Any = loaded.tokenizer
        self.model_name = loaded.name
        self.path = loaded.path
        self.dtype = loaded.dtype
        self.device = loaded.device
        device = loaded.device
        self.batch_size = batch_size
        limit = getattr(self.model.config, "max_position_embeddings", None)
        self.max_length = max_length or (int(limit) if limit else None)
        self._lock = threading.Lock()
        self.prefix_cache = prefix_cache
        self.prefix_cache_mib = prefix_cache_mib
        self._plain_tokens = 0
        forward = inspect.signature(self.model.forward).parameters
        self._keeps_logits = "logits_to_keep" in forward
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else 0
        self.pad_token_id = int(pad)
        self._prefix = PrefixBatcher(
            self.model,
            device,
            self.pad_token_id,
            self._keeps_logits,
            int(prefix_cache_mib * 2**20),
            merge_forks=device != "cpu",
        )
        self._reuse = supports_prefix_reuse()
        self._encoder = RequestEncoder(self.tokenizer, self.render_prompt)

    @property
    def parallel_requests(self) -> int:
        """``batch_size`` off the CPU; 1 on the CPU, where a batch of ``k`` takes ``k`` times
        as long as one request (BENCHMARKS.md)."""
        if str(self.device).split(":")[0] == "cpu":
            return 1
        return int(self.batch_size)

    @property
    def computed_tokens(self) -> int:
        """Real tokens run through the model (reused prefixes and pads excluded)."""
        return self._plain_tokens + self._prefix.computed_tokens

    @property
    def padding_tokens(self) -> int:
        """Right pads run after the shorter rows of a prefix-reusing batch (never read)."""
        return self._prefix.padding_tokens

    def clear_prefix_cache(self) -> None:
        """Drop the kept keys/values."""
        with self._lock:
            self._prefix.store.clear()

    def __repr__(self) -> str:
        return f"TransformersScorer(model={self.model_name!r}, dtype={self.dtype!r})"

    # ----------------------------------------------------------------- prompts and tokens

    def render_prompt(self, prompt: Prompt) -> str:
        """A string verbatim; messages through the chat template (or ``role: content``
        lines for a model without one), the assistant header appended."""
        if isinstance(prompt, str):
            return prompt
        messages = check_messages(prompt)
        if getattr(self.tokenizer, "chat_template", None):
            text = self.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
            return str(text)
        lines = [f"{m['role']}: {m['content']}" for m in messages]
        return "\n\n".join([*lines, "assistant: "])

    def encode_prompt(self, prompt: Prompt) -> list[int]:
        """Token ids of the rendered prompt."""
        return self._encoder.prompt_ids([prompt])[0]

    def encode(self, request: ScoreRequest) -> EncodedRequest:
        """One request's prompt and response token ids (:mod:`.encoding`)."""
        return self._encoder.encode([request])[0]

    # ------------------------------------------------------------------------- scoring

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        """Teacher-forced log-probs of each response, batched ``batch_size`` at a time."""
        encoded = self._encoder.encode(requests)
        for e in encoded:
            total = len(e.prompt_ids) + len(e.response_ids)
            if self.max_length is not None and total > self.max_length:
                raise InputError(
                    f"a request has {total} tokens, more than the model's limit {self.max_length}"
                )
        logprobs: list[np.ndarray | None] = [None] * len(encoded)
        with self._lock:
            if self.prefix_cache and self._reuse:
                pairs = [(e.prompt_ids, e.response_ids) for e in encoded]
                logprobs = list(self._prefix.score(pairs, self.batch_size))
            else:
                # Similar lengths share a batch, so little compute goes to padding.
                order = sorted(
                    range(len(encoded)),
                    key=lambda i: len(encoded[i].prompt_ids) + len(encoded[i].response_ids),
                )
                for start in range(0, len(order), self.batch_size):
                    chunk = order[start : start + self.batch_size]
                    deadline.check("a forward pass of the in-process model")
                    computed = self._forward_logprobs([encoded[i] for i in chunk])
                    for i, values in zip(chunk, computed):
                        logprobs[i] = values
        return [
            ResponseLogprobs(
                logprobs=values,
                token_offsets=np.asarray(e.offsets, dtype=np.int64),
                tokens=e.tokens,
                prompt_tokens=len(e.prompt_ids),
                extra={"boundary_merged": e.boundary_merged},
            )
            for e, values in zip(encoded, logprobs)
            if values is not None
        ]

    def _forward_logprobs(self, batch: Sequence[EncodedRequest]) -> list[np.ndarray]:
        """One forward pass over a right-padded batch, no cache (a causal LM never attends
        to the pads after a real token, so no attention mask is needed)."""
        import torch

        sequences = [list(e.prompt_ids) + list(e.response_ids) for e in batch]
        self._plain_tokens += sum(len(s) for s in sequences)
        # position t predicts token t + 1
        wanted = [range(len(e.prompt_ids) - 1, len(s) - 1) for e, s in zip(batch, sequences)]
        with torch.inference_mode():
            return self._prefix.forward(
                right_padded(sequences, self.pad_token_id),
                wanted,
                [e.response_ids for e in batch],
                use_cache=False,
            )

    def _left_pad(self, sequences: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        import torch

        width = max(len(s) for s in sequences)
        input_ids = torch.full((len(sequences), width), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for row, seq in enumerate(sequences):
            input_ids[row, width - len(seq) :] = torch.tensor(seq, dtype=torch.long)
            attention_mask[row, width - len(seq) :] = 1
        return input_ids.to(self.device), attention_mask.to(self.device)

    # ---------------------------------------------------------------------- generation

    def generate(self, prompts: Sequence[Prompt], *, max_new_tokens: int = 128) -> list[str]:
        """Greedy answers to ``prompts`` (special tokens removed, whitespace stripped)."""
        import torch
        from transformers import GenerationConfig

        if max_new_tokens < 1:
            raise InputError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
        encoded = self._encoder.prompt_ids(prompts)
        if self.prefix_cache and self._reuse and self.batch_size == 1 and self._greedy_is_argmax():
            return self._generate_all_cached(encoded, max_new_tokens)
        config = GenerationConfig(  # type: ignore[no-untyped-call]
            max_new_tokens=max_new_tokens,
            do_sample=False,
            num_beams=1,
            pad_token_id=self.pad_token_id,
            eos_token_id=self._eos_ids(),
        )
        answers: list[str] = []
        with self._lock, torch.inference_mode():
            for start in range(0, len(encoded), self.batch_size):
                chunk = encoded[start : start + self.batch_size]
                input_ids, attention_mask = self._left_pad(chunk)
                output = self.model.generate(
                    input_ids=input_ids, attention_mask=attention_mask, generation_config=config
                )
                for row in output[:, input_ids.shape[1] :]:
                    answers.append(self._decode_answer(row.tolist()))
        return answers

    def _greedy_is_argmax(self) -> bool:
        """Whether the model's ``generation_config`` leaves greedy decoding a plain argmax,
        so the prefix-cached decoding gives ``model.generate``'s answers."""
        defaults = getattr(self.model, "generation_config", None)
        if defaults is None:
            return True
        return set(defaults.to_diff_dict()) <= _PLAIN_GREEDY_SETTINGS

    def _generate_all_cached(self, encoded: Sequence[list[int]], max_new_tokens: int) -> list[str]:
        """:meth:`generate` on the prefix cache, prompts taken in token order."""
        answers: list[str | None] = [None] * len(encoded)
        eos = set(self._eos_ids())
        with self._lock:
            for i in sorted(range(len(encoded)), key=lambda i: encoded[i]):
                ids = self._prefix.generate(encoded[i], max_new_tokens, eos)
                answers[i] = self._decode_answer(ids)
        return [a for a in answers if a is not None]

    def _decode_answer(self, ids: Sequence[int]) -> str:
        """The answer text of generated token ids (special tokens dropped, stripped)."""
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=True)).strip()

    def _eos_ids(self) -> list[int]:
        ids: set[int] = set()
        for source in (self.model.generation_config.eos_token_id, self.tokenizer.eos_token_id):
            if isinstance(source, int):
                ids.add(source)
            elif isinstance(source, (list, tuple)):
                ids.update(int(i) for i in source)
        return sorted(ids)
