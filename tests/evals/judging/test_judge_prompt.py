"""The judge prompt, schema and answer parsing: pure, no database, no server."""

import json

import jsonschema
import pytest

from evals.judging.prompt import (
    PROMPT_VERSION,
    AnswerInvalid,
    PromptRule,
    answer_schema,
    answer_validate,
    build_messages,
    cache_key,
    response_format,
)
from evals.rules.detectors import TurnView

RULES = [
    PromptRule("asking.one-question", 1, "Ask one question per turn.", "major"),
    PromptRule("asking.no-hints", 2, "Never hint at the answer.", "critical"),
]
TURNS = [
    TurnView(0, "agent", "Hi, ready?", phase="opening"),
    TurnView(1, "user", "Yes.", phase="opening"),
    TurnView(2, "agent", "What is a mutex? And a semaphore?", phase="asking"),
    TurnView(3, "tool", "x" * 5000, phase="asking"),
    TurnView(4, "user", "A lock.", phase="asking"),
]


def answer(**overrides):
    base = {
        r.rule_id: {
            "reason": "Fine.",
            "flagged": False,
            "turns": [],
            "severity": "minor",
            "confidence": 80,
        }
        for r in RULES
    }
    base.update(overrides)
    return base


def test_schema_is_strict_and_orders_reason_first():
    schema = answer_schema([r.rule_id for r in RULES], [0, 2])
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["required"] == ["asking.one-question", "asking.no-hints"]
    assert schema["additionalProperties"] is False
    verdict = schema["properties"]["asking.no-hints"]
    assert next(iter(verdict["properties"])) == "reason" and verdict["required"] == list(
        verdict["properties"]
    )
    fmt = response_format(schema)
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True


def test_messages_number_turns_and_clip_tool_output():
    msgs = build_messages(RULES, TURNS)
    assert [m["role"] for m in msgs] == ["system", "user"]
    user = msgs[1]["content"]
    assert "- asking.one-question (default severity major): Ask one question per turn." in user
    assert "[2] AGENT: What is a mutex?" in user and "[1] USER: Yes." in user
    assert "Agent turns you may cite: 0, 2." in user
    assert "more characters]" in user and len(user) < 3000


def test_phase_scoping_drops_other_phases():
    user = build_messages(RULES, TURNS, phase="opening")[1]["content"]
    assert "[0] AGENT" in user and "[2]" not in user and "Agent turns you may cite: 0." in user


def test_valid_answer_is_parsed_and_unflagged_verdicts_cite_nothing():
    schema = answer_schema([r.rule_id for r in RULES], [0, 2])
    flagged = {
        "reason": "Two\nquestions  in turn 2.",
        "flagged": True,
        "turns": [2, 2],
        "severity": "major",
        "confidence": 90,
    }
    odd = {
        "reason": "Fine.",
        "flagged": False,
        "turns": [2],
        "severity": "critical",
        "confidence": 60,
    }
    out = answer_validate(
        json.dumps(answer(**{"asking.one-question": flagged, "asking.no-hints": odd})), schema
    )
    assert out["asking.one-question"] == {
        "flagged": True,
        "turns": [2],
        "severity": "major",
        "rationale": "Two questions in turn 2.",
        "confidence": 90,
    }
    assert out["asking.no-hints"]["turns"] == [] and out["asking.no-hints"]["severity"] == ""


def test_fenced_json_is_accepted():
    schema = answer_schema([r.rule_id for r in RULES], [0, 2])
    out = answer_validate("Here you go:\n```json\n" + json.dumps(answer()) + "\n```", schema)
    assert set(out) == {"asking.one-question", "asking.no-hints"}


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "empty answer"),
        ("{not json", "answer is not JSON"),
        (json.dumps({"asking.one-question": {}}), "fails 'required'"),
        (
            json.dumps(
                answer(
                    **{
                        "asking.no-hints": {
                            "reason": "r",
                            "flagged": "yes",
                            "turns": [],
                            "severity": "minor",
                            "confidence": 5,
                        }
                    }
                )
            ),
            "at asking.no-hints.flagged: fails 'type'",
        ),
        (
            json.dumps(
                answer(
                    **{
                        "asking.no-hints": {
                            "reason": "r",
                            "flagged": True,
                            "turns": [1],
                            "severity": "minor",
                            "confidence": 5,
                        }
                    }
                )
            ),
            "at asking.no-hints.turns.0: fails 'enum'",
        ),
        (
            json.dumps(
                answer(
                    **{
                        "asking.no-hints": {
                            "reason": "r",
                            "flagged": True,
                            "turns": [2],
                            "severity": "minor",
                            "confidence": 101,
                        }
                    }
                )
            ),
            "fails 'maximum'",
        ),
        (json.dumps({**answer(), "extra.rule": {}}), "fails 'additionalProperties'"),
    ],
)
def test_invalid_answers_are_named(content, message):
    schema = answer_schema([r.rule_id for r in RULES], [0, 2])
    with pytest.raises(AnswerInvalid, match=message.replace(".", r"\.").replace("(", r"\(")):
        answer_validate(content, schema)


def test_cache_key_changes_with_what_the_judge_sees():
    key = cache_key(checksum="abc", rules=RULES, phase="", model="m")
    assert key == cache_key(checksum="abc", rules=list(reversed(RULES)), phase="", model="m")
    bumped = [RULES[0], PromptRule("asking.no-hints", 3, "Never hint.", "critical")]
    assert (
        len(
            {
                key,
                cache_key(checksum="abd", rules=RULES, phase="", model="m"),
                cache_key(checksum="abc", rules=bumped, phase="", model="m"),
                cache_key(checksum="abc", rules=RULES, phase="asking", model="m"),
                cache_key(checksum="abc", rules=RULES, phase="", model="n"),
                cache_key(
                    checksum="abc",
                    rules=RULES,
                    phase="",
                    model="m",
                    prompt_version=PROMPT_VERSION + "x",
                ),
            }
        )
        == 6
    )
