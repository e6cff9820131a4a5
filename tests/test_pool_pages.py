"""How the gate reads two pools' pages beside an archived price list (fresh-user review,
session 72): each page names its pool in its first sentence only, and a comparison answer
gives the other pool's price too."""

from __future__ import annotations

import pytest

from camab_rag.groundedness.wordforms import ContextWords, misread_spans

POOLS = [
    "Riverside pool. The Riverside pool has a 50-metre pool and a sauna. It is open from 6 am "
    "to 10 pm, Monday to Saturday. A single swim costs 6 euros; a monthly pass costs 45 euros.",
    "Hilltop pool. The Hilltop pool has a 25-metre pool and a children's splash area. It is "
    "open every day from 8 am to 8 pm. A single swim costs 4.50 euros; a monthly pass costs "
    "35 euros.",
    "ARCHIVED: 2023 pool prices, superseded. In 2023 a single swim at the Riverside pool cost "
    "5 euros and a monthly pass cost 40 euros. At the Hilltop pool a single swim cost 4 euros "
    "and a monthly pass cost 30 euros.",
]
CHEAPER = "Which pool is cheaper for a single swim, Riverside or Hilltop?"
HILLTOP_SWIM = "How much is a single swim at the Hilltop pool?"
HILLTOP_PASS = "How much is a monthly pass at the Hilltop pool?"


@pytest.mark.parametrize(
    ("question", "answer", "misread"),
    [
        # review 72, P9: "the sources say something else about “4.50”, “6”"
        (CHEAPER, "The Hilltop pool, at 4.50 euros instead of 6 euros.", []),
        (CHEAPER, "The Hilltop pool, at 4.50 euros compared with 6 euros at Riverside.", []),
        (CHEAPER, "The Hilltop pool, at 4.50 euros.", []),
        (CHEAPER, "The Hilltop pool, at 4.50 euros instead of 7 euros.", ["7"]),
        (CHEAPER, "The Hilltop pool, at 35 euros.", ["35"]),  # its monthly pass
        (HILLTOP_SWIM, "It costs 35 euros.", ["35"]),
        (HILLTOP_SWIM, "At the Hilltop pool it costs 35 euros.", ["35"]),
        (HILLTOP_SWIM, "A single swim at the Hilltop pool costs 4.50 euros.", []),
        (HILLTOP_PASS, "The Hilltop pool charges 4.50 euros.", ["4.50"]),
        (HILLTOP_PASS, "The Hilltop pool charges 35 euros.", []),
    ],
)
def test_each_clause_of_a_pools_page_is_that_pools(question, answer, misread):
    # "A single swim costs 4.50 euros" names no pool; the archived list's "At the Hilltop
    # pool a single swim cost 4 euros" does, and a clause after ";" ("a monthly pass costs
    # 35 euros") holds its sentence's subject ("single swim") only through it
    context = ContextWords.of(POOLS, question)
    assert [answer[a:b] for a, b in misread_spans(answer, context)] == misread
