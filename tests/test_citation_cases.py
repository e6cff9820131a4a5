"""Issue 48's citation cases with the real embedded model, and the decision behind them.

A shop's documents, as a new user wrote them: a stale price page beside the newsletter
that updates it, a teapot page beside a kettle page, an answer copied from the About page.
With a small model any context raises an answer's likelihood, so the attribution alone
cannot tell an unrelated page from the source; the citation decision adds what the words
say (:func:`camab_rag.citations.choose_sources`, :func:`camab_rag.conflicts.disputes`).
"""

from __future__ import annotations

import numpy as np
import pytest

from camab_rag import attribute, cite
from camab_rag.citations import CitationRule, choose_sources, facts

EVERY_HOLDER = CitationRule(top_k=None, new_words=False)


def holders(sentence: str, texts: list[str]) -> list[int]:
    """The units ``choose_sources`` falls back to: at no score, the holders alone."""
    return choose_sources(sentence, np.zeros(len(texts)), texts, EVERY_HOLDER)


AERO = {
    "title": "Aero kettle",
    "text": "The Aero electric kettle boils 1.7 litres in three minutes. The Aero kettle costs "
    "49 euros and comes in white and black.",
}
NEWSLETTER = {
    "title": "Newsletter",
    "text": "Price update: from March the Aero kettle now costs 59 euros, because steel became "
    "more expensive.",
}
PICNIC = {
    "title": "Staff picnic",
    "text": "Our annual staff picnic is on 14 June in the city park. Families are welcome.",
}
PARKING = {
    "title": "Parking",
    "text": "Staff may park behind the warehouse. Visitors use the street parking on Riia street.",
}
TEAPOT = {"title": "Glass teapot", "text": "Glass teapot: 29 euros."}
KETTLES = "Our kettles cost 35 to 60 euros."
AERO_GLASS = {
    "title": "Aero kettle",
    "text": "The Aero kettle costs 49 euros. The Aero kettle is made of glass and steel.",
}
ABOUT = {
    "title": "About us",
    "text": "Lumora is a family business based in Tartu. We sell kettles, teapots and cups.",
}
AERO_SHORT = {
    "title": "Aero kettle",
    "text": "The Aero kettle is our best-selling electric kettle. It costs 49 euros.",
}


def _shown(cited: object, doc_index: int) -> list[str]:
    """How a document appears: "support" and/or "disputes" per sentence, or nothing."""
    out = []
    for sentence in cited.sentences:  # type: ignore[attr-defined]
        for number in sentence.citations:
            if cited.source(number).doc_index == doc_index:  # type: ignore[attr-defined]
                out.append("support")
        for number in sentence.disputed:
            if cited.source(number).doc_index == doc_index:  # type: ignore[attr-defined]
                out.append("disputes")
    return out


@pytest.mark.model
def test_the_stale_price_disputes_the_answer_among_four_documents(smollm2_scorer) -> None:
    """Issue 48: with four documents the 49-euro page was not shown as disputing "59" (its
    score fell under the citation bar, and the dispute needed it above)."""
    docs = [AERO, NEWSLETTER, PICNIC, PARKING]
    answer = "The Aero kettle costs 59 euros."
    result = attribute("How much does the Aero kettle cost?", docs, answer, smollm2_scorer)
    cited = cite(result, docs)
    assert _shown(cited, 0) == ["disputes"]
    assert cited.source(cited.sentences[0].disputed[0]).disputes == ["59"]
    assert _shown(cited, 1) == ["support"]
    assert _shown(cited, 2) == _shown(cited, 3) == []


@pytest.mark.model
def test_the_teapot_answer_shows_nothing_of_the_kettle_page(smollm2_scorer) -> None:
    """Issue 48: "The Glass teapot costs 29 euros." over a teapot and a kettle page. The
    kettle page raises the answer's likelihood (same wording, "glass" as a material) but
    says nothing of the teapot: it is neither support nor a dispute of its price."""
    docs = [TEAPOT, AERO_GLASS, PICNIC]
    answer = "The Glass teapot costs 29 euros."
    result = attribute("How much is the Glass teapot?", docs, answer, smollm2_scorer)
    cited = cite(result, docs)
    assert _shown(cited, 0) == ["support"]
    assert _shown(cited, 1) == [] and _shown(cited, 2) == []
    assert [source.doc_index for source in cited.sources] == [0]


