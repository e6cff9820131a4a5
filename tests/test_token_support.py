"""Per-token support: sentence gains and unsupported spans against hand-computed log-probs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from camab_rag.errors import InputError
from camab_rag.scorers.base import ResponseLogprobs
from camab_rag.token_support import UNLIKELY_LOGPROB, TokenSupport

ANSWER = "Paris is big. It has cats."
#         0     6  9  13 14 17  21 25
# tokens: "Paris", " is", " big", ".", " It", " has", " cats", "."
OFFSETS = [0, 5, 8, 12, 13, 16, 20, 25]
FULL = [-0.2, -0.1, -0.5, -0.05, -0.3, -0.2, -3.0, -0.1]
EMPTY = [-4.0, -0.3, -2.5, -0.05, -0.4, -0.5, -2.0, -0.2]


def logprobs(values: list[float], offsets: list[int]) -> ResponseLogprobs:
    return ResponseLogprobs(np.array(values), np.array(offsets, dtype=np.int64))


def support() -> TokenSupport:
    return TokenSupport.from_logprobs(ANSWER, logprobs(FULL, OFFSETS), logprobs(EMPTY, OFFSETS))


def test_gains_by_hand():
    s = support()
    assert s.counts.sum() == 8
    assert ((s.full - s.empty) / s.counts).tolist() == pytest.approx(
        [3.8, 0.2, 2.0, 0.0, 0.1, 0.3, -1.0, 0.1]
    )
    assert s.gain() == pytest.approx(5.5 / 8)
    first, second = s.sentences()
    assert (first.text, first.start, first.end, first.n_tokens) == ("Paris is big.", 0, 13, 4)
    assert first.gain == pytest.approx((3.8 + 0.2 + 2.0 + 0.0) / 4)
    assert (second.text, second.n_tokens) == ("It has cats.", 4)
    assert second.gain == pytest.approx((0.1 + 0.3 - 1.0 + 0.1) / 4)
    assert s.mean_logprob("full") == pytest.approx(sum(FULL) / 8)
    assert s.mean_logprob("empty", 14, 26) == pytest.approx(sum(EMPTY[4:]) / 4)
    assert math.isnan(s.gain(26, 30))


def test_unsupported_spans_by_hand():
    s = support()
    # gain <= 0 and log p(t | C) < log 0.5: only " cats" (gain -1.0, p = e^-3);
    # "." of the first sentence has gain 0 but is likely with the context
    (span,) = s.unsupported_spans()
    assert (span.text, span.start, span.end, span.n_tokens) == ("cats", 21, 25, 1)
    assert span.gain == pytest.approx(-1.0)
    # with no "unlikely" bar the first sentence's full stop (gain 0) is marked too, but
    # punctuation alone is no span
    assert [x.text for x in s.unsupported_spans(unlikely=0.0)] == ["cats"]


def test_a_run_is_cut_at_the_sentence_boundary_and_widened_to_words():
    answer = "Aa bb. Cc dd"
    offsets = [0, 2, 5, 6, 9, 10]  # "Aa", " b", "b.", " Cc", " d", "d"
    bad = [-3.0] * 6
    s = TokenSupport.from_logprobs(answer, logprobs(bad, offsets), logprobs([-1.0] * 6, offsets))
    assert [(x.text, x.start, x.end) for x in s.unsupported_spans()] == [
        ("Aa bb", 0, 5),
        ("Cc dd", 7, 12),
    ]


def test_a_hyphenated_word_is_widened_whole_but_not_a_number_range():
    # review 3 #24: "Wi" and "Fi" of "Wi-Fi" were named apart
    answer = "Wi-Fi on board, 9-17."  # "5" of "5-year" stands alone too (test_history)
    offsets = [0, 2, 3, 5, 8, 14, 16, 17, 18, 20]  # "Wi", "-", "Fi", " on", " board", ...
    full = [-3.0, -0.1, -0.1, -0.1, -3.0, -0.1, -0.1, -0.1, -3.0, -0.1]
    s = TokenSupport.from_logprobs(answer, logprobs(full, offsets), logprobs([-1.0] * 10, offsets))
    assert [x.text for x in s.unsupported_spans()] == ["Wi-Fi", "board", "17"]


def test_different_tokenizations_are_merged_into_agreeing_pieces():
    # the empty-context call split "Paris" in two and merged " is big"
    empty = logprobs(
        [-3.0, -1.0, -2.8, -0.05, -0.4, -0.5, -2.0, -0.2], [0, 3, 5, 12, 13, 16, 20, 25]
    )
    s = TokenSupport.from_logprobs(ANSWER, logprobs(FULL, OFFSETS), empty)
    assert s.starts.tolist() == [0, 5, 12, 13, 16, 20, 25]
    assert s.counts.tolist() == [1, 2, 1, 1, 1, 1, 1]
    assert s.full[:2].tolist() == pytest.approx([-0.2, -0.6])
    assert s.empty[:2].tolist() == pytest.approx([-4.0, -2.8])
    assert s.counts.sum() == 8
    # the sentence gain is still the sum of log-prob gains over the tokens
    assert s.sentences()[0].gain == pytest.approx((3.8 + 2.2 + 0.0) / 4)


def test_within_keeps_the_pieces_of_the_ranges():
    s = support().within([(14, 26)])
    assert s.counts.sum() == 4 and s.gain() == pytest.approx(-0.5 / 4)
    with pytest.raises(InputError, match="no answer token"):
        support().within([(40, 50)])


def test_json_round_trip_and_bad_input():
    s = support()
    data = json.loads(json.dumps(s.to_dict()))
    again = TokenSupport.from_dict(data)
    assert again.response == ANSWER and again.gain() == pytest.approx(s.gain())
    assert again.unsupported_spans() == s.unsupported_spans()
    with pytest.raises(InputError, match="equal-length"):
        TokenSupport(
            ANSWER,
            starts=np.zeros(2, np.int64),
            ends=np.zeros(1, np.int64),
            full=np.zeros(2),
            empty=np.zeros(2),
            counts=np.ones(2, np.int64),
        )
    assert pytest.approx(math.log(0.5)) == UNLIKELY_LOGPROB


def test_the_gate_reads_each_sentence_from_the_token_log_probs_by_hand():
    """The report's per-sentence scores are the explained shares of each sentence's own
    tokens, the answer's is the least supported sentence's, and the flagged sentence
    carries the unsupported span: all against the hand-computed log-probs above."""
    from camab_rag.groundedness.report import support_report

    first_full, first_empty = sum(FULL[:4]) / 4, sum(EMPTY[:4]) / 4  # -0.2125, -1.7125
    second_full, second_empty = sum(FULL[4:]) / 4, sum(EMPTY[4:]) / 4  # -0.9, -0.775
    first = (first_full - first_empty) / -first_empty  # 1.5 / 1.7125 = 0.876
    second = (second_full - second_empty) / -second_empty  # -0.125 / 0.775 = -0.161
    report = support_report(support(), threshold=0.49)
    assert [s.score for s in report.sentences] == pytest.approx([first, second])
    assert [s.gain for s in report.sentences] == pytest.approx([6.0 / 4, -0.5 / 4])
    assert [s.supported for s in report.sentences] == [True, False]
    assert report.score == pytest.approx(second) and not report.grounded
    assert [(x.text, x.start, x.end) for x in report.unsupported_spans] == [("cats", 21, 25)]
    assert report.full_reward == pytest.approx(sum(FULL) / 8)
    assert report.empty_reward == pytest.approx(sum(EMPTY) / 8)
    # a threshold below the invented sentence's share passes both
    assert support_report(support(), threshold=-0.2).grounded


def test_a_word_the_context_lacks_explains_nothing_by_hand():
    """The shipped score: a token of a content word absent from the context keeps its gain
    only when negative. Context without "big": the first sentence loses its 2.0 gain on
    " big" and fails a threshold it passed on the plain explained share."""
    from camab_rag.groundedness.report import support_report
    from camab_rag.groundedness.score import absent_pieces, support_score, words

    present = frozenset(words("Paris has many cats."))
    # content words: Paris, big, cats ("is", "It", "has" are stop words); "big" is absent
    assert absent_pieces(support(), present).tolist() == [False] * 2 + [True] + [False] * 5
    first = (3.8 + 0.2 + 0.0 + 0.0) / (4.0 + 0.3 + 2.5 + 0.05)  # 4.0 / 6.85 = 0.584
    second = (0.1 + 0.3 - 1.0 + 0.1) / (0.4 + 0.5 + 2.0 + 0.2)  # -0.5 / 3.1 = -0.161
    assert support_score(support().within([(0, 13)]), present) == pytest.approx(first)
    assert support_score(support().within([(0, 13)])) == pytest.approx(6.0 / 6.85)
    report = support_report(support(), threshold=0.6, context_words=present)
    assert [s.score for s in report.sentences] == pytest.approx([first, second])
    assert [s.supported for s in report.sentences] == [False, False]
    assert support_report(support(), threshold=0.6).sentences[0].supported
    # a negative gain stays: " cats" absent too changes nothing in the second sentence
    without_cats = frozenset(words("Paris has many dogs."))
    assert support_score(support().within([(14, 26)]), without_cats) == pytest.approx(second)
    # every piece of a word split into several tokens is marked
    split = TokenSupport.from_logprobs(
        "Varnholt rose.",
        logprobs([-1.0, -1.0, -1.0, -0.1], [0, 4, 8, 13]),
        logprobs([-2.0, -2.0, -2.0, -0.1], [0, 4, 8, 13]),
    )
    assert absent_pieces(split, frozenset({"rose"})).tolist() == [True, True, False, False]
    assert support_score(split, frozenset({"rose"})) == pytest.approx(1.0 / 6.1)
