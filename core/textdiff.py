"""Word-level differences between two texts (a rule's versions): pure, no Django."""

import difflib
import re

_TOKENS = re.compile(r"\s+|[^\s]+")


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """Return how `old` becomes `new` as pieces (op, text), op one of "same", "del", "ins".

    Joining the "same" and "del" pieces gives back `old`; "same" and "ins" give `new`.
    """
    a, b = _TOKENS.findall(old or ""), _TOKENS.findall(new or "")
    pieces: list[tuple[str, str]] = []

    def add(op: str, tokens: list[str]) -> None:
        if not tokens:
            return
        text = "".join(tokens)
        if pieces and pieces[-1][0] == op:
            pieces[-1] = (op, pieces[-1][1] + text)
        else:
            pieces.append((op, text))

    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            add("same", a[i1:i2])
        else:
            add("del", a[i1:i2])
            add("ins", b[j1:j2])
    return pieces
