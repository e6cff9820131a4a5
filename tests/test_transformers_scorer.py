"""The in-process transformers scorer on the real embedded SmolLM2 model.

Prompts are short so the whole file runs in well under a minute once the model is loaded
(the model itself is loaded once per session by the ``smollm2_scorer`` fixture).
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
import torch

from camab_rag.errors import InputError, TextError
from camab_rag.scorers.base import ResponseLogprobs, Scorer, ScoreRequest
from camab_rag.scorers.models import resolve_model_path
from camab_rag.scorers.transformers_scorer import TransformersScorer

pytestmark = pytest.mark.model

CHAT = [
    {"role": "system", "content": "Answer the question using only the given context."},
    {
        "role": "user",
        "content": "Context:\nParis is the capital of France. Berlin is the capital of "
        "Germany.\n\nQuestion: What is the capital of France?",
    },
]


def reference_logprobs(scorer: TransformersScorer, prompt_ids: list[int], response_ids: list[int]):
    """Log-probs from one plain forward pass over the full vocabulary (no batching, no
    logits_to_keep): the definition the scorer must reproduce."""
    ids = torch.tensor([prompt_ids + response_ids])
    with torch.inference_mode():
        logits = scorer.model(input_ids=ids).logits[0].float()
    logp = torch.log_softmax(logits, dim=-1)
    n = len(prompt_ids)
    return np.array([logp[n + k - 1, t].item() for k, t in enumerate(response_ids)])


def test_protocols(smollm2_scorer: TransformersScorer) -> None:
    assert isinstance(smollm2_scorer, Scorer)


def test_chat_template_and_plain_prompt(smollm2_scorer: TransformersScorer) -> None:
    rendered = smollm2_scorer.render_prompt(CHAT)
    assert rendered.startswith("<|im_start|>system\nAnswer the question")
    assert rendered.endswith("<|im_end|>\n<|im_start|>assistant\n")
    assert smollm2_scorer.render_prompt("plain text, verbatim") == "plain text, verbatim"


def test_score_matches_a_plain_forward_pass(smollm2_scorer: TransformersScorer) -> None:
    response = "The capital of France is Paris."
    [result] = smollm2_scorer.score([ScoreRequest(CHAT, response)])
    assert isinstance(result, ResponseLogprobs)
    encoded = smollm2_scorer.encode(ScoreRequest(CHAT, response))
    assert (
        result.prompt_tokens
        == len(encoded.prompt_ids)
        == len(smollm2_scorer._encoder.prompt_ids([CHAT])[0])
    )
    expected = reference_logprobs(
        smollm2_scorer, list(encoded.prompt_ids), list(encoded.response_ids)
    )
    np.testing.assert_allclose(result.logprobs, expected, atol=1e-5)
    # token texts re-join to the response; offsets are where each starts
    assert "".join(result.tokens) == response
    assert [
        response.find(tok, off) for tok, off in zip(result.tokens, result.token_offsets)
    ] == list(result.token_offsets)
    assert result.token_offsets[0] == 0
    assert np.all(np.diff(result.token_offsets) > 0)
    # a grounded answer is likely: " Paris" given the context
    paris = result.tokens.index(" Paris")
    assert result.logprobs[paris] > np.log(0.5)
    assert np.all(result.logprobs <= 0)


def test_batched_equals_one_at_a_time(smollm2_scorer: TransformersScorer) -> None:
    requests = [
        ScoreRequest(CHAT, "Paris."),
        ScoreRequest(CHAT[1:], "The capital of France is Paris, not Berlin."),
        ScoreRequest("The capital of Germany is", " Berlin."),
        ScoreRequest("Q: 2+2?\nA:", " 4"),
        ScoreRequest(CHAT, "I do not know the answer to this question at all, sorry."),
    ]
    batched = smollm2_scorer.score(requests)
    saved = smollm2_scorer.batch_size
    try:
        smollm2_scorer.batch_size = 1
        single = smollm2_scorer.score(requests)
    finally:
        smollm2_scorer.batch_size = saved
    assert len(batched) == len(requests)
    for b, s, request in zip(batched, single, requests):
        assert b.logprobs.shape == s.logprobs.shape
        np.testing.assert_allclose(b.logprobs, s.logprobs, atol=1e-4)
        assert "".join(b.tokens) == request.response


def test_boundary_merge_does_not_shift_the_slice(smollm2_scorer: TransformersScorer) -> None:
    # "Hello wor" + "ld" tokenized jointly merges across the boundary ("world")
    request = ScoreRequest("Hello wor", "ld peace.")
    encoded = smollm2_scorer.encode(request)
    joint = smollm2_scorer.tokenizer("Hello world peace.", return_offsets_mapping=True)
    assert any(a < len("Hello wor") < b for a, b in joint["offset_mapping"])  # it does merge
    alone = smollm2_scorer.tokenizer("ld peace.", add_special_tokens=False)["input_ids"]
    assert list(encoded.response_ids) == alone
    assert list(encoded.prompt_ids) == smollm2_scorer._encoder.prompt_ids(["Hello wor"])[0]
    [result] = smollm2_scorer.score([request])
    assert "".join(result.tokens) == "ld peace."
    np.testing.assert_allclose(
        result.logprobs,
        reference_logprobs(smollm2_scorer, list(encoded.prompt_ids), alone),
        atol=1e-5,
    )
    # no merge: the joint and the split tokenizations agree
    plain = smollm2_scorer.encode(ScoreRequest("The capital of France is", " Paris."))
    joint = smollm2_scorer.tokenizer("The capital of France is Paris.")["input_ids"]
    assert list(plain.prompt_ids + plain.response_ids) == joint


def test_response_starting_with_newline(smollm2_scorer: TransformersScorer) -> None:
    [result] = smollm2_scorer.score([ScoreRequest(CHAT, "\nParis")])
    assert result.tokens[0] == "\n"
    assert list(result.token_offsets) == [0, 1]


def test_async_matches_sync(smollm2_scorer: TransformersScorer) -> None:
    requests = [ScoreRequest("The capital of France is", " Paris.")]
    # both from an empty prefix store, so both compute every token the same way (a prompt
    # kept from an earlier call would be reused, equal only up to float rounding)
    smollm2_scorer.clear_prefix_cache()
    sync = smollm2_scorer.score(requests)
    smollm2_scorer.clear_prefix_cache()
    result = asyncio.run(smollm2_scorer.ascore(requests))
    np.testing.assert_allclose(result[0].logprobs, sync[0].logprobs, atol=1e-6)


def test_greedy_generation(smollm2_scorer: TransformersScorer) -> None:
    prompts: list[str | Sequence[Mapping[str, str]]] = [CHAT, "The capital of France is"]
    answers = smollm2_scorer.generate(prompts, max_new_tokens=12)
    assert len(answers) == 2 and all(answers)
    assert "Paris" in answers[0]
    # greedy: the same answers one at a time and again
    assert smollm2_scorer.generate([CHAT], max_new_tokens=12) == answers[:1]
    # each generated token was the most likely one, so scoring the answer gives every
    # token a log-prob at least as high as any alternative's: > log(1/2) is not
    # guaranteed, but the first token must be the argmax of the next-token distribution
    [ids] = smollm2_scorer._encoder.prompt_ids([CHAT])
    with torch.inference_mode():
        logits = smollm2_scorer.model(input_ids=torch.tensor([ids])).logits[0, -1]
    first = smollm2_scorer.tokenizer.decode([int(logits.argmax())])
    assert answers[0].startswith(first.strip())


def test_bad_input(smollm2_scorer: TransformersScorer) -> None:
    with pytest.raises(InputError, match="response"):
        smollm2_scorer.score([ScoreRequest(CHAT, "")])
    with pytest.raises(InputError, match="role"):
        smollm2_scorer.score([ScoreRequest([{"content": "x"}], "y")])
    with pytest.raises(InputError, match="max_new_tokens"):
        smollm2_scorer.generate([CHAT], max_new_tokens=0)
    assert smollm2_scorer.score([]) == []


def test_a_lone_surrogate_is_a_typed_text_error(smollm2_scorer: TransformersScorer) -> None:
    """Issue 50: called directly (no attribute() gate in front), a lone surrogate reached
    the tokenizer, whose error is an untyped ``TypeError: TextEncodeInput must be ...``."""
    cases = [
        (ScoreRequest("Q \udfff", "ok"), "request 1's prompt", None),
        (ScoreRequest(CHAT, "r \ud800"), "request 1's response", 2),
        (ScoreRequest([{"role": "user", "content": "x \udfff"}], "ok"), "request 1's prompt", None),
    ]
    for request, field, position in cases:
        with pytest.raises(TextError, match="lone surrogate") as caught:
            smollm2_scorer.score([ScoreRequest(CHAT, "fine"), request])  # checked before any pass
        assert (caught.value.field, caught.value.reason) == (field, "surrogate")
        if position is not None:
            assert caught.value.position == position
    with pytest.raises(TextError, match="prompt 1 holds a lone surrogate"):
        smollm2_scorer.generate(["fine", "q \udfff"], max_new_tokens=1)


@contextmanager
def _settings(scorer: TransformersScorer, *, batch_size: int) -> Iterator[None]:
    """The session's scorer with this batch size and no kept prefixes, for one block."""
    saved = scorer.batch_size, scorer.prefix.merge_forks
    try:
        scorer.batch_size = batch_size
        scorer.clear_prefix_cache()
        yield
    finally:
        scorer.batch_size, scorer.prefix.merge_forks = saved


