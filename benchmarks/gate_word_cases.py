"""Word-rule dev cases for the default gate (issue 48): right answers and invented twins.

What: 36 one-document cases written for the word rules (session gate9, before any was
scored), each a right answer a reader accepts (numbers as words, converted units, 12h/24h
times, weekday ranges, abbreviations, plurals, synonyms, polite or framing sentences,
follow-ups whose words come from the chat history) and the same answer with one invented
detail. Why: the blind set's held-out half may not be read; these are the dev rows the
word rules are fixed on. How: ``python -m benchmarks.gate_word_cases`` runs each answer
through ``assess_answer`` with the embedded model at the shipped defaults and prints
every miss with its unchecked facts, coverage and ``P(unsupported)``. Licence: CC0.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

# (context, question, right, invented, history)
CASES: list[tuple[str, str, str, str, list[dict[str, str]]]] = [
    (
        "The Marlow pool is open from 07:00 to 21:00 every day except Monday.",
        "Until when is the pool open?",
        "It is open until 9 pm.",
        "It is open until 10 pm.",
        [],
    ),
    (
        "Breakfast is served between 06:30 and 09:30 in the Garden Room.",
        "When does breakfast end?",
        "Breakfast ends at 9:30 am.",
        "Breakfast ends at 10:30 am.",
        [],
    ),
    (
        "The pharmacy opens at 8:00 and closes at 18:00 from Monday to Friday.",
        "When does the pharmacy close?",
        "At 6 pm on weekdays.",
        "At 7 pm on weekdays.",
        [],
    ),
    (
        "The Fennick library lends up to twelve books at a time for three weeks.",
        "How many books can I borrow?",
        "You can borrow 12 books at once.",
        "You can borrow 15 books at once.",
        [],
    ),
    (
        "Each Orla backpack holds 25 litres and weighs 900 grams.",
        "How big is the Orla backpack?",
        "It has a capacity of twenty-five litres.",
        "It has a capacity of thirty-five litres.",
        [],
    ),
    (
        "Standard delivery takes 3 to 5 working days; express delivery arrives the next "
        "working day for 9.90 euros.",
        "How much is express delivery?",
        "Express shipping costs €9.90.",
        "Express shipping costs €12.90.",
        [],
    ),
    (
        "The Harbour museum is open Tuesday to Sunday from 10 am to 6 pm. It is closed on Mondays.",
        "Can I visit on Thursday?",
        "Yes, Thursday is within its opening days, from 10:00 to 18:00.",
        "Yes, Thursday is within its opening days, from 11:00 to 18:00.",
        [],
    ),
    (
        "Our support line answers calls Mon-Fri, 9:00-17:00.",
        "Is support available on Wednesday afternoon?",
        "Yes, on Wednesdays the line is staffed until 5 pm.",
        "Yes, on Wednesdays the line is staffed until 8 pm.",
        [],
    ),
    (
        "Tickets for the Lindqvist concert on 14 March cost 35 euros; students pay 20 euros.",
        "How much do students pay?",
        "Thank you for your question! Students pay 20 euros.",
        "Thank you for your question! Students pay 25 euros.",
        [],
    ),
    (
        "The Brenna ferry leaves the harbour at 7:15 and 16:45 and takes 50 minutes.",
        "How long is the crossing?",
        "The crossing lasts fifty minutes.",
        "The crossing lasts seventy minutes.",
        [],
    ),
    (
        "Apartments in Kellis Court have two bedrooms, one bathroom and a balcony.",
        "How many bedrooms do the flats have?",
        "Each flat has 2 bedrooms.",
        "Each flat has 3 bedrooms.",
        [],
    ),
    (
        "The Torvik trail is 12 km long and climbs 600 m. Allow about four hours.",
        "How long does the hike take?",
        "Plan for roughly 4 hours for the 12-kilometre trail.",
        "Plan for roughly 6 hours for the 12-kilometre trail.",
        [],
    ),
    (
        "Refunds are paid to the original card within 14 days of receiving the return.",
        "How soon will I get my money back?",
        "Within two weeks of the return arriving, to the card you paid with.",
        "Within three weeks of the return arriving, to the card you paid with.",
        [],
    ),
    (
        "Same-day appointments are not available; please book at least one day in advance.",
        "Can I get an appointment today?",
        "No, you need to book at least a day ahead.",
        "Yes, same-day appointments are available.",
        [],
    ),
    (
        "Parking at the Quill Centre is free for the first two hours, then 2 euros per hour.",
        "What does parking cost after the first two hours?",
        "After that it is €2 an hour.",
        "After that it is €3 an hour.",
        [],
    ),
    (
        "The Aldren clinic is at 18 Rowan Street, on the second floor.",
        "Where is the clinic?",
        "At 18 Rowan St., second floor.",
        "At 18 Rowan St., fourth floor.",
        [],
    ),
    (
        "Kids under 6 travel free on Solent buses; children aged 6 to 15 pay half fare.",
        "Does my 4-year-old need a ticket?",
        "No, children under six ride for free.",
        "No, children under eight ride for free.",
        [],
    ),
    (
        "The Vesta oven preheats to 200°C in 8 minutes.",
        "How hot does the Vesta oven get when preheating?",
        "It preheats to 200 degrees Celsius.",
        "It preheats to 250 degrees Celsius.",
        [],
    ),
    (
        "Check-in at the Alder Lodge starts at 3 pm and check-out is by 11 am.",
        "When is check-out?",
        "Check-out is by 11:00.",
        "Check-out is by 12:00.",
        [],
    ),
    (
        "The spring sale runs from 1 April to 15 April and takes 20% off all jackets.",
        "What is the discount on jackets?",
        "Jackets are twenty percent off during the spring sale.",
        "Jackets are thirty percent off during the spring sale.",
        [],
    ),
    (
        "Grove Bakery bakes sourdough loaves every morning and sells them from 8 am.",
        "When can I buy sourdough?",
        "The sourdough loaves are on sale from eight in the morning.",
        "The sourdough loaves are on sale from nine in the morning.",
        [],
    ),
    (
        "The Nordvik warranty covers the motor for 5 years and the battery for 2 years.",
        "How long is the battery covered?",
        "The battery has a two-year warranty.",
        "The battery has a three-year warranty.",
        [],
    ),
    (
        "Membership costs 40 euros per month or 400 euros per year.",
        "What is the yearly price?",
        "An annual membership is 400 euros.",
        "An annual membership is 450 euros.",
        [],
    ),
    (
        "Lockers are available at the station for 5 euros per day. Bags larger than "
        "80 cm do not fit.",
        "Will my 70 cm suitcase fit in a locker?",
        "Yes, lockers take bags up to 80 cm.",
        "Yes, lockers take bags up to 100 cm.",
        [],
    ),
    (
        "The Calder bike shop repairs punctures while you wait. A full service takes "
        "two days and costs 85 euros.",
        "How much is a full service?",
        "A complete service is 85 euros and takes 2 days.",
        "A complete service is 85 euros and takes 4 days.",
        [],
    ),
    (
        "Dr. Ansel Varga sees patients on Tuesdays and Thursdays.",
        "Which days does Dr. Varga work?",
        "Dr. Varga is in on Tuesday and Thursday.",
        "Dr. Varga is in on Tuesday and Friday.",
        [],
    ),
    (
        "Orders placed before 2 pm ship the same day.",
        "If I order at 1 pm, when does it ship?",
        "It ships that same day, since 1 pm is before the 14:00 cut-off.",
        "It ships the next day, since 1 pm is before the 14:00 cut-off.",
        [],
    ),
    (
        "The Ravel hall seats 450 people and has step-free access.",
        "Is the hall wheelchair accessible?",
        "Yes, it has step-free access.",
        "Yes, it has step-free access and seats 600 people.",
        [],
    ),
    (
        "Hotel Brisa: rooms have free Wi-Fi. Breakfast costs 12 euros per person.",
        "How much is breakfast?",
        "It's 12 euros per person.",
        "It's 15 euros per person.",
        [
            {"role": "user", "content": "Does Hotel Brisa have Wi-Fi?"},
            {"role": "assistant", "content": "Yes, the rooms have free Wi-Fi."},
        ],
    ),
    (
        "The Penrose gallery is open Wednesday to Sunday. Admission is 8 euros, free for members.",
        "And for members?",
        "Members get in free.",
        "Members pay 4 euros.",
        [
            {"role": "user", "content": "How much is admission at the Penrose gallery?"},
            {"role": "assistant", "content": "Admission is 8 euros."},
        ],
    ),
    (
        "The Kestrel e-bike has a range of 90 km and charges fully in 5 hours.",
        "And how long does it take to charge?",
        "A full charge of the Kestrel takes five hours.",
        "A full charge of the Kestrel takes three hours.",
        [
            {"role": "user", "content": "What is the range of the Kestrel e-bike?"},
            {"role": "assistant", "content": "It has a range of 90 km."},
        ],
    ),
    (
        "Swimming lessons for adults run on Saturdays at 9:00 and cost 60 euros for six lessons.",
        "How many lessons is that?",
        "That price is for 6 lessons.",
        "That price is for 8 lessons.",
        [
            {"role": "user", "content": "How much are the adult swimming lessons?"},
            {"role": "assistant", "content": "They cost 60 euros."},
        ],
    ),
    (
        "The Oakridge campsite opens on 1 May and closes on 30 September. Pitches cost "
        "18 euros a night.",
        "And when does it close?",
        "The campsite closes at the end of September.",
        "The campsite closes at the end of October.",
        [
            {"role": "user", "content": "When does the Oakridge campsite open?"},
            {"role": "assistant", "content": "It opens on 1 May."},
        ],
    ),
    (
        "Coffee at the Lark café costs 2.50 euros; tea costs 2 euros. The café opens at "
        "7:30 on weekdays.",
        "What about tea?",
        "Tea is a bit cheaper at 2 euros.",
        "Tea is a bit cheaper at 1.50 euros.",
        [
            {"role": "user", "content": "How much is coffee at the Lark café?"},
            {"role": "assistant", "content": "Coffee costs 2.50 euros."},
        ],
    ),
    (
        "The Seabright ferry does not carry cars. Bicycles travel free.",
        "Can I take my car on the Seabright ferry?",
        "No, cars are not carried, but you can bring a bicycle for free.",
        "Yes, cars are carried, and you can bring a bicycle for free.",
        [],
    ),
    (
        "Workshops at the Loom studio last 3 hours and cost 45 euros including "
        "materials. Groups are limited to 8 people.",
        "Tell me about the workshops.",
        "Each workshop lasts three hours and costs €45, materials included. At most "
        "eight people take part.",
        "Each workshop lasts three hours and costs €45, materials included. At most "
        "twelve people take part.",
        [],
    ),
    (
        "The Halden museum offers guided tours in English at 11:00 and 15:00 daily.",
        "When are the English tours?",
        "Guided tours in English start at 11 am and 3 pm every day.",
        "Guided tours in English start at 11 am and 4 pm every day.",
        [],
    ),
    (
        "Returns are accepted within 30 days if the item is unused and in its original packaging.",
        "Can I return shoes I have worn?",
        "No, only unused items in their original packaging can be returned, within 30 days.",
        "No, only unused items in their original packaging can be returned, within 60 days.",
        [],
    ),
]


STORE = Path(__file__).parent / "results" / "groundedness" / "word_cases_smollm2.jsonl"
"""The stored token log-probs of every answer (``--run`` writes them; the rest replays)."""


def run(scorer: Any) -> list[dict[str, Any]]:
    """Each answer's token support from ``assess_answer`` with ``scorer`` (two calls)."""
    from camab_rag.attributor import assess_answer

    rows = []
    for k, (context, question, right, invented, history) in enumerate(CASES):
        for name, answer in (("right", right), ("invented", invented)):
            report = assess_answer(question, [context], answer, scorer, history=history or None)
            assert report.token_support is not None
            support = report.token_support.to_dict()
            for key in ("full", "empty"):
                support[key] = [round(float(v), 4) for v in support[key]]
            rows.append({"case": k, "name": name, "answer": answer, "support": support})
    return rows


