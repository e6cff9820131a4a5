"""In-process scorer on a Hugging Face transformers causal LM.

Returns the exact teacher-forced log-probabilities of a given response under a given
prompt, for many requests at once (right-padded batches), and answers prompts by greedy
decoding. Nothing is fetched from a model hub: the offline flags are set before
transformers is imported and every load uses local files only.

Tokenization boundary: the prompt is rendered to text (chat template with the generation
prompt for chat messages, verbatim for plain text), tokenized on its own, and the response
is tokenized on its own and appended. That is exactly the token sequence the model sees
when it generates the response after the prompt, so a response whose first characters
would merge with the prompt's last token in a joint tokenization (e.g. a prompt ending in
``"\\n"`` and a response starting with ``"\\n"``) never shifts the slice. Whether a joint
tokenization would have merged is reported in ``ResponseLogprobs.extra["boundary_merged"]``.
Tokenizers that add a prefix space to a text tokenized alone (SentencePiece "legacy") fall
back to the joint tokenization, with a clear error if a token straddles the boundary.
"""

from __future__ import annotations

import inspect
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from camab_rag.errors import InputError, ScorerError
from camab_rag.scorers.models import (
    MODELS,
    ensure_gguf_converted,
    ensure_model,
    set_offline_flags,
)
from camab_rag.scoring import BaseScorer, Prompt, ResponseLogprobs, ScoreRequest, check_messages

if TYPE_CHECKING:
    import torch

_DTYPES = ("float32", "bfloat16", "float16")
_PLAIN_GREEDY_SETTINGS = frozenset(
    {
        "_from_model_config",
        "transformers_version",
        "bos_token_id",
        "eos_token_id",
        "pad_token_id",
        "decoder_start_token_id",
        "use_cache",
        "output_attentions",
        "output_hidden_states",
        "return_dict_in_generate",
        "max_length",
        "max_new_tokens",
        "do_sample",
        "num_beams",
        "temperature",
        "top_k",
        "top_p",
        "min_p",
        "typical_p",
    }
)
"""Settings of a model's ``generation_config.json`` that leave greedy decoding a plain
argmax per step (sampling settings do not apply with ``do_sample=False``); any other,
such as ``repetition_penalty``, makes the prefix-cached :meth:`generate` fall back to
``model.generate``, which applies it."""


@dataclass(frozen=True)
class EncodedRequest:
    """The token ids of one request, split at the prompt/response boundary."""

    prompt_ids: tuple[int, ...]
    response_ids: tuple[int, ...]
    offsets: tuple[int, ...]
    """Character offset in the response where each response token starts."""
    tokens: tuple[str, ...]
    boundary_merged: bool
    """Whether tokenizing prompt + response jointly would merge tokens across the boundary."""


