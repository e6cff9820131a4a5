"""Word forms the gate compares, and the values and negations the context does not state.

What: :func:`forms` turns a text into normalised word forms with their character spans
(a light plural rule: ``grinders`` -> ``grinder``; units and number words: ``€29`` and
``29 euros`` share ``eur`` and ``29``, ``220°C`` is ``220 degrees Celsius``, ``four``
is ``4``; clock times: ``10 am``,
``10:00`` and ``10.00`` are ``10``, ``4 pm``, ``4pm`` and ``4 p.m.`` are ``16``,
``noon`` is ``12``); :class:`ContextWords` holds a
context's words and forms and its sentences; :func:`misread_spans` finds the words of an
answer sentence that take a value the context gives for another subject (a price of the
other product) or a negation the context does not make. Why: a reworded correct answer
must not lose coverage to a plural or a currency sign, and a wrong value copied from the
context must not count as covered. How: rules over words, no model call, no dependency.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from itertools import pairwise

from camab_rag.sentences import split_sentences

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def words(text: str) -> list[str]:
    """The lower-cased words (runs of letters or digits) of ``text``."""
    return [w.lower() for w in _WORD.findall(text)]


_TOKEN = re.compile(r"[^\W_]+|[€$£%°]", re.UNICODE)
UNITS = {
    "€": "eur",
    "euro": "eur",
    "euros": "eur",
    "eur": "eur",
    "$": "usd",
    "dollar": "usd",
    "dollars": "usd",
    "usd": "usd",
    "£": "gbp",
    "gbp": "gbp",
    "%": "percent",
    "percent": "percent",
    "pct": "percent",
    "metre": "m",
    "metres": "m",
    "meter": "m",
    "meters": "m",
    "litre": "l",
    "litres": "l",
    "liter": "l",
    "liters": "l",
    "kilometre": "km",
    "kilometres": "km",
    "kilometer": "km",
    "kilometers": "km",
    "minute": "min",
    "minutes": "min",
    "mins": "min",
    "°": "deg",
    "degree": "deg",
    "degrees": "deg",
    "gram": "g",
    "grams": "g",
    "kilogram": "kg",
    "kilograms": "kg",
    "kilo": "kg",
    "kilos": "kg",
    "centimetre": "cm",
    "centimetres": "cm",
    "centimeter": "cm",
    "centimeters": "cm",
}
"""Units written as a sign, a word or an abbreviation, to one form."""
ABBREVIATIONS = {"st": "street", "rd": "road", "ave": "avenue", "hr": "hour", "hrs": "hour"}
ABBREVIATIONS.update(permitted="allowed", prohibited="forbidden", banned="forbidden")
"""Abbreviations and synonyms read as the word they stand for: "18 Rowan St." is "18
Rowan Street"; "permitted" is "allowed" (so "not permitted" states ``forbidden``)."""
DEGREE_SCALES = {"c": "celsius", "f": "fahrenheit"}
"""The letter after a degree sign, as the scale's word: ``220°C`` is ``220 degrees
Celsius``."""
PERIODS = {
    "hourly": "hour",
    "daily": "day",
    "weekly": "week",
    "monthly": "month",
    "yearly": "year",
    "annually": "year",
}
"""How often, as the period's form: ``hourly`` is ``every hour``."""
SAME_FORM = dict.fromkeys(
    ["cost", "costs", "costing", "price", "prices", "priced", "sell", "sells", "selling", "sold"],
    "price",
)
"""Words that state the same relation, as one form: a shop that "sells the City Cruiser
for 590 euros" says it "costs 590 euros"."""
NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        [
            *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"),
            *("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen"),
            *("seventeen", "eighteen", "nineteen", "twenty"),
        ]
    )
}
TENS = {w: str(10 * i) for i, w in enumerate(("thirty", "forty", "fifty"), 3)}
TENS.update({w: str(10 * i) for i, w in enumerate(("sixty", "seventy", "eighty", "ninety"), 6)})
NUMBER_WORDS.update(TENS)
ORDINAL_WORDS = {
    w: str(i)
    for i, w in enumerate(
        ("third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"), 3
    )
}
"""Ordinals written as words, as their number ("fourth floor" is the ``4`` of "4th
floor"); ``first`` and ``second`` are left as words (an adverb, a unit of time)."""
"""Numbers written as words, to their digits: ``four`` is ``4``, ``seventy`` ``70``; a
tens word and a unit joined ("twenty-five", "thirty one") are one number (:func:`forms`)."""
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his
    how i if in into is it its itself just me more most my myself no nor not now of off
    on once only or other our ours ourselves out over own same she should so some such
    than that the their theirs them themselves then there these they this those through
    to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves s t said says say one two new also
    year years mr mrs ms since until till every everything anything something another
    isn aren wasn weren doesn don didn hasn haven hadn wouldn couldn shouldn mustn needn
    ll ve re""".split()  # noqa: SIM905
)
"""Function words (and a few news fillers) whose presence in the context proves nothing;
with the pieces of a contraction (``isn`` of "isn't": its negation is read from the
text, :func:`_negated`)."""

LIGHT_WORDS = frozenset(
    """may might must shall can could should would get gets got getting gotten go goes
    went gone going take takes took taken taking come comes came coming make makes made
    making let lets""".split()  # noqa: SIM905
)
"""Modal and light verbs ("get in for nine euros", "go in free", "may not take flash
photos"): a reworded answer brings them in without a fact of its own, so the gate does
not check them against the context (the words around them carry the claim)."""
DERIVED_MIN = 5
"""The shortest word form read as the stem of a longer context word (``photo`` of
``photography``, ``student`` of ``students``): :func:`holds`."""


def holds(value: str, known: Collection[str]) -> bool:
    """Whether the forms ``known`` hold ``value``: as it is, or (a word of at least
    :data:`DERIVED_MIN` letters) as the start of a longer word ("flash photos" under
    "flash photography")."""
    if value in known:
        return True
    if len(value) < DERIVED_MIN or not value.isalpha():
        return False
    return any(k.startswith(value) for k in known)


NEGATIONS = frozenset({"not", "no", "never", "neither", "nor", "none", "nothing", "cannot"})
CHARGE_WORDS = frozenset({"cost", "costs", "charge", "charges", "fee", "fees"})
"""After ``no`` ("at no cost", "no charge"): the pair states ``free``, not a negation."""
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
CALENDAR = frozenset(
    [
        *("january", "february", "march", "april", "may", "june", "july", "august"),
        *("september", "october", "november", "december", *WEEKDAYS),
    ]
)
_SIGNS = frozenset({"eur", "usd", "gbp", "percent"})
_SHORT = "mon tue tues wed thu thur thurs fri sat sun jan feb mar apr jun jul aug sep sept"
CALENDAR_SHORT = {
    short: next(name for name in sorted(CALENDAR) if name.startswith(short))
    for short in (*_SHORT.split(), "oct", "nov", "dec")
}
"""Weekdays and months abbreviated ("Sat", "Tues", "Thurs", "Sept"), read as the full
name when capitalised (:func:`forms`; "sat" or "sun" in lower case stay words)."""


def is_fact(text: str, start: int, word: str, value: str) -> bool:
    """Whether the word of ``text`` at ``start`` (``word``, its form ``value``) states a
    fact a reader checks as written, one no rewording keeps: a number, an amount's sign,
    a month or weekday, or a name (capitalised, not the first word of its sentence).
    Other content words ("forbidden", "needs") may be reworded; a negation is checked by
    :func:`misread_spans` (one the context does not make)."""
    if any(c.isdigit() for c in value) or value in _SIGNS:
        return True
    if word in NUMBER_WORDS or word in CALENDAR or value in CALENDAR:
        return True
    before = text[:start].rstrip()
    return text[start : start + 1].isupper() and bool(before) and before[-1] not in '.!?:;\n"“('


OPPOSITES = {
    **{a: b for a, b in (("open", "closed"), ("available", "unavailable"))},
    **{a: b for a, b in (("included", "excluded"), ("allowed", "forbidden"))},
}
OPPOSITES.update({b: a for a, b in list(OPPOSITES.items())})
"""Words that state opposite values of one subject (a shop ``open`` or ``closed`` on
Sunday), by form: an answer word whose opposite is what the context states for the
same subject is a misread value (:func:`misread_spans`); so is a ``Yes`` (or ``No``) to
a question asking about one of them ("Is the shop open on Sunday?")."""
_PRONOUNS = frozenset({"it", "its", "they", "their", "this", "these", "he", "she", "his", "her"})
_CLOCK = frozenset({"am", "pm"})
_REPLY = re.compile(r"\s*no\s*[,.!;:]", re.IGNORECASE)


def stem(word: str) -> str:
    """A light plural rule (``grinders``, ``boxes``, ``batteries``, ``costs`` share a form
    with ``grinder``, ``box``, ``battery``, ``cost``); digits and short words are kept.
    Plurals only: stripping ``-ed`` and ``-ing`` too matched more hallucinated answers to
    their evidence on the benchmark's choice rows (HaluEval choice half, FRANK CNN/DM
    ``valid``), lowering coverage's ROC AUC there more than plurals alone do."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


