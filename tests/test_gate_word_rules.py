"""Issue 48, the third blind set's dev half: right answers the word rules misread (half an
hour, a negation in an if-clause, a "non-" prefix), each beside its invented twin, judged
by the real embedded model at the shipped defaults."""

from __future__ import annotations

import pytest
from shared_fixtures import smollm2_scorer as smollm2_scorer

from camab_rag.attributor import assess_answer

CASES = [
    (
        "Eye tests at ClearView Opticians cost 25 euros and take about 30 minutes.",
        "How long does an eye test take?",
        "About half an hour.",
        "About 45 minutes.",
    ),
    (
        "Helmets are compulsory for children under 14 and can be hired at the rental shop "
        "for 5 euros a day.",
        "Does my 12-year-old have to wear a helmet?",
        "Yes. If you haven't got a helmet, you can hire one at the rental shop for 5 euros a day.",
        "Yes. If you haven't got a helmet, you can hire one at the rental shop for 8 euros a day.",
    ),
    (
        "A non-refundable deposit of 200 euros is due by 30 September.",
        "Can I get the deposit back?",
        "No, the 200-euro deposit can't be refunded.",
        "No, the 300-euro deposit can't be refunded.",
    ),
]


@pytest.mark.model
@pytest.mark.parametrize(("context", "question", "right", "invented"), CASES)
def test_the_right_answer_passes_and_its_invented_twin_is_blocked(
    smollm2_scorer, context, question, right, invented
):
    passed = assess_answer(question, [context], right, smollm2_scorer)
    assert passed.verdict != "unsupported", passed
    blocked = assess_answer(question, [context], invented, smollm2_scorer)
    assert blocked.verdict == "unsupported", blocked
