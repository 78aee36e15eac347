"""The signals frustration attribution layers on: the sentiment floor and the loop detector."""

from evals.classifiers.signals import loop_check, sentiment


def test_sentiment_reads_anger_thanks_negation_and_shouting():
    assert sentiment("This is absurd, I've been overcharged twice!") <= -0.5
    assert sentiment("Thank you, that was really helpful") > 0.3
    assert sentiment("The delivery was not terrible") > sentiment("The delivery was terrible")
    assert sentiment("WHERE IS MY PARCEL, I NEED IT TODAY") < sentiment("Where is my parcel?")
    assert sentiment("") == 0.0
    assert -1.0 <= sentiment("useless useless useless awful awful scam!!!!!!") <= 1.0


def test_loop_detector_finds_human_requests_re_asks_and_repeats():
    turns = [
        (1, "Where is my parcel with order 88231?"),
        (3, "I want to know where my parcel with order 88231 is"),
        (5, "I already told you the order number."),
        (7, "Can I speak to a real person please"),
        (9, "ok thanks"),
    ]
    r = loop_check(turns)
    assert r.flagged and r.turns == (3, 5, 7)
    assert set(r.kinds) == {"repeated_message", "re_ask", "human_request"}
    assert not loop_check([(0, "Where is my parcel?"), (2, "Thanks, bye")]).flagged
    assert loop_check([(0, "Agent!")]).kinds == ("human_request",)
