"""Word forms the gate compares (``€29`` and ``29 euros`` share ``eur``, ``29``; ``4 pm``
is ``16``) and what an answer states that its context does not (:func:`misread_spans`,
:func:`rival_spans`): a reworded right answer keeps its coverage, a value copied from the
wrong place does not. Rules over words: no model, no dependency."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import lru_cache
from itertools import chain, combinations, pairwise, product
from typing import Any

from camab_rag.sentences import split_sentences

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def words(text: str) -> list[str]:
    """The lower-cased words (runs of letters or digits) of ``text``."""
    return [w.lower() for w in _WORD.findall(text)]


def _table(spec: str) -> dict[str, str]:
    """Each word of ``"form: word word; form: word"`` mapped to its form."""
    pairs = (part.split(":") for part in spec.split(";"))
    return {word: value.strip() for value, spelled in pairs for word in spelled.split()}


def _set(spec: str) -> frozenset[str]:
    return frozenset(spec.split())


def _numbered(spec: str, first: int = 0, step: int = 1) -> dict[str, str]:
    """Each word of ``spec`` mapped to its place (from ``first``) times ``step``, as digits."""
    return {w: str(step * i) for i, w in enumerate(spec.split(), first)}


_TOKEN = re.compile(r"[^\W_]+|[€$£%°]", re.UNICODE)
UNITS = _table(
    "eur: € euro euros eur; usd: $ dollar dollars usd; gbp: £ gbp; percent: % percent pct;"
    "chf: chf franc francs; cad: cad; aud: aud; nzd: nzd; sek: sek; nok: nok; dkk: dkk;"
    "m: metre metres meter meters; l: litre litres liter liters; min: minute minutes mins;"
    "km: kilometre kilometres kilometer kilometers; deg: ° degree degrees; g: gram grams;"
    "kg: kilogram kilograms kilo kilos; cm: centimetre centimetres centimeter centimeters"
)
ABBREVIATIONS = _table(
    "street: st; road: rd; avenue: ave; hour: hr hrs; allowed: permitted;"
    "forbidden: prohibited banned; child: children"
)
DEGREE_SCALES = {"c": "celsius", "f": "fahrenheit"}
PERIODS = _table("hour: hourly; day: daily; week: weekly; month: monthly; year: yearly annually")
SAME_FORM = _table("price: cost costs costing price prices priced sell sells selling sold")
"""Words of one relation: "sells it for 590 euros" says it "costs 590 euros"."""
NUMBER_WORDS = _numbered(
    """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty"""
) | _numbered("thirty forty fifty sixty seventy eighty ninety", 3, 10)
ORDINAL_WORDS = _numbered("third fourth fifth sixth seventh eighth ninth tenth", 3)
"""Ordinals as their number; ``first`` and ``second`` stay words (adverb, time unit)."""
STOPWORDS = _set(
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
    ll ve re yet"""
)
LIGHT_WORDS = _set(
    """may might must shall can could should would get gets got getting gotten go goes went
    gone going take takes took taken taking come comes came coming make makes made making let
    lets total totals together altogether combined overall along away"""
)
"""Modal and light verbs ("get in for nine euros"), their particles ("come along") and the
words of a sum ("in total"): no fact of their own, never checked."""
DERIVED_MIN = 5
"""The shortest form read as the stem of a longer word (``photo`` of ``photography``)."""


NEGATIONS = _set("not no never neither nor none nothing cannot")
CHARGE_WORDS = _set("cost costs charge charges fee fees")
"""After ``no`` ("at no cost", "no charge"): the pair states ``free``, not a negation."""
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
CALENDAR = frozenset(WEEKDAYS) | _set(
    "january february march april may june july august september october november december"
)
_MONEY = _set("eur usd gbp chf cad aud nzd sek nok dkk")
_SIGNS = _MONEY | {"percent"}
_SHORT = "mon tue tues wed thu thur thurs fri sat sun jan feb mar apr jun jul aug sep sept oct"
CALENDAR_SHORT = {
    short: next(name for name in sorted(CALENDAR) if name.startswith(short))
    for short in (*_SHORT.split(), "nov", "dec")
}
OPPOSITES = _table(
    "closed: open; unavailable: available; excluded: included; forbidden: allowed;"
    " disabled: enabled"
)
OPPOSITES.update({b: a for a, b in list(OPPOSITES.items())})
"""Opposite values of one subject: an answer's word (or Yes/No) the context opposes is misread."""
_PRONOUNS = _set("it its they their this these he she his her")
_SUBJECTLESS = re.compile(r"\W*(?:do\s+not|don['’]t|never)\b", re.IGNORECASE)
"""An instruction opening a sentence ("Do not take more than 8 tablets in 24 hours."): of
the subject of the sentence before it."""
CLOCK = _set("am pm")
_REPLY = re.compile(
    r"\s*(?:no|not\s+yet|(?:i['’]m\s+)?afraid\s+not|not\s+(?:on|at|in|for|before|after)\b"
    r"[^,.!;:]{0,30})\s*[,.!;:]",
    re.IGNORECASE,
)
"""A reply's lead ("No,", "Not yet.", "I'm afraid not:", "Not on Tuesdays:"): no claim."""
ONE_AS_PRONOUN_AFTER = _set(
    "the this that which each every no any another other first second third last next same only"
)
_ORDINAL = re.compile(r"\d{1,4}(?:st|nd|rd|th)")
HOUR_PARTS = {"half": "30", "quarter": "15"}
_CONDITION = re.compile(r"\b(?:if|unless)\b[^,;:]*$", re.IGNORECASE)
"""An open condition: a negation in "If you haven't got a helmet, ..." is no claim."""
_NEGATED = re.compile(r"n['’]t\b|\bnon-\w+[ai]ble\b", re.IGNORECASE)
"""A negation inside a word: "don't", and "non-refundable" (not "non-members": a kind)."""
DURATIONS = {
    "day": ("week", 7),
    "month": ("year", 12),
    "hour": ("day", 24),
    "min": ("hour", 60),  # the form of "minutes"
    "second": ("min", 60),
}
_UPWARD_ONLY = frozenset({"min", "second"})
"""Read up only ("300 seconds": 5 minutes), not down: "a 20-minute task" stating 1200
seconds made an invented "SEK 1,200" held."""
DAY_PARTS = {"morning": "am", "afternoon": "pm", "evening": "pm"}
CLOCK_WORDS = {"noon": "12", "midday": "12", "midnight": "0"}
_JOINED_CLOCK = re.compile(r"(1[0-2]|0?[1-9])(am|pm)")
HOURS_FORMS = _set("open opening close closing until start starting end ending")
"""What a clause with a span of clock times ("from 10:00 to 17:00") also states: opening hours."""
FIRST_ORDINALS = {"first": "1", "second": "2"}
DAY_GROUPS = {"weekday": frozenset(WEEKDAYS[:5]), "weekend": frozenset(WEEKDAYS[5:])}
_SPAN_FORMS = HOURS_FORMS | frozenset(WEEKDAYS) | frozenset(DAY_GROUPS)
_STATED_FORMS = _SPAN_FORMS | frozenset(OPPOSITES)
"""What a clause states beyond its words: spans, and an opposite ("except Mondays": closed)."""
EXCEPTIONS = _set("except exception unless only apart besides")
"""Words after which a negated clause states both values ("not ... except guide dogs")."""
_TIME_UNITS = _set("min hour day night week month year")
UNIT_FORMS = frozenset(UNITS.values()) | _TIME_UNITS
"""The forms read as a number's unit before any other word after it ("4 free hours")."""
RATE_WORDS = _set("per an a every each")
LESS_WORDS = _set("before earlier under below less fewer within lower shorter cheaper until")
MORE_WORDS = _set("after past later over above more exceeds exceed beyond higher longer greater")
"""Words comparing the number before them with one after them ("1 pm is before 14:00")."""
_ALONE = ABBREVIATIONS | SAME_FORM | PERIODS | UNITS | ORDINAL_WORDS | NUMBER_WORDS
"""Every word read alone to one form, the later tables first (``form``)."""
_Word = tuple[int, int, str, str]
"""``(start, end, word, form)``: one word as :func:`forms` reads it."""
_Tokens = Sequence[tuple[int, int, str]]
Spans = list[tuple[int, int]]


def holds(value: str, known: Collection[str]) -> bool:
    """Whether ``known`` holds ``value``, a longer word it starts (:data:`DERIVED_MIN`), or
    a short word's inflection ("book" of "booking", "need" of "needed")."""
    if value in known or not value.isalpha():
        return value in known
    if len(value) < DERIVED_MIN:
        return len(value) > 2 and any(
            value + end in known or value + value[-1] + end in known
            for end in ("ed", "ing", "er", "d")
        )
    return any(k.startswith(value) for k in known) or any(b in known for b in _bases(value))


def _bases(word: str) -> Iterator[str]:
    """The words ``word`` may inflect ("cancelling": "cancell", "cancel", "cancelle")."""
    for end in ("ing", "ed", "er"):
        base = word[: -len(end)]
        if word.endswith(end) and len(base) >= 3:
            yield from (base, base + "e")
            if base[-1] == base[-2]:
                yield base[:-1]


def is_fact(text: str, start: int, word: str, value: str) -> bool:
    """Whether the word at ``start`` (``word``, form ``value``) states a fact no rewording
    keeps: a number, an amount's sign, a month or weekday, a name (capitalised mid-sentence)."""
    if any(c.isdigit() for c in value) or value in _SIGNS:
        return True
    if word in NUMBER_WORDS or word in CALENDAR or value in CALENDAR:
        return True
    before = text[:start].rstrip()
    return text[start : start + 1].isupper() and bool(before) and before[-1] not in '.!?:;\n"“('


def stem(word: str) -> str:
    """A light plural rule (``boxes``, ``batteries``: ``box``, ``battery``); plurals only."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def form(word: str) -> str:
    """The normalised form of one lower-cased word, read alone (no clock rule)."""
    if word.isdecimal():
        return str(int(word)) if len(word) < 12 else word
    if _ORDINAL.fullmatch(word):  # "5th" is the 5 of "5 January"
        return str(int(word[:-2]))
    if word[-1:] == "s" and word[:-1].isdecimal() and len(word) < 12:  # "under-14s"
        return str(int(word[:-1]))
    if word[-1:] == "p" and word[:-1].isdecimal() and len(word) < 6:  # "15p" is £0.15
        return str((Decimal(word[:-1]) / 100).normalize())
    return _ALONE.get(word) or stem(word)


_ACRONYM = re.compile(r"[A-Z]{2,5}")


def forms(text: str) -> list[_Word]:
    """``(start, end, word, form)`` for each word (or currency or percent sign) of ``text``;
    ``form`` is ``""`` for a word a clock time or an amount absorbs (``am``; ``00`` of 10:00)."""
    tokens = [(m.start(), m.end(), m.group(0).lower()) for m in _TOKEN.finditer(text)]
    marks = [_clock_mark(text, tokens, k) for k in range(len(tokens))]
    decimals = _numbers(text, tokens)
    free = _phrases(tokens)
    out = []
    for k, (start, end, word) in enumerate(tokens):
        acronym = _ACRONYM.fullmatch(text[start:end]) and not (k and tokens[k - 1][2].isdecimal())
        value = word if acronym else form(word)  # "HR" is no "hr" (hour), "2 HRS" is
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
        minutes = word[:2] == "00" and _minutes(text, tokens, k, joined=len(word) == 4)
        if marks[k] == "absorbed" or (marks[k] and k and tokens[k - 1][2].isdecimal()) or minutes:
            value = ""
        elif k and _minutes(text, tokens, k, joined=True):  # the "30" of "7.30pm"
            value = word[:2]
        elif joined := _JOINED_CLOCK.fullmatch(word):  # "5pm", "10am"
            value = _hour(int(joined.group(1)), joined.group(2))
        elif word in CLOCK_WORDS:
            value = CLOCK_WORDS[word]
        elif word in CALENDAR_SHORT and text[start].isupper():  # "Sat", "Sept"
            value = CALENDAR_SHORT[word]
        elif word in DEGREE_SCALES and k and tokens[k - 1][2] == "°":
            value = DEGREE_SCALES[word]
        elif word == "one" and k and tokens[k - 1][2] in ONE_AS_PRONOUN_AFTER:
            value = ""  # "the first one", "this one": a pronoun, no number
        elif k in free:  # "at no extra cost": free, not a negation; "7 in the morning": 7
            value = free[k]
        elif word.isdecimal() and after in CLOCK and int(word) <= 12:
            value = _hour(int(word), after)
        out.append((start, end, word, value))
    return _in_base_units(out)


def _in_base_units(out: list[_Word]) -> list[_Word]:
    """``out`` with "50 cents" read as ``0.5`` and "per cent" as ``percent``."""
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


def _numbers(text: str, tokens: _Tokens) -> dict[int, str]:
    """Token index -> the number several tokens write ("€1,50", "twenty-five", "1,290")."""
    out: dict[int, str] = {}
    for k in range(len(tokens) - 1):  # decimals of an amount
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
    for k in range(len(tokens) - 1):  # "twenty-five", "thirty one"
        (_, end, tens), (start, _, ones) = tokens[k], tokens[k + 1]
        high, low = (int(NUMBER_WORDS.get(w, 0)) for w in (tens, ones))
        if high >= 20 and high % 10 == 0 and 1 <= low <= 9 and text[end:start] in ("-", " "):
            out[k], out[k + 1] = str(high + low), ""
    k = 0
    while k < len(tokens):  # "1,290"
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


def _phrases(tokens: _Tokens) -> dict[int, str]:
    """Token index -> a phrase's form ("no extra cost", "half an hour", "5 in the afternoon")."""
    out: dict[int, str] = {}
    for k, (_, _, word) in enumerate(tokens):
        after = [t[2] for t in tokens[k + 1 : k + 4]]
        extra = 1 if after[:1] and after[0] in ("extra", "additional") else 0
        if word == "no" and len(after) > extra and after[extra] in CHARGE_WORDS:
            out[k] = "free"
            out.update(dict.fromkeys(range(k + 1, k + 2 + extra), ""))
        elif word == "nothing" and k and tokens[k - 1][2] == "for":
            out[k] = "free"
        elif (
            word.isdecimal() and int(word) <= 12 and after in [["in", "the", p] for p in DAY_PARTS]
        ):
            out[k], out[k + 3] = _hour(int(word), DAY_PARTS[after[2]]), ""  # 5 pm: 17
    for k, (_, _, word) in enumerate(tokens):
        j = k + 1
        while j < min(k + 4, len(tokens)) and tokens[j][2] in ("a", "an", "of"):
            j += 1
        if word in HOUR_PARTS and _hour_at(tokens, j):
            out[k], out[j] = HOUR_PARTS[word], "min"
            out.update(dict.fromkeys(range(k + 1, j), ""))
        elif word == "quarters" and k and tokens[k - 1][2] == "three" and _hour_at(tokens, j):
            out[k - 1], out[k], out[j] = "45", "", "min"  # "three quarters of an hour"
            out.update(dict.fromkeys(range(k + 1, j), ""))
    return out


def _hour_at(tokens: _Tokens, j: int) -> bool:
    return j < len(tokens) and tokens[j][2] == "hour"


def _year(value: str) -> bool:
    return len(value) == 4 and value.isdecimal() and value[:2] in ("18", "19", "20")


def is_number(value: str) -> bool:
    return value.replace(".", "", 1).isdecimal()


def _minutes(text: str, tokens: _Tokens, k: int, *, joined: bool = False) -> bool:
    """Whether token ``k`` is the minutes of ``5:30`` (with ``joined``: ``30pm`` of ``7.30pm``)."""
    start, _, word = tokens[k]
    hour = tokens[k - 1]
    if joined:
        if not (len(word) == 4 and word[2:] in CLOCK):
            return False
        word = word[:2]
    digits = len(word) == 2 and word.isdecimal() and hour[2].isdecimal()
    return digits and hour[1] == start - 1 and text[start - 1] in ":."


def _hour(hour: int, half: str) -> str:
    """The 24-hour form of ``hour`` ``am``/``pm``: ``5 pm`` is ``17``, ``12 am`` ``0``."""
    if half == "pm":
        return str(hour + 12) if hour < 12 else "12"
    return "0" if hour == 12 else str(hour)


def _clock_mark(text: str, tokens: _Tokens, k: int) -> str:
    """``"am"``/``"pm"`` for ``pm`` or the ``p`` of ``p.m.``, ``"absorbed"`` for its ``m``."""
    start, end, word = tokens[k]
    if word in CLOCK:
        return word
    if word in ("a", "p") and text[end : end + 2].lower() == ".m" and k + 1 < len(tokens):
        return word + "m"
    if word == "m" and k and tokens[k - 1][2] in ("a", "p") and text[start - 1] == ".":
        return "absorbed" if text[start - 2 : start - 1].lower() in ("a", "p") else ""
    return ""


_CLOCK_TIME = re.compile(r"\d{1,2}:\d{2}\b")
_CLOCK_SPANS = frozenset({form("minutes"), form("hours")})
"""The units of a span clock times may state ("half an hour": 9:00 to 9:30)."""


def clock_time(text: str, at: int) -> str | None:
    """The clock time of ``text`` around ``at`` ("7:45" for its "45"), if any: a reader
    knows it whole, while the checks read its hour and minutes apart."""
    return next((m[0] for m in _CLOCK_TIME.finditer(text) if m.start() <= at < m.end()), None)