def replay(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each stored answer read by the library's current rules at the shipped defaults."""
    from camab_rag.groundedness.report import read_by, support_report
    from camab_rag.groundedness.wordforms import ContextWords
    from camab_rag.token_support import TokenSupport

    out = []
    for row in rows:
        context, question, *_ = CASES[row["case"]]
        support = TokenSupport.from_dict(row["support"], row["answer"])
        known = ContextWords.of([context], question)
        report = read_by(support_report(support, None, context_words=known))
        out.append(
            {
                **{k: row[k] for k in ("case", "name", "answer")},
                "verdict": report.verdict,
                "p": report.p_unsupported,
                "coverage": report.coverage,
                "score": report.score,
                "facts": report.unchecked_facts,
            }
        )
    return out


def main() -> None:
    if "--run" in sys.argv:
        from camab_rag.scorers import default_scorer

        stored = run(default_scorer())
        STORE.write_text("".join(json.dumps(r) + "\n" for r in stored), encoding="utf-8")
    stored = [json.loads(line) for line in STORE.read_text(encoding="utf-8").splitlines()]
    rows = replay(stored)
    right = [r for r in rows if r["name"] == "right"]
    invented = [r for r in rows if r["name"] == "invented"]
    verbose = "-v" in sys.argv
    for r in rows:
        miss = (r["verdict"] == "unsupported") == (r["name"] == "right")
        if miss or verbose:
            print(
                f"{'MISS' if miss else 'ok  '} {r['case']:2d} {r['name']:8s} {r['verdict']:11s} "
                f"p={r['p']:.2f} cov={r['coverage']:.2f} score={r['score']:+.2f} "
                f"facts={r['facts']} | {r['answer']}"
            )
    passed = sum(r["verdict"] != "unsupported" for r in right)
    blocked = sum(r["verdict"] == "unsupported" for r in invented)
    print(f"right passed {passed}/{len(right)}; invented blocked {blocked}/{len(invented)}")


if __name__ == "__main__":
    main()
