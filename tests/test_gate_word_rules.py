"""Issue 48, the third blind set's dev half: right answers the word rules misread (half an
hour, a negation in an if-clause, a "non-" prefix, a "but" clause that negates, a "Not
yet." reply, a percent off, the question's weekday), each beside its invented twin,
judged by the real embedded model at the shipped defaults."""

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
    (
        "Gift vouchers can be used in store and online but cannot be exchanged for cash.",
        "Can I use a gift voucher online?",
        "Yes, gift vouchers can be used online as well as in store.",
        "Yes, gift vouchers can be used online and exchanged for cash.",
    ),
    (
        "After a tattoo or piercing you have to wait four months before giving blood.",
        "I had a tattoo done two weeks ago. Can I give blood?",
        "Not yet. You have to wait four months after a tattoo.",
        "Not yet. You have to wait six months after a tattoo.",
    ),
    (
        "Plots cost 45 euros a year for a half plot and 80 euros for a full plot. Residents "
        "over 65 get a 50% discount.",
        "I'm 70. Is there a discount on a full plot?",
        "Yes, with the 50% discount a full plot costs 40 euros a year.",
        "Yes, with the 50% discount a full plot costs 35 euros a year.",
    ),
    (
        "The night helpline answers on Friday and Saturday nights. At other times, please "
        "use the online form.",
        "It's Tuesday night. How do I report a problem?",
        "On a Tuesday night, use the online form.",
        "On a Tuesday night, call the night helpline before 11 pm.",
    ),
]


@pytest.mark.model
@pytest.mark.parametrize(("context", "question", "right", "invented"), CASES)
def test_the_right_answer_passes_and_its_invented_twin_is_caught(
    smollm2_scorer, context, question, right, invented
):
    """The twin is blocked, or flagged when the context states its value otherwise."""
    passed = assess_answer(question, [context], right, smollm2_scorer)
    assert passed.verdict != "unsupported", passed
    caught = assess_answer(question, [context], invented, smollm2_scorer)
    assert caught.verdict == "unsupported" or caught.misread, caught
    assert caught.verdict != "supported", caught


@pytest.mark.model
def test_an_unchecked_number_never_leaves_an_answer_supported(smollm2_scorer):
    """Issue 48 (fresh3 dev): "the inverter is covered for 12 years" over "10 years" was
    ``supported`` with "12" listed unchecked; the verdict, not the word rules, let it pass."""
    context = "All panels have a 25-year guarantee, and the inverter is covered for 10 years."
    answer = "The panels have a 25-year guarantee, and the inverter is covered for 12 years."
    report = assess_answer("And what guarantee do I get?", [context], answer, smollm2_scorer)
    assert "12" in (report.unchecked_facts or ())
    assert report.verdict != "supported", report
    assert all(s.verdict != "supported" for s in report.sentences if "12" in s.text)