@pytest.mark.model
def test_an_answer_copied_from_the_about_page_has_no_dispute(smollm2_scorer) -> None:
    """Issue 48's false dispute: an answer copied from the About page was marked as
    disagreeing with a kettle page on words the kettle page merely lacks."""
    docs = [AERO_SHORT, ABOUT, PICNIC]
    answer = "Lumora is a family business based in Tartu. We sell kettles, teapots and cups."
    result = attribute("Who is Lumora?", docs, answer, smollm2_scorer)
    cited = cite(result, docs)
    assert [s.disputed for s in cited.sentences] == [[], []]
    assert all(not source.disputes for source in cited.sources)
    assert _shown(cited, 1) == ["support", "support"]


WORKSHOP = [
    "Spoke & Chain is a bicycle workshop run by two mechanics.",
    "Our address is Harbour Street 12, Tallinn.",
    "A wheel truing costs 20 euros.",
    "The workshop is open Tuesday to Saturday from 10 am to 6 pm.",
]


@pytest.mark.model
def test_the_address_page_is_cited_though_an_unrelated_page_ties_with_it(
    smollm2_scorer,
) -> None:
    """Review finding 3 (issue 48 item 5): at budget 12 the opening-hours page, which
    shares no word with the answer, lifted it more than the address page did, so nothing
    was cited and the reader saw "No single document stands out" for a supported answer.
    The address page holds "Harbour Street 12" and its support is not below a typical
    unrelated page's: it is the source."""
    question = "Is the workshop at Harbour Street 12?"
    answer = "Yes, it is at Harbour Street 12."
    result = attribute(question, WORKSHOP, answer, smollm2_scorer, budget=12)
    scores = result.statements[0].scores
    assert scores[3] > scores[1]  # the attribution alone does not single the page out
    cited = cite(result, WORKSHOP)
    assert _shown(cited, 1) == ["support"]
    assert [source.doc_index for source in cited.sources] == [1]
    assert "stands out" not in cited.to_terminal(color=False)


def test_a_page_with_no_new_key_word_is_not_cited() -> None:
    """The decision on fixed scores: the kettle page is within a quarter of the teapot
    page's score (the old rule cited it) but holds none of the sentence's numbers and
    names that the teapot page does not already hold."""
    sentence = "The Glass teapot costs 29 euros."
    texts = [TEAPOT["text"], AERO_GLASS["text"], PICNIC["text"]]
    scores = np.array([0.76, 0.35, 0.05])
    assert set(facts(sentence)) == {"Glass", "29", "euros"}
    assert CitationRule().select(scores) == [0, 1]  # the attribution alone cites both
    assert choose_sources(sentence, scores, texts, CitationRule()) == [0]
    assert choose_sources(sentence, scores, texts, CitationRule(new_words=False)) == [0, 1]
    # a second source that adds a name the first lacks is still cited
    paris = "It stands in Paris. Gustave Eiffel's company designed it."
    docs = ["Gustave Eiffel's company designed the tower.", "The Eiffel Tower is in Paris."]
    assert choose_sources(paris, np.array([0.9, 0.5]), docs, CitationRule()) == [0, 1]


def test_a_name_every_page_holds_cites_none_of_them() -> None:
    """Review 16: with ``granularity="chunk"`` the opening-hours page was cited for a price
    (scores of a real run, SmolLM2, budget 8): it holds the shop's name, which every page
    holds; the price page holds the price and is cited alone."""
    texts = [
        "Spoke & Chain opening hours: Spoke & Chain is open Monday to Friday 9:00-18:00 and "
        "Saturday 10:00-16:00. Spoke & Chain is closed on Sundays.",
        "Spoke & Chain price list: a chain replacement costs 29 euros. A brake service costs "
        "35 euros. A puncture repair costs 12 euros.",
        "Spoke & Chain history: Spoke & Chain was founded in 2012 by Anna Berg.",
        "Staff outing: the Spoke & Chain team goes kayaking on 14 June.",
    ]
    scores = np.array([0.989, 0.679, 0.77, 0.245])
    for sentence in (
        "Spoke & Chain charges 12 euros for a puncture repair.",
        "It is 12 euros at Spoke & Chain.",
    ):
        assert choose_sources(sentence, scores, texts, CitationRule()) == [1], sentence
    # a name only some pages hold still marks them out
    founded = "Anna Berg founded Spoke & Chain."
    assert choose_sources(founded, scores, texts, CitationRule()) == [2]