class TransformersScorer(BaseScorer):
    """Score and generate with a causal LM loaded in this process.

    Args:
        model: a short name of an embedded model (``"smollm2"``, ``"qwen2.5-0.5b"``), a
            local transformers directory, a ``.gguf`` file (converted once and cached), or
            a hub id already present in the local Hugging Face cache.
        dtype: ``"float32"`` (default, exact), ``"bfloat16"`` or ``"float16"``.
        num_threads: torch intra-op threads (``None`` keeps torch's default). This is a
            process-wide torch setting.
        batch_size: requests per forward pass.
        device: torch device, e.g. ``"cpu"``.
        max_length: refuse requests longer than this many tokens (default: the model's
            ``max_position_embeddings``).
        prefix_cache: with ``batch_size=1``, keep the key/value cache of the last request
            and compute only the tokens after the prefix it shares with the next one; the
            requests of one :meth:`score` call are taken in token order so that neighbours
            share long prefixes. :meth:`generate` decodes on the same cache, so a prompt
            scored just before is not computed again (unless the model's generation config
            sets a logits processor such as ``repetition_penalty``: then it runs
            ``model.generate``). Same log-probs up to float rounding
            (~1e-5), same greedy answers unless two tokens tie within that rounding; fewer
            tokens computed (counted in :attr:`computed_tokens`). Off by default.
    """

    def __init__(
        self,
        model: str | os.PathLike[str] = "smollm2",
        *,
        dtype: str = "float32",
        num_threads: int | None = None,
        batch_size: int = 8,
        device: str = "cpu",
        max_length: int | None = None,
        prefix_cache: bool = False,
    ) -> None:
        if dtype not in _DTYPES:
            raise InputError(f"dtype must be one of {', '.join(_DTYPES)}, got {dtype!r}")
        if batch_size < 1:
            raise InputError(f"batch_size must be at least 1, got {batch_size}")
        if num_threads is not None and num_threads < 1:
            raise InputError(f"num_threads must be at least 1, got {num_threads}")
        if prefix_cache and batch_size != 1:
            raise InputError(f"prefix_cache needs batch_size=1, got batch_size={batch_size}")
        set_offline_flags()
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if num_threads is not None:
            torch.set_num_threads(num_threads)
        self.model_name = str(model)
        self.path = resolve_model_path(model)
        try:
            self.tokenizer: Any = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
            loaded: Any = AutoModelForCausalLM.from_pretrained(
                self.path, dtype=getattr(torch, dtype), local_files_only=True
            )
        except OSError as error:
            raise InputError(
                f"cannot load model {self.model_name!r} from local files (nothing is fetched "
                f"from a model hub): {error}"
            ) from error
        self.model: Any = loaded.to(device)
        self.model.eval()
        self.dtype = dtype
        self.device = device
        self.batch_size = batch_size
        limit = getattr(self.model.config, "max_position_embeddings", None)
        self.max_length = max_length or (int(limit) if limit else None)
        self._lock = threading.Lock()
        self.prefix_cache = prefix_cache
        self._cached_ids: list[int] = []
        self._cache: Any = None
        self.computed_tokens = 0
        """Tokens run through the model by :meth:`score`, and by :meth:`generate` on the
        prefix cache (prefix-cache hits excluded)."""
        forward = inspect.signature(self.model.forward).parameters
        self._keeps_logits = "logits_to_keep" in forward
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else 0
        self.pad_token_id = int(pad)

    def __repr__(self) -> str:
        return f"TransformersScorer(model={self.model_name!r}, dtype={self.dtype!r})"

    # ----------------------------------------------------------------- prompts and tokens

    def render_prompt(self, prompt: Prompt) -> str:
        """The prompt as text: verbatim for a string, chat template (with the assistant
        header appended) for messages; plain ``role: content`` lines for a model without a
        chat template."""
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
        """Token ids of the rendered prompt (special tokens are the template's own for chat
        messages; the tokenizer's usual ones, such as a BOS, for plain text)."""
        text = self.render_prompt(prompt)
        ids = self._ids(text, add_special_tokens=isinstance(prompt, str))
        if not ids:
            bos = self.tokenizer.bos_token_id
            if bos is None:
                raise InputError("the prompt is empty and the model has no BOS token to start from")
            ids = [int(bos)]
        return ids

    def encode(self, request: ScoreRequest) -> EncodedRequest:
        """Split one request into prompt and response token ids (see the module docstring)."""
        if not isinstance(request.response, str) or not request.response:
            raise InputError("ScoreRequest.response must be a non-empty string")
        response = request.response
        prompt_text = self.render_prompt(request.prompt)
        prompt_ids = self.encode_prompt(request.prompt)
        enc = self.tokenizer(response, add_special_tokens=False, return_offsets_mapping=True)
        response_ids = [int(i) for i in enc["input_ids"]]
        spans = [(int(a), int(b)) for a, b in enc["offset_mapping"]]
        joint = self.tokenizer(
            prompt_text + response,
            add_special_tokens=isinstance(request.prompt, str),
            return_offsets_mapping=True,
        )
        cut = len(prompt_text)
        joint_spans = [(int(a), int(b)) for a, b in joint["offset_mapping"]]
        merged = any(a < cut < b for a, b in joint_spans)
        decoded = self.tokenizer.decode(
            response_ids, skip_special_tokens=False, clean_up_tokenization_spaces=False
        )
        if decoded != response:
            # The tokenizer changes a text tokenized alone (e.g. a SentencePiece prefix
            # space): take the response tokens from the joint tokenization instead.
            if merged:
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
        return EncodedRequest(tuple(prompt_ids), tuple(response_ids), offsets, tokens, merged)

    def _ids(self, text: str, *, add_special_tokens: bool) -> list[int]:
        ids = self.tokenizer(text, add_special_tokens=add_special_tokens)["input_ids"]
        return [int(i) for i in ids]

    # ------------------------------------------------------------------------- scoring

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        """Teacher-forced log-probs of each response, batched ``batch_size`` at a time."""
        encoded = [self.encode(r) for r in requests]
        for e in encoded:
            total = len(e.prompt_ids) + len(e.response_ids)
            if self.max_length is not None and total > self.max_length:
                raise InputError(
                    f"a request has {total} tokens, more than the model's limit {self.max_length}"
                )
        if self.prefix_cache:
            # token order: neighbours share the longest prefixes
            order = sorted(
                range(len(encoded)), key=lambda i: encoded[i].prompt_ids + encoded[i].response_ids
            )
        else:
            # Similar lengths share a batch, so little compute goes to padding.
            order = sorted(
                range(len(encoded)),
                key=lambda i: len(encoded[i].prompt_ids) + len(encoded[i].response_ids),
            )
        results: list[ResponseLogprobs | None] = [None] * len(encoded)
        with self._lock:
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                batch = [encoded[i] for i in chunk]
                computed = (
                    [self._forward_cached(batch[0])]
                    if self.prefix_cache
                    else self._forward_logprobs(batch)
                )
                for i, logprobs in zip(chunk, computed):
                    e = encoded[i]
                    results[i] = ResponseLogprobs(
                        logprobs=logprobs,
                        token_offsets=np.asarray(e.offsets, dtype=np.int64),
                        tokens=e.tokens,
                        prompt_tokens=len(e.prompt_ids),
                        extra={"boundary_merged": e.boundary_merged},
                    )
        return [r for r in results if r is not None]

    def _forward_logprobs(self, batch: Sequence[EncodedRequest]) -> list[np.ndarray]:
        """One forward pass over a right-padded batch.

        Right padding needs no attention mask for a causal LM: a real token attends only to
        earlier positions, never to the pads after it, so each row computes exactly what it
        would alone (same positions, no masked-attention slow path), and the pads' outputs
        are never read. Only the positions that predict response tokens go through the LM
        head (``logits_to_keep`` with their indices).
        """
        import torch

        sequences = [list(e.prompt_ids) + list(e.response_ids) for e in batch]
        self.computed_tokens += sum(len(s) for s in sequences)
        width = max(len(s) for s in sequences)
        input_ids = torch.full((len(sequences), width), self.pad_token_id, dtype=torch.long)
        for row, seq in enumerate(sequences):
            input_ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        # position t predicts token t + 1
        wanted = [
            range(len(e.prompt_ids) - 1, len(e.prompt_ids) + len(e.response_ids) - 1) for e in batch
        ]
        keep = sorted({t for positions in wanted for t in positions})
        column = {t: k for k, t in enumerate(keep)}
        options: dict[str, Any] = {}
        if self._keeps_logits:
            options["logits_to_keep"] = torch.tensor(keep, dtype=torch.long, device=self.device)
        with torch.inference_mode():
            out = self.model(input_ids=input_ids.to(self.device), use_cache=False, **options)
            logits = out.logits
            results = []
            for row, (e, positions) in enumerate(zip(batch, wanted)):
                index = [column[t] if self._keeps_logits else t for t in positions]
                results.append(_response_logprobs(logits[row, index, :], e.response_ids))
        return results

    def _reuse_prefix(self, sequence: Sequence[int], must_compute_from: int) -> int:
        """Crop the cached keys/values to the prefix ``sequence`` shares with the tokens
        they hold (never past ``must_compute_from``, a position whose output is needed);
        the index of the first token left to compute."""
        from transformers import DynamicCache

        shared = 0
        for cached, new in zip(self._cached_ids, sequence):
            if cached != new:
                break
            shared += 1
        start = min(shared, must_compute_from)
        if self._cache is None or start == 0:
            self._cache, start = DynamicCache(), 0
        elif self._cache.get_seq_length() > start:
            # a negative count removes that many tokens (transformers 4.x and 5.x alike)
            self._cache.crop(start - self._cache.get_seq_length())
        self._cached_ids = []  # invalid until the caller's forward pass succeeds
        return start

    def _forward_cached(self, request: EncodedRequest) -> np.ndarray:
        """One request, reusing the cached keys/values of the prefix it shares with the
        previous request (the position predicting the first response token and everything
        after it are always computed)."""
        import torch

        sequence = list(request.prompt_ids) + list(request.response_ids)
        start = self._reuse_prefix(sequence, len(request.prompt_ids) - 1)
        # positions start .. end-1 are computed; position t predicts token t + 1
        wanted = range(len(request.prompt_ids) - 1, len(sequence) - 1)
        options: dict[str, Any] = {}
        if self._keeps_logits:
            options["logits_to_keep"] = torch.tensor(
                [t - start for t in wanted], dtype=torch.long, device=self.device
            )
        with torch.inference_mode():
            out = self.model(
                input_ids=torch.tensor([sequence[start:]], dtype=torch.long, device=self.device),
                past_key_values=self._cache,
                use_cache=True,
                **options,
            )
            self._cached_ids = sequence
            self.computed_tokens += len(sequence) - start
            logits = (
                out.logits[0]
                if self._keeps_logits
                else out.logits[0, wanted[0] - start : len(sequence) - 1 - start]
            )
            return _response_logprobs(logits, request.response_ids)

    def _generate_cached(self, prompt_ids: Sequence[int], max_new_tokens: int) -> list[int]:
        """Greedy decoding of one prompt on the prefix cache: the prompt's tokens already
        cached (for example by scoring this prompt just before) are not computed again.
        The generated token ids, the stopping EOS included."""
        import torch

        eos = set(self._eos_ids())
        start = self._reuse_prefix(prompt_ids, len(prompt_ids) - 1)
        fed = list(prompt_ids)
        step_ids = fed[start:]
        new: list[int] = []
        options: dict[str, Any] = {"logits_to_keep": 1} if self._keeps_logits else {}
        with torch.inference_mode():
            while True:
                out = self.model(
                    input_ids=torch.tensor([step_ids], dtype=torch.long, device=self.device),
                    past_key_values=self._cache,
                    use_cache=True,
                    **options,
                )
                self.computed_tokens += len(step_ids)
                token = int(out.logits[0, -1].argmax())
                new.append(token)
                if token in eos or len(new) == max_new_tokens:
                    break
                fed.append(token)
                step_ids = [token]
        self._cached_ids = fed
        return new

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
        encoded = [self.encode_prompt(p) for p in prompts]
        if self.prefix_cache and self._greedy_is_argmax():
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
        """Whether ``model.generate`` would decode greedily with nothing but an argmax per
        step (its ``generation_config`` sets no logits processor), so the prefix-cached
        decoding gives the same answers."""
        defaults = getattr(self.model, "generation_config", None)
        if defaults is None:
            return True
        return set(defaults.to_diff_dict()) <= _PLAIN_GREEDY_SETTINGS

    def _generate_all_cached(self, encoded: Sequence[list[int]], max_new_tokens: int) -> list[str]:
        """:meth:`generate` on the prefix cache, prompts taken in token order."""
        answers: list[str | None] = [None] * len(encoded)
        with self._lock:
            for i in sorted(range(len(encoded)), key=lambda i: encoded[i]):
                answers[i] = self._decode_answer(self._generate_cached(encoded[i], max_new_tokens))
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


