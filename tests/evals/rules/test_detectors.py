"""Detectors on hand-made turns: no database."""

import pytest

from evals.rules.detectors import DETECTORS, TurnView, detector_run, detector_validate, turn_views


def T(index, speaker, text="", start=None, end=None, conf=None, phase=""):
    return TurnView(
        index=index,
        speaker=speaker,
        text=text,
        start_ms=start,
        end_ms=end,
        asr_confidence=conf,
        phase=phase,
    )


def run(name, turns, **params):
    return detector_run({"name": name, **params}, turns)


# ---- registry and validation ----


def test_every_documented_detector_is_registered():
    assert set(DETECTORS) == {
        "silence_before_agent",
        "talk_over",
        "asr_confidence_floor",
        "agent_response_time",
        "dropped_call",
        "markdown_or_emoji",
        "multiple_questions",
        "greeting_repeated",
        # the runtime classifiers and their signals (evals/classifiers/detectors.py)
        "sentiment_floor",
        "loop_detector",
        "injection_guard",
        "scope_drift",
        "frustration_attribution",
    }


def test_validate_fills_defaults():
    assert detector_validate({"name": "silence_before_agent"}) == {
        "name": "silence_before_agent",
        "max_ms": 3000,
    }
    assert detector_validate({"name": "asr_confidence_floor", "min": 1}) == {
        "name": "asr_confidence_floor",
        "min": 1.0,
        "speaker": "any",
    }


@pytest.mark.parametrize(
    "spec, message",
    [
        ("silence", "detector: must be a mapping"),
        ({"name": "nope"}, "detector.name: unknown detector 'nope'"),
        ({}, "detector.name: unknown detector None"),
        (
            {"name": "silence_before_agent", "max": 3},
            "detector.max: silence_before_agent has no parameter 'max'",
        ),
        ({"name": "silence_before_agent", "max_ms": "3s"}, "detector.max_ms: must be an integer"),
        ({"name": "silence_before_agent", "max_ms": True}, "detector.max_ms: must be an integer"),
        ({"name": "silence_before_agent", "max_ms": -1}, "detector.max_ms: must be 0 or more"),
        ({"name": "asr_confidence_floor", "min": 1.5}, "detector.min: must be between 0 and 1"),
        (
            {"name": "asr_confidence_floor", "speaker": "tool"},
            "detector.speaker: must be any, agent or user",
        ),
        ({"name": "agent_response_time", "percentile": 0}, "detector.percentile: must be 1 to 100"),
        (
            {"name": "multiple_questions", "max_questions": 0},
            "detector.max_questions: must be 1 or more",
        ),
        ({"name": "markdown_or_emoji", "emoji": "yes"}, "detector.emoji: must be true or false"),
    ],
)
def test_validate_names_the_field(spec, message):
    with pytest.raises(ValueError) as exc:
        detector_validate(spec)
    assert str(exc.value).startswith(message)


def test_turn_views_from_dicts():
    views = turn_views([{"index": 0, "speaker": "agent", "text": None, "phase": None}])
    assert views == [TurnView(index=0, speaker="agent", text="", phase="")]


def test_detectors_handle_no_turns():
    for name in DETECTORS:
        result = run(name, [])
        assert result.flagged is False and result.turns == []


# ---- silence_before_agent ----


def test_silence_flags_long_gap_and_cites_turn():
    turns = [
        T(0, "agent", start=0, end=1000),
        T(1, "user", start=1500, end=4000),
        T(2, "agent", start=7800, end=9000),
    ]
    r = run("silence_before_agent", turns, max_ms=3000)
    assert r.flagged and r.turns == [2]
    assert "3.8 s silence before turn 2" in r.rationale


def test_silence_ignores_missing_timestamps_and_tool_turns():
    turns = [
        T(0, "user", start=0, end=1000),
        T(1, "tool", "lookup"),
        T(2, "agent", start=None, end=None),
        T(3, "user", start=None, end=9000),
        T(4, "agent", start=9500, end=10000),
    ]
    r = run("silence_before_agent", turns, max_ms=1000)
    assert not r.flagged


def test_silence_measures_from_latest_end_when_turns_overlap():
    # The user speaks 0-10 s; a short agent backchannel
    # at 2-3 s; the agent resumes at 11 s: 1 s silence.
    turns = [
        T(0, "user", start=0, end=10000),
        T(1, "agent", start=2000, end=3000),
        T(2, "agent", start=11000, end=12000),
    ]
    assert not run("silence_before_agent", turns, max_ms=3000).flagged
    assert run("silence_before_agent", turns, max_ms=500).turns == [2]


# ---- talk_over ----


def test_talk_over_flags_overlap_above_limit():
    turns = [
        T(0, "user", start=0, end=5000),
        T(1, "agent", start=4000, end=6000),
        T(2, "user", start=6000, end=7000),
        T(3, "agent", start=6800, end=8000),
    ]
    r = run("talk_over", turns, max_overlap_ms=500)
    assert r.flagged and r.turns == [1]
    assert "turn 1 overlaps user turn 0 by 1000 ms" in r.rationale


def test_talk_over_skips_untimed_and_inverted_turns():
    turns = [
        T(0, "user", start=0, end=5000),
        T(1, "agent", start=1000),
        T(2, "agent", start=3000, end=1000),
    ]
    assert not run("talk_over", turns).flagged