def test_a_worked_out_total_is_held_by_the_price_it_comes_from() -> None:
    """Review 17: "Two drop-in classes cost 24 euros." cited the membership page, which
    shares only the currency; 24 is two of the drop-in page's 12 euros."""
    sentence = "Two drop-in classes cost 24 euros."
    texts = [
        "A single drop-in class costs 12 euros.",
        "A monthly unlimited membership costs 65 euros.",
        "The studio is closed on Sunday.",
    ]
    for scores in ([0.2, 0.6, 0.0], [0.6, 0.2, 0.0]):
        assert choose_sources(sentence, np.array(scores), texts, CitationRule()) == [0]


@pytest.mark.model
def test_a_total_worked_from_the_questions_count_cites_the_price(smollm2_scorer) -> None:
    """Review 19: "Three adults pay 105 euros." (three of the question, 35 euros per adult)
    cited nothing: no page states "three" or 105, and cite() read the pages without the
    question its count comes from."""
    docs = [
        "Blue Heron Boat Tours: the harbour tour lasts an hour and a half and costs 35 euros "
        "per adult. Children under 12 pay half price.",
        "Blue Heron Boat Tours also runs a sunset cruise for 55 euros per person, with a glass "
        "of wine included.",
        "Blue Heron Boat Tours is open daily from 9:00 to 18:00, April to October.",
        "Price list 2019 (archived): Blue Heron harbour tour 28 euros.",
        "Meet our team: captain Marta Silva has sailed with Blue Heron for twelve years.",
    ]
    question = "How much do three adults pay for the harbour tour?"
    result = attribute(question, docs, "Three adults pay 105 euros.", smollm2_scorer, budget=8)
    assert [source.doc_index for source in cite(result, docs).sources] == [0]


def test_a_clock_hour_is_not_held_by_a_price() -> None:
    """Review 12: "from 10 in the morning until 4 pm" cited the late-returns page ("a late
    return costs €10 per hour") as support, holding "10" only as a price; the hours page
    states both hours as clock times and "Saturday" for "Saturdays"."""
    sentence = "On Saturdays you can rent from 10 in the morning until 4 pm."
    hours = "Opening hours: Monday to Friday 9:00 to 18:00. Saturday 10:00 to 16:00."
    late = "Rentals must be returned by closing time. A late return costs €10 per hour."
    texts = [hours, late, "The Tagus river is the longest river on the Iberian Peninsula."]
    assert holders(sentence, texts) == [0]
    # the late-returns page stands the bar on the model's score, yet holds no fact: the
    # page holding every fact is cited in its place (above the unrelated page's score)
    assert choose_sources(sentence, np.array([0.05, 0.30, 0.0]), texts, CitationRule()) == [0]
    assert choose_sources(sentence, np.array([-0.1, 0.30, 0.0]), texts, CitationRule()) == []
    assert choose_sources(sentence, np.array([0.40, 0.30, 0.0]), texts, CitationRule()) == [0]
    # a price of 10 is still held by the page stating it
    assert choose_sources("It costs €10.", np.array([0.05, 0.30, 0.0]), texts, CitationRule())[
        :1
    ] == [1]


def test_a_far_weaker_second_source_that_adds_a_name_is_cited() -> None:
    """Issue 48 item 5, recall: the second source holds "Paris", which the first lacks,
    and stands the bar (0.2 above what any text gives) at a sixth of the first source's
    score. Cited since the default ``relative`` is 0 (0.25, before, left it out)."""
    sentence = "Gustave Eiffel's company designed the tower in Paris."
    docs = ["Gustave Eiffel's company designed the tower.", "The Eiffel Tower is in Paris."]
    scores = np.array([1.2, 0.2])
    assert choose_sources(sentence, scores, docs, CitationRule()) == [0, 1]
    assert choose_sources(sentence, scores, docs, CitationRule(relative=0.25)) == [0]
    # under the bar, or adding no name, it is still left out
    assert choose_sources(sentence, np.array([1.2, 0.04]), docs, CitationRule()) == [0]
    same = ["Gustave Eiffel's company designed the tower in Paris.", docs[1]]
    assert choose_sources(sentence, scores, same, CitationRule()) == [0]