def _response_logprobs(logits: torch.Tensor, response_ids: Sequence[int]) -> np.ndarray:
    """Log-probability of each response token under the logits that predict it (one row
    of logits per response token)."""
    import torch

    logp = torch.log_softmax(logits.float(), dim=-1)
    target = torch.tensor(list(response_ids), device=logp.device).unsqueeze(-1)
    return np.asarray(logp.gather(-1, target).squeeze(-1).double().cpu().numpy())


def resolve_model_path(model: str | os.PathLike[str]) -> str:
    """A local directory (or cached hub id) transformers can load for ``model``."""
    text = str(model)
    if text in MODELS:
        return str(ensure_model(text))
    path = Path(text).expanduser()
    if path.suffix.lower() == ".gguf":
        return str(ensure_gguf_converted(path))
    if path.is_dir():
        return str(path)
    if path.exists():
        raise InputError(
            f"model {text!r} is a file but not a .gguf; pass a directory, a GGUF file, a hub "
            f"id, or one of the short names {', '.join(sorted(MODELS))}"
        )
    if text.startswith((".", "/", "~")) or text.count("/") > 1:
        raise InputError(
            f"model path {text!r} does not exist; known short names: {', '.join(sorted(MODELS))}"
        )
    return text  # a hub id: loads only if it is already in the local Hugging Face cache