ONE_AS_PRONOUN_AFTER = frozenset(
    """the this that which each every no any another other first second third last next
    same only""".split()  # noqa: SIM905
)
"""Determiners and ordinals after which ``one`` stands for a noun ("the first one
leaves at 8:15"), not the number 1 (:func:`forms`)."""


_ORDINAL = re.compile(r"\d{1,4}(?:st|nd|rd|th)")


def form(word: str) -> str:
    """The normalised form of one lower-cased word, read alone (no clock rule)."""
    if word.isdecimal():
        return str(int(word)) if len(word) < 12 else word
    if _ORDINAL.fullmatch(word):  # "5th" is the 5 of "5 January"
        return str(int(word[:-2]))
    if word in NUMBER_WORDS:
        return NUMBER_WORDS[word]
    if word in ORDINAL_WORDS:
        return ORDINAL_WORDS[word]
    if word in UNITS:
        return UNITS[word]
    return PERIODS.get(word) or SAME_FORM.get(word) or ABBREVIATIONS.get(word) or stem(word)


def forms(text: str) -> list[tuple[int, int, str, str]]:
    """``(start, end, word, form)`` for each word of ``text`` (``word`` lower-cased, as
    :func:`~camab_rag.groundedness.score.words` reads it, or a currency or percent sign);
    ``form`` is ``""`` for a word a clock time absorbs (``am``, ``pm``, the ``00`` of
    ``10:00``)."""
    tokens = [(m.start(), m.end(), m.group(0).lower()) for m in _TOKEN.finditer(text)]
    marks = [_clock_mark(text, tokens, k) for k in range(len(tokens))]
    halves = _day_parts(tokens)
    decimals = {**_decimals(text, tokens), **_joined_numbers(text, tokens)}
    decimals.update(_thousands(text, tokens))
    free = _free(tokens)
    out = []
    for k, (start, end, word) in enumerate(tokens):
        value = form(word)
        if k in decimals:  # "0.20 euros" is 0.2 (spanning "0.20"), its "20" nothing
            if decimals[k]:
                last = k + 1
                while decimals.get(last + 1) == "":
                    last += 1
                end = tokens[last][1]
                word = text[start:end].lower()
            out.append((start, end, word, decimals[k]))
            continue
        after = marks[k + 1] if k + 1 < len(tokens) else ""
        if k + 2 < len(tokens) and _minutes(text, tokens, k + 1):  # "5:30 pm"
            after = marks[k + 2]
        if k + 1 < len(tokens) and _minutes(text, tokens, k + 1, joined=True):  # "7.30pm"
            after = tokens[k + 1][2][2:]
        after_hour = k > 0 and tokens[k - 1][2].isdecimal()
        minutes = word[:2] == "00" and _minutes(text, tokens, k, joined=True)
        minutes = minutes or (word == "00" and after_hour and tokens[k - 1][1] == start - 1)
        minutes = minutes and text[start - 1] in ":."
        joined = _JOINED_CLOCK.fullmatch(word)
        if marks[k] == "absorbed" or (marks[k] and after_hour) or minutes:
            value = ""
        elif k and _minutes(text, tokens, k, joined=True):  # the "30" of "7.30pm"
            value = word[:2]
        elif joined:  # "5pm", "10am"
            value = _hour(int(joined.group(1)), joined.group(2))
        elif word in CLOCK_WORDS:
            value = CLOCK_WORDS[word]
        elif word in CALENDAR_SHORT and text[start].isupper():  # "Sat", "Sept"
            value = CALENDAR_SHORT[word]
        elif word in DEGREE_SCALES and k and tokens[k - 1][2] == "°":
            value = DEGREE_SCALES[word]
        elif word == "one" and k and tokens[k - 1][2] in ONE_AS_PRONOUN_AFTER:
            value = ""  # "the first one", "this one": a pronoun, no number
        elif k in free:  # "at no extra cost", "for nothing": free, not a negation
            value = free[k]
        elif word.isdecimal() and after in _CLOCK and int(word) <= 12:
            value = _hour(int(word), after)
        elif k in halves:  # "7 in the morning" is 7:00, "5 in the afternoon" 17:00
            value = _hour(int(word), halves[k]) if halves[k] else ""
        out.append((start, end, word, value))
    return _in_base_units(out)


DURATIONS = {"day": ("week", 7), "month": ("year", 12)}
"""A duration's unit (by form) and the larger one it makes: "14 days" also states "two
weeks", "2 weeks" also "14 days"; "24 months" "2 years" and back (:func:`_also`)."""