def _plain_passes(scorer: TransformersScorer, requests: Sequence[ScoreRequest]) -> list[Any]:
    """Each request scored by one plain forward pass (:func:`reference_logprobs`): what
    prefix reuse must reproduce."""
    out = []
    for request in requests:
        e = scorer.encode(request)
        logprobs = reference_logprobs(scorer, list(e.prompt_ids), list(e.response_ids))
        offsets = np.asarray(e.offsets, dtype=np.int64)
        out.append(ResponseLogprobs(logprobs, offsets, e.tokens, len(e.prompt_ids)))
    return out


def test_prefix_cache_equals_full_forward_passes(smollm2_scorer: TransformersScorer) -> None:
    sentences = [
        "Paris is the capital of France.",
        "Berlin is the capital of Germany.",
        "The Seine flows through Paris.",
        "Madrid is in Spain.",
    ]
    masks = [[1, 1, 1, 1], [1, 1, 0, 1], [1, 0, 1, 1], [0, 1, 1, 0], [1, 1, 0, 1], [0, 0, 0, 1]]

    def request(mask: list[int], response: str = "Paris.") -> ScoreRequest:
        context = " ".join(t for t, keep in zip(sentences, mask) if keep)
        question = f"Context: {context}\nQuestion: What is the capital of France?"
        return ScoreRequest([{"role": "user", "content": question}], response)

    # a repeated request (everything shared) and one sharing the prompt, not the response
    requests = [request(m) for m in masks] + [request(masks[0], "It is Paris, in France.")]
    requests.append(ScoreRequest("The capital of Germany is", " Berlin."))  # nothing shared
    full = _plain_passes(smollm2_scorer, requests)
    full_tokens = sum(len(r.logprobs) + r.prompt_tokens for r in full)
    with _settings(smollm2_scorer, batch_size=1):
        before = smollm2_scorer.prefix.computed_tokens
        cached = smollm2_scorer.score(requests)
        computed = smollm2_scorer.prefix.computed_tokens - before
        again = smollm2_scorer.score(requests[:2])  # the cache carries over between calls
    assert len(cached) == len(requests)
    for c, f, r in zip(cached, full, requests):
        assert "".join(c.tokens) == r.response  # results come back in request order
        assert c.prompt_tokens == f.prompt_tokens
        np.testing.assert_allclose(c.logprobs, f.logprobs, atol=1e-4)
    for c, f in zip(again, full[:2]):
        np.testing.assert_allclose(c.logprobs, f.logprobs, atol=1e-4)
    # the system prompt and the shared context heads were not recomputed
    assert computed < 0.8 * full_tokens


