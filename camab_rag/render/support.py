"""How much a source supports an answer sentence, in words, on one scale of nats per answer
token set by :data:`SUPPORT_UNIT` (the context gain of an answer taken from its context)."""

SUPPORT_UNIT = 0.22
CITE_AT = SUPPORT_UNIT / 2
CITE_ABOVE = 0.05  # support above any unrelated text a source needs to be cited
STRONG_AT = 2 * SUPPORT_UNIT
WEAK_AT = SUPPORT_UNIT / 4
WORDS = {3: "strong support", 2: "support", 1: "weak support", 0: "holds the answer"}


def support_level(score: float) -> int:
    """0 (no measurable support: a source cited then holds the answer, its numbers and
    names or the clause a bare "Yes." answers) .. 3 (strong support) for a score in nats
    per token."""
    return sum(score >= bar for bar in (WEAK_AT, CITE_AT, STRONG_AT))


def support_words(score: float) -> str:
    return WORDS[support_level(score)]
