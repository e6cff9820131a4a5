"""The highlight benchmark's counting: where a highlight falls among HotpotQA's sentences,
the zero-call rules, and the table's and verdict's figures (pure logic, fake sources)."""

from __future__ import annotations

from collections.abc import Collection
from types import SimpleNamespace

import benchmarks.citation_highlights as hl

SENTENCES = ["Ada Lovelace was a mathematician. ", " She wrote on the Analytical Engine.", "X."]
TEXT = " ".join(s.strip() for s in SENTENCES)


def _paragraph(
    *spans: tuple[int, int, float],
    gold: Collection[int] = (),
    asked: str = "",
    earlier: tuple[tuple[int, int], ...] = (),
    position: int = 0,
    scored: tuple[tuple[int, int], ...] = (),
) -> hl.Paragraph:
    marks = [SimpleNamespace(start=a, end=b, score=v) for a, b, v in spans]
    source = SimpleNamespace(highlights=marks)
    return hl.Paragraph(source, SENTENCES, set(gold), asked, "id", position, list(earlier), scored)


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
    asked = "Which engine did she write on? Analytical Engine"
    found = _paragraph((34, 70, 0.9), asked=asked, earlier=((0, 33), (34, 70)))
    assert hl.ours(found) == {1} == hl.strongest(found)
    assert hl.strongest(_paragraph((0, 33, 0.2), (34, 70, 0.9))) == {1}
    assert hl.earlier(found) == {0, 1}
    assert hl.ours(_paragraph()) == set() == hl.earlier(_paragraph())
    assert hl.lead(found) == {0}
    assert hl.lexical(found) == {1}
    assert hl.lexical(found._replace(asked="nothing shared")) == set()


def test_table_verdict_and_test_count_marked_and_gold_sentences():
    asked = "Who was a mathematician? Ada Lovelace"
    found = [
        _paragraph((0, 33, 0.9), gold={0}, asked=asked, earlier=((0, 33), (34, 70))),
        _paragraph(gold={1}, asked=asked),
    ]
    rows = {r[0]: r for r in hl.table(found)}
    assert rows[hl.OURS][1:] == ["2", "1", "1.00 (1/1)", "0.50 (1/2)", "1"]
    assert rows[hl.EARLIER][1:] == ["2", "2", "0.50 (1/2)", "0.50 (1/2)", "1"]
    assert rows[hl.FREE[0]][1:] == ["2", "2", "0.50 (1/2)", "0.50 (1/2)", "0"]
    said = hl.verdict(found)
    assert "highlights mark 1 sentences (1 gold), the rule before session 60 2 (1 gold)" in said
    assert f"'{hl.OURS}' on precision" not in said
    assert f"'{hl.EARLIER}' on precision" not in said  # the lead ties it: not ahead
    headline = hl.headline_rows(found)
    assert [row[1] for row in headline] == ["1.00 (1/1)", "0.50 (1/2)"]
    assert all(len(row) == 4 for row in headline)
    assert hl.tested(found)[-1] == "Under 10 paragraphs: the test is void."
    new = [p._replace(position=hl.TESTED_FROM) for p in found * 5]
    assert hl.tested(found + new)[-1] == "`cite()`'s highlights pass: it ships them."
    assert "10 cited gold paragraphs" in hl.tested(found + new)[0]
    lost = _paragraph((0, 33, 0.9), gold={1}, earlier=((34, 70),), position=hl.TESTED_FROM)
    assert hl.tested(new + [lost] * 10)[-1] == "Both fail: neither should ship."
    # the near-tie (sentence 2) is not gold: the highlights fail, the strongest alone passes
    tied = _paragraph((0, 33, 0.9), (34, 70, 0.8), gold={0}, earlier=((0, 33),))
    tied = tied._replace(position=hl.TESTED_FROM)
    assert hl.tested([tied] * 10)[-1].endswith("the strongest alone passes: that should ship.")


def test_session_66s_test_reads_the_rule_before_it():
    asked = "Who was a mathematician? Ada Lovelace"
    found = [_paragraph((0, 33, 0.9), gold={0}, asked=asked, scored=((34, 70),))]
    assert hl.scored(found[0]) == {1}
    assert hl.against_scored(found, found).endswith("`cite()`'s highlights pass on both.")
    worse = [found[0]._replace(scored=((0, 33),), source=SimpleNamespace(highlights=[]))]
    assert hl.against_scored(worse, worse).endswith("`cite()`'s highlights fail.")