def _reuse_requests() -> list[ScoreRequest]:
    """Requests sharing prefixes of different lengths (system prompt only, system prompt
    and leading context, a whole prompt with two responses of different lengths), one
    that differs from all at the first token, and one that is a prefix of another (its
    prompt and response together are the start of the next one's prompt)."""
    system = {"role": "system", "content": "Answer using only the context."}
    heads = [
        "Paris is the capital of France. Berlin is the capital of Germany.",
        "Paris is the capital of France. Madrid is in Spain.",
        "Paris is the capital of France.",
        "Rome is in Italy.",
    ]

    def chat(context: str) -> list[dict[str, str]]:
        user = f"Context: {context}\nQuestion: What is the capital of France?"
        return [system, {"role": "user", "content": user}]

    requests = [ScoreRequest(chat(h), "Paris.") for h in heads]
    requests.append(ScoreRequest(chat(heads[0]), "The capital of France is Paris, not Berlin."))
    requests.append(ScoreRequest("Rome is the capital of", " Italy."))  # plain: BOS-less start
    requests.append(ScoreRequest("Rome is", " the capital"))  # a prefix of the one above
    requests.append(ScoreRequest("Rome is", " the capital"))  # repeated
    return requests


@pytest.fixture(scope="module")
def reuse_reference(smollm2_scorer: TransformersScorer) -> tuple[list[ResponseLogprobs], int]:
    """:func:`_reuse_requests` scored by plain forward passes (what every reuse test
    compares against), and the tokens that takes: scored once per module, not once per
    test and parametrization."""
    reference = _plain_passes(smollm2_scorer, _reuse_requests())
    return reference, sum(len(r.logprobs) + r.prompt_tokens for r in reference)