def clock_times(text: str) -> list[str]:
    """The clock times ``text`` writes ("8:30"), in its order."""
    return _CLOCK_TIME.findall(text)


@lru_cache(maxsize=4096)
def clock_hours(text: str) -> frozenset[str]:
    """The hours ``text`` states as clock times ("10:00", "4 pm"; "10 days" none), memoised."""
    found = forms(text)
    ahead = [w for _, _, w, _ in found] + [""] * 3
    ends = [end for _, end, _, _ in found] + [len(text)] * 3

    def marked(k: int) -> bool:  # "4 pm", "4 p.m."; not the "a" of "£25 a month"
        mark = text[ends[k + 1] : ends[k + 1] + 2].lower() == ".m"
        return ahead[k + 1] in ("am", "pm") or (ahead[k + 1] in ("a", "p") and mark)

    return frozenset(
        value
        for k, (start, _, word, value) in enumerate(found)
        if word.isdecimal()
        and text[start - 1 : start] not in (":", ".")
        and (
            _CLOCK_TIME.match(text, start)
            or marked(k)
            or (ahead[k + 1 : k + 3] == ["in", "the"] and ahead[k + 3] in DAY_PARTS)
        )
    )


def form_set(texts: Iterable[str]) -> frozenset[str]:
    return frozenset(f for text in texts for _, _, _, f in forms(text) if f)


class ContextWords(frozenset[str]):
    """A context's words (a frozenset), forms, clauses, amounts, the question's subject and
    amounts (never held) and the asker's own numbers (``told``, held): what
    :func:`misread_spans` and :func:`derived_values` read."""

    forms: frozenset[str]
    sentences: tuple[Sentence, ...]
    asked: frozenset[str]
    latest: frozenset[str]
    """The subject a follow-up closing the question names ("a second bin" of "How much is
    a garden waste subscription? And a second bin?"): part of ``asked``, read first."""
    quantities: tuple[tuple[Quantity, ...], ...]
    asked_values: tuple[Quantity, ...]
    told: frozenset[str]
    stale: frozenset[int]
    """The texts marking themselves out of date (:func:`is_stale`), by index."""
    turns: frozenset[int]
    """The texts of the chat joined after the documents (``documents | conversation``)."""
    named: frozenset[tuple[str, str]]
    """The (name, number) pairs its texts write as one name (``("aero", "14")``)."""
    variants: frozenset[str]
    """The forms of names its texts write before the same noun as another name ("classic"
    and "student" of "the Classic current account", "the Student account"): kinds of one
    thing, not a brand."""
    kind_names: dict[str, str]
    """Each of ``variants`` with its noun, as its texts first write them ("South district")."""
    clocked: frozenset[str]
    """The numbers its texts write only in clock times (the "30" of "17:30")."""
    _memo: dict[object, Any]

    def __new__(
        cls,
        words: Iterable[str] = (),
        forms: Iterable[str] = (),
        sentences: Iterable[Sentence] = (),
        asked: Iterable[str] = (),
        quantities: Iterable[tuple[Quantity, ...]] = (),
        asked_values: Iterable[Quantity] = (),
        told: Iterable[str] = (),
        stale: Iterable[int] = (),
        turns: Iterable[int] = (),
        named: Iterable[tuple[str, str]] = (),
        variants: Iterable[str] = (),
        clocked: Iterable[str] = (),
        latest: Iterable[str] = (),
        kind_names: Mapping[str, str] | None = None,
    ) -> ContextWords:
        made = super().__new__(cls, words)
        made.named = frozenset(named)
        made.variants = frozenset(variants)
        made.kind_names = dict(kind_names or {})
        made.clocked = frozenset(clocked)
        made.told = frozenset(told)  # the asker's own numbers: held, never misread
        made.stale = frozenset(stale)
        made.turns = frozenset(turns)
        made.forms = frozenset(forms) | frozenset(form(w) for w in made) | made.told
        made.sentences = tuple(sentences)
        made.asked = frozenset(asked)
        made.latest = frozenset(latest) & made.asked
        made.quantities = tuple(quantities)
        made.asked_values = tuple(asked_values)
        made._memo = {}  # derived values by text, misread spans by (text, stop words)
        return made

    @classmethod
    def of(
        cls, texts: Sequence[str], question: str = "", pages: Sequence[int] | None = None
    ) -> ContextWords:
        """The context words of ``texts`` (documents, a system prompt; spans of times and
        days and "the next working day" included) and the subject and amounts of ``question``.
        ``pages``: each text's document, where texts are its segments (a page's "Deprecated:"
        banner marks all its segments out of date)."""
        sentences = [s for doc, text in enumerate(texts) for s in sentences_of(text, doc)]
        stale = [doc for doc, text in enumerate(texts) if is_stale(text)]
        page_of = list(pages) if pages is not None else list(range(len(texts)))
        if pages is not None:
            old = {pages[doc] for doc in stale}
            stale = [doc for doc, page in enumerate(pages) if page in old]
        found = [forms(text) for text in texts]
        named = [named_numbers(text, f) for text, f in zip(texts, found)]
        stale = _stale_unless_asked(stale, page_of, found, named, question)
        titles: dict[int, frozenset[str]] = {}  # a page's names ending in a number
        for doc, (f, at) in enumerate(zip(found, named)):
            titles[page_of[doc]] = titles.get(page_of[doc], frozenset()) | _joined_names(f, at)
        sentences = [  # "Memory: 32 GB RAM." of the Aero 16's page is of the "aero 16"
            replace(s, forms=s.forms | titles[page_of[s.doc]]) if titles[page_of[s.doc]] else s
            for s in sentences
        ]
        headings = _headings(texts)  # "Resident parking permit." opening its page
        sentences = _heading_names(sentences, headings)
        return cls(
            (w for text in texts for w in words(text)),
            form_set(texts)
            | frozenset(f for s in sentences for f in s.own & _STATED_FORMS)
            | frozenset(f for text in texts for f in _also(text))
            | next_days(texts, question),
            sentences,
            subject_forms(question),
            (tuple(q for _, q in quantities(t[a:b])) for t in texts for a, b in split_sentences(t)),
            (*_asked_values(question), *_ago(question)),
            _told(question),
            stale,
            named=((f[k - 1][3], f[k][3]) for f, at in zip(found, named) for k in at),
            variants=(kinds := _variants(texts, headings)),
            kind_names=kinds,
            clocked=form_set(" ".join(clock_times(t)) for t in texts)
            - form_set(_CLOCK_TIME.sub(" ", t) for t in texts),
            latest=_followed(question),
        )

    def __or__(self, other: Collection[str]) -> ContextWords:  # type: ignore[override]
        other = other if isinstance(other, ContextWords) else ContextWords(other)
        shift = 1 + max((s.doc for s in self.sentences), default=-1)
        return ContextWords(
            frozenset(self) | other,
            self.forms | other.forms,
            self.sentences + tuple(replace(s, doc=s.doc + shift) for s in other.sentences),
            self.asked | other.asked,
            self.quantities + other.quantities,
            self.asked_values + other.asked_values,
            self.told | other.told,
            self.stale | {doc + shift for doc in other.stale},
            self.turns | {s.doc + shift for s in other.sentences},
            self.named | other.named,
            self.variants | other.variants,
            (self.clocked | other.clocked)
            - (self.forms - self.clocked)
            - (other.forms - other.clocked),
            self.latest | other.latest,
            other.kind_names | self.kind_names,
        )


FOLLOW_UP = re.compile(r"\s*(?:and|what about|how about)\b", re.IGNORECASE)
"""How a question following another one up opens ("And a second bin?")."""


def _followed(question: str) -> frozenset[str]:
    """The subject of a follow-up ending ``question`` after another sentence (no days)."""
    spans = split_sentences(question)
    if len(spans) < 2 or not FOLLOW_UP.match(question[slice(*spans[-1])]):
        return frozenset()
    return subject_forms(question[slice(*spans[-1])]) - CALENDAR


_STALE = re.compile(
    r"\barchived\s+(?:page|version|copy|notice|post|article)\b|\bout[\s-]of[\s-]date\b"
    r"|\boutdated\b|\bsuperseded\b|\bno\s+longer\s+(?:valid|current|accurate|applies)\b"
    r"|^\W*(?:deprecated|legacy|obsolete|discontinued)\b|^\W*archived\s*[\]):\u2013\u2014-]"
    r"|\bthis\s+(?:page|document|article|version)\s+(?:is|has\s+been)\s+(?:deprecated|obsolete"
    r"|archived)\b",
    re.IGNORECASE,
)
_BANNER = re.compile(
    r"\bthis\s+(?:page|document|article|guide|reference|product|model|item|plan|offer)\b[^.]*"
    r"\b(?:is|are|was|has\s+been)\s+(?:now\s+)?(?:deprecated|obsolete|discontinued"
    r"|no\s+longer\s+(?:maintained|supported|available|sold|offered))\b",
    re.IGNORECASE,
)
"""A first sentence saying its page is of something out of date ("this page describes API
v1, which is deprecated", "this product is no longer available")."""


def is_stale(text: str) -> bool:
    """Whether ``text`` marks itself out of date ("ARCHIVED PAGE (2022)", "may be out of
    date", "superseded", a page opening "Deprecated:", "Legacy" or "Discontinued", a first
    sentence saying "this page describes API v1, which is deprecated"; not "the --foo flag
    is deprecated" inside a current page): where a current page states the answer's value,
    such a page's other value is history, not a source disagreeing (:func:`rivals`)."""
    if _STALE.search(text):
        return True
    if not _BANNER.search(text):  # most texts: no sentence split to find the first
        return False
    first = next(iter(split_sentences(text)), (0, len(text)))
    return bool(_BANNER.search(text[first[0] : first[1]]))


_TOLD = (
    re.compile(
        r"\b(?:my|our|we have|we've got|i have|i've got|we are|we're|i am|i'm)\s+(?:an?\s+)?"
        r"([\w.]+)",
        re.I,
    ),
    re.compile(r"\b(?:family|group|party) of\s+([\w.]+)|\b([\w.]+)\s+of us\b", re.I),
)


def _stale_unless_asked(
    stale: list[int],
    page_of: list[int],
    found: list[list[_Word]],
    named: list[frozenset[int]],
    question: str,
) -> list[int]:
    """``stale`` less the pages of what the question names and only out-of-date pages
    name (a year, a name ending in a number: "the Aero 14 (2023)", "the 2023 policy"):
    asked about, such a page is the source."""
    asked_for = forms(question)
    names = {f for *_, f in asked_for if _year(f)}
    names |= _joined_names(asked_for, named_numbers(question, asked_for))
    if not stale or not names:
        return stale
    held: dict[int, set[str]] = {}
    for doc, (f, at) in enumerate(zip(found, named)):
        held.setdefault(page_of[doc], set()).update({w for *_, w in f}, _joined_names(f, at))
    old = {page_of[doc] for doc in stale}
    current = set().union(*(w for page, w in held.items() if page not in old))
    asked = {page for page in old if names & held[page] - current}
    return [doc for doc in stale if page_of[doc] not in asked]


def _asked_values(question: str) -> Iterator[Quantity]:
    """The amounts ``question`` states, not the number of a name ("the Aero 14")."""
    names = name_number_starts(question)
    return (q for at, q in quantities(question) if at not in names)


def _told(question: str) -> Iterator[str]:
    """The numbers the asker states of themselves ("we have a 7-year-old", "my 12-year-old",
    "a family of five", "four of us"): context, unlike a value asked about ("is it 50 euros?")."""
    for match in (m for pattern in _TOLD for m in pattern.finditer(question)):
        for *_, value in forms(next(g for g in match.groups() if g))[:1]:
            if is_number(value):
                yield value


_AGO = re.compile(r"\b(?:last|past|a|an|one)\s+(day|week|month|year)\b|\b(yesterday)\b", re.I)
_TIMES = re.compile(r"\b(once|twice)\b", re.I)


def _ago(question: str) -> Iterator[Quantity]:
    """One of a period the question names without a digit ("last month", "a week ago",
    "yesterday"), and a count in words ("twice"): an answer may count from it ("four
    months after, so three more"; "£6 each visit, £12")."""
    for match in _AGO.finditer(question):
        yield Quantity("1", form(match.group(1) or "day"))
    for match in _TIMES.finditer(question):
        yield Quantity("1" if match.group(1).lower() == "once" else "2")


@dataclass(frozen=True)
class Sentence:
    """One context clause: its forms (with its subject's), those it states (``own``), only
    another writing states (``derived``: "5" of "17:00") or only a span of clock times
    (``spanned``: "open" of "from 13:00"), its text (``doc``); whether it negates."""

    forms: frozenset[str]
    negated: bool
    own: frozenset[str] = frozenset()
    doc: int = 0
    derived: frozenset[str] = frozenset()
    spanned: frozenset[str] = frozenset()
    negates: bool = False
    amounts: frozenset[tuple[str, str]] = frozenset()
    """Its numbers with their units (``("1", "month")``; ``("1", "april")`` of "1 April")."""
    names: frozenset[str] = frozenset()
    """The forms of the names it states (capitalised words not opening its sentence)."""
    slots: frozenset[tuple[str, str]] = frozenset()
    """Each run of names with the word before it (``("in", "boulder")``), by its first."""
    named_days: frozenset[str] = frozenset()
    """The days its words name ("closed on Mondays"), not those of a range or group."""
    implied: frozenset[str] = frozenset()
    """The days an every-day clause implies ("open daily"), less those its page names and
    those of a group its sentence names (another sentence's "shop open weekdays only" is of
    another subject): held (:func:`claim_coverage`), but not its forms, so a clause naming a
    day stays the closest."""
    lacks: frozenset[str] = frozenset()
    """The forms of the words after its "no" ("sauna" of "There is no sauna"): what it
    says a place does not have."""
    former: frozenset[str] = frozenset()
    """The numbers a change leaves behind ("128" of "raised the default from 128 to 256")."""
    bounds: frozenset[tuple[str, str, str]] = frozenset()
    """Its limits: ``("most", "8", "tablet")`` of "Do not take more than 8 tablets"."""

    def states(self, value: str, unit: str = "") -> bool:
        """Whether the clause states ``value``, as an amount of ``unit``'s kind when it is a
        time or money unit and the clause has ``value`` as an amount ("one month" is not
        stated by "from 1 April ... two months"); a value it says was changed is not."""
        if value not in self.forms or value in self.former:
            return False
        kinds = {_kind(u) for v, u in self.amounts if v == value}
        return _kind(unit) not in ("time", "money") or not kinds or _kind(unit) in kinds | {""}

    def measures(self, value: str, unit: str) -> bool:
        """Whether the clause may state ``value`` of ``unit``: not where it has it only as an
        amount of another dimension ("23 kg" is not "55 x 40 x 23 cm")."""
        kinds = {u for v, u in self.amounts if v == value}
        other = {_DIMENSIONS.get(u) for u in kinds} - {None}
        return unit not in _DIMENSIONS or "" in kinds or not other or _DIMENSIONS[unit] in other


_DIMENSIONS = {"kg": "mass", "g": "mass", "cm": "length", "m": "length", "km": "length"}
"""What a measure's units measure: "23 kg" is no reading of "23 cm"."""
_CLAUSE = re.compile(
    r"\s*;\s*|,?\s+and\s+(?=(?:on|in|at|from|for|during|closed|open)\b)"
    r"|,\s+(?:and|while|whereas)\s+(?=(?:a|an|the|each|every|its|their|our)\b)|,?\s+but\s+",
    re.IGNORECASE,
)
"""Where a new clause starts: ``;``, ``but``, ``and`` before a preposition, a subject or
"open"/"closed" ("open Monday to Saturday ... and closed on Sundays")."""


def _content(text: str, *, values: bool = True) -> frozenset[str]:
    """The forms of ``text``'s content words (numbers and units if ``values``)."""
    return frozenset(
        f for _, _, w, f in forms(text) if f and w not in STOPWORDS and (values or not _is_value(f))
    )


def subject_forms(text: str) -> frozenset[str]:
    """What ``text`` asks about: its content words' forms, no number or unit (``city``)
    but a name's ("14" of "the Aero 14")."""
    found = forms(text)
    return _with_names(_content(text, values=False), found, named_numbers(text, found))


def _with_names(
    subject: frozenset[str], found: Sequence[_Word], at: Iterable[int]
) -> frozenset[str]:
    """``subject`` with each name ending in a number at ``at`` of ``found`` as one word
    ("aero 14", not "aero": the Aero 16's clauses are of another subject)."""
    at = list(at)
    return subject - {found[k - 1][3] for k in at} | _joined_names(found, at)


def _joined_names(found: Sequence[_Word], indices: Iterable[int]) -> frozenset[str]:
    """The form of each name ending in a number at ``indices`` of ``found``: "aero 14"."""
    return frozenset(f"{found[k - 1][3]} {found[k][3]}" for k in indices)


_MEASURES = _set("gb tb mb kb gbit mbit inch inches hz ghz mhz mah wh kwh w kw v mm")
"""Units written after a number that :data:`UNITS` leaves out: "16 GB" is an amount."""


