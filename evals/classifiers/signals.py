"""The signals frustration attribution layers on: a sentiment floor and a loop detector.

Pure and cheap, no Django. They say that a customer is unhappy; the frustration classifier says
with whom. Each also runs as a detector of its own over stored calls
(evals/classifiers/detectors.py).
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

# A small lexicon, weighted: enough to find the customer who is clearly unhappy, not a model.
_NEGATIVE = {
    "useless": 3, "ridiculous": 3, "absurd": 3, "unacceptable": 3, "furious": 3, "outrageous": 3,
    "terrible": 3, "awful": 3, "worst": 3, "disgusting": 3, "scam": 3, "pathetic": 3,
    "incompetent": 3, "stupid": 3, "idiot": 3, "hate": 3, "rubbish": 2, "garbage": 2,
    "angry": 2, "annoyed": 2, "annoying": 2, "frustrated": 2, "frustrating": 2, "fed up": 3,
    "sick of": 3, "disappointed": 2, "horrible": 3, "nonsense": 2, "waste": 2, "joke": 2,
    "overcharged": 2, "wrong": 1, "broken": 1, "never": 1, "still": 1, "again": 1, "not working": 1,
    "doesn't work": 1, "does not work": 1, "not listening": 3, "no help": 2, "unhelpful": 2,
    "pointless": 2, "ripped off": 3, "ripoff": 3, "lied": 2, "cancel": 1, "complaint": 1,
}  # fmt: skip
_POSITIVE = {
    "thanks": 2, "thank you": 2, "great": 2, "perfect": 2, "helpful": 2, "appreciate": 2,
    "good": 1, "fine": 1, "love": 2, "excellent": 3, "awesome": 2, "brilliant": 2, "nice": 1,
}  # fmt: skip
_NEGATORS = re.compile(r"\b(?:not|no|never|isn't|wasn't|don't|didn't|hardly)\s+$")
_PHRASE = {w: re.compile(rf"\b{re.escape(w)}\b") for w in list(_NEGATIVE) + list(_POSITIVE)}


def sentiment(text: str) -> float:
    """Return a sentiment score in [-1, 1] from the lexicon: negative is unhappy."""
    low = " ".join(text.lower().split())
    if not low:
        return 0.0
    score = 0.0
    for lexicon, sign in ((_NEGATIVE, -1), (_POSITIVE, 1)):
        for word, weight in lexicon.items():
            for m in _PHRASE[word].finditer(low):
                flip = -1 if _NEGATORS.search(low[max(0, m.start() - 12) : m.start()]) else 1
                score += sign * flip * weight
    letters = [c for c in text if c.isalpha()]
    if len(letters) >= 12 and sum(c.isupper() for c in letters) / len(letters) > 0.7:
        score -= 2  # shouting
    score -= min(2, text.count("!") // 2)
    return max(-1.0, min(1.0, score / 6))


_HUMAN = re.compile(
    r"\b(?:talk|speak|chat)\s+(?:to|with)\s+(?:a\s+|an\s+|the\s+|your\s+|some\s+)?"
    r"(?:real\s+|actual\s+|live\s+)?(?:human|person|people|agent|representative|rep|manager|"
    r"supervisor|someone|somebody|operator)\b|\b(?:get|put|transfer|connect)\s+me\s+"
    r"(?:(?:to|through to|with)\s+)?(?:a\s+|an\s+|the\s+|your\s+)?(?:real\s+)?"
    r"(?:human|person|agent|manager|supervisor|someone|operator|representative)\b"
    r"|\bhuman,? please\b|^\s*(?:agent|operator|representative|human)[.!]*\s*$",
    re.IGNORECASE,
)
_REASK = re.compile(
    r"\b(?:i (?:already|just) (?:told|said|asked|gave|explained)|as i (?:said|told you)|"
    r"(?:second|third|fourth|fifth|\d+(?:st|nd|rd|th)) time|for the last time|"
    r"(?:you(?:'re| are) not|aren't you) listening|same question|asked (?:you )?(?:this|that) "
    r"(?:already|before)|how many times)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9']+")
_STOP_WORDS = "a an the i you me my your is are was were be to of and or in on at for it this \
that what when where how why can could do does did please just so but with"
_STOP = frozenset(_STOP_WORDS.split())


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


@dataclass(frozen=True)
class LoopResult:
    flagged: bool
    turns: tuple[int, ...] = ()
    kinds: tuple[str, ...] = ()  # "human_request", "re_ask", "repeated_message"


def loop_check(user_turns: Sequence[tuple[int, str]], *, similarity: float = 0.6) -> LoopResult:
    """Flag the loop proxies over a customer's turns ((index, text), in order): asking for a
    human, saying they are asking again, or sending (nearly) the same message again."""
    hits: dict[int, list[str]] = {}
    earlier: list[set[str]] = []
    for index, text in user_turns:
        kinds = []
        if _HUMAN.search(text):
            kinds.append("human_request")
        if _REASK.search(text):
            kinds.append("re_ask")
        words = _content_words(text)
        if len(words) >= 3:
            for prev in earlier:
                if len(words & prev) / len(words | prev) >= similarity:
                    kinds.append("repeated_message")
                    break
            earlier.append(words)
        if kinds:
            hits[index] = kinds
    all_kinds = tuple(dict.fromkeys(k for ks in hits.values() for k in ks))
    return LoopResult(bool(hits), tuple(hits), all_kinds)