def test_what_any_text_gives_is_not_support() -> None:
    """Sources that hold none of the sentence's words show what any text adds to the
    likelihood; a source must stand the citation bar above the best of them, unless it
    holds every number and name of the sentence (below)."""
    sentence = "The Glass teapot costs 29 euros."
    texts = [KETTLES, "Staff may park behind the warehouse.", PICNIC["text"]]
    rule = CitationRule(new_words=False)
    assert choose_sources(sentence, np.array([0.26, 0.22, 0.20]), texts, rule) == []
    assert choose_sources(sentence, np.array([0.28, 0.22, 0.20]), texts, rule) == [0]


def test_one_unrelated_page_that_lifts_the_answer_sets_the_bar() -> None:
    """The bar counts from the best unrelated source, not from a typical one: a parking
    note that lifts the answer by 0.30 (a small model rewards any context) leaves a
    kettle page at 0.34 without a citation, though it stands well above the median
    (0.05) of the unrelated pages and shares "euros" with the answer."""
    sentence = "The Glass teapot costs 29 euros."
    texts = [
        KETTLES,
        "Staff may park behind the warehouse.",
        PICNIC["text"],
        "Office plants are watered on Mondays.",
    ]
    rule = CitationRule(new_words=False)
    assert choose_sources(sentence, np.array([0.34, 0.30, 0.05, 0.02]), texts, rule) == []
    assert choose_sources(sentence, np.array([0.36, 0.30, 0.05, 0.02]), texts, rule) == [0]


def test_the_page_holding_the_numbers_and_names_is_cited_when_the_attribution_ties() -> None:
    """Issue 48 item 5 (recall; review finding 3): the teapot page holds "Glass" and
    "29"; at 0.34, tied with a parking note that lifts the answer as much, the attribution
    does not single it out, but it is cited: its support is not below a typical unrelated
    page's (the median, 0.05). Below that, or holding only some of them, it is not; a
    stale page that lacks the answer's number is never such a holder."""
    sentence = "The Glass teapot costs 29 euros."
    texts = [
        TEAPOT["text"],
        "Staff may park behind the warehouse.",
        PICNIC["text"],
        PARKING["text"],
    ]
    assert holders(sentence, texts) == [0]
    for rule in (CitationRule(), CitationRule(new_words=False)):
        assert choose_sources(sentence, np.array([0.34, 0.34, 0.05, 0.02]), texts, rule) == [0]
        assert choose_sources(sentence, np.array([0.04, 0.34, 0.05, 0.02]), texts, rule) == []
    stale = ["The Glass teapot costs 25 euros.", KETTLES, PICNIC["text"]]
    assert holders(sentence, stale) == []
    assert choose_sources(sentence, np.array([0.04, 0.0, 0.0]), stale, CitationRule()) == []
    # a number in another written form, an ordinal as its number
    assert holders("The last train leaves at 11:40 pm.", ["It departs at 23:40.", "At 11."]) == [0]
    assert holders("On Monday the 5th of January.", ["Monday 5 January 2026."]) == [0]
    # of two holders, the one holding more of the sentence's words (not the bare list)
    two = ["Prices: Glass 29, Aero 49.", TEAPOT["text"] + " Glass teapot costs 29 euros."]
    assert holders(sentence, two) == [1]


def test_a_value_in_another_form_relates_a_source_to_the_sentence() -> None:
    """Fresh-user review 10: "It closes at 9 pm." cited the staff page as strong support
    (the small model found "9 pm" likelier beside it), while the hours page states
    "21:00": no page shared a word with the sentence, so none counted as unrelated and the
    lift alone decided. "21:00" now relates the hours page by its form, so the staff page
    is measured against as unrelated and is not cited, whatever its score."""
    texts = [
        "Opening hours. The centre is open Monday to Friday from 07:00 to 21:00.",
        "Our staff. Swimming lessons are taught by coach Marta Velloso.",
    ]
    sentence = "It closes at 9 pm."
    for scores in ([-0.08, 0.55], [0.9, 0.55], [-0.5, -0.1]):
        assert 1 not in choose_sources(sentence, np.array(scores), texts, CitationRule())
    assert choose_sources(sentence, np.array([0.9, 0.1]), texts, CitationRule()) == [0]