def named_numbers(
    text: str, found: Sequence[_Word], named: Collection[tuple[str, str]] | None = None
) -> frozenset[int]:
    """The indices in ``found`` (:func:`forms` of ``text``) of the numbers that end a name
    ("14" of "the Aero 14", "2" of "Terminal 2"): a number written as it reads, one space
    after a capitalised word (no small word, day, month, unit or number word) and before
    no unit, and a number in brackets after one ("2023" of "the Aero 14 (2023)").
    ``named``: the (name, number) pairs the context writes so, the only ones an answer's
    number is read as part of a name for ("Take 2 tablets" is no name)."""
    out: set[int] = set()
    for k in range(1, len(found)):
        start, stop, word, value = found[k]
        before, end, previous, name = found[k - 1]
        after = found[k + 1][3] if k + 1 < len(found) else ""
        if k - 1 in out and text[end:start] == " (" and text[stop : stop + 1] == ")":
            if is_number(value) and (named is None or (name, value) in named):
                out.add(k)  # its edition: "the Aero 14 (2023)"
            continue
        if (
            is_number(value)
            and value == word
            and text[end:start] == " "
            and text[before].isupper()
            and previous not in STOPWORDS | NUMBER_WORDS.keys()
            and name
            and not _is_value(name)
            and name not in CALENDAR | _TIME_UNITS | _MEASURES
            and not (after in UNITS.values() or after in _TIME_UNITS | _MEASURES)
            and (named is None or (name, value) in named)
        ):
            out.add(k)
    return frozenset(out)


def _is_value(value: str) -> bool:
    return is_number(value) or value in UNITS.values()


Overlap = tuple[int, int, int, int, int]
"""A clause's subject days stated, subject forms held, stated, question forms held, and
those it states itself where it names a subject of its own (a clause after ";" holds its
sentence's subject: "a monthly pass costs 35 euros" of "A single swim costs 4.50 euros;
...", :func:`_own_subjects`)."""
_NONE: Overlap = (0, 0, 0, 0, 0)
_Closest = tuple[list[Overlap], Overlap, list[Sentence]]


def _closest(
    subject: frozenset[str], context: ContextWords, asked: frozenset[str] | None = None
) -> _Closest:
    """Each clause's :data:`Overlap` with ``subject``, the best, and the clauses that have it;
    ``asked``: the question's words it counts (``context.asked``)."""
    days, asked = subject & CALENDAR, context.asked if asked is None else asked
    other = _of_other_kinds(subject, context)
    inherited = _kinds_inherited(subject, context)
    overlap = [  # a day named ("closed on Mondays") counts twice; one of a range or group once
        (
            len(days & (c.own | c.named_days)) + len(days & c.named_days),
            len(subject & (c.forms | page)),
            len(subject & (c.own | page)),
            _asked_in(asked, c, context.latest, page),
            sum(holds(word, (c.own if alone else c.forms) | page) for word in asked),
        )
        if c.doc not in other
        else _NONE
        for c, alone in zip(context.sentences, _own_subjects(context))
        for page in [inherited.get(c.doc, frozenset())]
    ]
    best = max(overlap, default=_NONE)
    return overlap, best, [c for c, n in zip(context.sentences, overlap) if n == best]


def _own_subjects(context: ContextWords) -> list[bool]:
    """Whether each clause names a subject of its own ("a monthly pass costs 35 euros"
    after "A single swim costs 4.50 euros;"), not only days, times and numbers ("and on
    Saturday from 10:00 to 14:00", which goes on with its sentence's)."""
    if "own subjects" not in context._memo:
        context._memo["own subjects"] = [bool(_subject_words(c.own)) for c in context.sentences]
    return list(context._memo["own subjects"])


def _of_other_kinds(subject: frozenset[str], context: ContextWords) -> frozenset[int]:
    """The texts about another kind of the thing the question or ``subject`` names ("South"
    where it asks of the North district's bins, :attr:`ContextWords.variants`): each names
    a kind neither names and none they name, while some text names one they name."""
    named = _kinds_named(subject, context)
    if not named:
        return frozenset()
    key = ("other kinds", named)
    if key not in context._memo:
        pages = _page_kinds(context)
        other = frozenset(d for d, kinds in pages.items() if kinds and not kinds & named)
        some = any(kinds & named for kinds in pages.values())
        context._memo[key] = other if some else frozenset()
    return frozenset(context._memo[key])


def _kinds_named(subject: frozenset[str], context: ContextWords) -> frozenset[str]:
    """The kinds (:attr:`ContextWords.variants`, no day) the question or ``subject`` names."""
    return (context.asked | subject) & context.variants - CALENDAR


def _page_kinds(context: ContextWords) -> dict[int, frozenset[str]]:
    """The kinds each text names (:attr:`ContextWords.variants`, capitalised, in a sentence)."""
    if "page kinds" not in context._memo:
        pages: dict[int, frozenset[str]] = {}
        for c in context.sentences:
            pages[c.doc] = pages.get(c.doc, frozenset()) | c.names & context.variants
        context._memo["page kinds"] = pages
    return dict(context._memo["page kinds"])


def _kinds_inherited(subject: frozenset[str], context: ContextWords) -> dict[int, frozenset[str]]:
    """The texts naming only kinds the question or ``subject`` names, with the forms of
    those kinds' names: each clause of the North district's page is of the North district,
    though only its first says so ("Garden waste is collected on Fridays" answers "When is
    garden waste collected in the North district?", not "In the North district, residual
    waste bins are collected every Tuesday"; "A single swim costs 4.50 euros" is the
    Hilltop pool's)."""
    named = _kinds_named(subject, context)
    if not named:
        return {}
    key = ("kinds inherited", named)
    if key not in context._memo:
        pages = {d: kinds for d, kinds in _page_kinds(context).items() if kinds}
        names = {k: _content(context.kind_names.get(k, k), values=False) for k in named}
        context._memo[key] = {  # one page: every clause of it alike
            d: frozenset().union(*(names[k] for k in kinds))
            for d, kinds in pages.items()
            if kinds <= named and len(pages) > 1
        }
    return dict(context._memo[key])


def _asked_in(
    asked: frozenset[str],
    clause: Sentence,
    latest: frozenset[str] = frozenset(),
    page: frozenset[str] = frozenset(),
) -> int:
    """How many of the question's words ``clause`` holds, a longer word they start counting
    ("viewing" for "view"); each of a closing follow-up's (``latest``) outweighs the rest
    ("A second bin costs 30 euros", not the subscription's 45, for "And a second bin?");
    ``page``: the kinds its page is about (:func:`_kinds_inherited`), held too."""
    has = clause.forms | page
    count = sum(holds(word, has) for word in asked)
    return count + (len(asked) + 1) * sum(holds(word, has) for word in latest & asked)


def _said_of(value: str, subject: frozenset[str], context: ContextWords) -> set[str] | None:
    """Which of ``value`` and its opposite the clauses closest to ``subject`` state (a value
    a clause states and not, itself, its opposite); ``None`` when no clause shares it. Where
    they state both of a day, the clauses of the page holding most of the question's words
    decide (the Old Town branch's page, not Harbour Street's), then those saying least
    besides ("except Tuesdays", not "the museum shop is open weekdays only")."""
    pair = (value, OPPOSITES[value])  # the question's "open" makes no clause closer
    _, best, closest = _closest(subject - set(pair), context, context.asked - set(pair))
    if not (best[1] or best[3]):
        return None
    said = _said_by(pair, closest)
    if len(said) == 2 and subject & CALENDAR:  # a day's clauses disagree
        said = _said_by(pair, _deciding(closest, subject | set(pair), context)) or said
    return said


def _deciding(
    clauses: Sequence[Sentence], known: Collection[str], context: ContextWords
) -> list[Sentence]:
    """Of ``clauses``, those of the page holding most of the question's words, then those
    saying least besides the question's words and ``known``."""
    known = context.asked | frozenset(known) | STOPWORDS
    rank = [(-_asked_by(context, c.doc), len(c.own - known)) for c in clauses]
    return [c for c, n in zip(clauses, rank) if n == min(rank)]


def answered_clauses(context: ContextWords) -> list[Sentence]:
    """The clauses a bare "Yes." or "No." answers: of the page holding most of the
    question's words (``context.asked``; a word fewer pages hold counting more; none when
    it holds under two, or one where it asks one; none about another kind of what it
    names, :func:`_of_other_kinds`), those naming most of its days (by
    name, then in a range or group, or implied by an every-day clause; none when none has
    one), then most of its other words (a word said once on the page counting most).
    Where they state a value the question asks ("open") and its opposite, those
    :func:`_said_of` reads the reply with."""
    if "answered" not in context._memo:  # read once per context, by the gate and cite()
        context._memo["answered"] = _answered(context)
    return list(context._memo["answered"])


def _answered(context: ContextWords) -> list[Sentence]:
    pair = frozenset(v for v in context.asked if v in OPPOSITES)
    pair |= _opposites(pair)
    asked = context.asked - pair
    days, subject = asked & CALENDAR, asked - CALENDAR
    held = {d: asked & _page_forms(context, d) for d in {c.doc for c in context.sentences}}
    for c in context.sentences:
        held[c.doc] = held[c.doc] | (asked & c.implied)  # the days "open daily" implies
    spread = Counter(w for words in held.values() for w in words)
    # a word few pages hold tells the page asked about ("Central" more than "gym", "Sunday")
    # exactly rounded sums (math.fsum): a set's order must not break a tie between pages
    pages = {d: math.fsum(1 / spread[w] for w in words) for d, words in held.items()}
    titled = {w for w in asked if " " in w}  # "aero 14": the pages naming the model asked
    if named := {d for d, words in held.items() if titled & words}:
        pages = {d: n if d in named else 0.0 for d, n in pages.items()}
    other = _of_other_kinds(frozenset(), context)  # the South district's, of the North's
    pages = {d: 0.0 if d in other else n for d, n in pages.items()}
    said = [{w for w in subject if holds(w, c.forms)} for c in context.sentences]
    times = Counter((c.doc, w) for c, own in zip(context.sentences, said) for w in own)
    rank = [  # a word the page says once tells its clause ("does not offer printing")
        (
            pages[c.doc],
            len(days & c.named_days),  # "closed on Mondays", not "Monday" of "weekdays"
            len(days & (c.own | c.implied)),
            math.fsum(1 / (times[c.doc, w] * max(spread[w], 1)) for w in own),  # "Hilltop" > "pool"
            bool(pair & c.own),
        )
        for c, own in zip(context.sentences, said)
    ]
    best = max(rank, default=(0.0, 0, 0, 0.0, False))
    top_pages = [d for d, n in pages.items() if n == best[0]]
    if max((len(held[d]) for d in top_pages), default=0) < min(2, len(asked)) or (
        days and not best[2]  # no clause has its day
    ):
        return []
    # each page's closest clause; the pages tied on the question's words and days all stay
    # (a current page and an archived one), its other words ranking clauses within a page
    top: dict[int, tuple[float, int, int, float, bool]] = {}
    for c, n in zip(context.sentences, rank):
        if n[:3] == best[:3]:
            top[c.doc] = max(n, top.get(c.doc, n))
    closest = [c for c, n in zip(context.sentences, rank) if n == top.get(c.doc)]
    closest = [c for c in closest if c.doc not in context.stale] or closest  # not archived
    if len({c.doc for c in closest}) == 1 and len({v for c in closest for v in pair & c.own}) > 1:
        closest = _deciding(closest, pair, context)  # one page says "open" and "closed"
    return closest


def agreeing(clauses: Sequence[Sentence], reply: str, context: ContextWords) -> list[Sentence]:
    """Of ``clauses`` (:func:`answered_clauses`), those not stating the opposite of what a
    bare ``reply`` ("yes" or "no") claims of the question's value ("open"), nor denying a
    "yes" (:func:`_denies`)."""
    asked = frozenset(v for v in context.asked if v in OPPOSITES)
    denied = asked if reply == "no" else _opposites(asked)
    pages = _denying(clauses, context) if reply == "yes" else {}  # "There is no sauna"
    return [
        c
        for c in clauses
        if not any(o in c.own and OPPOSITES[o] not in c.own for o in denied)
        and not pages.get(c.doc)
    ]


def _said_by(pair: tuple[str, str], clauses: Sequence[Sentence]) -> set[str]:
    """Which of ``pair`` (a value, its opposite) ``clauses`` state, not stating the other."""
    return {v for v in pair for c in clauses if v in c.forms and OPPOSITES[v] not in c.own}


def _opposed(value: str, subject: frozenset[str], context: ContextWords) -> bool:
    """Whether the clauses closest to ``subject`` state ``value``'s opposite, none ``value``."""
    return _said_of(value, subject, context) == {OPPOSITES[value]}


_JOINED = re.compile(r"\s(?:and|but)\s", re.IGNORECASE)


def _joined_reading(
    part: str, at: int, clause: tuple[int, int], value: str, context: ContextWords
) -> bool | None:
    """Whether the piece of a clause joined by "and"/"but" holding ``at`` ("... open Monday
    to Friday and closed on Sundays") states the opposite of ``value`` (``True``) or
    ``value`` itself (``False``) in the context's clauses closest to its own subject; ``None``
    (read the whole clause) with no such piece, or where those clauses do not say one."""
    cuts = list(_JOINED.finditer(part, *clause))
    start = max((m.end() for m in cuts if m.end() <= at), default=clause[0])
    end = min((m.start() for m in cuts if m.start() >= at), default=clause[1])
    subject = _content(part[start:end]) - {value, OPPOSITES[value]}
    stated = _said_of(value, subject, context) if (start, end) != clause and subject else None
    return None if stated is None or len(stated) != 1 else stated == {OPPOSITES[value]}


def _alike(rival: str, value: str, unit: str, context: ContextWords) -> bool:
    """Whether the context's form ``rival`` is a number of ``value``'s kind (year, ``unit``)."""
    if not is_number(rival):
        return False
    units = {q.unit for sentence in context.quantities for q in sentence if q.value == rival}
    return _year(rival) == _year(value) and (not unit or not units or "" in units or unit in units)


def _restated(found: Sequence[_Word], k: int, closest: list[Sentence], content: set[str]) -> bool:
    """Whether a close clause states another number beside ``found[k]``'s words ("31 Quay St")."""
    beside = (*found[k - 1 : k], *found[k + 1 : k + 2])
    near = {f for _, _, w, f in beside if f and w not in STOPWORDS and not is_number(f)}
    return any(c.own & near and any(map(is_number, c.own - content)) for c in closest)


_TIME = (
    r"(?:\d{1,2}(?::\d{2}(?:\s*[ap]\.?m\b\.?)?|(?:\.\d{2})?\s*[ap]\.?m\b\.?)"
    r"|noon|midday|midnight)"
)
_RANGE = re.compile(
    rf"(?<![\w:.]){_TIME}\s*(?:-|–|—|to|until|till)\s*{_TIME}|\b(?:until|till)\s+{_TIME}"
    r"|\b(?:from|between)\s+" + _TIME,
    re.IGNORECASE,
)
_OPENING_HOURS = re.compile(r"\bopening\s+(?:hours|times)\b[^.;]*?\d", re.IGNORECASE)
"""A clause giving opening hours with a number after ("Opening hours: Mon-Fri 8-18"): it
states its days open even where its hours are no clock times (:data:`_RANGE`)."""
_AFTERNOON = re.compile(r"(?<![\w:.])(1[3-9]|2[0-3])[:.][0-5]\d(?![\w:]|\.\d)")


_SHARES = {"half": ("50", "percent"), "quarter": ("25", "percent")}
"""A share in words states its percent ("half price" is 50%)."""


_TIMES_WORDS = {"once": 1, "twice": 2, "three times": 3, "four times": 4, "six times": 6}
_FREQUENCY = re.compile(
    r"\b(once|twice|three times|four times|six times|\d+ times)\s+(?:a|an|per|each|every)\s+"
    r"(year|day)\b",
    re.IGNORECASE,
)
_WITHIN = {"year": ("month", 12), "day": ("hour", 24)}
"""A frequency states its interval in the smaller unit ("twice a year": every 6 months)."""


