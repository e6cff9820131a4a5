"""Abstentions ("I don't know"): they claim nothing, so the gate neither flags nor cites them."""

from __future__ import annotations

import re

_CONTEXT = (
    r"(?:the |these |those |this |provided |given |retrieved |available |supplied )*"
    r"(?:documents?|context|sources?|texts?|passages?|articles?|information|excerpts?|"
    r"search results|results|materials?|records?|data)"
)
_NEGATED = r"(?:do(?:es)?n['’]?t|do(?:es)? not|did not|didn['’]?t|never)"
_PATTERNS = [
    r"\bi (?:do not|don['’]?t|didn['’]?t|did not) (?:know|have (?:enough |any |that )?"
    r"(?:information|details|data))",
    r"\bi(?:['’]m| am) (?:not sure|unable to|not able to)",
    r"\bi (?:cannot|can['’]?t|could not|couldn['’]?t|was unable to|am unable to) "
    r"(?:find|answer|determine|tell|say|locate|confirm|provide)",
    rf"\b{_CONTEXT} {_NEGATED} (?:say|mention|state|contain|include|provide|specify|cover|"
    r"give|discuss|answer|address|indicate|have)",
    rf"\b{_CONTEXT} (?:is|are) (?:silent|unclear)",
    rf"\b(?:there is |there['’]s )?(?:no|not enough|insufficient) (?:relevant |such |specific )?"
    rf"(?:information|mention|details|evidence|data)(?: (?:about|on|in|regarding) (?:this|that|"
    rf"it|the question|{_CONTEXT}))?(?: is)? (?:available|provided|given|in {_CONTEXT})",
    r"\b(?:cannot|can['’]?t|unable to) be (?:determined|answered|found)",
    r"\b(?:not|no)(?: \w+)? (?:mentioned|stated|specified|provided|given) in " + _CONTEXT,
    r"^(?:unknown|no answer|not known|n/?a)[.!]?$",
    # a chat model's refusal, however it is cut off ("I'm sorry, but as a dental chatbot, I
    # don't have access to ..."): review 23
    r"\bi (?:do not|don't) have (?:access to|the ability to|any (?:information|details))",
    r"\bas an? (?:ai|language model|(?:\w+ )?(?:chatbot|assistant))\b[^.]{0,40}?\bi(?:'m| am)? "
    r"(?:unable|not able|cannot|can't|don't|do not)\b",
]
_ABSTENTION = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.IGNORECASE)


def is_abstention(text: str) -> bool:
    """Whether ``text`` (an answer or a sentence) declines to answer: "The documents do not say"."""
    normalized = " ".join(text.replace("’", "'").split())
    return bool(normalized) and _ABSTENTION.search(normalized) is not None