def test_citations_read_facts_by_the_gates_rule() -> None:
    """One notion of a fact for the gate and the citations (``wordforms.is_fact``): an
    amount is one fact, so a page with its "3" and "20" apart does not hold "3.20"; a
    number word and an amount's sign count; a capitalised first word counts lower-cased."""
    sentence = "Gustave Eiffel's tower costs 3.20 euros, three times more."
    assert facts(sentence) == {
        "gustave": "",
        "Eiffel": "",
        "3.20": "3.2",
        "euros": "eur",
        "three": "3",
    }
    pages = [
        "Eiffel tower by Gustave: 3,20 EUR, three times.",
        "Gustave Eiffel tower: 3 euros 20, three.",
        "Eiffel tower, Gustave, 3.50 euros, three.",
    ]
    assert holders(sentence, pages) == [0]


def test_a_number_no_source_holds_cites_no_source() -> None:
    """The README's rule: a cited source holds a number or name of the sentence. A year no
    page states ("2020" over a 2019 price page) cites nothing, whatever the scores say;
    the page that holds the year is cited."""
    texts = [
        "Old prices 2019: a basic service costs 49 euros.",
        "We are open Monday to Friday from 9:00 to 18:00.",
        "The café next door serves coffee and cake.",
    ]
    scores = np.array([1.5, 0.9, 0.0])
    assert choose_sources("The answer is: 2020", scores, texts, CitationRule()) == []
    assert choose_sources("The answer is: 2019", scores, texts, CitationRule()) == [0]


def test_a_page_holding_only_the_number_is_not_cited_over_one_holding_its_words() -> None:
    """Review 20: "£6 extra for the three extra photos" (eight wanted, five included, £2
    each) cited an archived delivery price list for its "£6" as strong support; the photo
    page, which holds the sentence's words and works the £6 out, is cited instead."""
    texts = [
        "Five photos are included with every order, and each extra photo costs £2.",
        "Archived price list (2022): a standard delivery costs £6.",
    ]
    sentence = "You pay £6 extra for the three extra photos."
    assert choose_sources(sentence, np.array([0.1, 0.9]), texts, CitationRule()) == [0]
    # the price list still stands for a sentence of its own words
    own = "A standard delivery cost £6 in 2022."
    assert choose_sources(own, np.array([0.1, 0.9]), texts, CitationRule()) == [1]


LESSONS = "Sailing lessons cost 60 euros per session. Lunch is not included."
PRICES_2019 = "2019 price list: a sailing lesson costs 50 euros, lunch included."


@pytest.mark.model
def test_a_current_price_in_stale_words_cites_the_current_page_not_its_opposite(
    smollm2_scorer,
) -> None:
    """Session 20: "A sailing lesson costs 60 euros, lunch included." copies the 2019 page's
    words and the current page's price. It cited nothing (the price read as misread against
    the 2019 page), and where the current page was cited its "Lunch is not included." was
    highlighted as support. Now the current page supports, the 2019 page disputes "60", and
    the sentence stating "not included" is not highlighted."""
    docs = [LESSONS, PRICES_2019, PICNIC["text"], PARKING["text"]]
    answer = "A sailing lesson costs 60 euros, lunch included."
    result = attribute("How much is a sailing lesson?", docs, answer, smollm2_scorer)
    cited = cite(result, docs)
    assert _shown(cited, 0) == ["support"] and _shown(cited, 1) == ["disputes"]
    assert _shown(cited, 2) == _shown(cited, 3) == []
    current = cited.source(cited.sentences[0].citations[0])
    assert "Lunch is not included." not in [h.text for h in current.highlights]
    assert [h.text for h in current.highlights] == ["Sailing lessons cost 60 euros per session."]


def test_the_a_of_a_month_is_no_clock_mark_so_the_price_page_holds_the_price() -> None:
    """Review 22: "The rent rises by £25 a month per pet." cited nothing though the pets
    page scored far above the rest: "25 a" read as the clock time "25 a.m.", which only a
    clock time holds."""
    from camab_rag.groundedness.wordforms import clock_hours

    assert clock_hours("The rent rises by £25 a month per pet.") == frozenset()
    assert clock_hours("Open 9 a.m. to 5 pm.") == {"9", "17"}
    texts = [
        "Dogs are not permitted above the ground floor. We do not charge a pet deposit, but "
        "the monthly rent rises by £25 for each pet.",
        "Our team ran the Brighton 10K and raised £2,340.",
        "Viewings are available Monday to Friday.",
    ]
    scores = np.array([1.5, 0.0, 0.1])
    assert choose_sources(
        "The rent rises by £25 a month per pet.", scores, texts, CitationRule()
    ) == [0]
