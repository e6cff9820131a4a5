"""Token counting: tiktoken when it can load an encoding, else one warning and a fallback.

tiktoken downloads its encodings on first use; this machine (and CI) is offline, so the
real tiktoken call fails here and the fallback path is the one exercised for real. Tests
that must not depend on the network replace the loader.
"""

from __future__ import annotations

import time
import warnings

import pytest

from camab_rag.scorers import tokens
from camab_rag.scorers.tokens import TokenCounter, count_tokens, estimate_tokens


@pytest.fixture(autouse=True)
def fresh_warning_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "_warned", False)
    monkeypatch.setattr(tokens, "_default_counters", {})


def offline_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken

    def refuse(name: str) -> object:
        raise ConnectionError("Failed to resolve 'openaipublic.blob.core.windows.net'")

    monkeypatch.setattr(tiktoken, "get_encoding", refuse)


def test_offline_falls_back_to_an_estimate_with_one_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    offline_tiktoken(monkeypatch)
    with pytest.warns(RuntimeWarning, match="tiktoken could not load its encoding") as caught:
        counter = TokenCounter("gpt-4o")
    assert len(caught) == 1
    assert "TIKTOKEN_CACHE_DIR" in str(caught[0].message)
    assert counter.method == "estimate"
    assert counter.count("Paris is the capital of France.") == estimate_tokens(
        "Paris is the capital of France."
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second counter must not warn again
        again = TokenCounter("gpt-4o")
        assert again.count("abc") == 1


def test_real_tiktoken_on_this_machine_never_raises() -> None:
    """Whatever the network, a counter is returned and counts."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        counter = TokenCounter(load_timeout=20)
    assert counter.method.startswith("tiktoken:") or counter.method == "estimate"
    assert counter.count("one two three") >= 3


def test_a_hanging_download_is_abandoned(monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken

    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: time.sleep(5))
    start = time.monotonic()
    with pytest.warns(RuntimeWarning, match="took more than"):
        counter = TokenCounter(load_timeout=0.2)
    assert time.monotonic() - start < 2
    assert counter.method == "estimate"


def test_falls_back_to_a_model_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    offline_tiktoken(monkeypatch)

    class WordTokenizer:  # the shape of a Hugging Face tokenizer's encode
        def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
            return [0] * (len(text.split()) + (1 if add_special_tokens else 0))

    with pytest.warns(RuntimeWarning, match="the model tokenizer"):
        counter = TokenCounter(tokenizer=WordTokenizer())
    assert counter.method == "tokenizer"
    assert counter.count("a b c d") == 4  # special tokens not counted


@pytest.mark.model
def test_falls_back_to_the_smollm2_tokenizer(
    monkeypatch: pytest.MonkeyPatch, smollm2_scorer
) -> None:
    offline_tiktoken(monkeypatch)
    tokenizer = smollm2_scorer.tokenizer
    text = "Paris is the capital of France. Berlin is the capital of Germany."
    with pytest.warns(RuntimeWarning):
        counter = TokenCounter(tokenizer=tokenizer)
    assert counter.count(text) == len(tokenizer(text, add_special_tokens=False)["input_ids"])


def test_callable_tokenizer_and_disabled_tiktoken() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # use_tiktoken=False is a choice, not a failure
        counter = TokenCounter(use_tiktoken=False, tokenizer=len)
    assert counter.method == "tokenizer"
    assert counter.count("abcd") == 4


def test_an_encoding_object_is_used_as_is() -> None:
    import tiktoken

    ranks = {bytes([b]): b for b in range(256)}
    enc = tiktoken.Encoding("bytes", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    counter = TokenCounter(encoding=enc)
    assert counter.method == "tiktoken:bytes"
    assert counter.count("héllo") == len("héllo".encode())


def test_estimate_numbers() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("a b c d e f") == 6  # at least one per word
    assert estimate_tokens("x" * 400) == 100


def test_count_tokens_shares_one_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    offline_tiktoken(monkeypatch)
    with pytest.warns(RuntimeWarning):
        assert count_tokens("abcdefgh") == 2
    assert count_tokens("abcdefgh") == 2
    assert len(tokens._default_counters) == 1


def test_bad_input() -> None:
    counter = TokenCounter(use_tiktoken=False)
    with pytest.raises(TypeError, match="expected str"):
        counter.count(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="encode"):
        TokenCounter(use_tiktoken=False, tokenizer=42)  # type: ignore[arg-type]