# ---- asr_confidence_floor ----


def test_asr_floor_by_speaker():
    turns = [
        T(0, "agent", "Hi", conf=0.95),
        T(1, "user", "mm", conf=0.4),
        T(2, "agent", "ok", conf=0.5),
        T(3, "user", "x", conf=None),
    ]
    assert run("asr_confidence_floor", turns, min=0.6).turns == [1, 2]
    assert run("asr_confidence_floor", turns, min=0.6, speaker="user").turns == [1]
    r = run("asr_confidence_floor", turns, min=0.3)
    assert not r.flagged


# ---- agent_response_time ----


def test_response_time_percentile_and_per_turn():
    turns = []
    t = 0
    latencies = [500, 600, 700, 800, 5000]
    for i, lat in enumerate(latencies):
        turns.append(T(2 * i, "user", start=t, end=t + 1000))
        t += 1000 + lat
        turns.append(T(2 * i + 1, "agent", start=t, end=t + 1000))
        t += 1000
    # p50 is 700 ms: fine. p100 is 5 s: flags the one slow reply.
    assert not run("agent_response_time", turns, max_ms=2000, percentile=50).flagged
    r = run("agent_response_time", turns, max_ms=2000, percentile=100)
    assert r.flagged and r.turns == [9]
    assert "p100 response time 5.0 s" in r.rationale


def test_response_time_without_timestamps_is_not_flagged():
    turns = [T(0, "user", "hi"), T(1, "agent", "hello")]
    r = run("agent_response_time", turns)
    assert not r.flagged and "No timed" in r.rationale


# ---- dropped_call ----


def test_dropped_call_on_user_turn_and_mid_phase():
    assert run(
        "dropped_call", [T(0, "agent", "Hi"), T(1, "user", "wait—"), T(2, "tool", "{}")]
    ).turns == [1]
    ends_agent = [
        T(0, "agent", "Hi", phase="opening"),
        T(1, "user", "yo", phase="opening"),
        T(2, "agent", "So", phase="asking"),
    ]
    assert not run("dropped_call", ends_agent).flagged
    r = run("dropped_call", ends_agent, final_phase="closing")
    assert r.flagged and r.turns == [2] and "'asking'" in r.rationale
    stop = [T(0, "agent", "Booked."), T(1, "user", "Thanks! ###STOP###")]
    assert run("dropped_call", stop).turns == [1]
    assert not run("dropped_call", stop, end_markers=["###STOP###"]).flagged
    with pytest.raises(ValueError, match="detector.end_markers: must be a list of strings"):
        detector_validate({"name": "dropped_call", "end_markers": "###STOP###"})


# ---- markdown_or_emoji ----


@pytest.mark.parametrize(
    "text, kind",
    [
        ("That is **great** news.", "bold"),
        ("Options:\n- first\n- second", "bullet list"),
        ("## Summary", "heading"),
        ("Run `reset` now", "code"),
        ("See [the page](https://x.example)", "link"),
        ("Great job! 🎉", "emoji"),
        ("Done ✅", "emoji"),
    ],
)
def test_markdown_or_emoji_flags(text, kind):
    r = run("markdown_or_emoji", [T(0, "user", "**user text is not graded**"), T(1, "agent", text)])
    assert r.flagged and r.turns == [1] and kind in r.rationale


def test_markdown_or_emoji_ignores_plain_speech_and_empty_turns():
    turns = [
        T(0, "agent", "It costs 5 * 3 dollars - roughly, and 1. is not a list."),
        T(1, "agent", ""),
        T(2, "agent", "Don't worry - we'll sort it #1 priority."),
    ]
    assert not run("markdown_or_emoji", turns).flagged
    assert not run("markdown_or_emoji", [T(0, "agent", "🎉")], emoji=False).flagged


# ---- multiple_questions ----


def test_multiple_questions():
    turns = [
        T(0, "agent", "What is your name? And where do you live?"),
        T(1, "user", "Why? Who? What?"),
        T(2, "agent", "Really?!? Okay."),
        T(3, "agent", ""),
    ]
    r = run("multiple_questions", turns)
    assert r.turns == [0] and "turn 0 asks 2" in r.rationale
    assert not run("multiple_questions", turns, max_questions=2).flagged


# ---- greeting_repeated ----


def test_greeting_repeated_cites_the_extra_greetings():
    turns = [
        T(0, "agent", "Hi Dana, thanks for joining."),
        T(1, "user", "Hello!"),
        T(2, "agent", "Great."),
        T(3, "agent", "Hello again, Dana."),
        T(4, "agent", "Good morning!"),
    ]
    r = run("greeting_repeated", turns)
    assert r.flagged and r.turns == [3, 4]
    assert not run("greeting_repeated", turns, max_greetings=3).flagged
    assert not run(
        "greeting_repeated", [T(0, "agent", "Hi."), T(1, "agent", "This is fine.")]
    ).flagged


def test_rationales_hold_no_transcript_text():
    secret = "my ssn is 123-45-6789?"
    turns = [
        T(0, "agent", "Hello! " + secret + " **x** " + secret, start=0, end=10, conf=0.1),
        T(1, "user", secret, start=5, end=5000, conf=0.1),
    ]
    for name in DETECTORS:
        assert "ssn" not in run(name, turns).rationale
