from hypothesis import given
from hypothesis import strategies as st

from core.textdiff import word_diff


def test_a_rule_fix_reads_as_deletions_and_insertions():
    old = "Ask one question per turn."
    new = "Ask one question per turn; a clarifier is not a second question."
    assert word_diff(old, new) == [
        ("same", "Ask one question per "),
        ("del", "turn."),
        ("ins", "turn; a clarifier is not a second question."),
    ]
    assert word_diff(old, old) == [("same", old)]
    assert word_diff("", "New rule.") == [("ins", "New rule.")]


words = st.lists(st.sampled_from(["ask", "one", "question", "turn.", " ", "  ", "\n"]), max_size=30)


@given(words, words)
def test_the_pieces_give_back_both_texts(a, b):
    old, new = "".join(a), "".join(b)
    pieces = word_diff(old, new)
    assert "".join(t for op, t in pieces if op != "ins") == old
    assert "".join(t for op, t in pieces if op != "del") == new
    assert all(pieces[i][0] != pieces[i + 1][0] for i in range(len(pieces) - 1))