def _trie_tokens(sequences: Sequence[Sequence[int]]) -> int:
    """Distinct prefixes, i.e. tokens of the prefix tree over ``sequences``."""
    return len({tuple(s[:k]) for s in sequences for k in range(1, len(s) + 1)})


@pytest.mark.parametrize(
    ("batch_size", "merge_forks"), [(1, False), (3, False), (8, False), (3, True), (8, True)]
)
def test_prefix_reuse_matches_unpadded_passes(
    smollm2_scorer: TransformersScorer,
    reuse_reference: tuple[list[ResponseLogprobs], int],
    batch_size: int,
    merge_forks: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """merge_forks (on off the CPU): rows starting from different prefixes share a batch
    in a left-padded, masked cache."""
    requests = _reuse_requests()
    encoded = [smollm2_scorer.encode(r) for r in requests]
    assert len({e.prompt_ids[0] for e in encoded}) > 1  # some differ at the first token
    assert (
        encoded[-2].prompt_ids + encoded[-2].response_ids
        == encoded[-3].prompt_ids[: len(encoded[-2].prompt_ids + encoded[-2].response_ids)]
    )
    reference, requested = reuse_reference
    assert requested == sum(len(e.prompt_ids) + len(e.response_ids) for e in encoded)
    with _settings(smollm2_scorer, batch_size=batch_size):
        smollm2_scorer.prefix.merge_forks = merge_forks
        mixed: list[int] = []
        run = smollm2_scorer.prefix._run

        def counted_run(seqs, limits, prefixes):
            if len({tuple(s[:p]) for s, p in zip(seqs, prefixes)}) > 1:  # different prefixes
                mixed.append(len(seqs))
            return run(seqs, limits, prefixes)

        monkeypatch.setattr(smollm2_scorer.prefix, "_run", counted_run)
        before = smollm2_scorer.prefix.computed_tokens
        reused = smollm2_scorer.score(requests)
        computed = smollm2_scorer.prefix.computed_tokens - before
        before = smollm2_scorer.prefix.computed_tokens
        again = smollm2_scorer.score(requests[::-1])[::-1]  # all prompts kept from the call above
        computed_again = smollm2_scorer.prefix.computed_tokens - before
    assert bool(mixed) == merge_forks  # rows on different prefixes did share a batch
    for results in (reused, again):
        for got, want, request in zip(results, reference, requests):
            assert "".join(got.tokens) == request.response
            assert got.prompt_tokens == want.prompt_tokens
            np.testing.assert_allclose(got.logprobs, want.logprobs, atol=1e-4)
    # Each shared prompt prefix is computed once; a request's last prompt token (it
    # predicts the first response token) and its response tokens always are.
    reusable = [e.prompt_ids[:-1] for e in encoded]
    always = sum(1 + len(e.response_ids) for e in encoded)
    assert computed == _trie_tokens(reusable) + always < requested
    assert computed_again == always


def test_prefix_reuse_counts_one_subset_at_a_time(smollm2_scorer: TransformersScorer) -> None:
    """CAMAB's pattern: one request per call; each reuses the longest prefix it shares
    with any prompt kept from an earlier call, not only the previous one."""
    requests = _reuse_requests()[:4]
    encoded = [smollm2_scorer.encode(r) for r in requests]
    with _settings(smollm2_scorer, batch_size=8):
        before = smollm2_scorer.prefix.computed_tokens
        for request in requests:
            smollm2_scorer.score([request])
        computed = smollm2_scorer.prefix.computed_tokens - before
    expected = sum(len(e.response_ids) + 1 for e in encoded) + _trie_tokens(
        [e.prompt_ids[:-1] for e in encoded]
    )
    assert computed == expected


@pytest.mark.parametrize("budget", [0, 2 * 2**20])  # bytes: none, ~45 SmolLM2 tokens
def test_prefix_store_stays_within_its_budget(
    smollm2_scorer: TransformersScorer,
    reuse_reference: tuple[list[ResponseLogprobs], int],
    budget: int,
) -> None:
    requests = _reuse_requests()
    encoded = [smollm2_scorer.encode(r) for r in requests]
    store = smollm2_scorer.prefix.store
    saved = store.max_bytes
    try:
        with _settings(smollm2_scorer, batch_size=3):
            store.max_bytes = budget
            before = smollm2_scorer.prefix.computed_tokens
            results = smollm2_scorer.score(requests)
            computed = smollm2_scorer.prefix.computed_tokens - before
            assert store.nbytes <= budget
    finally:
        store.max_bytes = saved
    # the prefixes the call's requests share are kept for the call even over the budget
    always = sum(1 + len(e.response_ids) for e in encoded)
    assert computed == _trie_tokens([e.prompt_ids[:-1] for e in encoded]) + always
    reference, _ = reuse_reference
    assert len(results) == len(reference)
    for got, want in zip(results, reference):
        np.testing.assert_allclose(got.logprobs, want.logprobs, atol=1e-4)


def test_device_auto_picks_the_cpu_here(smollm2_scorer: TransformersScorer) -> None:
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert smollm2_scorer.device == expected  # the default is device="auto"
    assert next(smollm2_scorer.model.parameters()).device.type == expected
    assert next(smollm2_scorer.model.parameters()).dtype == torch.float32  # never auto bf16


def test_bad_construction_arguments(tmp_path) -> None:
    with pytest.raises(InputError, match="prefix_cache_mib"):
        TransformersScorer("smollm2", prefix_cache_mib=-1)
    with pytest.raises(InputError, match="dtype"):
        TransformersScorer("smollm2", dtype="int8")
    with pytest.raises(InputError, match="batch_size"):
        TransformersScorer("smollm2", batch_size=0)
    with pytest.raises(InputError, match="does not exist"):
        resolve_model_path("./no/such/model")
    stray = tmp_path / "weights.bin"
    stray.write_bytes(b"x")
    with pytest.raises(InputError, match=r"not a \.gguf"):
        resolve_model_path(stray)


def test_model_without_chat_template_joins_messages(smollm2_scorer: TransformersScorer) -> None:
    saved = smollm2_scorer.tokenizer.chat_template
    try:
        smollm2_scorer.tokenizer.chat_template = None
        rendered = smollm2_scorer.render_prompt(CHAT)
    finally:
        smollm2_scorer.tokenizer.chat_template = saved
    assert rendered.startswith("system: Answer the question")
    assert "\n\nuser: Context:\nParis" in rendered
    assert rendered.endswith("\n\nassistant: ")


def test_loading_prints_no_progress_bar_unless_verbose(capfd: pytest.CaptureFixture[str]) -> None:
    """Review 48: default_scorer() printed transformers' "Loading weights" bar."""
    from transformers.utils import logging as hf_logging

    capfd.readouterr()
    TransformersScorer("smollm2")
    assert "Loading weights" not in capfd.readouterr().err
    assert hf_logging.is_progress_bar_enabled()  # the process's own setting is kept
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_info()
    try:
        TransformersScorer("smollm2")
    finally:
        hf_logging.set_verbosity(verbosity)
    assert "Loading weights" in capfd.readouterr().err


def test_resolve_model_path(tmp_path) -> None:
    from camab_rag.scorers.models import ensure_model

    assert resolve_model_path("smollm2") == str(ensure_model("smollm2"))
    assert resolve_model_path(tmp_path) == str(tmp_path)
    assert resolve_model_path("HuggingFaceTB/SmolLM2-135M-Instruct") == (
        "HuggingFaceTB/SmolLM2-135M-Instruct"
    )
    with pytest.raises(InputError, match="local files"):
        TransformersScorer("no-such-org/no-such-model")


def test_a_model_already_loaded_scores_as_its_directory_does(
    smollm2_scorer: TransformersScorer,
) -> None:
    loaded = TransformersScorer(smollm2_scorer.model, tokenizer=smollm2_scorer.tokenizer)
    assert loaded.device == "cpu" and loaded.dtype == "float32"
    assert loaded.model is smollm2_scorer.model  # used as it is, not copied
    requests = [ScoreRequest(CHAT, "Paris."), ScoreRequest("The capital of France is", " Paris.")]
    for got, want in zip(loaded.score(requests), smollm2_scorer.score(requests)):
        np.testing.assert_allclose(got.logprobs, want.logprobs, atol=1e-5)
    with pytest.raises(InputError, match="needs its tokenizer"):
        TransformersScorer(smollm2_scorer.model)
    with pytest.raises(InputError, match="is float32; dtype='bfloat16' cannot change it"):
        TransformersScorer(
            smollm2_scorer.model, tokenizer=smollm2_scorer.tokenizer, dtype="bfloat16"
        )
    with pytest.raises(InputError, match="must be a transformers causal LM"):
        TransformersScorer(object(), tokenizer=smollm2_scorer.tokenizer)


def test_a_random_model_from_a_config_scores(smollm2_scorer: TransformersScorer) -> None:
    # how benchmarks/bench_scorer.py --shape builds a model of a given size without weights
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(
        vocab_size=len(smollm2_scorer.tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
    )
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    scorer = TransformersScorer(model, tokenizer=smollm2_scorer.tokenizer, batch_size=4)
    assert scorer.dtype == "bfloat16"
    [result] = scorer.score([ScoreRequest(CHAT, "Paris.")])
    assert result.logprobs.shape == (len(result.tokens),) and np.all(result.logprobs < 0)


def _tiny_llama(tokenizer: Any, **config: Any) -> Any:
    from transformers import AutoModelForCausalLM, LlamaConfig

    torch.manual_seed(0)
    shape = dict(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,  # grouped-query attention, as LLaMA-3 and SmolLM2
    )
    return AutoModelForCausalLM.from_config(LlamaConfig(**{**shape, **config}))


@pytest.mark.parametrize(("batch_size", "merge_forks"), [(1, False), (3, False), (3, True)])
def test_lower_right_attention_matches_the_dense_mask(
    smollm2_scorer: TransformersScorer,
    batch_size: int,
    merge_forks: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cached-prefix passes that a GPU runs as lower-right causal attention (flash)
    give the log-probs of transformers' dense causal mask; passes with a padding mask
    (merge_forks) keep the mask."""
    import torch.nn.attention.bias as bias

    from camab_rag.scorers.prefix_batches import IMPLEMENTATION, use_lower_right

    requests = _reuse_requests()
    model = _tiny_llama(smollm2_scorer.tokenizer)
    scorer = TransformersScorer(model, tokenizer=smollm2_scorer.tokenizer, batch_size=batch_size)
    scorer.prefix.merge_forks = merge_forks
    assert model.config._attn_implementation == "sdpa"  # on the CPU the model is left as is
    dense = scorer.score(requests)
    lower_right: list[tuple[int, int]] = []
    real = bias.causal_lower_right

    def recording(q, kv):
        lower_right.append((q, kv))
        return real(q, kv)

    monkeypatch.setattr(bias, "causal_lower_right", recording)
    scorer.clear_prefix_cache()
    assert use_lower_right(model) and model.config._attn_implementation == IMPLEMENTATION
    with warnings.catch_warnings():  # on the CPU, PyTorch warns that flash does not apply
        warnings.simplefilter("ignore", UserWarning)
        flash = scorer.score(requests)
    assert lower_right and all(1 < q < kv for q, kv in lower_right)
    for got, want in zip(flash, dense):
        np.testing.assert_allclose(got.logprobs, want.logprobs, atol=1e-5)


def test_sliding_window_models_keep_their_attention(smollm2_scorer: TransformersScorer) -> None:
    from camab_rag.scorers.prefix_batches import use_lower_right

    model = _tiny_llama(smollm2_scorer.tokenizer)
    model.config.sliding_window = 16  # a windowed mask is not plain causal
    assert not use_lower_right(model)
    assert model.config._attn_implementation == "sdpa"


def test_a_long_call_stops_at_the_deadline_between_forward_passes(
    smollm2_scorer: TransformersScorer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review of issue 49: deadline_s=60 ended at 87 s on a 500-sentence answer, since the
    deadline was checked only between model calls and one call of the in-process model
    (several forward passes) ran on past it. Now it is checked before each pass."""
    import contextvars

    from camab_rag import deadline
    from camab_rag.errors import DeadlineExceededError

    scorer = smollm2_scorer
    monkeypatch.setattr(scorer, "batch_size", 1)
    scorer.clear_prefix_cache()
    passes: list[int] = []
    real = scorer.prefix._run

    def forward(*args: Any) -> Any:
        passes.append(1)
        monkeypatch.setattr(clock, "left", lambda: -1.0)  # it passes during this pass
        return real(*args)

    monkeypatch.setattr(scorer.prefix, "_run", forward)
    requests = [ScoreRequest(p, " Yes.") for p in ("Alpha?", "Bravo is here?", "Charlie. Ok?")]
    context = contextvars.copy_context()  # the deadline is set in it only, not in the test's
    clock = deadline.Clock(60.0)
    context.run(deadline._END.set, clock)
    with pytest.raises(DeadlineExceededError, match=r"60 s.*forward pass"):
        context.run(scorer.score, requests)
    assert len(passes) == 1  # the two other passes never ran
    assert deadline.remaining() is None
