"""The highlight benchmark's counting: where a highlight falls among HotpotQA's sentences,
the zero-call rules, and the table's and verdict's figures (pure logic, fake sources)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import benchmarks.citation_highlights as hl

SENTENCES = ["Ada Lovelace was a mathematician. ", " She wrote on the Analytical Engine.", "X."]
TEXT = " ".join(s.strip() for s in SENTENCES)


def _source(*spans: tuple[int, int, float]) -> Any:
    marks = [SimpleNamespace(start=a, end=b, score=v) for a, b, v in spans]
    return SimpleNamespace(highlights=marks)


def test_sentence_starts_follow_the_joined_paragraph():
    starts = hl.sentence_starts(SENTENCES)
    assert starts == [0, 34, 70]
    assert [TEXT[s : s + 4] for s in starts] == ["Ada ", "She ", "X."]


def test_a_highlight_marks_the_sentence_holding_its_middle():
    starts = hl.sentence_starts(SENTENCES)
    assert hl.covered(34, 70, starts) == 1
    assert hl.covered(30, 40, starts) == 1  # middle at 34: the second sentence
    assert hl.covered(0, 33, starts) == 0


def test_the_rules_mark_their_sentences():
    source = _source((0, 33, 0.2), (34, 70, 0.9))
    asked = "Which engine did she write on? Analytical Engine"
    assert hl.ours(source, SENTENCES, asked) == {0, 1}
    assert hl.strongest(source, SENTENCES, asked) == {1}
    assert hl.strongest(_source(), SENTENCES, asked) == set()
    assert hl.lead(source, SENTENCES, asked) == {0}
    assert hl.lexical(source, SENTENCES, asked) == {1}
    assert hl.lexical(source, SENTENCES, "nothing shared") == set()


def test_table_and_verdict_count_marked_and_gold_sentences():
    asked = "Who was a mathematician? Ada Lovelace"
    found = [
        (_source((0, 33, 0.9), (34, 70, 0.1)), SENTENCES, {0}, asked, "a"),
        (_source(), SENTENCES, {1}, asked, "b"),
    ]
    rows = {r[0]: r for r in hl.table(found)}
    assert rows[hl.PICKERS[0][0]][1:] == ["2", "2", "0.50 (1/2)", "0.50 (1/2)", "1"]
    assert rows[hl.PICKERS[1][0]][1:] == ["2", "1", "1.00 (1/1)", "0.50 (1/2)", "1"]
    assert rows[hl.PICKERS[2][0]][1:] == ["2", "2", "0.50 (1/2)", "0.50 (1/2)", "0"]
    said = hl.verdict(found)
    assert "beyond a source's strongest mark 1 sentences, 0 of them gold" in said
    assert "'cite()'s highlights (up to three a source)' on precision" not in said
    headline = hl.headline_rows(found)
    assert [row[1] for row in headline] == ["0.50 (1/2)", "0.50 (1/2)"]
    assert all(len(row) == 4 for row in headline)
