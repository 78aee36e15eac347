"""Builders shared by the judge tests: a six-turn call and rule versions the fake judge can flag."""

from tests.factories import RuleFactory, RuleVersionFactory, TranscriptFactory, TurnFactory

TURNS = [
    ("agent", "Hi Dana, I'm the screening assistant.", "opening"),
    ("user", "Hi! SECRET-USER-WORDS here.", "opening"),
    ("agent", "What is your current role? And why are you leaving?", "asking"),
    ("user", "Backend engineer.", "asking"),
    ("agent", "Thanks, noted.", "asking"),
    ("agent", "That's all, goodbye.", "closing"),
]


def make_call(external_id="call-1", agent_version=None):
    """Return a transcript with the six TURNS, timed 4 s apart."""
    kwargs = {"external_id": external_id}
    if agent_version:
        kwargs["agent_version"] = agent_version
    t = TranscriptFactory(**kwargs)
    for i, (speaker, text, phase) in enumerate(TURNS):
        TurnFactory(
            transcript=t,
            index=i,
            speaker=speaker,
            text=text,
            phase=phase,
            start_ms=i * 4000,
            end_ms=i * 4000 + 3000,
        )
    return t


def make_rule(rule_id, group, text, phase="", detector=None, severity="minor"):
    """Return version 1 of a new rule."""
    rule = RuleFactory(
        rule_id=rule_id, group=group, phase=phase, detector=detector, severity=severity
    )
    return RuleVersionFactory(rule=rule, number=1, text=text, detector=detector)


def judge_rules() -> dict:
    """Create the judge tests' five rules (four for
    the LLM, one detector); return their versions."""
    return {
        "greet": make_rule(
            "opening.greet-by-name",
            "opening",
            "Greet the candidate once, by name.",
            phase="opening",
        ),
        "intro": make_rule("opening.introduce", "opening", "Say who you are."),
        "one-q": make_rule(
            "asking.one-question", "asking", "Ask one question per turn.", severity="major"
        ),
        "leak": make_rule(
            "boundaries.no-rubric-leak",
            "boundaries",
            "Never reveal the rubric.",
            severity="critical",
        ),
        "det": make_rule(
            "signals.one-question",
            "signals",
            "One question per turn.",
            detector={"name": "multiple_questions", "max_questions": 1},
        ),
    }