def _also(text: str) -> frozenset[str]:
    """What a context text also states: "17:00" ``5``, "first" ``1``, "14 days" ``2`` ``week``,
    "half" ``50`` ``percent``."""
    out = {FIRST_ORDINALS[w] for w in words(text) if w in FIRST_ORDINALS}
    out.update(f for w in words(text) for f in _SHARES.get(w, ()))
    out.update(str(int(m.group(1)) - 12) for m in _AFTERNOON.finditer(text))
    for match in _FREQUENCY.finditer(text):  # "twice a year": every 6 months
        times = _TIMES_WORDS.get(match.group(1).lower()) or int(match.group(1))
        small, factor = _WITHIN[match.group(2).lower()]
        if times and factor % times == 0:
            out.update((str(factor // times), small))
    for value, unit in pairwise(f for _, _, _, f in forms(text) if f):
        if not value.isdecimal():
            continue
        for small, (large, factor) in DURATIONS.items():
            if unit == small and int(value) % factor == 0 and int(value):
                out.update((str(int(value) // factor), large))
            elif unit == large and small not in _UPWARD_ONLY:
                out.update((str(int(value) * factor), small))
    return frozenset(out)


_DAY = r"(mon|tue|wed|thu|fri|sat|sun)(?:day|nesday|sday|rsday|urday|s|rs|urs)?s?\b\.?"
_DAY_RANGE = re.compile(rf"\b{_DAY}\s*(?:-|–|—|to|through|thru|until|till)\s*{_DAY}", re.I)


_EVERY_DAY = re.compile(
    r"\b(?:(?:every|each)\s+day(?:\s+of\s+the\s+week)?|(?:seven|7)\s+days\s+a\s+week"
    r"|all\s+week|daily(?!\s+(?!(?:from|between|at|until|till|to|and|but|except|excluding|"
    r"apart|other|save|including)\b)[a-z]))",
    re.I,
)
"""A clause open or running every day: "open daily from 9", "every day", "7 days a week"; not
"a daily pass"."""


def _days(clause: str) -> frozenset[str]:
    """The weekdays ``clause`` spans ("Mon-Fri") and the :data:`DAY_GROUPS` it names or spans."""
    out: set[str] = set()
    for match in _DAY_RANGE.finditer(clause):
        first, last = (
            next(i for i, d in enumerate(WEEKDAYS) if d.startswith(g.lower()))
            for g in match.groups()
        )
        out.update(WEEKDAYS[(first + i) % 7] for i in range((last - first) % 7 + 1))
    return _grouped(out, {form(w) for w in words(clause)})


def _grouped(days: set[str], named: Collection[str] = ()) -> frozenset[str]:
    """``days`` and the :data:`DAY_GROUPS` they span, or ``named`` names (with their days)."""
    for group, members in DAY_GROUPS.items():
        if group in named:
            days.update(members)
        if members <= days:
            days.add(group)
    return frozenset(days)


def implied_days(sentence: str, context: Collection[str]) -> frozenset[str]:
    """The days the context's every-day clauses sharing a content word with ``sentence``
    imply ("open daily" holds "open on Mondays", not "lessons on Thursdays")."""
    if not isinstance(context, ContextWords):
        return frozenset()
    content = _content(sentence, values=False) - CALENDAR - _TIME_UNITS  # not "every day"
    return frozenset(
        d for c in context.sentences if c.implied and content & c.own for d in c.implied
    )


def _every_day(clause: str, every: frozenset[str]) -> frozenset[str]:
    """The ``every`` days (and groups) an every-day ``clause`` implies ("open daily", "7 days a
    week"); none for another clause."""
    return _grouped(set(every)) if _EVERY_DAY.search(clause) else frozenset()


_SWITCHED_OFF = re.compile(r"\b(?:is|are|stays?|turned|switched|set\s+to)\s+off\b", re.I)
"""A setting stated off ("compression ... is off by default"): ``disabled``."""


def _stated(part: str) -> list[str]:
    """The forms ``part`` (one clause) states; "not available" states ``unavailable``."""
    found = forms(part)
    out = [f for _, _, _, f in found if f] + ["disabled"] * bool(_SWITCHED_OFF.search(part))
    both = bool(EXCEPTIONS.intersection(w for _, _, w, _ in found))
    for k, (_, _, _, value) in enumerate(found):
        before = found[max(k - 3, 0) : k]
        if value in OPPOSITES and any(
            w in NEGATIONS or (w == "t" and s > 0 and part[s - 1] in "'’") for s, _, w, _ in before
        ):
            flipped = [OPPOSITES[value] if f == value else f for f in out]
            out = [*out, OPPOSITES[value]] if both else flipped
    return out


_AND_SUBJECT = re.compile(r"\s+and\s+(?=(?:a|an|the|each|every|its|their|our)\b)", re.I)
_DIGIT = re.compile(r"\d")


_A_DAY = r"(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\b\.?"
_EXCEPT_DAYS = re.compile(
    rf",?\s+((?:except|excluding|apart\s+from|other\s+than|but\s+not)\s+(?:on\s+)?"
    rf"{_A_DAY}(?:\s*(?:,|-|–|and|or|&|to|through)\s*{_A_DAY})*),?",
    re.I,
)
"""An exception of days: "open daily[, except Mondays,] from 7:00"."""


_LEAD_DAY = re.compile(rf"\s*(?:(?:on|every)\s+)?{_A_DAY}", re.IGNORECASE)
"""A sentence opening with a day ("On Sundays and public holidays ...")."""


def _clauses(sentence: str) -> list[str]:
    """``sentence``'s clauses (:data:`_CLAUSE`), a clause split again at "and a ..." when
    each side states a number ("a check-up now costs £60 and a crown now costs £950"), and
    an exception of days (:data:`_EXCEPT_DAYS`) after the rest of a clause stating an
    opposite word ("open daily from 9:00", then "except Mondays")."""
    out = []
    for part in _CLAUSE.split(sentence):
        pieces = _AND_SUBJECT.split(part)
        for piece in pieces if all(map(_DIGIT.search, pieces)) else [part]:
            found = _EXCEPT_DAYS.search(piece)
            if found and OPPOSITES.keys() & _content(piece[: found.start()]):
                out += [piece[: found.start()] + piece[found.end() :], found.group(1)]
            else:
                out.append(piece)
    return out


def sentences_of(text: str, doc: int = 0) -> list[Sentence]:
    """``text``'s clauses as :class:`Sentence`: a later clause (a pronoun-led sentence)
    holds the words, not the numbers, of the clauses (the sentence) before it."""
    out: list[Sentence] = []
    previous: frozenset[str] = frozenset()
    written = {f for _, _, _, f in forms(text)}  # "... closed on Mondays", "at weekends"
    unnamed = frozenset(WEEKDAYS) - written
    every = unnamed - _group_days(written)
    daily = bool(_EVERY_DAY.search(text))
    for start, end in split_sentences(text):
        sentence = text[start:end]
        found = forms(sentence)
        own = frozenset(f for _, _, _, f in found if f)
        first = found[0][2] if found else ""
        # "They ..." and "Do not take more than 8 tablets.": the sentence before's subject
        subjectless = first in _PRONOUNS or _SUBJECTLESS.match(sentence) is not None
        head = previous if subjectless else frozenset()
        negated = any(w in NEGATIONS for _, _, w, _ in found) or bool(_NEGATED.search(sentence))
        named = _names(sentence, found[1:])
        slots = frozenset(
            (found[k - 1][2], found[k][3])
            for k in range(1, len(found))
            if found[k][3] in named and found[k - 1][3] not in named
        )
        said: frozenset[str] = frozenset()
        # "On Sundays ...; the last departure is at 22:50": an opening day holds for the
        # sentence's later clauses naming none
        lead = _LEAD_DAY.match(sentence) is not None
        opening: frozenset[str] | None = None
        for part in filter(str.strip, _clauses(sentence)):  # "but cannot": one negates
            negates = bool(NEGATIONS.intersection(words(part)) or _NEGATED.search(part))
            # "open daily | except Mondays": the days excepted state the opposite
            flipped = _opposites(said)
            stated = frozenset(_stated(part))
            said = stated | _days(part)
            said |= flipped if _EXCEPT_DAYS.fullmatch(f" {part}") else frozenset()
            hours = _RANGE.search(part) or _OPENING_HOURS.search(part)  # "Mon-Fri 8-18"
            held = said | (HOURS_FORMS if hours else frozenset())
            derived = _also(part) - held
            parts = (doc, derived, held - said, negates)
            amounts = frozenset((q.value, q.unit) for _, q in quantities(part))
            placed = frozenset(slot for slot in slots if slot[1] in said)
            days = stated & CALENDAR
            if opening is None:
                opening = days if lead else frozenset()
            elif not said & CALENDAR:
                days = opening
            out.append(
                Sentence(
                    held | head | derived,
                    negated,
                    held,
                    *parts,
                    amounts,
                    named & said,
                    placed,
                    days,
                    _every_day(part, unnamed - _group_days(own)) - held,
                    lacks=_lacks(part),
                    former=_former(part),
                    bounds=frozenset(bound for _, bound in limits(part)),
                )
            )
            head |= frozenset(f for f in held if not is_number(f))
            out += _days_left_out(part, said, head, out[-1], every, daily)
        previous = frozenset(f for f in own if not is_number(f))
    return out


_CHANGED = re.compile(
    r"\b(?:changed|raised|increased|lowered|reduced|decreased|cut|moved|bumped|updated"
    r"|switched|rose|fell|dropped|went\s+(?:up|down))\b[^.;]{0,60}?"
    r"\bfrom\s+(\S+)\s+(?:\w+\s+)?to\b",
    re.IGNORECASE,
)


_PAST = re.compile(
    r"\b(?:before|previously|formerly|originally|used\s+to|prior\s+to|until|earlier|older)\b",
    re.IGNORECASE,
)
"""An answer speaking of an earlier state: a changelog's former value states it."""


_RENAMED = re.compile(
    r"\b([\w.-]+)\s+(?:[a-z]+\s+){0,2}?(?:was|has\s+been|is\s+now|is)\s+(?:renamed|replaced)"
    r"\s+(?:to|as|by|with)\s+(?:the\s+)?([\w.-]+)"
    r"|\brenamed\s+(?:the\s+)?(?:from\s+)?([\w.-]+)\s+(?:\w+\s+)?to\s+([\w.-]+)",
    re.IGNORECASE,
)
_INSTEAD = re.compile(r"\binstead\s+of\s+(?:the\s+|an?\s+)?([\w.-]+)", re.IGNORECASE)


def _former(part: str) -> frozenset[str]:
    """What ``part`` says was changed: a number ("from 600 seconds to 300 seconds": "600"),
    a renamed or replaced word ("units_system ... was renamed to units": "system"), a word
    used no more ("... header instead of the apikey query parameter": "apikey")."""
    out = {f for m in _CHANGED.finditer(part) for _, _, _, f in forms(m[1]) if is_number(f)}
    for m in _RENAMED.finditer(part):
        old, new = (m[1], m[2]) if m[1] else (m[3], m[4])
        out |= _word_forms(old) - _word_forms(new)
    for m in _INSTEAD.finditer(part):
        rest = part[: m.start()] + part[m.end() :]
        out |= _word_forms(m[1]) - _word_forms(rest)
    return frozenset(out)


def _word_forms(text: str) -> set[str]:
    """The forms of ``text``'s words, numbers and small words aside."""
    return {f for _, _, w, f in forms(text) if f and w not in STOPWORDS and not is_number(f)}


def _lacks(part: str) -> frozenset[str]:
    """The content words after each "no" of ``part`` up to a small word ("no visitor car
    park", "no sauna"); "no charge" too, which :func:`_denies` never reads as a denial of
    "free" since a question asking "free" does not name "charge"."""
    found = forms(part)
    out: set[str] = set()
    for k, (_, _, word, _) in enumerate(found):
        if word != "no":
            continue
        for _, _, after, value in found[k + 1 : k + 4]:
            if after in STOPWORDS or not value:
                break
            out.add(value)
    return frozenset(out)


def _group_days(said: Collection[str]) -> frozenset[str]:
    """The weekdays of the :data:`DAY_GROUPS` in ``said`` ("weekends": Saturday, Sunday)."""
    return frozenset(d for g in DAY_GROUPS.keys() & said for d in DAY_GROUPS[g])


def _opposites(said: Collection[str]) -> frozenset[str]:
    """The opposites (:data:`OPPOSITES`) of the values ``said`` ("open": "closed")."""
    return frozenset(OPPOSITES[f] for f in said if f in OPPOSITES)


def _days_left_out(
    part: str,
    said: frozenset[str],
    head: frozenset[str],
    clause: Sentence,
    every: frozenset[str],
    daily: bool,
) -> list[Sentence]:
    """A clause of the days a clause's opening days leave out ("open weekdays only"; a range
    or group, "open Tuesday to Sunday", where its text has no every-day clause: ``daily``),
    stating the opposite ("closed" on Monday); none for another clause. ``every``: the days
    its text names nowhere, the only ones it may imply. Its days are its forms and
    ``implied``, not its own (a clause naming a day stays the closest)."""
    days, flipped = said & frozenset(WEEKDAYS), _opposites(said)
    other = _grouped(set(every - days))
    if not days or not flipped or not other:
        return []
    spans = not daily and days | every == frozenset(WEEKDAYS)
    if "only" not in words(part) and not (spans and len(_days(part) & days) > 1):
        return []
    return [
        replace(
            clause,
            forms=other | flipped | head,
            own=flipped,
            amounts=frozenset(),
            implied=other,
        )
    ]


def _names(text: str, found: Sequence[_Word]) -> frozenset[str]:
    """The forms of the capitalised words of ``found`` in ``text``: names, no number, day
    or small word."""
    return frozenset(
        f
        for start, _, w, f in found
        if f
        and text[start].isupper()
        and w not in STOPWORDS
        and not _is_value(f)
        and f not in CALENDAR
    )


def _kind(unit: str) -> str:
    """What ``unit`` measures: ``time``, ``money`` or itself."""
    return "time" if unit in _TIME_UNITS else "money" if unit in _MONEY | {"cent"} else unit


def unit_clashes(text: str, context: Collection[str]) -> frozenset[int]:
    """Where ``text`` states a number of a measure (``48`` of "48 hours") that the context
    states only of other measures ("48 minutes"), in clauses sharing none of its sentence's
    words, neither worked out nor the asker's own: another fact, never stated, not a
    misreading of the same one."""
    if not isinstance(context, ContextWords) or not context.quantities:
        return frozenset()
    key = (text, "clashes")
    if key not in context._memo:
        units: dict[str, set[str]] = {}
        for sentence in context.quantities:
            for q in sentence:
                units.setdefault(q.value, set()).add(q.unit)
        worked = derived_values(text, context)
        clashes: set[int] = set()
        for a, b in split_sentences(text) or [(0, len(text))]:
            subject = subject_forms(text[a:b])
            for start, q in quantities(text[a:b]):
                measured = (
                    q.unit in UNIT_FORMS  # the currencies too
                    and q.value not in worked | context.told
                    and not any(x.value == q.value for x in context.asked_values)
                )
                elsewhere = (  # "48 hours" where only "48 minutes" is stated
                    q.value in units
                    and all(_kind(u) == _kind(q.unit) for u in units[q.value])  # hours, minutes
                    and not any(_same_unit(u, q.unit) for u in units[q.value])
                )
                clocked = (  # "for 30 days" where only "17:30" writes a 30 (not "30
                    q.value in context.clocked  # minutes": 9:00 to 9:30)
                    and q.unit not in _CLOCK_SPANS
                    and not clock_time(text, a + start)
                )
                if (
                    measured
                    and (elsewhere or clocked)
                    and not any(  # only unrelated clauses state it
                        subject & c.forms for c in context.sentences if q.value in c.forms
                    )
                ):
                    clashes.add(a + start)
        context._memo[key] = frozenset(clashes)
    return frozenset(context._memo[key])


def misread_spans(text: str, context: Collection[str]) -> Spans:
    """Spans of ``text`` stating what the context (a :class:`ContextWords`, memoised) does
    not: another subject's number, an opposite, a ``Yes`` it contradicts, a lone negation."""
    if not isinstance(context, ContextWords) or not context.sentences:
        return []
    key = (text, "misread")
    if key not in context._memo:
        context._memo[key] = _find_misread(text, context)
    return list(context._memo[key])


def _find_misread(text: str, context: ContextWords) -> Spans:
    spans: Spans = []
    for s_start, s_end in split_sentences(text) or [(0, len(text))]:
        part = _unled(text[s_start:s_end])  # "The answer is: No." replies "No."
        found = forms(part)
        content = {f for _, _, w, f in found if f and w not in STOPWORDS}
        names = named_numbers(part, found, context.named)  # "14" of "the Aero 14"
        subject = frozenset(f for f in content if not _is_value(f))
        subject = _with_names(subject, found, names)
        if not subject - _VALUE_VERBS - _UNIT_WORDS:  # "Every 10 minutes." to "On Sundays?"
            subject |= context.asked & CALENDAR
        words = [w for _, _, w, _ in found]
        reply = _reply_end(part, words)
        negators = [
            k
            for k, (start, _, word, value) in enumerate(found)
            if (
                (word in NEGATIONS and value != "free" and start >= reply)
                or (word == "t" and k and part[start - 1] in "'’")
            )
            and words[k + 1 : k + 2] != ["necessarily"]  # a hedge, not a negation
            and not _LIMIT_AFTER.match(part, found[k][1])  # "no more than 8": a limit
            and not _CONDITION.search(part[:start])  # the reader's case, not a claim
        ]
        opposed = [k for k, item in enumerate(found) if item[3] in OPPOSITES]
        # "does not open" states "closed": the negation is read with the word
        flips = {j: k for k in opposed for j in negators if k - 3 <= j < k}
        # "open ... every day except Mondays": the open days are not the days excepted
        excepted = frozenset(f for m in _EXCEPT_DAYS.finditer(part) for f in _content(m[1]))
        for k in opposed:
            start, end, _, value = found[k]
            (a, b), (c, d) = _clause_span(part, start), _comma_span(part, start)
            clause = _content(part[a:b]) - excepted
            said = OPPOSITES[value] if k in flips.values() else value
            segment = _content(part[max(a, c) : min(b, d)]) - excepted
            piece = _joined_reading(part, start, (a, b), said, context)
            if (
                piece
                if piece is not None
                else (
                    _opposed(said, clause, context)
                    or (segment != clause and len(segment) > 1 and _opposed(said, segment, context))
                )
            ):
                spans.append((s_start + start, s_start + end))
        # the clauses a reply answers ("No." to "... open on Sundays?"), unless its own
        # words name another place's page
        replied = s_start == 0 and words[:1] in (["yes"], ["no"])
        answered = answered_clauses(context) if replied else []
        answered = [] if answered and _elsewhere(part, found, answered, context) else answered
        # a reply; a "No" to a qualifier the context lacks is judged by the words after it
        qualified = words[:1] == ["no"] and not context.asked <= context.forms
        if replied and not qualified:
            asked = [v for v in context.asked if v in OPPOSITES]
            claimed = [OPPOSITES[v] for v in asked] if words[0] == "no" else asked
            if any(_said_by((v, OPPOSITES[v]), answered) == {OPPOSITES[v]} for v in claimed) or (
                words[0] == "no" and _said_free(answered, context)  # "Is it free for ...?"
            ):
                spans.append((found[0][0], found[0][1]))
        sentence = _closest(subject, context)
        bounds = {
            at: decided
            for at, bound in limits(part)
            if (decided := _bound_held(bound, subject, context)) is not None
        }
        if not negators:  # "On Mondays." for the South district: its page says Thursdays
            spans += [(s_start + a, s_start + b) for a, b in _other_days(found, subject, context)]
        if sentence[1][1] == 0 and words not in (["yes"], ["no"]) and not bounds:
            if (  # "Yes." to "Is there a garden waste collection in the South district?"
                words[:1] == ["yes"]
                and _yes_denied(s_start, negators, subject, sentence[2], answered, context)
                and not any(s_start <= a < s_end for a, _ in spans)  # "Fridays" says it
            ):
                spans.append((found[0][0], found[0][1]))
            continue
        worked = derived_values(part, context)
        units = {s_start + at: q.unit for at, q in quantities(part)}
        clashes = unit_clashes(part, context)
        limited = [c for _, clauses in bounds.values() for c in clauses]
        runs = _number_runs(part, found, context)  # "0800 555 123" as one clause writes it
        for k, (start, end, _, value) in enumerate(found):
            if not is_number(value) or value in context.told or k in names | runs:
                continue
            stated = value in context.forms and start not in clashes
            if start in bounds and stated:  # "no more than 8 tablets": such limits decide
                spans += [] if bounds[start][0] else [(s_start + start, s_start + end)]
                continue
            unit = units.get(s_start + start, "")
            if value in worked or (
                _COMPARED.search(part[:start]) and _stated_now(value, unit, context)
            ):
                continue  # "4.50 euros instead of 6 euros": the other pool's 6
            span = _listed_span(part, start, *_clause_span(part, start))
            overlap, best, closest = _closest_in(part, span, sentence, context)
            if not stated:  # never stated (of this unit)
                if _restated(found, k, closest, content):
                    spans.append((s_start + start, s_start + end))
                continue
            if any((value, unit) in c.amounts for c in limited):  # "in 24 hours" of that limit
                continue
            held = max(  # "23 kg" is not held by "55 x 40 x 23 cm"
                (
                    n
                    for s, n in zip(context.sentences, overlap)
                    if value in s.forms and s.measures(value, unit)
                ),
                default=_NONE,
            )
            rival = any(  # a number of the same kind ("16" no rival of "2026", "45 €" of "50%")
                value not in s.forms
                and any(_alike(f, value, unit, context) for f in s.forms - content - s.derived)
                for s in closest
            )
            if (
                held < best
                and rival
                and not _disputed(value, held, best, overlap, context)
                and not _piece_holds(part, start, span, value, context)
                and not _held_where_asked(value, closest, context)
                and not _held_now(value, subject, closest, context)
            ) or _asked_elsewhere(value, unit, _local(part, start, span), context):
                spans.append((s_start + start, s_start + end))
        spans += [
            (s_start + a, s_start + b)
            for (a, b), _ in _price_misread(part, found, (reply, worked), context)
        ]
        if (
            words[:1] == ["yes"]
            and _yes_denied(s_start, negators, subject, sentence[2], answered, context)
            and not any(s_start <= a < s_end for a, _ in spans)  # an opposite says it
        ):
            spans.append((found[0][0], found[0][1]))
        for k in (k for k in negators if k not in flips):  # flips were checked above
            near = _closest_in(part, _clause_span(part, found[k][0]), sentence, context)
            only = words[k + 1 : k + 2] == ["unless"] and any(  # "not unless": "only ... unless"
                {"only", "unless"} <= c.forms for c in near[2]
            )
            if not only and not any(c.negated for c in near[2]):
                start = found[k - 1][0] if found[k][2] == "t" else found[k][0]
                spans.append((s_start + start, s_start + found[k][1]))
    return spans


_COMPARED = re.compile(
    r"\b(?:instead\s+of|compared\s+(?:with|to)|versus|vs\b\.?|as\s+against)\s[^\d,;:.!?]{0,30}$",
    re.IGNORECASE,
)
"""What sets a number against the answer's own ("4.50 euros instead of 6 euros",
"compared with the Riverside pool's 6 euros"): the other thing's, compared."""


def _stated_now(value: str, unit: str, context: ContextWords) -> bool:
    """Whether a current clause (no out-of-date page) states ``value`` (of ``unit``)."""
    return any(c.states(value, unit) for c in context.sentences if c.doc not in context.stale)


def _yes_denied(
    s_start: int,
    negators: Sequence[int],
    subject: frozenset[str],
    closest: Sequence[Sentence],
    answered: Sequence[Sentence],
    context: ContextWords,
) -> bool:
    """Whether an answer's opening "Yes" (no negation after it) is denied: by the clauses
    closest to its words, sharing two of them ("Yes, lanes can be booked on Sundays." where
    the clause says "not permitted"), or by those the reply answers ("Can I print at the
    branch?"; "Yes, on Fridays." to "Is there a garden waste collection in the South
    district?", whose page says there is none)."""
    if s_start or negators:
        return False
    shared = frozenset.intersection(*(c.forms for c in closest)) if closest else frozenset()
    return (len(subject & shared) >= 2 and _denied(closest, context)) or _denied(answered, context)


def _reply_end(part: str, words: Sequence[str]) -> int:
    """Where a sentence's reply ends: after "No, ..." or a bare "No"/"Yes" (a reply, not a
    negation), else 0."""
    lead = _REPLY.match(part)
    return lead.end() if lead else len(part) if words in (["no"], ["yes"]) else 0


def _said_free(answered: Sequence[Sentence], context: ContextWords) -> bool:
    """Whether the question asks if something is free and the clauses answering it say it
    is ("The collection is free for residents over 75."), none negated and none pricing it
    ("free for members and 5 euros a day for everyone else"): a "No" misreads."""
    asked = context.asked & _FREE_FORMS
    priced = any(unit in _MONEY for c in answered for _, unit in c.amounts)
    return bool(asked) and not priced and any(c.own & asked and not c.negated for c in answered)


def _other_days(
    found: Sequence[_Word], subject: frozenset[str], context: ContextWords
) -> list[tuple[int, int]]:
    """The weekdays of a sentence that the current clauses closest to its subject (with the
    question's, for a bare "On Mondays.") give other days for, while another clause states
    them: "On Mondays." for the South district, whose bins go out on Thursdays, the North
    district's on Mondays. A day the question asks (in a group too: "on weekends") is its
    subject, not a value; a day a clause states with the sentence's numbers ("and on
    Saturdays from 10:00 to 14:00") is that clause's; a day the current page most about
    the question gives is its answer, whatever page shares more of the sentence's words
    (:func:`_held_where_asked`)."""
    asked = context.asked.union(*(DAY_GROUPS[g] for g in context.asked & DAY_GROUPS.keys()))
    days = [(a, b, f) for a, b, _, f in found if f in WEEKDAYS and f not in asked]
    if not days or any(f in OPPOSITES for *_, f in found):  # "open"/"closed" days: opposites
        return []
    own = subject - CALENDAR - _VALUE_VERBS - _UNIT_WORDS
    if len(own) < 2:  # "They are collected on Mondays.": what the question asks
        own |= _asked_forms(context) - CALENDAR
    if kinds := _of_other_kinds(subject, context):  # the North district's Fridays, for the South
        theirs, ours = (
            frozenset().union(
                *(c.own | c.named_days for c in context.sentences if (c.doc in kinds) == other)
            )
            for other in (True, False)
        )
        if taken := [(a, b) for a, b, f in days if f in theirs and f not in ours]:
            return taken
    overlap, best, closest = _closest(own, context)
    now = [(c, n) for c, n in zip(context.sentences, overlap) if c.doc not in context.stale]
    if now:  # the current pages' closest clauses, an archived page's closer ones aside
        best = max(n for _, n in now)
        closest = [c for c, n in now if n == best]
    covered = [c.own | c.named_days | c.implied for c in closest]
    pages = {c.doc for c in closest}
    going_on = [  # ", and on Saturdays from 10:00": the days of the same subject
        c.own | c.named_days
        for c, n in zip(context.sentences, overlap)
        if c.doc in pages and n[:2] == best[:2] and not _subject_words(c.own)
    ]
    if best[1] < 2 or not closest or not all(set(WEEKDAYS) & days_ for days_ in covered):
        return []
    stated = frozenset().union(*(c.own | c.named_days for c in context.sentences))
    asked_now = _asked_page(context) not in context.stale  # not an archived page's days
    values = {f for *_, f in found if is_number(f)}
    with_values = frozenset().union(
        *(c.own | c.named_days for c in context.sentences if values & c.forms)
    )
    return [
        (a, b)
        for a, b, f in days
        if f in stated
        and f not in with_values
        and not any(f in d for d in covered + going_on)
        and not (asked_now and _held_where_asked(f, closest, context))  # the page asked's
    ]


def _subject_words(own: frozenset[str]) -> frozenset[str]:
    """A clause's own words naming what it is about: no day, number, time or small word."""
    return frozenset(
        f
        for f in own - CALENDAR - STOPWORDS - HOURS_FORMS - _VALUE_VERBS - _UNIT_WORDS
        if not is_number(f)
    )


_RUN_GAP = re.compile(r"[ \u00a0]")
"""What parts the numbers of one code ("0800 555 123"); not a range's "-" ("9-17")."""


def _number_runs(part: str, found: Sequence[_Word], context: ContextWords) -> set[int]:
    """The indices in ``found`` of runs of two or more numbers written as one code (a phone
    number, a reference) whose values one clause of the context holds together: the code
    is held there, whatever the clause closest to the sentence's words states."""
    out: set[int] = set()
    run: list[int] = []
    for k in [*range(len(found)), None]:
        if (
            k is not None
            and is_number(found[k][3])
            and (not run or _RUN_GAP.fullmatch(part[found[run[-1]][1] : found[k][0]]))
        ):
            run.append(k)
            continue
        values = {found[j][3] for j in run}
        long = any(len(found[j][2]) > 2 for j in run)  # a code, not "2 3"
        if len(run) > 1 and long and any(values <= c.forms for c in context.sentences):
            out.update(run)
        run = [k] if k is not None and is_number(found[k][3]) else []
    return out


_PRICE_FORMS = frozenset(
    form(w) for w in words("price pay paid charge charged fee cost free nothing")
)
"""What a price or its absence is said with ("costs", "free of charge"): not what is priced."""
_PRICE_PIECE = re.compile(r"[,;:]|\s(?:and|but|or|while|whereas|so)\s", re.IGNORECASE)
"""Where the piece of an answer naming what a price is for ends ("no extra charge" of "...
valid on the N4 and there is no extra charge")."""
_FREE_FORMS = frozenset(form(w) for w in words("free included includes complimentary"))
"""A clause saying so prices more than one thing ("frames at $39 ... lenses included")."""


def _thing(word_form: str) -> str:
    """``word_form`` without a verb's "-ing" ("blocking" of "block"), to match a priced thing."""
    return word_form[:-3] if word_form.endswith("ing") and len(word_form) > 6 else word_form


def price_disputes(text: str, context: Collection[str]) -> dict[int, list[str]]:
    """The current texts whose clause reads a price or a "free" of ``text`` otherwise
    (:func:`_price_misread`), with those words: "A second bin is free." is disputed by the
    page pricing a second bin, whatever other page says something else is free."""
    if not isinstance(context, ContextWords) or not context.sentences:
        return {}
    out: dict[int, list[str]] = {}
    for s_start, s_end in split_sentences(text) or [(0, len(text))]:
        part = _unled(text[s_start:s_end])
        found = forms(part)
        words = [w for _, _, w, _ in found]
        read = (_reply_end(part, words), derived_values(part, context))
        for (a, b), docs in _price_misread(part, found, read, context):
            for doc in sorted(docs):
                said = out.setdefault(doc, [])
                said += [part[a:b]] if part[a:b] not in said else []
    return out


def _price_misread(
    part: str, found: Sequence[_Word], read: tuple[int, frozenset[str]], context: ContextWords
) -> list[tuple[tuple[int, int], frozenset[int]]]:
    """The amounts and "free"s of ``part`` the current context states otherwise of the thing
    priced, each with the texts of the clauses stating so: a price where the clause naming it
    most closely says it is free ("Blocking a card is free of charge, and a replacement card
    costs 10 euros." against "blocking a card costs 10 euros"), "free" where that clause gives
    a price ("A replacement card is free."). ``read``: where its reply ends and the values it
    works out ("€14 for the two of you")."""
    reply, worked = read
    kinds = _of_other_kinds(frozenset(f for *_, f in found if f), context)
    current = [c for c in context.sentences if c.doc not in context.stale | kinds]
    paid = [any(u in _MONEY for _, u in c.amounts) for c in current]
    priced = [c for c, p in zip(current, paid) if p and not c.own & _FREE_FORMS]
    free = [c for c, p in zip(current, paid) if "free" in c.own and not p]
    if not kinds and (not priced or not free):  # else the South's price, the North's free
        return []
    money = {at for at, q in quantities(part) if q.unit in _MONEY and q.value not in worked}
    negated = [end for _, end, w, _ in found if w in NEGATIONS | {"t"}]
    asked = {_thing(f) for f in context.asked - _PRICE_FORMS}  # "Yes, it costs 10 euros."
    named = [
        (s, f)
        for s, _, w, f in found
        if f
        and w not in STOPWORDS | LIGHT_WORDS | {"yes", "no"}
        and f not in _PRICE_FORMS | UNIT_FORMS | _UNIT_WORDS
        and not is_number(f)
    ]
    spans: list[tuple[tuple[int, int], frozenset[int]]] = []
    for start, end, _, value in found:
        said_free = value == "free" and start >= reply
        if said_free and any(start - 12 < n <= start for n in negated):  # "not free"
            continue
        if start not in money and not said_free:
            continue
        a = max((m.end() for m in _PRICE_PIECE.finditer(part, 0, start)), default=0)
        b = next((m.start() for m in _PRICE_PIECE.finditer(part, end)), len(part))
        things = {_thing(f) for s, f in named if a <= s < b}
        things = things or (set() if named else asked)
        best_free, best_priced = (
            max((_named(things, c) for c in cs), default=0) for cs in (free, priced)
        )
        if said_free and best_priced > max(best_free, 1):
            docs = {c.doc for c in priced if _named(things, c) == best_priced}
            spans.append(((start, end), frozenset(docs)))
        elif (
            not said_free
            and best_free > max(best_priced, 1)  # two things named: "blocking a card"
            and not any(value in c.forms for c in free)
        ):
            docs = {c.doc for c in free if _named(things, c) == best_free}
            spans.append(((start, end), frozenset(docs)))
    return spans


def _named(things: Collection[str], clause: Sentence) -> int:
    """How many of ``things`` (:func:`_thing` forms) ``clause`` names."""
    return len(set(things) & {_thing(f) for f in clause.own})


_AT_MOST = re.compile(
    r"\b(?:(?:no|not|never|n['’]t)\s+(?:\w+\s+){0,2}?(?:more|higher|longer)\s+than|up\s+to"
    r"|at\s+most|(?:a\s+)?max(?:imum|\.)?(?:\s+of)?|not\s+(?:to\s+)?exceed(?:ing)?"
    r"|(?:less|fewer)\s+than)\s+$",
    re.IGNORECASE,
)
_AT_LEAST = re.compile(
    r"\b(?:at\s+least|(?:a\s+)?min(?:imum|\.)?(?:\s+of)?|(?:more|longer)\s+than"
    r"|(?:no|not)\s+(?:less|fewer)\s+than)\s+$",
    re.IGNORECASE,
)


_LIMIT_AFTER = re.compile(
    r"\s+(?:\w+\s+){0,2}?(?:(?:more|less|fewer|longer|higher)\s+than|(?:to\s+)?exceed)\b",
    re.IGNORECASE,
)
"""What follows the "no" of a limit ("no more than", "must not take more than")."""


_OR_BEYOND = re.compile(
    r"[\d.,]*\s+(?:[a-z]+\s+)?(?:or|and)\s+(over|more|older|above|higher|under|less|younger|below"
    r"|fewer)\b",
    re.IGNORECASE,
)
"""A limit after its number ("21 or over", "6 years or younger")."""
_ABOVE = frozenset({"over", "more", "older", "above", "higher"})


def limits(text: str) -> list[tuple[int, tuple[str, str, str]]]:
    """``(start, (side, value, unit))`` for each number of ``text`` a limit leads or follows
    ("most" of "no more than 8 tablets", "Do not take more than 8", "up to 8"; "least" of
    "at least 6 hours", "aged 21 or over"): two wordings of one limit read alike."""
    out = []
    for start, q in quantities(text):
        before = text[max(0, start - 40) : start]
        after = _OR_BEYOND.match(text, start)
        side = "most" if _AT_MOST.search(before) else "least" if _AT_LEAST.search(before) else ""
        side = side or (after and ("least" if after[1].lower() in _ABOVE else "most")) or ""
        if side:
            out.append((start, (side, q.value, q.unit)))
    return out


def _bound_held(
    bound: tuple[str, str, str], subject: frozenset[str], context: ContextWords
) -> tuple[bool, list[Sentence]] | None:
    """Whether the current clauses stating a limit of the side and unit of an answer's
    ``bound`` (:func:`limits`: "no more than 8 tablets") and closest to ``subject`` and the
    question (by their
    own words, then those they take from the sentence before) state its number, and those
    clauses: they decide it, not a clause sharing more words with no such limit (the adults'
    "take 1 or 2 tablets" beside "Do not take more than 8 tablets in 24 hours"); ``None``
    where no clause states such a limit or the closest disagree."""
    side, value, unit = bound
    past = context.stale | context.turns
    limited = [
        c
        for c in context.sentences
        if c.doc not in past and any(b[0] == side and b[2] == unit for b in c.bounds)
    ]
    if not limited:
        return None
    rank = [
        (
            len(subject & c.own),
            len(context.asked & c.own),
            len(subject & c.forms),
            _asked_in(context.asked, c),
        )
        for c in limited
    ]
    best = [c for c, n in zip(limited, rank) if n == max(rank)]
    said = {(side, value, unit) in c.bounds for c in best}
    return (said.pop(), best) if len(said) == 1 else None


_SOURCE_NOUN = r"(?:context|information|documents?|sources?|texts?|passages?|documentation)"
_LEAD_IN = re.compile(
    r"\s*(?:(?:the\s+(?:short\s+)?answer\s+is|answer)\s*:?\s+"
    r"|(?:based\s+on|according\s+to|from|given|as\s+(?:stated|mentioned|described)\s+in)\s+"
    rf"(?:the\s+|this\s+)?(?:(?:provided|given|above|available|retrieved)\s+)?{_SOURCE_NOUN}"
    r"(?:\s+(?:information|provided|given|above|below)){0,2}\s*,\s*)+(?=\S)",
    re.IGNORECASE,
)
"""A model's lead-in ("The answer is: No.", "Based on the context information, yes."):
it names the sources or the answer, no words of the claim."""


def _unled(sentence: str) -> str:
    """``sentence`` with a lead-in (:data:`_LEAD_IN`) blanked, its offsets kept."""
    lead = _LEAD_IN.match(sentence)
    return " " * lead.end() + sentence[lead.end() :] if lead else sentence


def unled(text: str) -> str:
    """``text`` with each sentence's lead-in blanked ("Based on the context, the fee is
    45 euros." reads "the fee is 45 euros."), its offsets kept: what an answer claims."""
    spans = split_sentences(text) or [(0, len(text))]
    return (
        "".join(
            text[end_before:start] + _unled(text[start:end])
            for (start, end), end_before in zip(spans, [0, *(e for _, e in spans)])
        )
        + text[spans[-1][1] :]
    )


_NAME_BEFORE = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][\w'-]*)\s+((?:[a-z][\w-]*\s+)?[a-z][\w-]*)")
"""A capitalised word not opening a sentence and the one or two words after it."""


def _variants(texts: Sequence[str], headings: Sequence[tuple[str, list[str]]]) -> dict[str, str]:
    """:attr:`ContextWords.variants` of ``texts`` and of their ``headings`` (:func:`_headings`),
    each with its name and noun as first written (:attr:`ContextWords.kind_names`)."""
    by_noun: dict[str, dict[str, str]] = {}
    for text in texts:
        for name, after in _NAME_BEFORE.findall(text):
            written = after.split()
            for k, noun in enumerate(written):
                if noun.lower() not in STOPWORDS:
                    named = by_noun.setdefault(form(noun.lower()), {})
                    named.setdefault(form(name.lower()), " ".join([name, *written[: k + 1]]))
    for first, rest in headings:  # "Resident parking permit." over its page
        named = by_noun.setdefault(form(rest[-1].lower()), {})
        named.setdefault(form(first.lower()), " ".join([first, *rest]).lower())
    out: dict[str, str] = {}
    for names in by_noun.values():
        for n, phrase in names.items() if len(names) > 1 else ():
            out.setdefault(n, phrase)
    return out


_HEADING = re.compile(r"([A-Z][a-z]+)((?:\s+[A-Za-z][a-z]+){1,3})\.(?=\s|$)")
"""A text's opening heading: two to four words, then a full stop ("Visitor parking
permit. Visitor permits are sold ...")."""


def _headings(texts: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The first word and the rest of each text's opening heading (no small word), where
    another text's heading ends in the same words after another first word: kinds of one
    thing, which pages about each write in lower case ("a resident parking permit")."""
    found = []
    for text in texts:
        m = _HEADING.match(text)
        if m and not {w.lower() for w in (m[1], *m[2].split())} & STOPWORDS:
            found.append((m[1], m[2].split(), tuple(m[2].lower().split())))
    firsts: dict[tuple[str, ...], set[str]] = {}
    for first, _, end in found:
        firsts.setdefault(end, set()).add(first.lower())
    return [(first, rest) for first, rest, end in found if len(firsts[end]) > 1]


def _heading_names(
    sentences: list[Sentence], headings: Sequence[tuple[str, list[str]]]
) -> list[Sentence]:
    """``sentences`` with each kind of ``headings`` (:func:`_headings`) among the names of a
    clause writing it with its noun ("a resident parking permit costs 60 euros")."""
    nouns = {form(first.lower()): form(rest[-1].lower()) for first, rest in headings}
    if not nouns:
        return sentences
    return [
        replace(s, names=s.names | {k for k, noun in nouns.items() if {k, noun} <= s.forms})
        for s in sentences
    ]


def _narrower(
    clause: Sentence,
    near: Sequence[Sentence],
    value: str,
    unit: str,
    subject: frozenset[str],
    context: ContextWords,
) -> bool:
    """Whether ``clause`` names what neither the question nor the answer does ("the Student
    debit card") while a clause stating ``value`` names nothing more: of a narrower
    subject, it rivals no answer about the plain one."""
    if not (clause.names - context.asked - subject) & context.variants:
        return False
    holding = [c for c in near if c.states(value, unit)]
    return any(not c.names - context.asked - subject for c in holding)


def narrower_page(doc: int, value: str, sentence: str, context: ContextWords) -> bool:
    """Whether every clause of text ``doc`` stating a number on the subject of ``sentence``
    and the question names what neither does (the Student card's limits), while a clause
    of another text stating ``value`` names nothing more: that text disputes nothing of an
    answer about the plain subject (:func:`_narrower`, read by page)."""
    subject = subject_forms(sentence) | context.asked

    def extra(c: Sentence) -> frozenset[str]:
        return (c.names - subject) & context.variants

    mine = [
        c
        for c in context.sentences
        if c.doc == doc and subject & c.forms and any(map(is_number, c.own))
    ]
    holding = [c for c in context.sentences if c.doc != doc and value in c.own]
    return bool(mine) and all(map(extra, mine)) and any(not extra(c) for c in holding)


def _limit_rivals(
    bound: tuple[str, str, str] | None, subject: frozenset[str], context: ContextWords
) -> frozenset[int]:
    """For a limit of the answer (``bound``, :func:`limits`) another text states ("up to 12
    tablets" of an archived leaflet's "Do not take more than 12 tablets") where the current
    clauses deciding such limits (:func:`_bound_held`) state another: the texts of those
    clauses."""
    decided = _bound_held(bound, subject, context) if bound else None
    if decided is None or decided[0] or not any(bound in c.bounds for c in context.sentences):
        return frozenset()
    return frozenset(c.doc for c in decided[1])


def _local(part: str, at: int, span: tuple[int, int]) -> frozenset[str]:
    """The subject forms of the comma piece of ``part`` holding ``at`` inside ``span`` ("the
    three extra ones are €15 each", not the session the sentence names before it)."""
    return _content(part[slice(*_comma_piece(part, at, span))], values=False)


def _comma_piece(part: str, at: int, span: tuple[int, int]) -> tuple[int, int]:
    """The bounds of the comma piece of ``part`` holding ``at``, inside ``span``."""
    c, d = _comma_span(part, at)
    return max(span[0], c), min(span[1], d)


def _asked_elsewhere(value: str, unit: str, subject: frozenset[str], context: ContextWords) -> bool:
    """Whether the answer took ``value`` from clauses lacking a word its piece (``subject``)
    shares with the question ("The warranty on laptops is 30 days" of "return any laptop
    within 30 days") while a current clause holding all those words states another amount
    of its kind ("a 2-year warranty"): the number of another subject, not a rewording."""
    echo = subject & context.asked - CALENDAR - _UNIT_WORDS - _VALUE_VERBS
    stating = [c for c in context.sentences if c.states(value, unit) and subject & c.forms]
    if not echo or not stating or any(echo <= c.forms for c in stating):
        return False
    kind = _kind(unit)

    def another(clause: Sentence) -> bool:  # an amount of the value's kind, not the value
        return any(
            v != value and _year(v) == _year(value) and _kind(u) == kind for v, u in clause.amounts
        )

    other = context.stale | _of_other_kinds(subject, context)
    return any(
        echo <= c.forms and c.doc not in other and not c.states(value, unit) and another(c)
        for c in context.sentences
    )


def _held_now(
    value: str, subject: frozenset[str], closest: Sequence[Sentence], context: ContextWords
) -> bool:
    """Whether the clauses closest to an answer's number are all on pages marking
    themselves out of date while the current pages' closest clauses state the number
    ("port 7400" beside a deprecated page's "listened on port 6400"): history, not a
    misreading."""
    if not closest or any(c.doc not in context.stale for c in closest):
        return False
    skip = context.stale | context.turns  # the question's words deciding too
    return any(value in c.forms for c in _closest_outside(subject, context, skip, whole=True))


def _elsewhere(
    part: str, found: Sequence[_Word], answered: Sequence[Sentence], context: ContextWords
) -> bool:
    """Whether the reply ``part`` names a place no page of ``answered`` holds and another
    page does ("No, the Riverside clinic is closed on Fridays." to "What about the other
    clinic?" after a question on the Northgate clinic): its own words say what it answers."""
    named = _names(part, found[1:])
    pages = {c.doc for c in answered}
    held = [_page_forms(context, d) for d in {c.doc for c in context.sentences} - pages]
    return any(
        not any(n in _page_forms(context, d) for d in pages) and any(n in f for f in held)
        for n in named
    )


def _denied(clauses: Sequence[Sentence], context: ContextWords) -> bool:
    """Whether each page of ``clauses`` (those a reply answers) denies it."""
    return bool(clauses) and all(_denying(clauses, context).values())


def _denying(clauses: Sequence[Sentence], context: ContextWords) -> dict[int, bool]:
    """Whether each page of ``clauses`` denies a "Yes" (:func:`_denies`): all its clauses
    stating most of the question's subject words do (a clause after ";" that only inherits
    the subject, "the nearest garage is on Dock Street", says nothing of it, nor "take
    garden waste to the recycling centre" after "There is no garden waste collection in the
    South district")."""
    subject = context.asked - CALENDAR - OPPOSITES.keys()
    out: dict[int, bool] = {}
    for doc in dict.fromkeys(c.doc for c in clauses):
        page = [c for c in clauses if c.doc == doc]
        most = max(len(c.own & subject) for c in page)
        own = [c for c in page if len(c.own & subject) == most]
        out[doc] = all(_denies(c, subject) for c in own)
    return out


def _denies(clause: Sentence, subject: frozenset[str]) -> bool:
    """Whether ``clause`` denies a "Yes" to a question about ``subject``: with a verb's
    negation ("does not offer printing"), or by "no" before a word of it ("There is no
    sauna" to "Does the gym have a sauna?"; not "no charge", which a "Yes" to "Is it
    free?" agrees with)."""
    return bool((clause.negates and _NOT & clause.forms) or clause.lacks & subject)


_NOT = frozenset({"not", "never", "cannot", "t"})

_VALUE_VERBS = frozenset(map(form, _set("cost costs charge charges run runs pay")))
"""Verbs that state an amount: a page saying "runs ... for 240" rivals one "costs 190"."""
_UNIT_WORDS = _TIME_UNITS | _MEASURES | {"per"}
"""The words of a bare amount ("25 days", "4 days per week"): no subject of their own."""


def numbered_names(text: str, named: Collection[tuple[str, str]] | None = None) -> frozenset[str]:
    """The names ending in a number ``text`` writes ("line 14" of "Line 14 runs ..."; with
    ``named``, only those the context writes so)."""
    found = forms(text)
    return _joined_names(found, named_numbers(text, found, named))


def name_number_starts(
    text: str, named: Collection[tuple[str, str]] | None = None
) -> frozenset[int]:
    """Where the numbers of the names :func:`numbered_names` reads in ``text`` start."""
    found = forms(text)
    return frozenset(found[k][0] for k in named_numbers(text, found, named))


def closest_texts(text: str, context: ContextWords) -> frozenset[int]:
    """The texts of ``context`` holding the clauses closest to ``text``'s subject words
    with the question's: those a misreading of ``text`` is read against."""
    subject = subject_forms(text) | context.asked
    near = frozenset(c.doc for c in _closest(subject, context)[2]) if subject else frozenset()
    if _REPLY.match(text) or words(text)[:1] in (["yes"], ["no"]):  # and the clauses it answers
        near |= {c.doc for c in answered_clauses(context)}
    return near


def bare_amount(text: str) -> bool:
    """Whether ``text`` states amounts and no subject of its own ("25 days.", "Up to 4 days
    per week.", "It costs £60."): the question names what they are of."""
    return not subject_forms(text) - _VALUE_VERBS - _UNIT_WORDS


def rival_spans(text: str, context: Collection[str], before: str = "") -> Spans:
    """Spans of ``text``'s numbers (as written) that one source states while another, as
    close to the subject and the question, states another: the sources disagree (a stale
    price page), so the answer is not supported whichever value it took. ``before``: the
    answer's sentence before ``text``, whose subject a pronoun ("They close at ...") takes."""
    return [span for span, _ in rivals(text, context, before)]


def rivals(
    text: str, context: Collection[str], before: str = ""
) -> list[tuple[tuple[int, int], frozenset[int]]]:
    """:func:`rival_spans`, each with the texts of ``context`` (their indices) stating
    another value in its place: the sources a reader is shown disputing it."""
    if not isinstance(context, ContextWords) or not context.sentences:
        return []
    found_rivals: list[tuple[tuple[int, int], frozenset[int]]] = []
    previous = _content(before, values=False)
    for s_start, s_end in split_sentences(text) or [(0, len(text))]:
        part = _unled(text[s_start:s_end])  # "The answer is: No." replies "No."
        found = forms(part)
        content = {f for _, _, w, f in found if f and w not in STOPWORDS}
        names = named_numbers(part, found, context.named)  # "14" of "the Aero 14"
        subject = frozenset(f for f in content if not _is_value(f))
        subject = _with_names(subject, found, names)
        if _EVERY_DAY.search(part):  # "open daily": when, not what (a stale "open daily")
            subject -= _TIME_UNITS
        if found and found[0][2] in _PRONOUNS:  # "They close at 21:00.": the galleries
            subject |= previous
        previous = subject
        value_only = not subject - _VALUE_VERBS - _UNIT_WORDS  # "25 days.", "£60."
        if value_only:  # "£60.", "It costs £60.": the question's subject
            subject |= _asked_forms(context)  # "opened" for "When did it open?"
        whole = _rivals_near(subject, context)
        bare = subject - _slot_names(part, found, context.asked)  # "1991" of "1991 at MIT"
        unslotted = _rivals_near(bare, context) if bare and bare != subject else []
        units = {at: q.unit for at, q in quantities(part)}
        bounds = dict(limits(part))  # "up to 12 tablets"
        earlier = bool(_PAST.search(part))  # it speaks of the time before a change
        for k, (start, end, _, value) in enumerate(found):
            if not is_number(value) or k in names:
                continue
            unit = units.get(start, "")
            if against := _limit_rivals(bounds.get(start), subject, context):
                found_rivals.append((_written(text, s_start + start, s_start + end), against))
                continue
            piece = _piece(part, start, (0, len(part)))  # "costs 60 euros" of ", lunch included"
            held = _holder_near(subject, value, unit, context) if value_only else []
            for near in (whole, _rivals_near(piece, context) if piece else [], unslotted, held):
                changed = {c.doc for c in near if value in c.former}  # "from 128 to 256"
                holders = {c.doc for c in near if c.states(value, unit)}
                holders |= changed if earlier else set()  # "before 3.1 it was 128"
                if not holders and not changed:
                    continue
                asked = max(_asked_by(context, d) for d in holders or changed)
                followed = max(_followed_by(context, d) for d in holders or changed)
                past = context.stale if holders - context.stale else frozenset()
                against = frozenset(
                    c.doc
                    for c in near
                    if c.doc not in holders | past  # an archived page beside a current one
                    and _asked_by(context, c.doc) >= asked  # a page of the question's subject
                    and _followed_by(context, c.doc) >= followed  # "And for contractors?"
                    and not c.states(value, unit)
                    and any(map(is_number, c.own - content))
                    and not _narrower(c, near, value, unit, subject, context)
                )
                if against:
                    found_rivals.append((_written(text, s_start + start, s_start + end), against))
                    break
            else:  # an archived page's value: the current pages' closest clauses rival it
                against = _current_rivals(subject, value, unit, content, context)
                if value_only and not against:  # "At 22:00." of another pool than asked
                    against = _asked_page_rivals(subject, value, unit, content, context)
                if against:
                    found_rivals.append((_written(text, s_start + start, s_start + end), against))
        found_rivals += _name_rivals(part, s_start, found, subject, content, context)
        seen = {span for span, _ in found_rivals}  # a name already rivalled
        found_rivals += [
            r
            for r in _stale_word_rivals(part, s_start, found, subject, context)
            if r[0] not in seen
        ]
    return found_rivals


_ENDED = _set("longer anymore discontinued replaced withdrawn")
"""Words saying something ended ("Line 41 no longer runs"): what an out-of-date page says
of itself, not a value taken from it."""


def of_the_past(text: str) -> bool:
    """Whether ``text`` speaks of an earlier state ("before 3.1 it was 128", "Line 41 no
    longer runs"): an out-of-date page may be its source."""
    return _PAST.search(text) is not None or bool(_ENDED & set(words(text)))


def _stale_word_rivals(
    part: str,
    s_start: int,
    found: Sequence[_Word],
    subject: frozenset[str],
    context: ContextWords,
) -> list[tuple[tuple[int, int], frozenset[int]]]:
    """:func:`rivals` for the words of an answer sentence (no number, none the question
    holds) that only pages marking themselves out of date hold, or a current page only as
    what was renamed or replaced ("dump" of a deprecated page's "qsctl dump", where the
    current CLI page says "qsctl backup"; "apikey" of "instead of the apikey parameter"),
    unless the sentence speaks of that earlier time: the current pages' clauses closest to
    the sentence rival each."""
    past = context.stale | context.turns
    changed, now, then = _page_words(context)
    renamed = changed - _former(part)
    if (not context.stale and not renamed) or _PAST.search(part):
        return []
    only = [
        (start, end)
        for start, end, word, value in found
        if value in (then | renamed) - now - context.asked
        and word not in STOPWORDS | _ENDED
        and not is_number(value)
    ]
    if not only:
        return []
    # the clause saying what was renamed is no closer for holding the old name
    against = frozenset(c.doc for c in _closest_outside(subject - renamed, context, past))
    spans = dict.fromkeys(_identifier(part, a, b) for a, b in only)
    return [((s_start + a, s_start + b), against) for a, b in spans] if against else []


def _page_words(context: ContextWords) -> tuple[frozenset[str], ...]:
    """What the current pages say was renamed or replaced, what they hold otherwise, and
    what the out-of-date pages hold (forms; memoised: every answer sentence reads them)."""
    if "page words" not in context._memo:
        past = context.stale | context.turns
        current = [c for c in context.sentences if c.doc not in past]
        context._memo["page words"] = (
            frozenset().union(*(c.former for c in current)),
            frozenset().union(*(c.forms - c.former for c in current)),
            frozenset().union(*(c.forms for c in context.sentences if c.doc in context.stale)),
        )
    return tuple(context._memo["page words"])


def outdated(word: str, context: Collection[str], sentence: str = "") -> bool:
    """Whether only out-of-date pages state ``word`` of an answer (a number or name as
    written: "22" of "22 days"; every form of it), or, as an amount of its unit in
    ``sentence`` ("4 hours", where a current page's 4 is of tablets), only they state it
    so: a value taken from history."""
    if not isinstance(context, ContextWords) or not context.stale:
        return False
    found = {f for *_, f in forms(word) if f and f not in STOPWORDS}
    _, current, old = _page_words(context)
    if bool(found) and found <= old and not found & current:
        return True
    amounts = {(q.value, q.unit) for _, q in quantities(sentence) if q.unit and q.value in found}
    said = [c for c in context.sentences if amounts & c.amounts]
    # of those, the clauses naming most of what it is said of ("10 kg." of a cabin bag: the
    # archived cabin rule, not the infants' extra 10 kg bag)
    subject = _content(sentence, values=False) - _VALUE_VERBS - _UNIT_WORDS or context.asked
    most = max((len(subject & c.forms) for c in said), default=0)
    said = [c for c in said if len(subject & c.forms) == most]
    return bool(said) and all(c.doc in context.stale for c in said)


def other_kinds_of(word: str, context: Collection[str], sentence: str = "") -> tuple[str, ...]:
    """The kinds ("South district") of the pages that alone state ``word`` of an answer (a
    number, day or name as written), where the question or ``sentence`` names another kind
    of the same thing (:func:`_of_other_kinds`): "25" for the North district, taken from the
    South district's page. Empty where a page of the kind asked, or of none, states it; a
    page about another thing ("the Hilltop pool") neither counts nor disputes."""
    if not isinstance(context, ContextWords) or not context.variants:
        return ()
    found = {f for *_, f in forms(word) if f and f not in STOPWORDS}
    subject = _content(sentence) if sentence else frozenset()
    named = _kinds_named(subject, context)
    other = _of_other_kinds(subject, context)
    nouns = {_noun(context.kind_names[k]) for k in named if k in context.kind_names}
    family = {k for k, phrase in context.kind_names.items() if _noun(phrase) in nouns} - named
    kinds = _page_kinds(context)
    unrelated = {d for d, ks in kinds.items() if ks and not ks & (family | named)}
    said = [c for c in context.sentences if found & (c.own | c.named_days)]
    said = [c for c in said if c.doc not in unrelated]
    if not found or not said or any(c.doc not in other for c in said):
        return ()
    names = sorted({k for c in said for k in kinds[c.doc] & family})
    return tuple(context.kind_names[k] for k in names)


def _noun(phrase: str) -> str:
    """The form of the last word of a kind's name ("district" of "South district")."""
    return form(phrase.split()[-1].lower())


def _identifier(text: str, start: int, end: int) -> tuple[int, int]:
    """The whole name around ``text[start:end]`` as a reader writes it: "units_system" of
    "system", "--file" of "file" (letters, digits, "_", "-", and a "." inside a name)."""

    def inside(i: int) -> bool:
        c = text[i]
        return (
            c.isalnum()
            or c in "_-"
            or (c == "." and 0 < i < len(text) - 1 and text[i + 1].isalnum())
        )

    while start > 0 and inside(start - 1):
        start -= 1
    while end < len(text) and inside(end):
        end += 1
    return start, end


def _asked_page_rivals(
    subject: frozenset[str], value: str, unit: str, content: set[str], context: ContextWords
) -> frozenset[int]:
    """For a bare value ("At 22:00.") another page states: the one page holding most of the
    question's words, when the clauses closest to the question (chat turns aside) all lie
    on it, state no ``value`` and state another number of its kind (Hilltop Pool's "from
    9:00 to 19:00" for "What time does Hilltop Pool close?", where 22:00 is Harbour's)."""
    page = _asked_page(context)
    holders = {c.doc for c in context.sentences if c.states(value, unit)}
    if page is None or not holders or page in holders:
        return frozenset()
    whole = _closest_outside(subject, context, context.turns)
    if not whole or any(c.doc != page for c in whole):
        return frozenset()
    alike = any(_alike(f, value, unit, context) for c in whole for f in c.own - content - c.derived)
    return frozenset({page}) if alike else frozenset()


def _current_rivals(
    subject: frozenset[str], value: str, unit: str, content: set[str], context: ContextWords
) -> frozenset[int]:
    """Where only pages marking themselves out of date, or about another kind of what is
    asked (:func:`_of_other_kinds`), state ``value``: the current pages (as much of the
    question's subject as an out-of-date one) whose clauses closest to ``subject`` state
    another number ("5 euros." from a 2019 archive, beside the current page's "6 euros",
    which names the pool in another sentence and so is not among the closest clauses; "25
    euros." of the South district's page, to a question of the North district's)."""
    holders = {c.doc for c in context.sentences if c.states(value, unit)}
    kinds = _of_other_kinds(subject, context)
    if not holders or holders - context.stale - kinds:
        return frozenset()
    asked = max((_asked_by(context, d) for d in holders - kinds), default=0)

    def numbered(c: Sentence) -> bool:  # the heading "Bulky waste collection." states none
        return any(map(is_number, c.own - content))

    closest = _closest_outside(subject, context, context.stale | kinds, numbered)
    return frozenset(c.doc for c in closest if _asked_by(context, c.doc) >= asked)


def _closest_outside(
    subject: frozenset[str],
    context: ContextWords,
    skip: frozenset[int],
    keep: Callable[[Sentence], bool] | None = None,
    *,
    whole: bool = False,
) -> list[Sentence]:
    """The clauses closest to ``subject`` (value verbs aside) of the texts not in ``skip``
    (of those ``keep`` takes, if given), by the answer's words (``whole``: by the
    question's too, the whole :data:`Overlap`); none when none shares a word."""
    overlap, _, _ = _closest(subject - _VALUE_VERBS, context)
    kept = [
        (c, n)
        for c, n in zip(context.sentences, overlap)
        if c.doc not in skip and (keep is None or keep(c))
    ]
    best = max((n for _, n in kept), default=_NONE)
    fields = len(best) if whole else 3
    return [c for c, n in kept if best[1] and n[:fields] == best[:fields]]


def _holder_near(
    subject: frozenset[str], value: str, unit: str, context: ContextWords
) -> list[Sentence]:
    """The clauses closest to those words of ``subject`` that the clauses stating ``value``
    share most (none when no clause states it): a bare "15 euros." to "How much is an adult
    ticket?" is read with "adult admission costs 15 euros", not the family ticket's price."""
    holders = [c for c in context.sentences if c.states(value, unit)]
    shared = [subject & c.forms for c in holders]
    most = max(map(len, shared), default=0)
    words = frozenset().union(*(s for s in shared if len(s) == most))
    return _rivals_near(words, context) if most and words != subject else []


def _asked_forms(context: ContextWords) -> frozenset[str]:
    """The question's subject forms with the context's forms they stand for (:func:`holds`),
    a state such as "closed" aside."""
    every = frozenset().union(*(c.forms for c in context.sentences))
    asked = context.asked  # "close" stands for "closing", not the state "closed"
    stood = (f for f in every - OPPOSITES.keys() if any(holds(w, (f,)) for w in asked))
    return asked | frozenset(stood)


def _name_rivals(
    part: str,
    s_start: int,
    found: Sequence[_Word],
    subject: frozenset[str],
    content: set[str],
    context: ContextWords,
) -> list[tuple[tuple[int, int], frozenset[int]]]:
    """:func:`rivals` for the names of ``part`` the question does not hold, one run of
    them ("Cambridge, Massachusetts") at a time: a clause of another text (as much of the
    question's subject) stating every other word a holding clause shares with the answer
    and question (its other names too; the clause sharing most) and another name after
    the word the run follows there ("in Boulder", "in Cambridge") rivals the run."""
    stated = frozenset().union(*(c.names for c in context.sentences))
    opening = _names(part, found[:1]) & stated  # a first word is a name the context names
    names = (_names(part, found[1:]) | opening) - context.asked
    known = content | context.asked | names  # a rival name is none of these
    out: list[tuple[tuple[int, int], frozenset[int]]] = []
    for run in _runs(part, found, names):
        forms_of = frozenset(found[k][3] for k in run)
        frame_words = (subject | context.asked | names) - forms_of - _VALUE_VERBS
        holding = [c for c in context.sentences if forms_of <= c.own]
        holders = {c.doc for c in holding}
        asked = max((_asked_by(context, c.doc) for c in holding), default=0)
        holding = [c for c in holding if _asked_by(context, c.doc) == asked]  # Line 14's page
        frames = [(held, (held.own - forms_of) & frame_words) for held in holding]
        most = max((len(frame) for _, frame in frames), default=0)
        past = context.stale if holders - context.stale else frozenset()
        against = {  # by the clauses the answer is closest to: those framing it most
            c.doc
            for held, frame in frames
            if frame and len(frame) == most
            for c in context.sentences
            if c.doc not in holders | past  # an archived page beside a current one
            and frame <= c.own
            and _asked_by(context, c.doc) >= _asked_by(context, held.doc)
            and any(  # another name in the run's place: after the word it follows there
                before == word and name not in known
                for word, first in held.slots
                if first in forms_of
                for before, name in c.slots
            )
        }
        if against:
            out.append(
                ((s_start + found[run[0]][0], s_start + found[run[-1]][1]), frozenset(against))
            )
    return out


def _runs(part: str, found: Sequence[_Word], names: frozenset[str]) -> list[list[int]]:
    """The runs of ``found``'s indices whose forms are ``names``, apart only by spaces,
    commas, full stops or hyphens ("Dr. Elena Marsh", "Cambridge, Massachusetts")."""
    runs: list[list[int]] = []
    for k, (start, _, _, value) in enumerate(found):
        if value not in names:
            continue
        if runs and runs[-1][-1] == k - 1 and not part[found[k - 1][1] : start].strip(" ,.-"):
            runs[-1].append(k)
        else:
            runs.append([k])
    return runs


_SLOT_WORDS = frozenset(["at", "in", "from", "by", "near"])
"""Prepositions before a name that is one of the answer's values ("at MIT", "in Boston")."""


def _slot_names(part: str, found: Sequence[_Word], asked: frozenset[str]) -> frozenset[str]:
    """The forms of the names ``part`` states after a preposition of place or agent ("MIT"
    of "in 1991 at MIT") that the question does not hold, with the preposition: values of
    the answer, which a stale clause may share; as its subject they hide the clause it rivals."""
    out: set[str] = set()
    for k, (start, _, _, value) in enumerate(found):
        if not (k and value and part[start].isupper() and value not in asked):
            continue
        j = k - 1
        while j > 0 and part[found[j][0]].isupper():  # back over the name ("Tim Berners-Lee")
            j -= 1
        if found[j][2] in _SLOT_WORDS:
            out |= {value, found[j][3]}  # "near" of "near Geneva" is no subject word either
    return frozenset(out)


def _rivals_near(subject: frozenset[str], context: ContextWords) -> list[Sentence]:
    """The clauses closest to ``subject`` by its words other than value verbs, of those the
    ones stating most of them outside a span of times (none when no clause shares one); the
    chat's earlier turns are no source ("How many days per week can employees ...?")."""
    overlap, _, _ = _closest(subject - _VALUE_VERBS, context)
    sources = [n for c, n in zip(context.sentences, overlap) if c.doc not in context.turns]
    best = max(sources, default=_NONE)
    if best[1] == 0:
        return []
    near = [c for c in _near(best, overlap, context) if c.doc not in context.turns]
    said = [  # closer than a span of times; "costs" is no closer than "runs ... for"
        len((subject - _VALUE_VERBS) & (c.own - c.spanned)) for c in near
    ]
    return [c for c, n in zip(near, said) if n == max(said)]


def _written(text: str, start: int, end: int) -> tuple[int, int]:
    """``start:end`` widened to the number as written ("09:00", not its hour)."""
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
    """The clauses as close as ``best`` by the answer's own words (the question's aside)."""
    return [c for c, n in zip(context.sentences, overlap) if n[:3] == best[:3]]


def _disputed(
    value: str, held: Overlap, best: Overlap, overlap: Sequence[Overlap], context: ContextWords
) -> bool:
    """Whether ``value``, held below ``best``, is held as closely in another matching text."""
    if held[:3] != best[:3]:
        return False
    near = _near(best, overlap, context)
    closest = {c.doc for c, n in zip(context.sentences, overlap) if n == best}
    holders = {c.doc for c in near if value in c.forms} - closest
    matched = {_asked_by(context, d) for d in closest}
    return any(_asked_by(context, d) in matched for d in holders)


def _asked_page(context: ContextWords) -> int | None:
    """The one page (no chat turn) holding most of the question's words, if one does."""
    pages = {c.doc for c in context.sentences} - context.turns
    pages -= _of_other_kinds(frozenset(), context)  # the South district's, of the North's
    counts = Counter({d: _asked_by(context, d) for d in pages})
    (page, most), *rest = counts.most_common(2) or [(-1, 0)]
    return None if not most or (rest and rest[0][1] == most) else page


def _held_where_asked(value: str, closest: Sequence[Sentence], context: ContextWords) -> bool:
    """Whether the one page holding most of the question's words states ``value`` in a
    clause with one of them, and none of the clauses closest to the answer's words is on
    that page: the Permit Office's "8:30" in "open on Tuesdays from 8:30" is its own, not a
    misreading of the branch library's Tuesday hours, and the Riverside clinic's "Check-up:
    50 euros" answers "It costs 50 euros." though Northgate's "A check-up costs 45 euros"
    shares more of its words."""
    page = _asked_page(context)
    if page is None or any(c.doc == page for c in closest):
        return False
    return any(
        c.doc == page and value in c.forms and _asked_in(context.asked, c)
        for c in context.sentences
    )


def _asked_by(context: ContextWords, doc: int) -> int:
    """How many of the question's subject forms text ``doc`` of ``context`` holds, a name
    ending in a number ("tram 2") outweighing all the others: the page of the line asked."""
    held = context.asked & _page_forms(context, doc)
    return len(held) + len(context.asked) * sum(" " in w for w in held)


def _followed_by(context: ContextWords, doc: int) -> int:
    """How many of a closing follow-up's own subject forms (:attr:`ContextWords.latest`)
    text ``doc`` holds: the employees' page is no rival of "4 days." to "And for
    contractors?" where the contractors' page states 4."""
    return len(context.latest & _page_forms(context, doc))


def _page_forms(context: ContextWords, doc: int) -> frozenset[str]:
    """The forms of text ``doc``'s clauses (memoised)."""
    key = ("page", doc)
    if key not in context._memo:
        clauses = (c.forms for c in context.sentences if c.doc == doc)
        context._memo[key] = frozenset().union(*clauses)
    return frozenset(context._memo[key])


_ANSWER_CLAUSE = re.compile(
    _CLAUSE.pattern + r"|,\s+(?:but|and|so|while|whereas|plus)\s+", re.IGNORECASE
)
"""Where an answer sentence starts a new clause: also at ``, but`` (``and``, ``so``...)."""


def _clause_span(part: str, at: int) -> tuple[int, int]:
    """Where the clause (:data:`_ANSWER_CLAUSE`) of ``part`` holding ``at`` starts and ends."""
    start, end = 0, len(part)
    for cut in _ANSWER_CLAUSE.finditer(part):
        if cut.end() <= at:
            start = cut.end()
        elif cut.start() >= at:
            end = cut.start()
            break
    return start, end


def _comma_span(part: str, at: int) -> tuple[int, int]:
    """Where the comma-delimited piece of ``part`` holding ``at`` starts and ends."""
    start = part.rfind(",", 0, at) + 1
    end = part.find(",", at)
    return start, len(part) if end < 0 else end


def _piece(part: str, at: int, span: tuple[int, int]) -> frozenset[str] | None:
    """The subject forms of the comma piece of ``part`` holding ``at`` inside ``span`` ("a
    lesson costs 60 euros" of "..., lunch included"), when it is narrower and names two."""
    a, b = _comma_piece(part, at, span)
    words = _content(part[a:b], values=False)  # two besides "days per week"
    return words if (a, b) != span and len(words - _UNIT_WORDS) > 1 else None


def _piece_holds(
    part: str, at: int, span: tuple[int, int], value: str, context: ContextWords
) -> bool:
    """Whether a clause holding ``value`` is as close as any to the words of its comma piece:
    the answer took the value from that clause and another clause's words for the rest (a
    current price in a stale page's wording), which sources disagree on, not a misreading."""
    words = _piece(part, at, span)
    if words is None:
        return False
    overlap, best, _ = _closest(words, context)
    held = max((n for s, n in zip(context.sentences, overlap) if value in s.forms), default=_NONE)
    return best[1] > 1 and held == best


def _closest_in(
    part: str, span: tuple[int, int], sentence: _Closest, context: ContextWords
) -> _Closest:
    """:func:`_closest` by the words of ``part[span]`` if the context has any, else ``sentence``."""
    if span == (0, len(part)):
        return sentence
    found = _closest(_content(part[slice(*span)], values=False), context)
    return found if found[1][1] else sentence


_AND = re.compile(r"\s+and\s+", re.IGNORECASE)


def _listed_span(part: str, at: int, start: int, end: int) -> tuple[int, int]:
    """The part of ``part[start:end]`` around ``at`` between "and"s with numbers on both sides."""
    for cut in _AND.finditer(part, start, end):
        before, after = part[start : cut.start()], part[cut.end() : end]
        if not (any(c.isdigit() for c in before) and any(c.isdigit() for c in after)):
            continue
        if cut.end() <= at:
            start = cut.end()
        elif cut.start() >= at:
            return start, cut.start()
    return start, end


@dataclass(frozen=True)
class Quantity:
    """A number, its unit (``eur`` of "25 euros") and what a rate is per (``hour`` of "25
    euros per hour", ``*`` for "3 euros each")."""

    value: str
    unit: str = ""
    per: str = ""


def quantities(text: str) -> list[tuple[int, Quantity]]:
    """``(start, quantity)`` for each number of ``text``, with its unit and rate."""
    found = [(s, e, w, f) for s, e, w, f in forms(text) if f]
    out = []
    for k, (start, _, _, value) in enumerate(found):
        if not is_number(value):
            continue
        after = found[k + 1 : k + 3]
        at = next((j for j, item in enumerate(after) if item[3] in UNIT_FORMS), None)
        lead = start
        if k and found[k - 1][3] in _SIGNS and not text[found[k - 1][1] : start].strip():
            unit, at, lead = found[k - 1][3], -1, found[k - 1][0]  # "€25": rate words follow
        elif at is not None:
            unit = after[at][3]
        else:
            at = next((j for j, item in enumerate(after[:1]) if item[2] not in STOPWORDS), None)
            unit = "" if at is None or is_number(after[at][3]) else after[at][3]
        rest = found[k + 2 + (at or 0) :] if at is not None else found[k + 1 :]
        period = (f for _, _, w, f in found[max(k - 8, 0) : k] if w in PERIODS and unit in _SIGNS)
        per = _per(text, rest) or next(period, "")  # next: "the hourly rate is 35 euros"
        if not per and unit in _MONEY and _AT.search(text, 0, lead):
            per = "*"  # "two adult tickets at 12 CHF": a price each
        out.append((start, Quantity(value, unit, per)))
    return out


_AT = re.compile(r"\bat\s+$", re.IGNORECASE)


def _per(text: str, rest: Sequence[_Word]) -> str:
    """What an amount followed by ``rest`` (its words after the unit) is a rate of."""
    if not rest:
        return ""
    _, end, word, value = rest[0]
    if value in PERIODS.values() and word in PERIODS:  # "25 euros hourly"
        return value
    if word == "for" and len(rest) > 1 and rest[1][2] == "each":  # "8 euros for each of"
        return "*"
    if word not in RATE_WORDS:
        return ""
    joined = len(rest) > 1 and not text[end : rest[1][0]].strip()
    if joined and not is_number(rest[1][3]):
        return rest[1][3]
    return "*" if word == "each" else ""


def _worked(
    result: Quantity, stated: Quantity, other: Quantity, *, sums: bool = True, asked: bool = False
) -> bool:
    """Whether ``result`` is ``stated`` times ``other``, their sum, difference, a percent off,
    or, ``other`` being the question's, how many groups of one hold the other ("two boats"
    for five people, four a boat)."""
    if not result.unit:
        return False
    r, a, b = (Decimal(q.value) for q in (result, stated, other))
    if b == 1 and r == a:  # "2 EUR" of "How much is a day pass?": once is no working out
        return False
    units = {stated.unit, other.unit} - {""}
    if (
        asked
        and len(units) == 1
        and not units & {*_MONEY, "percent", result.unit}
        and 1 < min(a, b) < max(a, b)  # groups of one are no grouping
        and r == math.ceil(max(a, b) / min(a, b))
    ):
        return True
    if asked and stated.unit == other.unit and not units & _SIGNS:
        return result.unit not in _MONEY and r == abs(a - b)  # "three extra" of eight, five in
    if other.unit == "percent" and stated.unit != "percent":  # 100% of it is no working
        return (
            0 < b < 100
            and _same_unit(stated.unit, result.unit)
            and r in (a * b / 100, a * (100 - b) / 100)
        )
    if (
        stated.per
        and _same_unit(stated.unit, result.unit)
        and (stated.per in ("*", other.unit) or not other.unit)  # "€22 per player", "four"
    ):
        return not result.per and a * b == r  # a total, not another rate
    if _same_unit(stated.unit, result.unit) and other.unit not in (result.unit, "percent"):
        return not (result.per or stated.per) and a * b == r  # "two classes" at 12 euros
    alike = _same_unit(stated.unit, result.unit) and _same_unit(other.unit, result.unit)
    alike = alike and stated.per == other.per == result.per  # no rate plus a total
    return sums and alike and r in (a + b, abs(a - b))


def _bare(count: Quantity) -> Quantity:
    """``count`` without its unit ("five lessons" at "£35 an hour")."""
    return Quantity(count.value)


_WEEK = re.compile(r"\bweek(?:ly|s)?\b", re.I)


def _week_on(result: Quantity, stated: Quantity) -> bool:
    """Whether ``result`` is the date one or two weeks from ``stated`` in its month ("weekly
    hires from Saturday 4 April": "ends on Saturday 11 April"; the caller checks that a week
    is named)."""
    if result.unit != stated.unit or result.unit not in CALENDAR - frozenset(WEEKDAYS):
        return False
    return abs(Decimal(result.value) - Decimal(stated.value)) in (7, 14)


def _added(result: Quantity, stated: Quantity, other: Quantity, *, rates: bool = True) -> bool:
    """Whether ``result`` is the sum of two amounts of its unit (with ``rates``, no rate plus
    a total)."""
    alike = all(
        _same_unit(q.unit, result.unit) and (q.per == result.per or not rates)
        for q in (stated, other)
    )
    return alike and Decimal(result.value) == Decimal(stated.value) + Decimal(other.value)


def _same_unit(one: str, other: str) -> bool:
    """Whether two units are one: alike, or cents and a currency."""
    return one == other or ("cent" in (one, other) and {one, other} - {"cent"} <= _MONEY)


def _compared(found: Sequence[_Word], context: ContextWords) -> bool:
    """Whether the number ``found[0]`` is compared (a LESS/MORE word) with a context number."""
    valued = [item for item in found[1:] if item[3]]
    for j, (_, _, word, _) in enumerate(valued[:3]):
        if word not in LESS_WORDS | MORE_WORDS:
            continue
        number = next((f for _, _, _, f in valued[j + 1 : j + 6] if is_number(f)), None)
        if number is None or number not in context.forms:
            return False
        mine, theirs = Decimal(found[0][3]), Decimal(number)
        return mine < theirs if word in LESS_WORDS else mine > theirs
    return False


def derived_values(text: str, context: Collection[str]) -> frozenset[str]:
    """The numbers of ``text`` the context lacks that one step of arithmetic on its amounts
    gives (a rate times an amount, a sum, a percent off), with their units, and the question's
    numbers the answer works with or truly compares: a right answer shows its work."""
    if not isinstance(context, ContextWords) or not context.quantities:
        return frozenset()
    if text not in context._memo:
        context._memo[text] = _derived(text, context)
    return frozenset(context._memo[text])


_TOTAL = re.compile(
    r"\b(?:in total|total|together|altogether|combined|separately|in all|comes? to|adds? up"
    r"|both)\b",
    re.I,
)
"""Words that say a number is a sum of amounts."""


def _derived(text: str, context: ContextWords) -> frozenset[str]:
    asked = {q.value for q in context.asked_values}
    held: set[int] = set()  # where a number of the answer is derived or worked with
    lacked: dict[str, list[int]] = {}  # where each number of the answer stands
    units: dict[str, set[str]] = {}
    amounts = [q for sentence in context.quantities for q in sentence]
    shares = [q for q in amounts if q.unit == "percent"]
    weekly = any(_WEEK.search(w) for w in chain(context, context.asked))  # a week is named
    beyond = [  # "eight photos in total" where five are included: three at the rate
        Quantity(str(abs(Decimal(q.value) - Decimal(x.value))), q.unit)
        for q in context.asked_values
        for x in amounts
        if q.unit and q.unit == x.unit and q.unit not in _SIGNS and x.value != q.value
    ]
    for a, b in split_sentences(text) or [(0, len(text))]:
        found = forms(text[a:b])
        names = {found[k][0] for k in named_numbers(text[a:b], found, context.named)}
        own = {a + s: q for s, q in quantities(text[a:b]) if s not in names}  # no Aero 14
        restated = {q.value for q in own.values() if q.value in context.forms}
        summed = _TOTAL.search(text[a:b]) is not None  # "90 euros in total": any two amounts
        weeks = weekly or _WEEK.search(text[a:b]) is not None
        for start, result in own.items():  # a stated number too: worked, it is not misread
            lacked.setdefault(result.value, []).append(start)
            if summed and any(
                _added(result, x, y, rates=False) for x, y in combinations(amounts, 2)
            ):
                held.add(start)
                units.setdefault(result.value, set()).add(result.unit)
            for sentence in context.quantities:
                for stated in sentence:
                    near = [q for q in sentence if q is not stated] + shares
                    shown = stated.value in restated  # "$220, each extra adds $40" ($180 for one)
                    used = [  # a count the asker named times a rate of another unit
                        s
                        for s, q in own.items()
                        if s != start
                        and (
                            _worked(result, stated, q, sums=False)
                            or (q.value in asked and _worked(result, stated, _bare(q), sums=False))
                        )
                    ]
                    if (
                        used
                        or (weeks and _week_on(result, stated))
                        or any(_worked(result, stated, q, asked=True) for q in context.asked_values)
                        or (stated.per and any(_worked(result, stated, q) for q in beyond))
                        or any(  # "€22 per player, groups of four"; "20% off £50"
                            _worked(result, stated, q, sums=False)
                            for q in near
                            if stated.per or q.unit == "percent"
                        )
                        or (shown and any(_added(result, stated, q) for q in near))
                    ):
                        held.add(start)
                        units.setdefault(result.value, set()).add(result.unit)
                    held.update(s for s in used if own[s].value in asked)
            if result.value in asked and _compared(
                [w for w in found if w[0] >= start - a], context
            ):
                held.add(start)
        for start in _shown(own, context, held):
            held.add(start)
            units.setdefault(own[start].value, set()).add(own[start].unit)
        for start, result in own.items():  # a stated rate times a count worked out above
            if start not in held and any(  # "€4 per photo": "12 euros for the three extra"
                stated.per and _worked(result, stated, _bare(q), sums=False)
                for s, q in own.items()
                if s in held and s != start
                for stated in amounts
            ):
                held.add(start)
                units.setdefault(result.value, set()).add(result.unit)
        if held & set(own):  # a sentence that works a sum out may restate what was asked
            held.update(  # "What would a two-week hire cost?": "Two weeks would be £95"
                s
                for s, q in own.items()
                if q.unit
                and any(q.value == x.value and q.unit == x.unit for x in context.asked_values)
            )
    values = {v for v, starts in lacked.items() if all(s in held for s in starts)}
    return frozenset(values).union(*(units.get(v, set()) for v in values))


def _shown(own: dict[int, Quantity], context: ContextWords, held: set[int]) -> set[int]:
    """Where an amount of one answer sentence is a sum or difference of two or three of the
    sentence's other amounts of its unit, each stated or itself worked out: the answer shows
    its work ("£18 plus £9, minus the £3 off: £24 a month"), or the days two of its dates
    span."""
    shown: set[int] = set()
    counts = [Decimal(q.value) for q in context.asked_values if q.unit not in _SIGNS]
    for _ in range(2):  # a total worked from a total ("£20.97 for three, so £2.97 saved")
        known = [  # stated (in the context's currency) or worked out
            (s, q)
            for s, q in own.items()
            if (q.value in context.forms and (q.unit not in _MONEY or q.unit in context.forms))
            or s in held | shown
        ]
        tallies = [(c, Decimal(q.value)) for c, q in known if q.unit and q.unit not in _SIGNS]
        days = [  # "ten days, from 4 April to 13 April": the days two dates span
            Decimal(q.value) for _, q in known if q.unit in CALENDAR - frozenset(WEEKDAYS)
        ]
        for start, result in own.items():
            if start in held | shown or result.value in context.forms:
                continue
            parts = [
                Decimal(q.value)
                for s, q in known
                if s != start
                and q.per in ("", result.per)
                and q.unit
                and _same_unit(q.unit, result.unit)
            ]
            rates = [
                (s, Decimal(q.value))
                for s, q in known
                if s != start and q.per and _same_unit(q.unit, result.unit) and not result.per
            ]
            # "the three extra ones are €15 each", "€4 per photo": a rate times a count
            made = [rate * n for s, rate in rates for c, n in tallies if c != s]
            parts += made
            products = [rate * n for _, rate in rates for n in counts]  # "double that for two"
            total = Decimal(result.value)
            spanned = result.unit in ("day", "night") and any(
                total in (abs(b - a) + 1, abs(b - a)) for a, b in combinations(days, 2)
            )
            if (
                spanned
                or total in products
                or total in made
                or any(
                    total == sum(sign * part for sign, part in zip(signs, chosen, strict=True))
                    for n in (2, 3)
                    for chosen in combinations(parts, n)
                    for signs in product((1, -1), repeat=n)
                )
            ):
                shown.add(start)
    return shown


NEXT_DAY = re.compile(r"\b(?:next|following)\s+(working\s+|business\s+)?day\b", re.IGNORECASE)


def next_days(texts: Iterable[str], question: str) -> frozenset[str]:
    """The weekday after each one ``question`` names when a text says "the next (working) day"."""
    days = [(WEEKDAYS.index(f) + 1) % 7 for _, _, _, f in forms(question) if f in WEEKDAYS]
    said = [bool(match.group(1)) for text in texts for match in NEXT_DAY.finditer(text)]
    return frozenset(WEEKDAYS[0 if working and d >= 5 else d] for working in said for d in days)