def _durations(text: str) -> frozenset[str]:
    """The number and unit forms of ``text``'s durations in the other unit of
    :data:`DURATIONS` ("14 days": ``2``, ``week``), added to a context's forms only: the
    answer's own words are read as written ("a 20-year-old" is 20, not 240 months)."""
    found = [(w, f) for _, _, w, f in forms(text) if f]
    out: set[str] = set()
    for (_, value), (_, unit) in pairwise(found):
        if not value.isdecimal():
            continue
        for small, (large, factor) in DURATIONS.items():
            if unit == small and int(value) % factor == 0 and int(value):
                out.update((str(int(value) // factor), large))
            elif unit == large:
                out.update((str(int(value) * factor), small))
    return frozenset(out)


def _in_base_units(
    found: list[tuple[int, int, str, str]],
) -> list[tuple[int, int, str, str]]:
    """``found`` with an amount in cents read in the currency ("50 cents" is ``0.5``) and
    "per cent" as ``percent``."""
    out = list(found)
    valued = [k for k, (_, _, _, f) in enumerate(out) if f]
    for k, after in pairwise(valued):
        value, unit = out[k][3], out[after][3]
        if out[after][2] in ("cent", "cents") and value == "per":  # "20 per cent"
            out[k], out[after] = (*out[k][:3], ""), (*out[after][:3], "percent")
        elif unit in ("cent", "cents") and value.isdecimal():  # "50 cents" is 0.5 (euros)
            whole, part = divmod(int(value), 100)
            fraction = f"{part:02d}".rstrip("0")
            out[k] = (*out[k][:3], f"{whole}.{fraction}" if fraction else str(whole))
    return out


def _thousands(text: str, tokens: Sequence[tuple[int, int, str]]) -> dict[int, str]:
    """Token index -> the number of digits grouped by commas ("1,290" and "12,500" are
    ``1290`` and ``12500``, as written without them), and -> ``""`` for each later group."""
    out: dict[int, str] = {}
    k = 0
    while k < len(tokens):
        first, last, digits = k, k, tokens[k][2]
        if digits.isdecimal() and len(digits) <= 3:
            while last + 1 < len(tokens):
                (_, end, _), (start, _, part) = tokens[last], tokens[last + 1]
                if not (part.isdecimal() and len(part) == 3 and text[end:start] == ","):
                    break
                digits, last = digits + part, last + 1
        if last > first:
            out[first] = str(int(digits))
            out.update(dict.fromkeys(range(first + 1, last + 1), ""))
        k = last + 1
    return out


def _joined_numbers(text: str, tokens: Sequence[tuple[int, int, str]]) -> dict[int, str]:
    """Token index -> the number of a tens word and a unit word joined by a hyphen or a
    space ("twenty-five" is ``25``), and -> ``""`` for the unit word."""
    out: dict[int, str] = {}
    for k in range(len(tokens) - 1):
        (_, end, tens), (start, _, unit) = tokens[k], tokens[k + 1]
        if tens not in NUMBER_WORDS or unit not in NUMBER_WORDS or k in out:
            continue
        high, low = int(NUMBER_WORDS[tens]), int(NUMBER_WORDS[unit])
        if high >= 20 and high % 10 == 0 and 1 <= low <= 9 and text[end:start] in ("-", " "):
            out[k], out[k + 1] = str(high + low), ""
    return out


_EXTRA = frozenset({"extra", "additional"})


def _free(tokens: Sequence[tuple[int, int, str]]) -> dict[int, str]:
    """Token index -> ``"free"`` for the ``no`` of "no cost", "at no extra fee" and the
    ``nothing`` of "for nothing", and -> ``""`` for the words the ``no`` takes with it."""
    out: dict[int, str] = {}
    for k, (_, _, word) in enumerate(tokens):
        after = [t[2] for t in tokens[k + 1 : k + 3]]
        extra = 1 if after[:1] and after[0] in _EXTRA else 0
        if word == "no" and len(after) > extra and after[extra] in CHARGE_WORDS:
            out[k] = "free"
            out.update(dict.fromkeys(range(k + 1, k + 2 + extra), ""))
        elif word == "nothing" and k and tokens[k - 1][2] == "for":
            out[k] = "free"
    return out


def _decimals(text: str, tokens: Sequence[tuple[int, int, str]]) -> dict[int, str]:
    """Token index -> form for an amount with a decimal part ("0.20", "€1,50",
    "5.50 euros": ``0.2``, ``1.5``, ``5.5``; "5.00 euros" is ``5``) and -> ``""`` for its
    decimal digits. An amount is a number before ``.``/``,`` and one or two digits whose
    whole part is 0 or that a currency sign precedes or a currency or percent follows;
    "10.30" alone stays a clock time."""
    out: dict[int, str] = {}
    for k in range(len(tokens) - 1):
        (_, end, whole), (start, _, part) = tokens[k], tokens[k + 1]
        if not (whole.isdecimal() and part.isdecimal() and len(part) <= 2):
            continue
        if start != end + 1 or text[end] not in ".," or k in out:
            continue
        sign = k > 0 and tokens[k - 1][2] in "€$£" and tokens[k - 1][1] == tokens[k][0]
        unit = k + 2 < len(tokens) and UNITS.get(tokens[k + 2][2]) in _SIGNS
        if int(whole) == 0 or sign or unit:
            fraction = part.ljust(2, "0").rstrip("0")
            out[k] = f"{int(whole)}.{fraction}" if fraction else str(int(whole))
            out[k + 1] = ""
    return out


def _year(value: str) -> bool:
    """Whether the number form ``value`` reads as a year (``1870``, ``2026``)."""
    return len(value) == 4 and value.isdecimal() and value[:2] in ("18", "19", "20")


def _shared(clauses: Sequence[Sentence]) -> frozenset[str]:
    """The forms every one of ``clauses`` states."""
    return frozenset.intersection(*(c.forms for c in clauses)) if clauses else frozenset()


def is_number(value: str) -> bool:
    """Whether the form ``value`` is a number (``5``, ``0.2``)."""
    return value.replace(".", "", 1).isdecimal()


def _minutes(
    text: str, tokens: Sequence[tuple[int, int, str]], k: int, *, joined: bool = False
) -> bool:
    """Whether token ``k`` is the minutes of the hour before it (``30`` of ``5:30``; with
    ``joined``, the ``30pm`` of ``7.30pm``)."""
    start, _, word = tokens[k]
    hour = tokens[k - 1]
    if joined:
        if not (len(word) == 4 and word[2:] in _CLOCK):
            return False
        word = word[:2]
    return (
        len(word) == 2
        and word.isdecimal()
        and hour[2].isdecimal()
        and hour[1] == start - 1
        and text[start - 1] in ":."
    )


DAY_PARTS = {"morning": "am", "afternoon": "pm", "evening": "pm"}
"""A part of the day after an hour ("7 in the morning"), as the half it marks."""


def _day_parts(tokens: Sequence[tuple[int, int, str]]) -> dict[int, str]:
    """Token index -> ``"am"``/``"pm"`` for an hour followed by "in the" and a
    :data:`DAY_PARTS` word, and -> ``""`` for that word (the clock time absorbs it)."""
    out: dict[int, str] = {}
    for k in range(len(tokens) - 3):
        hour, (_, _, a), (_, _, b), (_, _, part) = tokens[k][2], *tokens[k + 1 : k + 4]
        if hour.isdecimal() and int(hour) <= 12 and (a, b) == ("in", "the") and part in DAY_PARTS:
            out[k], out[k + 3] = DAY_PARTS[part], ""
    return out


_JOINED_CLOCK = re.compile(r"(1[0-2]|0?[1-9])(am|pm)")
CLOCK_WORDS = {"noon": "12", "midday": "12", "midnight": "0"}
"""Times of day written as a word, as the hour's form (``noon`` is ``12:00``)."""


def _hour(hour: int, half: str) -> str:
    """The 24-hour form of ``hour`` ``am``/``pm``: ``5 pm`` is ``17``, ``12 am`` ``0``."""
    if half == "pm":
        return str(hour + 12) if hour < 12 else "12"
    return "0" if hour == 12 else str(hour)


def _clock_mark(text: str, tokens: Sequence[tuple[int, int, str]], k: int) -> str:
    """``"am"``/``"pm"`` when token ``k`` marks the half of the day (``pm``, or the ``p``
    of ``p.m.``), ``"absorbed"`` for the ``m`` of ``p.m.``, else ``""``."""
    start, end, word = tokens[k]
    if word in _CLOCK:
        return word
    if word in ("a", "p") and text[end : end + 2].lower() == ".m" and k + 1 < len(tokens):
        return word + "m"
    if word == "m" and k and tokens[k - 1][2] in ("a", "p") and text[start - 1] == ".":
        return "absorbed" if text[start - 2 : start - 1].lower() in ("a", "p") else ""
    return ""


def form_set(texts: Iterable[str]) -> frozenset[str]:
    """Every word form of ``texts``."""
    return frozenset(f for text in texts for _, _, _, f in forms(text) if f)


class ContextWords(frozenset[str]):
    """A context's words (:func:`~camab_rag.groundedness.score.words`, as a frozenset)
    with their normalised forms (:attr:`forms`), per clause the forms it states
    (:attr:`sentences`; a sentence that opens with a pronoun also holds the previous
    sentence's, its subject), the forms of the question asked (:attr:`asked`: the
    subject of a short answer such as "It costs 590 euros."; never counted as held), and
    the amounts of each context sentence and of the question (:attr:`quantities`,
    :attr:`asked_values`: operands of :func:`derived_values`), for :func:`misread_spans`
    and the claim-level check."""

    forms: frozenset[str]
    sentences: tuple[Sentence, ...]
    asked: frozenset[str]
    quantities: tuple[tuple[Quantity, ...], ...]
    asked_values: tuple[Quantity, ...]

    def __new__(
        cls,
        words: Iterable[str] = (),
        forms: Iterable[str] = (),
        sentences: Iterable[Sentence] = (),
        asked: Iterable[str] = (),
        quantities: Iterable[tuple[Quantity, ...]] = (),
        asked_values: Iterable[Quantity] = (),
    ) -> ContextWords:
        made = super().__new__(cls, words)
        made.forms = frozenset(forms) | frozenset(form(w) for w in made)
        made.sentences = tuple(sentences)
        made.asked = frozenset(asked)
        made.quantities = tuple(quantities)
        made.asked_values = tuple(asked_values)
        return made

    @classmethod
    def of(cls, texts: Sequence[str], question: str = "") -> ContextWords:
        """The context words of ``texts`` (documents, a system prompt; a span of clock
        times also states :data:`HOURS_FORMS`; "the next working day" the day after the
        question's weekday, :func:`next_days`), and the subject forms and amounts of
        ``question`` (:func:`subject_forms`, :func:`quantities`)."""
        sentences = [s for doc, text in enumerate(texts) for s in sentences_of(text, doc)]
        return cls(
            (w for text in texts for w in words(text)),
            form_set(texts)
            | frozenset(f for s in sentences for f in s.own & _SPAN_FORMS)
            | frozenset(f for text in texts for f in _also(text))
            | next_days(texts, question),
            sentences,
            subject_forms(question),
            (
                tuple(q for _, q in quantities(text[a:b]))
                for text in texts
                for a, b in split_sentences(text)
            ),
            (q for _, q in quantities(question)),
        )

    def __or__(self, other: Collection[str]) -> ContextWords:  # type: ignore[override]
        if isinstance(other, ContextWords):
            shift = 1 + max((s.doc for s in self.sentences), default=-1)
            return ContextWords(
                frozenset(self) | other,
                self.forms | other.forms,
                self.sentences + tuple(replace(s, doc=s.doc + shift) for s in other.sentences),
                self.asked | other.asked,
                self.quantities + other.quantities,
                self.asked_values + other.asked_values,
            )
        return ContextWords(
            frozenset(self) | frozenset(other),
            self.forms,
            self.sentences,
            self.asked,
            self.quantities,
            self.asked_values,
        )

    def __reduce__(self):  # type: ignore[no-untyped-def]
        fields = (self.forms, self.sentences, self.asked, self.quantities, self.asked_values)
        return (ContextWords, (frozenset(self), *fields))


@dataclass(frozen=True)
class Sentence:
    """One context clause's forms (its own and its subject's), whether it negates, and
    the forms it states itself (:attr:`own`: not those it borrows from the clauses or the
    sentence before it)."""

    forms: frozenset[str]
    negated: bool
    own: frozenset[str] = frozenset()
    doc: int = 0
    """Which text of :meth:`ContextWords.of` it comes from (rival values need two)."""
    derived: frozenset[str] = frozenset()
    """Forms it states only in another writing (:func:`_also`: "5" of "17:00", "2" of
    "14 days"): they hold an answer's value but are no rival value of their own."""
    spanned: frozenset[str] = frozenset()
    """Forms it states only by a span of clock times (:func:`_hours`: "open" of a van's
    stop "from 13:00 to 14:00"): they do not make it as close to an answer's subject as a
    clause that says them (:func:`rival_spans`)."""


def _negated(words: Sequence[str], text: str) -> bool:
    return any(w in NEGATIONS for w in words) or bool(re.search(r"n['’]t\b", text, re.I))


_CLAUSE = re.compile(
    r"\s*;\s*|,?\s+and\s+(?=(?:on|in|at|from|for|during)\b)"
    r"|,\s+(?:and|but|while|whereas)\s+(?=(?:a|an|the|each|every|its|their|our)\b)",
    re.IGNORECASE,
)
"""Where a context sentence starts a new clause: ``;``, ``and`` before a preposition
(``open Monday to Friday from 9:00 to 18:00 and on Saturday from 10:00 to 16:00``), or
``, and`` (``but``, ``while``) before a new subject (``A wheel truing costs 20 euros, and a
full overhaul costs 120 euros``)."""


def clauses(text: str) -> list[str]:
    """``text`` (one sentence) split into clauses at :data:`_CLAUSE`; each later clause is
    read with the words of the clauses before it (its subject), so the values of one clause
    are held only by it: ``on Saturday from 10:00 to 16:00`` states 10:00-16:00 for Saturday,
    not 9:00-18:00."""
    return [part for part in _CLAUSE.split(text) if part.strip()]


def subject_forms(text: str) -> frozenset[str]:
    """The forms of ``text``'s content words (not stop words, numbers or units): what a
    question asks about (``How much is the City bike?`` -> ``city``, ``bike``)."""
    return frozenset(
        f for _, _, w, f in forms(text) if f and w not in STOPWORDS and not _is_value(f)
    )


def _is_value(value: str) -> bool:
    return is_number(value) or value in UNITS.values()


def _states(clause: Sentence, value: str) -> bool:
    """Whether ``clause`` states ``value`` (holds it, and does not itself state its
    opposite: "It is closed on Sunday" borrows ``open`` from the sentence before it)."""
    return value in clause.forms and OPPOSITES.get(value, "") not in clause.own


def _overlaps(subject: frozenset[str], context: ContextWords) -> list[Overlap]:
    """Per context clause: how many of ``subject``'s weekdays and months it states itself
    (a day the answer names picks its clause first: "closed on Tuesday" is read against
    "open Tuesday to Saturday", not "The shop is closed on Monday"), how many forms of
    ``subject`` it holds, how many it states itself (not borrowed from the sentence
    before), then how many of the question's subject (:attr:`ContextWords.asked`): the
    later figures break ties between clauses the answer's own words match alike ("It costs
    590 euros." over two prices)."""
    days = subject & CALENDAR
    return [
        (
            len(days & c.own),
            len(subject & c.forms),
            len(subject & c.own),
            len(context.asked & c.forms),
        )
        for c in context.sentences
    ]


Overlap = tuple[int, int, int, int]
"""(days stated, subject held, subject stated, question held): :func:`_overlaps`."""
_NONE: Overlap = (0, 0, 0, 0)


def _closest(
    subject: frozenset[str], context: ContextWords
) -> tuple[list[Overlap], Overlap, list[Sentence]]:
    """:func:`_overlaps` of ``subject``, the best of them, and the clauses that have it
    (the clauses closest to ``subject``)."""
    overlap = _overlaps(subject, context)
    best = max(overlap, default=_NONE)
    return overlap, best, [c for c, n in zip(context.sentences, overlap) if n == best]


def _opposed(value: str, subject: frozenset[str], context: ContextWords) -> bool:
    """Whether the clauses closest to ``subject`` (most forms shared, ``value`` and its
    opposite aside; then the question's) state ``value``'s opposite and none states
    ``value``."""
    opposite = OPPOSITES[value]
    _, best, closest = _closest(subject - {value, opposite}, context)
    if best[1] == best[3] == 0:
        return False
    return any(_states(c, opposite) for c in closest) and not any(
        _states(c, value) for c in closest
    )


def _restated(
    found: Sequence[tuple[int, int, str, str]],
    k: int,
    closest: Sequence[Sentence],
    content: Collection[str],
) -> bool:
    """Whether a clause about the subject (``closest``) states another number next to
    the same words as the answer's number ``found[k]`` (one the context never states):
    "31 Quay Street" under "27 Quay Street" is a misread value, not a new detail."""
    near = [
        f
        for _, _, w, f in (*found[k - 1 : k], *found[k + 1 : k + 2])
        if f and w not in STOPWORDS and not is_number(f)
    ]
    return any(
        any(n in c.own for n in near) and any(is_number(f) and f not in content for f in c.own)
        for c in closest
    )


_TIME = (
    r"(?:\d{1,2}(?::\d{2}(?:\s*[ap]\.?m\b\.?)?|(?:\.\d{2})?\s*[ap]\.?m\b\.?)"
    r"|noon|midday|midnight)"
)
_RANGE = re.compile(
    rf"(?<![\w:.]){_TIME}\s*(?:-|–|—|to|until|till)\s*{_TIME}|\b(?:until|till)\s+{_TIME}"
    r"|\b(?:from|between)\s+" + _TIME,
    re.IGNORECASE,
)
HOURS_FORMS = frozenset(
    {"open", "opening", "close", "closing", "until", "start", "starting", "end", "ending"}
)
"""What a clause that states a span of clock times ("from 10:00 to 17:00", "9am-5pm",
"until 18:30") states with it: when something opens and closes. Opening hours are one
relation however they are worded: "It closes at 5 pm" restates "open ... from 10:00 to
17:00", as "breakfast ends at 9:30" restates "served between 06:30 and 09:30"
(:func:`sentences_of` adds these forms to such a clause)."""


_AFTERNOON = re.compile(r"(?<![\w:.])(1[3-9]|2[0-3])[:.][0-5]\d(?![\w:.])")


FIRST_ORDINALS = {"first": "1", "second": "2"}
"""``first`` and ``second`` as the numbers a context states with them ("first floor" is
the ``1`` of an answer's "1st floor"); only in the context (:func:`_also`): as answer
words they stay words (an adverb, a unit of time)."""


def _also(text: str) -> frozenset[str]:
    """What ``text`` (a context clause) states besides its own forms: its afternoon hours
    on the 12-hour clock (:func:`_afternoon`), the numbers of ``first``/``second`` and its
    durations in another unit (:func:`_durations`)."""
    ordinals = frozenset(FIRST_ORDINALS[w] for w in words(text) if w in FIRST_ORDINALS)
    return _afternoon(text) | ordinals | _durations(text)


def _afternoon(clause: str) -> frozenset[str]:
    """The hours of ``clause``'s afternoon clock times on the 12-hour clock: "17:00"
    also states ``5``, as "closes at 5" or "9 to 5" read it (no am/pm written)."""
    return frozenset(str(int(m.group(1)) - 12) for m in _AFTERNOON.finditer(clause))


def _hours(clause: str) -> frozenset[str]:
    """:data:`HOURS_FORMS` when ``clause`` states a span of clock times, else none."""
    return HOURS_FORMS if _RANGE.search(clause) else frozenset()


_DAY = r"(mon|tue|wed|thu|fri|sat|sun)(?:day|nesday|sday|rsday|urday|s|rs|urs)?s?\b\.?"
_DAY_RANGE = re.compile(rf"\b{_DAY}\s*(?:-|–|—|to|through|thru|until|till)\s*{_DAY}", re.I)


_SPAN_FORMS = HOURS_FORMS | frozenset(WEEKDAYS) | frozenset({"weekday", "weekend"})
"""What a span of clock times or weekdays adds to a clause (:func:`_hours`, :func:`_days`)."""


def _days(clause: str) -> frozenset[str]:
    """The weekdays a range of ``clause`` spans ("Tuesday to Saturday", "Mon-Fri"), both
    ends included: "open on Wednesday" restates "open Tuesday to Saturday"; with the
    :data:`DAY_GROUPS` the clause names or spans."""
    out: set[str] = set()
    for match in _DAY_RANGE.finditer(clause):
        first, last = (
            next(i for i, d in enumerate(WEEKDAYS) if d.startswith(g.lower()))
            for g in match.groups()
        )
        out.update(WEEKDAYS[(first + i) % 7] for i in range((last - first) % 7 + 1))
    named = {form(w) for w in words(clause)}
    for group, days in DAY_GROUPS.items():
        if group in named:  # "on weekdays" states Monday to Friday
            out.update(days)
        if days <= out:  # "Monday to Friday" states "weekdays"
            out.add(group)
    return frozenset(out)


DAY_GROUPS = {"weekday": frozenset(WEEKDAYS[:5]), "weekend": frozenset(WEEKDAYS[5:])}
"""The weekdays a word for several days names: a clause with one states them, and a
clause that spans them states the word ("open Monday to Friday" is "open on weekdays")."""


EXCEPTIONS = frozenset({"except", "exception", "unless", "only", "apart", "besides"})
"""Words after which a negated clause states both values (``not permitted ... with the
exception of assistance dogs``): :func:`_stated` keeps the word beside its opposite."""


def _stated(part: str) -> list[str]:
    """The forms ``part`` (one clause) states, a negated :data:`OPPOSITES` word as its
    opposite: "same-day appointments are not available" states ``unavailable``, so an
    answer that calls them available misreads it (not in a clause with an exception)."""
    found = forms(part)
    out = [f for _, _, _, f in found if f]
    both = bool(EXCEPTIONS.intersection(w for _, _, w, _ in found))
    for k, (_, _, _, value) in enumerate(found):
        before = found[max(k - 3, 0) : k]
        if value in OPPOSITES and any(
            w in NEGATIONS or (w == "t" and s > 0 and part[s - 1] in "'’") for s, _, w, _ in before
        ):
            flipped = [OPPOSITES[value] if f == value else f for f in out]
            out = [*out, OPPOSITES[value]] if both else flipped
    return out


def sentences_of(text: str, doc: int = 0) -> list[Sentence]:
    """``text``'s clauses (:func:`clauses` of each sentence) as :class:`Sentence`: a later
    clause holds the words (not the numbers) of the clauses before it, a pronoun-led
    sentence those (not the numbers) of the previous sentence."""
    out: list[Sentence] = []
    previous: frozenset[str] = frozenset()
    for start, end in split_sentences(text):
        sentence = text[start:end]
        found = forms(sentence)
        own = frozenset(f for _, _, _, f in found if f)
        first = found[0][2] if found else ""
        head = previous if first in _PRONOUNS else frozenset()
        negated = _negated([w for _, _, w, _ in found], sentence)
        for part in clauses(sentence):
            said = frozenset(_stated(part)) | _days(part)
            held = said | _hours(part)
            derived = _also(part) - held
            out.append(Sentence(held | head | derived, negated, held, doc, derived, held - said))
            head |= frozenset(f for f in held if not is_number(f))
        previous = frozenset(f for f in own if not is_number(f))
    return out


def misread_spans(
    text: str, context: Collection[str], stopwords: Collection[str]
) -> list[tuple[int, int]]:
    """Character spans of ``text`` (one answer sentence, or several) that state what the
    context does not, although each word is in it: a number the context gives only for
    another subject (the context sentence that shares most of the sentence's other content
    words states another number and not this one), and a negation (``not``, ``no
    longer``, ``never``, ``n't``) when no context sentence that shares most of its content
    words negates. Empty when ``context`` is not a :class:`ContextWords` (no sentences
    known)."""
    if not isinstance(context, ContextWords) or not context.sentences:
        return []
    spans: list[tuple[int, int]] = []
    for s_start, s_end in split_sentences(text) or [(0, len(text))]:
        part = text[s_start:s_end]
        found = forms(part)
        content = {f for _, _, w, f in found if f and w not in stopwords}
        subject = frozenset(f for f in content if not _is_value(f))
        words = [w for _, _, w, _ in found]
        # "No, ..." or a bare "No": a reply, not a negation
        reply = _REPLY.match(part) is not None or words in (["no"], ["yes"])
        negators = [
            k
            for k, (start, _, word, value) in enumerate(found)
            if (
                (word in NEGATIONS and value != "free" and not (reply and k == 0))
                or (word == "t" and k and part[start - 1] in "'’")
            )
            and words[k + 1 : k + 2] != ["necessarily"]  # a hedge, not a negation
        ]
        flips = {  # "does not open" states "closed": the negation is read with the word
            j: k
            for k, (_, _, _, value) in enumerate(found)
            if value in OPPOSITES
            for j in negators
            if k - 3 <= j < k
        }
        spans += [
            (s_start + start, s_start + end)
            for k, (start, end, _, value) in enumerate(found)
            if value in OPPOSITES
            and _opposed(
                OPPOSITES[value] if k in flips.values() else value,
                _clause_of(part, start, stopwords),
                context,
            )
        ]
        if s_start == 0 and words[:1] in (["yes"], ["no"]):  # a reply to the question
            asked = [v for v in context.asked if v in OPPOSITES]
            claimed = [OPPOSITES[v] for v in asked] if words[0] == "no" else asked
            if any(_opposed(v, subject, context) for v in claimed):
                spans.append((found[0][0], found[0][1]))
        overlap, best, closest = _closest(subject, context)
        if best[1] == 0:
            continue
        sentence_closest = (overlap, best, closest)
        worked = derived_values(part, context)
        for k, (start, end, _, value) in enumerate(found):
            if not is_number(value) or value in worked:
                continue
            overlap, best, closest = _number_closest(part, start, sentence_closest, context)
            if value not in context.forms:  # a number the context never states
                if _restated(found, k, closest, content):
                    spans.append((s_start + start, s_start + end))
                continue
            held = max(
                (n for s, n in zip(context.sentences, overlap) if value in s.forms),
                default=_NONE,
            )
            rival = any(  # another number of the same kind ("16" is no rival of "2026")
                any(
                    is_number(f) and f not in content | s.derived and _year(f) == _year(value)
                    for f in s.forms
                )
                and value not in s.forms
                for s in closest
            )
            if held < best and rival and not _disputed(value, held, best, overlap, context):
                spans.append((s_start + start, s_start + end))
        overlap, best, closest = sentence_closest
        if (  # "Yes, lanes can be booked on Sundays." where the clause says "not permitted"
            s_start == 0
            and words[:1] == ["yes"]
            and not negators
            and len(subject & _shared(closest)) >= 2
            and all(c.negated for c in closest)
            and not any(s_start <= a < s_end for a, _ in spans)  # an opposite says it
        ):
            spans.append((found[0][0], found[0][1]))
        # a negation read with the opposite word after it was checked above
        spans += [
            (
                s_start + (found[k - 1][0] if found[k][2] == "t" else found[k][0]),
                s_start + found[k][1],
            )
            for k in negators
            if k not in flips
            and not any(
                s.negated for s in _clause_closest(part, found[k][0], closest, context, stopwords)
            )
        ]
    return spans


def rival_spans(
    text: str, context: Collection[str], stopwords: Collection[str]
) -> list[tuple[int, int]]:
    """Character spans of ``text``'s numbers that one source states while another, as
    close to the sentence's subject, states another number for it and not this one: the
    sources disagree (a stale price page beside the current one), so the answer cannot be
    called supported whichever value it took. A rival clause must match the question's
    subject as well as the clause holding the answer's value (the van's Wednesday stop is
    no rival of the library's hours). Each span is the number as written ("09:00").
    Empty without :class:`ContextWords` clauses, or when the clauses closest to a sentence
    come from one text."""
    if not isinstance(context, ContextWords) or not context.sentences:
        return []
    spans: list[tuple[int, int]] = []
    for s_start, s_end in split_sentences(text) or [(0, len(text))]:
        found = forms(text[s_start:s_end])
        content = {f for _, _, w, f in found if f and w not in stopwords}
        subject = frozenset(f for f in content if not _is_value(f))
        overlap, best, _ = _closest(subject, context)
        if best[1] == 0:
            continue
        said = {  # a clause that says the subject's words is closer than a span of times
            id(c): len(subject & (c.own - c.spanned)) for c in _near(best, overlap, context)
        }
        near = [c for c in _near(best, overlap, context) if said[id(c)] == max(said.values())]
        for start, end, _, value in found:
            holders = {c.doc for c in near if value in c.forms}
            if not is_number(value) or not holders:
                continue
            asked = max(_asked_by(context, d) for d in holders)
            if any(
                c.doc not in holders
                and _asked_by(context, c.doc) >= asked  # a page of the question's subject
                and value not in c.forms
                and any(is_number(f) and f not in content for f in c.own)
                for c in near
            ):
                spans.append(_written(text, s_start + start, s_start + end))
    return spans


def _written(text: str, start: int, end: int) -> tuple[int, int]:
    """The span ``start:end`` of ``text`` widened to the whole number as written ("09:00",
    not its hour "09"; "1,500"), so that a report names the word the answer wrote."""
    while start > 1 and text[start - 1] in ".,:" and text[start - 2].isdigit():
        start -= 2
        while start > 0 and text[start - 1].isdigit():
            start -= 1
    while end + 1 < len(text) and text[end] in ".,:" and text[end + 1].isdigit():
        end += 2
        while end < len(text) and text[end].isdigit():
            end += 1
    return start, end


def _near(best: Overlap, overlap: Sequence[Overlap], context: ContextWords) -> list[Sentence]:
    """The clauses as close as ``best`` by the answer's own words (the question's words
    aside): two sources that state a subject alike are equally its sources."""
    return [c for c, n in zip(context.sentences, overlap) if n[:3] == best[:3]]


def _disputed(
    value: str, held: Overlap, best: Overlap, overlap: Sequence[Overlap], context: ContextWords
) -> bool:
    """Whether ``value``, held only below ``best``, is held by a clause as close by the
    answer's own words in another text that matches the question as well as the closest
    clause's text does: two sources disagree on one subject (:func:`rival_spans`), the
    answer did not take another subject's value ("the Trail bike's price" for the City
    bike's: only the City bike's page holds "city")."""
    if held[:3] != best[:3]:
        return False
    near = _near(best, overlap, context)
    closest = {c.doc for c, n in zip(context.sentences, overlap) if n == best}
    holders = {c.doc for c in near if value in c.forms} - closest
    matched = {_asked_by(context, d) for d in closest}
    return any(_asked_by(context, d) in matched for d in holders)


def _asked_by(context: ContextWords, doc: int) -> int:
    """How many of the question's subject forms text ``doc`` of ``context`` holds."""
    held = frozenset().union(*(c.forms for c in context.sentences if c.doc == doc))
    return len(context.asked & held)


def _clause_of(part: str, at: int, stopwords: Collection[str]) -> frozenset[str]:
    """The content forms, values included, of the clause of ``part`` (one answer
    sentence) that holds character ``at``: "open from 8 until 5" after "; " is read with
    its own hours, not with the "Monday" of the clause before it."""
    start, end = _clause_span(part, at)
    return frozenset(f for _, _, w, f in forms(part[start:end]) if f and w not in stopwords)


_ANSWER_CLAUSE = re.compile(
    _CLAUSE.pattern + r"|,\s+(?:but|and|so|while|whereas|plus)\s+", re.IGNORECASE
)
"""Where an answer sentence starts a new clause: as a context sentence (:data:`_CLAUSE`),
and at ``, but`` (``, and``, ``, so``, ``, plus``) before any words: "No, cars are not carried, but
you can bring a bicycle" reads its "not" with the cars, not the bicycle."""


def _clause_span(part: str, at: int) -> tuple[int, int]:
    """Where the clause (:data:`_ANSWER_CLAUSE`) of ``part`` that holds character ``at``
    starts and ends."""
    start, end = 0, len(part)
    for cut in _ANSWER_CLAUSE.finditer(part):
        if cut.end() <= at:
            start = cut.end()
        elif cut.start() >= at:
            end = cut.start()
            break
    return start, end


def _number_closest(
    part: str,
    at: int,
    sentence: tuple[list[Overlap], Overlap, list[Sentence]],
    context: ContextWords,
) -> tuple[list[Overlap], Overlap, list[Sentence]]:
    """:func:`_closest` for the number at character ``at`` of ``part`` (one answer
    sentence): by the content words of its own clause (:data:`_ANSWER_CLAUSE`) when the
    sentence has several and the clause's words are in the context ("It comes with a
    drawer, while printing is extra at 10 cents a page": the printing price is read
    against the printing clause), else ``sentence`` (the whole sentence's)."""
    start, end = _listed_span(part, at, *_clause_span(part, at))
    if (start, end) == (0, len(part)):
        return sentence
    own = frozenset(
        f for _, _, w, f in forms(part[start:end]) if f and w not in STOPWORDS and not _is_value(f)
    )
    found = _closest(own, context)
    return found if found[1][1] else sentence


_AND = re.compile(r"\s+and\s+", re.IGNORECASE)


def _listed_span(part: str, at: int, start: int, end: int) -> tuple[int, int]:
    """The part of ``part[start:end]`` holding character ``at`` between two "and"s that
    each have a number on both sides: "a swim for 6.50 euros and a child ticket for 3.20
    euros" reads 3.20 with "a child ticket"."""
    for cut in _AND.finditer(part, start, end):
        before, after = part[start : cut.start()], part[cut.end() : end]
        if not (any(c.isdigit() for c in before) and any(c.isdigit() for c in after)):
            continue
        if cut.end() <= at:
            start = cut.end()
        elif cut.start() >= at:
            return start, cut.start()
    return start, end


def _clause_closest(
    part: str,
    at: int,
    closest: list[Sentence],
    context: ContextWords,
    stopwords: Collection[str],
) -> list[Sentence]:
    """The context clauses closest to the answer clause of ``part`` (one sentence) that
    holds character ``at`` (its own content words; "...; don't wait for a booking" is read
    against "Do not wait for an appointment"), else ``closest`` (the sentence's)."""
    start, end = _clause_span(part, at)
    if (start, end) == (0, len(part)):
        return closest
    own = frozenset(
        f for _, _, w, f in forms(part[start:end]) if f and w not in stopwords and not _is_value(f)
    )
    _, best, nearest = _closest(own, context)
    return nearest if best[1] else closest


@dataclass(frozen=True)
class Quantity:
    """A number as :func:`quantities` reads it: its form, its unit (the sign before it or
    the word after it: ``eur`` of "25 euros", ``hour`` of "4 free hours") and, for a rate,
    what it is per (``hour`` of "25 euros per hour" or "an hour"; ``*`` for "3 euros
    each")."""

    value: str
    unit: str = ""
    per: str = ""


TIME_UNITS = frozenset({"hour", "day", "week", "month", "year", "night", "min"})
UNIT_FORMS = frozenset(UNITS.values()) | TIME_UNITS
"""The forms read as a number's unit before any other word after it ("4 free hours")."""
RATE_WORDS = frozenset({"per", "an", "a", "every", "each"})
"""Words after an amount's unit that make it a rate of the word after them."""


def quantities(text: str) -> list[tuple[int, Quantity]]:
    """``(start, quantity)`` for each number of ``text``, with its unit and rate
    (:class:`Quantity`)."""
    found = [(s, e, w, f) for s, e, w, f in forms(text) if f]
    out = []
    for k, (start, _, _, value) in enumerate(found):
        if not is_number(value):
            continue
        after = found[k + 1 : k + 3]
        at = next((j for j, item in enumerate(after) if item[3] in UNIT_FORMS), None)
        if k and found[k - 1][3] in _SIGNS and not text[found[k - 1][1] : start].strip():
            unit, at = found[k - 1][3], -1  # "€25": the rate words follow the number
        elif at is not None:
            unit = after[at][3]
        else:
            at = next((j for j, item in enumerate(after[:1]) if item[2] not in STOPWORDS), None)
            unit = "" if at is None or is_number(after[at][3]) else after[at][3]
        rest = found[k + 2 + (at or 0) :] if at is not None else found[k + 1 :]
        per = (
            _per(text, rest)
            or next(  # "the hourly rate is 35 euros"
                (f for _, _, w, f in found[max(k - 8, 0) : k] if w in PERIODS and unit in _SIGNS),
                "",
            )
        )
        out.append((start, Quantity(value, unit, per)))
    return out


def _per(text: str, rest: Sequence[tuple[int, int, str, str]]) -> str:
    """What an amount followed by ``rest`` (its words after the unit) is a rate of (an
    amount of money is also one of a period word at most eight words before it: "the
    hourly rate is 35 euros")."""
    if not rest:
        return ""
    _, end, word, value = rest[0]
    if value in PERIODS.values() and word in PERIODS:  # "25 euros hourly"
        return value
    if word not in RATE_WORDS:
        return ""
    joined = len(rest) > 1 and not text[end : rest[1][0]].strip()
    if joined and not is_number(rest[1][3]):
        return rest[1][3]
    return "*" if word == "each" else ""


def _worked(result: Quantity, stated: Quantity, other: Quantity, *, sums: bool = True) -> bool:
    """Whether ``result`` is ``stated`` (a context amount) times ``other`` (a rate times
    what it is per: "25 euros per hour" for "2 hours" is 50 euros, a total), or (with
    ``sums``) their sum or difference, all three in one named unit and rate."""
    if not result.unit:
        return False
    r, a, b = (Decimal(q.value) for q in (result, stated, other))
    if stated.per and _same_unit(stated.unit, result.unit) and stated.per in ("*", other.unit):
        return not result.per and a * b == r  # a total, not another rate
    alike = _same_unit(stated.unit, result.unit) and _same_unit(other.unit, result.unit)
    alike = alike and stated.per == other.per == result.per  # no rate plus a total
    return sums and alike and r in (a + b, abs(a - b))


_MONEY = frozenset({"eur", "usd", "gbp"})


def _same_unit(one: str, other: str) -> bool:
    """Whether two units are one: alike, or cents and a currency (":func:`forms` reads
    "50 cents" as 0.5 of it)."""
    return one == other or ("cent" in (one, other) and {one, other} - {"cent"} <= _MONEY)


LESS_WORDS = frozenset(
    "before earlier under below less fewer within lower shorter cheaper until".split()  # noqa: SIM905
)
MORE_WORDS = frozenset(
    "after past later over above more exceeds exceed beyond higher longer greater".split()  # noqa: SIM905
)
"""Words comparing the number before them with one after them ("1 pm is before the
14:00 cut-off"): :func:`derived_values` checks the comparison."""


def _compared(found: Sequence[tuple[int, int, str, str]], k: int, context: ContextWords) -> bool:
    """Whether the number ``found[k]`` is compared (a :data:`LESS_WORDS` or
    :data:`MORE_WORDS` word at most three words on) with a number the context states
    (at most five words after that), and the comparison is true."""
    valued = [item for item in found[k + 1 :] if item[3]]
    for j, (_, _, word, _) in enumerate(valued[:3]):
        if word not in LESS_WORDS | MORE_WORDS:
            continue
        number = next((f for _, _, _, f in valued[j + 1 : j + 6] if is_number(f)), None)
        if number is None or number not in context.forms:
            return False
        mine, theirs = Decimal(found[k][3]), Decimal(number)
        return mine < theirs if word in LESS_WORDS else mine > theirs
    return False


def derived_values(text: str, context: Collection[str]) -> frozenset[str]:
    """The number forms of ``text`` the context does not state that simple arithmetic
    on stated amounts gives, and the question's numbers the answer works with. Why: a
    right answer shows its work ("50 euros, since it's 25 euros an hour" for two hours;
    "since 1 pm is before the 14:00 cut-off"), an invented one does not. How, per answer
    sentence: a number is a context rate times what it is per (an amount of the
    question, of the same answer sentence or of the same context sentence), or a context
    amount plus or minus one of the question in the same named unit (:func:`_worked`;
    not two context amounts, nor one the answer states: "three years" is five minus two,
    an invented twin); a question's number restated in the answer counts when it is
    such an operand or compared, truly, with a number the context states
    (:func:`_compared`). Only pairs, no chains; a value is held only when each place the
    answer states it is ("50 euros, since it's 50 euros an hour" restates no rate)."""
    if not isinstance(context, ContextWords) or not context.quantities:
        return frozenset()
    asked = {q.value for q in context.asked_values}
    held: set[int] = set()  # where a number the context lacks is derived or worked with
    lacked: dict[str, list[int]] = {}  # where each number the context lacks stands
    units: dict[str, set[str]] = {}
    for a, b in split_sentences(text) or [(0, len(text))]:
        own = {a + s: q for s, q in quantities(text[a:b])}
        found = forms(text[a:b])
        for start, result in own.items():
            if result.value in context.forms:
                continue
            lacked.setdefault(result.value, []).append(start)
            for sentence in context.quantities:
                for stated in sentence:
                    near = [q for q in sentence if q is not stated]
                    used = [
                        s
                        for s, q in own.items()
                        if s != start and _worked(result, stated, q, sums=False)
                    ]
                    if (
                        used
                        or any(_worked(result, stated, q) for q in context.asked_values)
                        or any(_worked(result, stated, q, sums=False) for q in near)
                    ):
                        held.add(start)
                        units.setdefault(result.value, set()).add(result.unit)
                    held.update(s for s in used if own[s].value in asked)
            k = next(n for n, item in enumerate(found) if item[0] == start - a)
            if result.value in asked and _compared(found, k, context):
                held.add(start)
    values = {v for v, starts in lacked.items() if all(s in held for s in starts)}
    return frozenset(values).union(*(units.get(v, set()) for v in values))


NEXT_DAY = re.compile(r"\b(?:next|following)\s+(working\s+|business\s+)?day\b", re.IGNORECASE)
"""A context's "the next (working) day": :func:`next_days`."""


def next_days(texts: Iterable[str], question: str) -> frozenset[str]:
    """The weekday after each weekday ``question`` names when a text says "the next day"
    ("the next working day": Saturday and Sunday skipped): "processed on the next
    working day" holds "Tuesday" for a transfer sent on a Monday."""
    days = [WEEKDAYS.index(f) for _, _, _, f in forms(question) if f in WEEKDAYS]
    out: set[str] = set()
    for text in texts:
        for match in NEXT_DAY.finditer(text):
            for day in days:
                after = (day + 1) % 7
                while match.group(1) and after >= 5:
                    after = (after + 1) % 7
                out.add(WEEKDAYS[after])
    return frozenset(out)
