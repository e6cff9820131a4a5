"""Echo parsing of the HTTP scorer, on real vLLM responses recorded as JSON fixtures.

The fixtures (tests/fixtures/echo/*.json) were recorded from vLLM 0.32 serving the embedded
SmolLM2 model by ``tests/record_echo_fixtures.py``; some tests alter a copy to reproduce
another server's quirk (a BOS the text drops, missing log-probs).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from camab_rag.errors import ScorerError
from camab_rag.scorers.transport import (
    NoPromptLogprobsError,
    Plan,
    parse_echo,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "echo"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data


def parse(fixture: dict[str, Any], **override: Any):
    expect = {**fixture["expect"], **override}
    if expect.get("response_ids") is None:  # text: the prompt's length in characters
        return parse_echo(fixture["response"], Plan("", expect["response"], expect["prompt_chars"]))
    sent = [0] * (expect["prompt_ids"] + expect["response_ids"])  # token ids: their count
    return parse_echo(
        fixture["response"], Plan(sent, expect["response"], 0, expect["response_ids"])
    )


def test_text_echo_cuts_the_response_and_the_generated_token() -> None:
    fixture = load("text_echo")
    response = fixture["expect"]["response"]
    out = parse(fixture)
    lp = fixture["response"]["choices"][0]["logprobs"]
    n_prompt = fixture["response"]["usage"]["prompt_tokens"]
    assert len(lp["tokens"]) == n_prompt + 1  # vLLM echoes prompt_tokens + 1 entries
    assert "".join(out.tokens) == response
    assert out.tokens[0] == " Paris"
    assert out.token_offsets[0] == 0
    # the emoji is split over two tokens; the first decodes to "" at the same offset
    assert "" in out.tokens
    for token, offset in zip(out.tokens, out.token_offsets):
        assert response[offset : offset + len(token)] == token
    k = len(out.tokens)
    np.testing.assert_allclose(out.logprobs, lp["token_logprobs"][n_prompt - k : n_prompt])
    assert out.prompt_tokens == n_prompt - k
    assert np.all(out.logprobs < 0)


def test_text_echo_refuses_a_token_straddling_the_boundary() -> None:
    with pytest.raises(ScorerError, match="merges with the end of the prompt"):
        parse(load("text_echo_merged"))


def test_token_id_echo_takes_the_last_response_tokens() -> None:
    fixture = load("ids_echo_chat")
    expect = fixture["expect"]
    out = parse(fixture)
    assert len(out.logprobs) == expect["response_ids"]
    assert out.prompt_tokens == expect["prompt_ids"]
    assert "".join(out.tokens) == expect["response"]
    assert list(out.token_offsets) == [0, 3, 11, 14, 21, 24, 30]
    lp = fixture["response"]["choices"][0]["logprobs"]["token_logprobs"]
    n = expect["prompt_ids"]
    np.testing.assert_allclose(out.logprobs, lp[n : n + expect["response_ids"]])


def test_bos_counted_by_offsets_but_dropped_from_text() -> None:
    """Some servers count a BOS in text_offset that the echoed text omits."""
    fixture = copy.deepcopy(load("text_echo"))
    body = fixture["response"]
    lp = body["choices"][0]["logprobs"]
    lp["tokens"].insert(0, "<s>")
    lp["token_logprobs"].insert(0, None)
    lp["text_offset"] = [0] + [o + 3 for o in lp["text_offset"]]
    lp["token_logprobs"][1] = -9.0
    body["usage"]["prompt_tokens"] += 1
    plain = parse(load("text_echo"))
    shifted = parse(fixture)
    assert shifted.tokens == plain.tokens
    np.testing.assert_array_equal(shifted.token_offsets, plain.token_offsets)
    np.testing.assert_array_equal(shifted.logprobs, plain.logprobs)


def test_missing_logprobs_is_a_clear_error() -> None:
    fixture = copy.deepcopy(load("text_echo"))
    choice = fixture["response"]["choices"][0]
    choice["logprobs"] = None
    with pytest.raises(NoPromptLogprobsError, match="no log-probabilities of the prompt"):
        parse(fixture)


def test_only_generated_logprobs_is_a_clear_error() -> None:
    """A server that ignores echo returns log-probs of the generated token only."""
    fixture = copy.deepcopy(load("text_echo"))
    lp = fixture["response"]["choices"][0]["logprobs"]
    for key in ("tokens", "token_logprobs", "text_offset", "top_logprobs"):
        lp[key] = lp[key][-1:]
    lp["token_logprobs"][0] = -1.0
    with pytest.raises(NoPromptLogprobsError, match="did not return the prompt"):
        parse(fixture)


def test_tokens_that_do_not_rejoin_are_refused() -> None:
    fixture = load("text_echo")
    wrong = fixture["expect"]["response"].replace("capital", "kapital")
    with pytest.raises(ScorerError, match="re-join"):
        parse(fixture, response=wrong)
    ids = load("ids_echo_chat")
    with pytest.raises(ScorerError, match="re-join"):
        parse(ids, response="The capital of Spain is Madrid.")


def test_token_id_count_mismatch_is_refused() -> None:
    fixture = load("ids_echo_chat")
    expect = fixture["expect"]
    with pytest.raises(ScorerError, match="token ids were sent"):
        parse(fixture, prompt_ids=expect["prompt_ids"] - 1)


def test_null_first_logprob_inside_the_response_is_refused() -> None:
    """An empty prompt leaves the response's first token without a log-prob."""
    fixture = load("ids_echo_chat")
    n = fixture["response"]["usage"]["prompt_tokens"]
    with pytest.raises(ScorerError, match="first token"):
        parse(fixture, prompt_ids=0, response_ids=n, response=_echoed_text(fixture))


def test_missing_usage_in_text_mode_is_refused() -> None:
    fixture = copy.deepcopy(load("text_echo"))
    del fixture["response"]["usage"]
    with pytest.raises(ScorerError, match=r"usage\.prompt_tokens"):
        parse(fixture)


def _echoed_text(fixture: dict[str, Any]) -> str:
    tokens = fixture["response"]["choices"][0]["logprobs"]["tokens"]
    return "".join(tokens[: fixture["response"]["usage"]["prompt_tokens"]])
