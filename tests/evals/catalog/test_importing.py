"""Importers: every shape, every kind of bad input, atomicity, idempotency, round trips."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from hypothesis import given, settings
from hypothesis import strategies as st

from core.importing import PAGE, ImportFailed, Invalid
from evals.catalog.models import Agent, AgentVersion, Transcript, Turn
from evals.catalog.services.importing import (
    audio_url_clean,
    transcript_checksum,
    transcripts_import,
)
from evals.judging.models import Judge, Verdict
from evals.judging.services.importing import verdicts_import
from evals.rules.importing import rules_export, rules_import
from evals.rules.models import Rule, RuleVersion
from evals.rules.services import RuleInvalid, rule_create, rule_version_create
from tests.evals.import_helpers import RULES_YAML, TAU_BENCH, call
from tests.factories import RuleVersionFactory, TranscriptFactory, TurnFactory, VerdictFactory

pytestmark = pytest.mark.django_db


def failure(excinfo) -> str:
    return str(excinfo.value).splitlines()[0]


# --- rules -------------------------------------------------------------------------------------


def test_rules_import_creates_version_one_as_candidate():
    result = rules_import(text=RULES_YAML, source="rules.yaml")
    assert (result.created, result.unchanged, result.new_versions) == (3, 0, 0)
    leak = Rule.objects.get(rule_id="boundaries.no-rubric-leak")
    assert (leak.group, leak.severity, leak.safety) == ("boundaries", "critical", True)
    assert list(leak.versions.values_list("number", "status")) == [(1, "candidate")]
    silence = RuleVersion.objects.get(rule__rule_id="timing.no-long-silence")
    assert silence.detector["name"] == "silence_before_agent"
    assert silence.detector["max_ms"] == 3000
    assert silence.rule.severity == "major"  # the default when the file gives none


def test_rules_import_twice_is_a_noop_and_changed_text_is_a_new_version():
    rules_import(text=RULES_YAML)
    again = rules_import(text=RULES_YAML)
    assert (again.created, again.unchanged, again.new_versions, again.updated) == (0, 3, 0, 0)
    assert RuleVersion.objects.count() == 3
    changed = RULES_YAML.replace(
        "Greet the candidate once, by name.", "Greet the candidate by name, once."
    )
    result = rules_import(text=changed, source="rules.yaml")
    assert (result.new_versions, result.unchanged) == (1, 2)
    versions = RuleVersion.objects.filter(rule__rule_id="opening.greet-by-name").order_by("number")
    assert [(v.number, v.status) for v in versions] == [(1, "candidate"), (2, "candidate")]
    assert versions[0].text == "Greet the candidate once, by name."  # version 1 is untouched


def test_rules_import_changed_detector_is_a_new_version_and_changed_severity_an_update():
    rules_import(text=RULES_YAML)
    text = RULES_YAML.replace("max_ms: 3000", "max_ms: 2500").replace(
        "severity: minor", "severity: major"
    )
    result = rules_import(text=text)
    assert (result.new_versions, result.updated, result.unchanged) == (1, 1, 1)
    assert Rule.objects.get(rule_id="opening.greet-by-name").severity == "major"
    assert Rule.objects.get(rule_id="opening.greet-by-name").versions.count() == 1
    latest = RuleVersion.objects.get(rule__rule_id="timing.no-long-silence", number=2)
    assert latest.detector["max_ms"] == 2500


def test_rules_export_round_trips_as_a_noop():
    rules_import(text=RULES_YAML)
    rules_import(text=RULES_YAML.replace("once, by name", "by name, once"))
    exported = rules_export()
    assert "by name, once" in exported and "once, by name" not in exported
    result = rules_import(text=exported, source="export.yaml")
    assert (result.created, result.new_versions, result.updated, result.unchanged) == (0, 0, 0, 3)


def test_rules_import_accepts_json():
    data = {"rules": [{"id": "closing.thank", "group": "closing", "text": "Thank the candidate."}]}
    assert rules_import(text=json.dumps(data)).created == 1
    assert Rule.objects.get(rule_id="closing.thank").group == "closing"


@pytest.mark.parametrize(
    ("replace", "expected"),
    [
        ("severity: critical", "severity: fatal"),
        ("safety: true", "safety: yes please"),
        ("id: boundaries.no-rubric-leak", "id: Boundaries No Leak"),
        ("group: boundaries", "group: Bound aries"),
        ("name: silence_before_agent", "name: no_such_detector"),
    ],
)
def test_rules_import_names_line_and_field_and_writes_nothing(replace, expected):
    bad = RULES_YAML.replace(replace, expected)
    with pytest.raises(ImportFailed) as excinfo:
        rules_import(text=bad, source="rules.yaml")
    field = replace.split(":")[0].replace("name", "detector.name")
    line = next(i for i, text in enumerate(bad.splitlines(), start=1) if expected in text)
    assert failure(excinfo).startswith(f"rules.yaml:{line}: {field}")
    assert Rule.objects.count() == 0


def test_rules_import_refuses_bad_yaml_missing_text_and_duplicates():
    with pytest.raises(ImportFailed) as excinfo:
        rules_import(text="rules:\n  - id: a.b\n    text: [unclosed\n", source="r.yaml")
    assert failure(excinfo).startswith("r.yaml:") and "yaml: not valid YAML" in failure(excinfo)
    with pytest.raises(ImportFailed) as excinfo:
        rules_import(text="rules:\n  - id: a.b\n    group: asking\n", source="r.yaml")
    assert failure(excinfo) == "r.yaml:2: text: missing (a rule version needs its text)"
    twice = "rules:\n  - {id: a.b, group: asking, text: x}\n  - {id: a.b, group: asking, text: y}\n"
    with pytest.raises(ImportFailed) as excinfo:
        rules_import(text=twice, source="r.yaml")
    assert failure(excinfo) == "r.yaml:3: id: a.b appears twice (first at 2)"
    with pytest.raises(ImportFailed) as excinfo:
        rules_import(
            text="rules:\n  - {id: a.b, group: asking, text: x, colour: red}\n", source="r.yaml"
        )
    assert "colour: unknown field" in failure(excinfo)
    assert Rule.objects.count() == 0


def test_rule_version_create_numbers_versions_and_refuses_gated_status():
    v1 = rule_create(
        rule_id="asking.one-question",
        group="asking",
        text="Ask one question per turn.",
        severity="minor",
    )
    v2 = rule_version_create(
        rule=v1.rule, text="Ask one question per turn; a clarifier is fine.", source="row 1198"
    )
    assert (v1.number, v2.number, v2.status, v2.source) == (1, 2, "candidate", "row 1198")
    with pytest.raises(RuleInvalid, match="status"):
        rule_version_create(rule=v1.rule, text="x", status="gated")
    with pytest.raises(RuleInvalid, match="already exists"):
        rule_create(rule_id="asking.one-question", group="asking", text="y", severity="minor")


# --- transcripts -------------------------------------------------------------------------------


def test_native_transcript_imports_with_turns_and_checksum():
    result = transcripts_import(lines=[call()], source="calls.jsonl")
    assert (result.created, result.unchanged, result.details["turns"]) == (1, 0, 3)
    t = Transcript.objects.get(external_id="call-1")
    assert (t.agent_version.agent.name, t.agent_version.version) == ("phone-screen", "2026-11-28.1")
    assert (t.language, t.scenario, t.metadata) == (
        "en",
        "golden/backend-senior-01",
        {"site": "eu"},
    )
    assert t.started_at.isoformat() == "2026-11-28T14:03:00+00:00"
    turns = list(t.turns.order_by("index"))
    assert [(x.index, x.speaker, x.phase) for x in turns] == [
        (0, "agent", "opening"),
        (1, "user", ""),
        (2, "agent", "asking"),
    ]
    assert (turns[0].start_ms, turns[0].end_ms, turns[0].asr_confidence) == (0, 5200, 0.97)
    assert (
        t.checksum == transcript_checksum(turns) == transcript_checksum(json.loads(call())["turns"])
    )


def test_transcripts_import_twice_is_a_noop():
    transcripts_import(lines=[call("call-1"), call("call-2")])
    again = transcripts_import(lines=[call("call-1"), call("call-2")])
    assert (again.created, again.unchanged, again.replaced) == (0, 2, 0)
    assert Turn.objects.count() == 6


@pytest.fixture
def small_chunks(monkeypatch):
    """Two calls a chunk: a few lines stream through several writes in one transaction."""
    monkeypatch.setattr("evals.catalog.services.importing.CHUNK_CALLS", 2)


def test_transcripts_stream_in_chunks_and_a_late_bad_line_writes_nothing(small_chunks):
    lines = [call(f"call-{i}") for i in range(5)]
    bad = json.loads(call("call-5"))
    bad["turns"][1]["speaker"] = "bot"
    with pytest.raises(ImportFailed) as exc:
        transcripts_import(lines=[*lines, json.dumps(bad)], source="calls.jsonl")
    assert failure(exc) == (
        "calls.jsonl:6: turns[1].speaker: 'bot' is not one of agent, user, tool, system"
    )
    assert not Transcript.objects.exists() and not Turn.objects.exists()
    assert not Agent.objects.exists()  # the first chunks' agent went with the rollback

    seen = []
    result = transcripts_import(lines=lines, progress=lambda done, total: seen.append(done))
    assert (result.created, result.details["turns"], Turn.objects.count()) == (5, 15, 15)
    assert seen[-1] == 15 and seen == sorted(seen)  # turns written so far, over all chunks
    again = transcripts_import(lines=lines)
    assert (again.created, again.unchanged, Transcript.objects.count()) == (0, 5, 5)

    # Checked across chunks: an id seen in an earlier chunk, a call stored with other turns.
    with pytest.raises(ImportFailed) as exc:
        transcripts_import(lines=[call("call-0"), call("call-6"), call("call-7"), call("call-0")])
    assert failure(exc) == "input:4: id: call-0 appears twice in this file (first at 1)"
    other = json.loads(call("call-4"))
    other["turns"][0]["text"] = "Hello Dana."
    with pytest.raises(ImportFailed) as exc:
        transcripts_import(lines=[call("call-8"), call("call-9"), json.dumps(other)])
    assert [(e.where, e.field) for e in exc.value.errors] == [("3", "id")]
    assert Transcript.objects.count() == 5  # call-8 and call-9, written first, rolled back


def test_openai_chat_shape_maps_roles_and_tool_calls():
    record = {
        "id": "chat-1",
        "agent": "support",
        "agent_version": "v1",
        "messages": [
            {"role": "system", "content": "You are a support agent."},
            {"role": "user", "content": [{"type": "text", "text": "Where is my order?"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_9",
                        "type": "function",
                        "function": {"name": "find_order", "arguments": '{"n": 7}'},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_9",
                "name": "find_order",
                "content": '{"status": "shipped"}',
            },
            {"role": "assistant", "content": "It has shipped."},
        ],
    }
    transcripts_import(lines=[json.dumps(record)])
    turns = list(Turn.objects.filter(transcript__external_id="chat-1").order_by("index"))
    assert [t.speaker for t in turns] == ["system", "user", "agent", "tool", "agent"]
    assert turns[1].text == "Where is my order?"
    assert turns[2].tool_calls == [{"id": "call_9", "name": "find_order", "arguments": {"n": 7}}]
    assert (turns[3].tool_call_id, turns[3].text) == ("call_9", '{"status": "shipped"}')


def test_trajectory_shape_becomes_prompt_tool_turns_and_output():
    record = {
        "id": "traj-1",
        "prompt": "Book me a table for two.",
        "calls": [{"tool": "search", "args": {"party": 2}, "result": {"slots": ["19:00"]}}],
        "output": "Booked for 19:00.",
        "metadata": {"env": "test"},
    }
    transcripts_import(lines=[json.dumps(record)], agent="booker", agent_version="3")
    t = Transcript.objects.get(external_id="traj-1")
    turns = list(t.turns.order_by("index"))
    assert [x.speaker for x in turns] == ["user", "agent", "tool", "agent"]
    assert turns[1].tool_calls == [{"id": "call-0", "name": "search", "arguments": {"party": 2}}]
    assert (turns[2].tool_call_id, json.loads(turns[2].text)) == ("call-0", {"slots": ["19:00"]})
    assert turns[3].text == "Booked for 19:00."
    assert (str(t.agent_version), t.metadata) == ("booker 3", {"env": "test"})


@pytest.mark.skipif(
    not TAU_BENCH.exists(), reason="the shared tau-bench dataset is not beside the repo"
)
def test_tau_bench_file_imports_200_transcripts_with_tool_calls():
    with TAU_BENCH.open("rb") as f:
        result = transcripts_import(
            lines=f, source=str(TAU_BENCH), agent="tau-airline", agent_version="gpt-4o"
        )
    assert result.created == 200
    assert Transcript.objects.count() == 200
    assert Turn.objects.filter(speaker="tool").exclude(tool_call_id="").count() > 1000
    call_turn = Turn.objects.filter(speaker="agent").exclude(tool_calls=[]).first()
    assert call_turn.tool_calls[0]["name"] and call_turn.tool_calls[0]["id"].startswith("call_")
    first = Transcript.objects.get(external_id__startswith="tau-task-0-trial-0-")
    assert first.metadata["tau_bench"]["task_id"] == 0
    with TAU_BENCH.open("rb") as f:
        again = transcripts_import(
            lines=f, source=str(TAU_BENCH), agent="tau-airline", agent_version="gpt-4o"
        )
    assert (again.created, again.unchanged) == (0, 200)


def test_missing_agent_uses_the_defaults_or_says_how_to_fix_it():
    line = call(agent=None, agent_version=None)
    with pytest.raises(ImportFailed) as excinfo:
        transcripts_import(lines=[line], source="calls.jsonl")
    assert failure(excinfo) == (
        "calls.jsonl:1: agent: missing: set it on the line, or give the agent and version of "
        "lines that name none (--agent and --agent-version)"
    )
    with pytest.raises(ImportFailed) as excinfo:
        transcripts_import(lines=[line], source="upload", spelling=PAGE, agent="phone-screen")
    assert failure(excinfo).endswith("(the form's “Agent version” field)")
    transcripts_import(lines=[line], agent="phone-screen", agent_version="2026-12-01.1")
    assert Transcript.objects.get().agent_version.version == "2026-12-01.1"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"id": "call-3", "turns": [', "calls.jsonl:3: json: not valid JSON"),
        (
            json.dumps({"id": "call-3", "agent": "a", "agent_version": "1"}),
            "calls.jsonl:3: turns: missing",
        ),
        (call(None), "calls.jsonl:3: id: missing"),
        (
            call(
                "call-3",
                turns=[{"speaker": "agent", "text": "hi"}, {"speaker": "bot", "text": "x"}],
            ),
            "calls.jsonl:3: turns[1].speaker: 'bot' is not one of agent, user, tool, system",
        ),
        (call("call-3", turns=[{"text": "hi"}]), "calls.jsonl:3: turns[0].speaker: missing"),
        (
            call("call-3", turns=[{"speaker": "agent", "asr_confidence": 1.5}]),
            "calls.jsonl:3: turns[0].asr_confidence: must be a number from 0 to 1",
        ),
        (
            call("call-3", turns=[{"speaker": "agent", "start_ms": 900, "end_ms": 100}]),
            "calls.jsonl:3: turns[0].end_ms: 100 is before start_ms 900",
        ),
        (
            call("call-3", audio_url="javascript:alert(1)"),
            "calls.jsonl:3: audio_url: only http(s) links",
        ),
        (call("call-3", started_at="yesterday"), "calls.jsonl:3: started_at: not an ISO 8601"),
        (call("call-2"), "calls.jsonl:3: id: call-2 appears twice in this file (first at 2)"),
    ],
)
def test_a_bad_third_line_imports_nothing_and_names_line_and_field(line, expected):
    lines = [call("call-1"), call("call-2"), line]
    with pytest.raises(ImportFailed) as excinfo:
        transcripts_import(lines=lines, source="calls.jsonl")
    assert failure(excinfo).startswith(expected)
    assert (
        Transcript.objects.count() == 0 and Turn.objects.count() == 0 and Agent.objects.count() == 0
    )


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "data:audio/ogg;base64,AAAA",
        "file:///etc/passwd",
        "//evil.example.com/a.ogg",
        "ftp://host/a.ogg",
        "https:/missing-host",
        "java\tscript:alert(1)",
        "static/demo/a.ogg",
        " https://rec.example.com/a.ogg",
    ],
)
def test_audio_url_refuses_everything_but_http_and_own_paths(url):
    with pytest.raises(Invalid) as excinfo:
        audio_url_clean(url)
    assert excinfo.value.field == "audio_url"


@pytest.mark.parametrize(
    "url",
    [
        "https://rec.example.com/call-1.ogg",
        "http://10.0.0.5:8080/a.ogg",
        "/static/demo/audio/call-1.ogg",
        "",
    ],
)
def test_audio_url_accepts_http_https_and_the_consoles_own_paths(url):
    assert audio_url_clean(url) == url


def test_changed_turns_are_an_error_unless_replace_which_drops_old_turns_and_verdicts():
    transcripts_import(lines=[call("call-1")])
    t = Transcript.objects.get()
    VerdictFactory(transcript=t)
    changed = call("call-1", turns=[{"speaker": "agent", "text": "Hello again."}])
    with pytest.raises(ImportFailed) as excinfo:
        transcripts_import(lines=[changed], source="calls.jsonl")
    assert failure(excinfo).startswith(
        "calls.jsonl:1: id: call-1 was imported before with other turns"
    )
    assert Turn.objects.count() == 3 and Verdict.objects.count() == 1
    result = transcripts_import(lines=[changed], replace=True)
    assert (result.replaced, result.created, result.details["deleted_verdicts"]) == (1, 0, 1)
    t.refresh_from_db()
    assert list(t.turns.values_list("text", flat=True)) == ["Hello again."]
    assert t.checksum == transcript_checksum([{"speaker": "agent", "text": "Hello again."}])
    assert Verdict.objects.count() == 0
    assert transcripts_import(lines=[changed], replace=True).unchanged == 1


def test_checksum_ignores_metadata_but_covers_every_turn_field():
    base = [{"speaker": "agent", "text": "Hi", "start_ms": 0}]
    assert transcript_checksum(base) == transcript_checksum([{**base[0], "phase": ""}])
    assert transcript_checksum(base) != transcript_checksum([{**base[0], "start_ms": 1}])
    assert transcript_checksum(base) != transcript_checksum([{**base[0], "speaker": "user"}])


def test_native_tool_calls_in_openai_form_are_normalised():
    turns = [
        {
            "speaker": "agent",
            "text": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": "not json"},
                }
            ],
        }
    ]
    transcripts_import(lines=[call("call-9", turns=turns)])
    assert Turn.objects.get().tool_calls == [
        {"id": "c1", "name": "lookup", "arguments": "not json"}
    ]


def test_bytes_lines_with_bad_utf8_name_the_line():
    lines = [call("call-1").encode() + b"\n", b'{"id": "call-2", "agent": "\xff"}\n']
    with pytest.raises(ImportFailed) as excinfo:
        transcripts_import(lines=lines, source="calls.jsonl")
    assert failure(excinfo) == "calls.jsonl:2: encoding: not UTF-8: byte 0xff at column 28"
    assert Transcript.objects.count() == 0


AWKWARD = 'tab\there\nnew line \\N back\\slash "quoted" \r émoji 🎧 \\. end'


def test_awkward_text_survives_the_bulk_write_exactly(judged):
    turns = [
        {
            "speaker": "agent",
            "text": AWKWARD,
            "tool_calls": [{"id": "c\t1", "name": "f", "arguments": {"q": AWKWARD}}],
        }
    ]
    transcripts_import(lines=[call("odd", turns=turns)])
    turn = Turn.objects.get(transcript__external_id="odd")
    assert turn.text == AWKWARD and turn.tool_calls[0]["arguments"]["q"] == AWKWARD
    assert Transcript.objects.get(external_id="odd").checksum == transcript_checksum([turn])
    verdicts_import(lines=[verdict(rationale=AWKWARD, error="")])
    assert Verdict.objects.get().rationale == AWKWARD


def test_nul_characters_are_refused_with_their_field():
    line = call("call-2", turns=[{"speaker": "agent", "text": "a\u0000b"}])
    assert "\\u0000" in line
    with pytest.raises(ImportFailed) as excinfo:
        transcripts_import(lines=[call("call-1"), line], source="calls.jsonl")
    assert failure(excinfo) == (
        "calls.jsonl:2: turns[0].text: contains a NUL character (\\u0000), which cannot be stored"
    )
    assert Transcript.objects.count() == 0
    rules = json.dumps({"rules": [{"id": "a.b", "group": "asking", "text": "x\u0000"}]})
    with pytest.raises(ImportFailed, match="rules\\[0\\].text: contains a NUL"):
        rules_import(text=rules, source="r.json")


def test_json_array_input_names_items():
    bad = json.dumps(
        [json.loads(call("a")), {"id": "b", "agent": "x", "agent_version": "1", "turns": [{}]}]
    )
    with pytest.raises(ImportFailed) as excinfo:
        transcripts_import(lines=bad.splitlines(keepends=True), source="calls.json")
    assert (
        failure(excinfo)
        == "calls.json:item 2: turns[0].speaker: missing (one of agent, user, tool, system)"
    )


# --- verdicts ----------------------------------------------------------------------------------


@pytest.fixture
def judged(db):
    """Two calls of four turns each and a rule with two versions."""
    for ext in ("call-1", "call-2"):
        t = TranscriptFactory(external_id=ext)
        for i in range(4):
            TurnFactory(transcript=t, index=i)
    v1 = RuleVersionFactory(rule__rule_id="asking.one-question", rule__severity="minor", number=1)
    RuleVersionFactory(
        rule=v1.rule, number=2, text="Ask one question per turn; a clarifier is fine."
    )
    return v1.rule


def verdict(**overrides):
    record = {
        "transcript": "call-1",
        "rule": "asking.one-question",
        "rule_version": 1,
        "flagged": True,
        "turn": 1,
        "severity": "minor",
        "rationale": "Asked two questions.",
        "confidence": 80,
        "judge": "gpt-4o-mini/conduct-v3",
    }
    record.update(overrides)
    return json.dumps({k: v for k, v in record.items() if v is not None})


def test_verdicts_import_and_reimport_is_a_noop(judged):
    lines = [
        verdict(),
        verdict(transcript="call-2", flagged=False, turn=None, severity=None),
        verdict(rule_version=2, turns=[1, 3], turn=None),
    ]
    result = verdicts_import(lines=lines, source="v.jsonl")
    assert (result.created, result.unchanged, result.details["new_judges"]) == (3, 0, 1)
    judge = Judge.objects.get()
    assert (judge.name, judge.kind, judge.model, judge.prompt_version) == (
        "gpt-4o-mini/conduct-v3",
        "llm",
        "gpt-4o-mini",
        "conduct-v3",
    )
    multi = Verdict.objects.get(rule_version__number=2)
    assert (multi.turn, multi.turns, multi.confidence) == (1, [1, 3], 80)
    clean = Verdict.objects.get(transcript__external_id="call-2")
    assert (clean.flagged, clean.turn, clean.turns, clean.severity) == (False, None, [], "")
    changed = [verdict(rationale="Something else entirely."), *lines[1:]]
    again = verdicts_import(lines=changed)
    assert (again.created, again.unchanged) == (0, 3)
    assert (
        Verdict.objects.get(
            pk=Verdict.objects.get(rule_version__number=1, transcript__external_id="call-1").pk
        ).rationale
        == "Asked two questions."
    )


def test_keys_stored_by_a_concurrent_import_are_skipped_not_duplicated(judged, monkeypatch):
    from evals.judging.services import importing as module

    lines = [verdict(), verdict(transcript="call-2")]
    verdicts_import(lines=lines)
    # As if another import had stored these keys after this one looked for them.
    monkeypatch.setattr(module._Import, "_existing", lambda *args: set())
    again = verdicts_import(lines=[*lines, verdict(rule_version=2)])
    assert (again.created, again.unchanged) == (1, 2)
    assert Verdict.objects.count() == 3


def test_verdicts_stream_in_chunks_and_stay_atomic(judged, monkeypatch):
    """A file is checked and written a chunk at a time (CHUNK_LINES), never held whole: a key
    seen in an earlier chunk is still a duplicate, and a bad line in a late chunk still leaves
    nothing written by the earlier ones."""
    from evals.judging.services import importing as module

    monkeypatch.setattr(module, "CHUNK_LINES", 2)
    judge = "gpt-4o-mini/conduct-v3"
    lines = [
        verdict(),
        verdict(transcript="call-2", flagged=False, turn=None, severity=None),
        verdict(rule_version=2),
        verdict(transcript="call-2", rule_version=2, judge="claude/v1"),
        verdict(judge="claude/v1"),
    ]
    bad = [*lines, verdict(rationale="again")]
    with pytest.raises(ImportFailed) as excinfo:
        verdicts_import(lines=bad, source="v.jsonl")
    assert failure(excinfo) == (
        f"v.jsonl:6: judge: the verdict of {judge} on call-1 for "
        "asking.one-question v1 appears twice (first at 1)"
    )
    assert Verdict.objects.count() == 0 and not Judge.objects.filter(name="claude/v1").exists()

    late = [*lines, verdict(transcript="call-9")]
    with pytest.raises(ImportFailed, match="v.jsonl:6: transcript: call-9 is not imported"):
        verdicts_import(lines=late, source="v.jsonl")
    assert Verdict.objects.count() == 0

    result = verdicts_import(lines=lines, source="v.jsonl")
    assert (result.created, result.unchanged, result.details["new_judges"]) == (5, 0, 2)
    again = verdicts_import(lines=[verdict(turn=2), *lines[1:]], source="v.jsonl")
    assert (again.created, again.unchanged) == (0, 5)


def test_a_severity_that_is_not_a_string_is_an_error_not_a_crash(judged):
    with pytest.raises(ImportFailed) as excinfo:
        verdicts_import(lines=[verdict(severity=["major"])], source="v.jsonl")
    assert failure(excinfo) == (
        "v.jsonl:1: severity: ['major'] is not one of minor, major, critical"
    )


def test_flagged_verdict_without_severity_takes_the_rules_default(judged):
    verdicts_import(lines=[verdict(severity=None)])
    assert Verdict.objects.get().severity == "minor"


def test_errored_verdict_is_recorded_as_an_error(judged):
    verdicts_import(
        lines=[
            json.dumps(
                {
                    "transcript": "call-1",
                    "rule": "asking.one-question",
                    "rule_version": 1,
                    "judge": "detector:multiple_questions",
                    "error": "timeout after 60s",
                }
            )
        ]
    )
    v = Verdict.objects.get()
    assert (v.flagged, v.error, v.errored, v.judge.kind) == (
        False,
        "timeout after 60s",
        True,
        "detector",
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{nope", "v.jsonl:3: json: not valid JSON"),
        (
            verdict(rule_version=7),
            "v.jsonl:3: rule_version: asking.one-question version 7 does not exist",
        ),
        (
            verdict(rule="asking.nothing"),
            "v.jsonl:3: rule_version: asking.nothing version 1 does not exist",
        ),
        (verdict(transcript="call-404"), "v.jsonl:3: transcript: call-404 is not imported"),
        (
            verdict(confidence=101),
            "v.jsonl:3: confidence: must be a whole number from 0 to 100, not 101",
        ),
        (verdict(confidence=0.8), "v.jsonl:3: confidence: must be a whole number from 0 to 100"),
        (verdict(flagged=False), "v.jsonl:3: turn: a verdict that is not flagged cites no turn"),
        (
            verdict(flagged=False, turn=None, turns=[2]),
            "v.jsonl:3: turns: a verdict that is not flagged cites no turn",
        ),
        (verdict(flagged="yes"), "v.jsonl:3: flagged: must be true or false"),
        (verdict(judge=None), "v.jsonl:3: judge: missing"),
        (verdict(severity="awful"), "v.jsonl:3: severity: 'awful' is not one of"),
        (verdict(turn=9), "v.jsonl:3: turn: turn 9 is beyond call-1's 4 turns"),
        (verdict(turn=2, turns=[1, 2]), "v.jsonl:3: turn: must be the first of turns (1), not 2"),
        (
            verdict(turn=None, turns=[1, 7]),
            "v.jsonl:3: turns[1]: turn 7 is beyond call-1's 4 turns",
        ),
        (
            verdict(rationale="dup"),
            (
                "v.jsonl:3: judge: the verdict of gpt-4o-mini/conduct-v3 on call-1 for "
                "asking.one-question v1 appears twice (first at 1)"
            ),
        ),
    ],
)
def test_a_bad_third_verdict_imports_nothing(judged, line, expected):
    lines = [verdict(), verdict(transcript="call-2"), line]
    with pytest.raises(ImportFailed) as excinfo:
        verdicts_import(lines=lines, source="v.jsonl")
    assert failure(excinfo).startswith(expected)
    assert Verdict.objects.count() == 0 and Judge.objects.count() == 0


def test_errors_are_collected_up_to_a_limit(judged):
    lines = [verdict(transcript=f"call-x{i}") for i in range(30)] + [verdict(confidence=200)]
    with pytest.raises(ImportFailed) as excinfo:
        verdicts_import(lines=lines, source="v.jsonl")
    errors = excinfo.value.errors
    assert len(errors) == 20 and excinfo.value.truncated
    assert [e.where for e in errors[:2]] == ["1", "2"] and errors[0].field == "transcript"
    assert (errors[-1].where, errors[-1].field) == (
        "31",
        "confidence",
    )  # parse errors too, in line order


# --- verdicts: the fast reader and COPY's text ---------------------------------------------------

# Text that COPY's text format must escape (tab, newline, carriage return, backslash), its null
# marker and end-of-data marker as text, and characters it passes through as they are.
AWKWARD_TEXTS = [
    "tab\there",
    "new\nline",
    "cr\rlf\r\n",
    "back\\slash",
    "\\N",
    "\\.",
    "ends in a backslash \\",
    "\\t and \\n as two characters",
    "a\tb\\nc\n\\N\t",
    "form\ffeed \b \v and \x7f",
    "quotes \" ' and \u00e9 \U0001f600",
    "",
]


def test_awkward_text_round_trips_exactly_through_the_write(judged, monkeypatch):
    """Rationales and errors go to COPY as text lines (PostgreSQL), escaped only where needed:
    what is read back is what the file said, in a batch that also holds plain text, and through
    the path that skips keys stored meanwhile (a temporary table, then INSERT ... ON CONFLICT)."""
    from evals.judging.services import importing as module

    def line(i: int, text: str) -> str:
        transcript, version, judge = f"call-{1 + i % 2}", 1 + i // 2 % 2, f"judge/{i // 4}"
        if i % 3 == 0:
            return verdict(
                transcript=transcript, rule_version=version, judge=judge, flagged=False,
                turn=None, severity=None, error=text or "plain", rationale=text,
            )  # fmt: skip
        return verdict(transcript=transcript, rule_version=version, judge=judge, rationale=text)

    lines = [line(i, text) for i, text in enumerate([*AWKWARD_TEXTS, "plain", "plain too"])]
    result = verdicts_import(lines=lines)
    assert result.created == len(lines)
    stored = {
        (v.transcript.external_id, v.rule_version.number, v.judge.name): (v.rationale, v.error)
        for v in Verdict.objects.select_related("transcript", "rule_version", "judge")
    }
    for text_line in lines:
        record = json.loads(text_line)
        key = (record["transcript"], record["rule_version"], record["judge"])
        assert stored[key] == (record.get("rationale", ""), record.get("error", ""))

    monkeypatch.setattr(module._Import, "_existing", lambda *args: set())
    more = [
        *lines,
        verdict(judge="judge/late", rationale=AWKWARD_TEXTS[8], turn=None, turns=[2, 0]),
    ]
    again = verdicts_import(lines=more)
    assert (again.created, again.unchanged) == (1, len(lines))
    late = Verdict.objects.get(judge__name="judge/late")
    assert (late.rationale, late.turn, late.turns) == (AWKWARD_TEXTS[8], 2, [2, 0])


def test_awkward_text_is_escaped_for_the_write_however_its_line_comes(judged):
    """The fast reader escapes a line's texts for COPY only when the line holds a backslash (a
    JSON string holds what COPY escapes only as an escape): lines as text with every non-ASCII
    character escaped, as UTF-8 bytes with them raw (so a line may hold none), and lines only the
    detailed checker reads (a confidence written 80.0) all store exactly what the file said."""
    texts = [*AWKWARD_TEXTS, "raw \u00e9 and \U0001f600, no escape", "plain"]

    def record(form: str, i: int, text: str) -> dict:
        return {
            "transcript": f"call-{1 + i % 2}",
            "rule": "asking.one-question",
            "rule_version": 1 + i // 2 % 2,
            "judge": f"judge/{form}/{i}",
            "flagged": False,
            "rationale": text,
            "error": text[::-1],
            "confidence": 80.0 if form == "checked" else 80,
        }

    records, lines = [], []
    for i, text in enumerate(texts):
        for form in ("ascii", "utf8", "checked"):
            records.append(record(form, i, text))
            line = json.dumps(records[-1], ensure_ascii=form != "utf8")
            lines.append(line.encode() if form == "utf8" else line)
    assert not any(b"\\" in line for line in lines if type(line) is bytes and b"raw" in line)
    assert verdicts_import(lines=lines).created == len(lines)
    stored = {v.judge.name: (v.rationale, v.error) for v in Verdict.objects.select_related("judge")}
    assert stored == {r["judge"]: (r["rationale"], r["error"]) for r in records}


def test_a_bad_line_amid_good_ones_names_its_line_and_field_and_nothing_is_written(
    judged, monkeypatch
):
    """Good lines take the fast reader; a bad one among them, in any chunk, is read again by the
    detailed checker, which names its line and field, and nothing is written."""
    from evals.judging.services import importing as module

    monkeypatch.setattr(module, "CHUNK_LINES", 3)
    lines = [
        verdict(transcript=f"call-{1 + i % 2}", rule_version=1 + i // 2 % 2, judge=f"j/{i // 4}")
        for i in range(12)
    ]
    lines[4] = verdict(judge="j/x", turn=2, turns=[1, 2])  # every field fine, not together
    lines[8] = verdict(judge="j/y", confidence=100.5)
    lines[9] = json.dumps({**json.loads(verdict(judge="j/z")), "rationale": "a\x00b"})
    with pytest.raises(ImportFailed) as excinfo:
        verdicts_import(lines=lines, source="v.jsonl")
    assert str(excinfo.value).splitlines() == [
        "v.jsonl:5: turn: must be the first of turns (1), not 2",
        "v.jsonl:9: confidence: must be a whole number from 0 to 100, not 100.5",
        "v.jsonl:10: rationale: contains a NUL character (\\u0000), which cannot be stored",
    ]
    assert Verdict.objects.count() == 0 and Judge.objects.count() == 0


def test_lines_the_fast_reader_leaves_are_imported_as_before(judged):
    """Another field, a whole number written as a float, a null, an error without `flagged`, a
    byte order mark, blank lines and bytes: read by json_records and _verdict, as before."""
    lines = [
        b"\xef\xbb\xbf" + verdict(model="gpt-4o-mini").encode(),
        b"   \n",
        verdict(transcript="call-2", confidence=80.0, rule_version=1.0),
        verdict(rule_version=2, rationale=None, severity=""),
        verdict(transcript="call-2", rule_version=2, flagged=None, turn=None, error="timeout"),
    ]
    result = verdicts_import(lines=lines)
    assert result.created == 4
    assert sorted(
        Verdict.objects.values_list(
            "transcript__external_id", "rule_version__number", "flagged", "confidence", "error"
        )
    ) == [
        ("call-1", 1, True, 80, ""),
        ("call-1", 2, True, 80, ""),
        ("call-2", 1, True, 80, ""),
        ("call-2", 2, False, 80, "timeout"),
    ]


def test_the_common_line_takes_the_fast_reader():
    from evals.judging.services.importing import _verdict_reader

    read = _verdict_reader({})
    assert read(verdict()) == read(verdict().encode() + b"\n") == (
        "call-1", "asking.one-question", 1, "gpt-4o-mini/conduct-v3", True, 1, [1], "minor",
        "Asked two questions.", 80, "",
    )  # fmt: skip
    assert read(verdict(rule_version=2, turns=[1, 3], turn=None))[5:7] == (1, [1, 3])
    # A NUL escape is left to json_records, which refuses it with its field.
    assert read(verdict(rationale="a\u0000b")) is None is read(verdict(error="\u0000").encode())


def _verdict_outcome(line, *, fast: bool):
    """What one line becomes: _verdict's tuple, or the (field, reason) of each error."""
    from core.importing import Errors, json_records
    from evals.judging.services.importing import _verdict, _verdict_reader

    errors = Errors("v.jsonl")
    read = _verdict_reader({}) if fast else None
    records = list(json_records([line], errors, check="nul", fast=read))
    if errors:
        return [(e.field, e.reason) for e in errors.items]
    [(_, obj)] = records
    if type(obj) is tuple:
        return obj
    try:
        return _verdict(obj)
    except Invalid as exc:
        return [(exc.field, exc.reason)]


_names = st.sampled_from(["call-1", "", "x" * 200, "x" * 201, "\u00e9" * 200, "a\tb", None])
_numbers = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([-1, 0, 1, 2, 3, 100, 101, 2**31 - 1, 2**31, 2**64, 1.0, 2.5, 1e300]),
    st.text(max_size=3),
)
_verdict_fields = {
    "transcript": _names,
    "rule": _names,
    "rule_version": _numbers,
    "judge": _names,
    "flagged": st.one_of(st.none(), st.booleans(), st.sampled_from([0, 1, "yes"])),
    "turn": _numbers,
    "turns": st.one_of(_numbers, st.lists(_numbers, max_size=3)),
    "severity": st.sampled_from(["minor", "major", "critical", "", "awful", None, 1, ["major"]]),
    "rationale": st.one_of(st.none(), st.text(max_size=8), st.sampled_from([0, False, ["a"]])),
    "confidence": _numbers,
    "error": st.one_of(st.none(), st.text(max_size=8), st.sampled_from([0, False, {}])),
    "extra": st.sampled_from([1, None, [[[]]]]),
}


_good_names = st.sampled_from(["call-1", "x" * 200, "\u00e9" * 200, "a\tb"])
_good_turns = st.integers(0, 3)
_good_verdict = st.fixed_dictionaries(  # mostly well-formed, now and then not together
    {
        "transcript": _good_names,
        "rule": _good_names,
        "rule_version": st.integers(1, 3),
        "judge": _good_names,
        "flagged": st.booleans(),
    },
    optional={
        "turn": st.one_of(st.none(), _good_turns),
        "turns": st.lists(_good_turns, max_size=2),
        "severity": st.sampled_from(["minor", "critical", "", None]),
        "rationale": st.one_of(st.none(), st.text(max_size=8)),
        "confidence": st.one_of(st.none(), st.integers(0, 100), st.just(80.0)),
        "error": st.one_of(st.none(), st.text(max_size=3)),
        "extra": st.just(1),
    },
)


@given(
    record=st.one_of(_good_verdict, st.fixed_dictionaries({}, optional=_verdict_fields)),
    as_bytes=st.booleans(),
)
@settings(max_examples=400)
def test_the_fast_reader_accepts_nothing_the_checker_refuses_and_reads_the_same(record, as_bytes):
    line = json.dumps(record, ensure_ascii=as_bytes)
    line = line.encode() if as_bytes else line
    assert _verdict_outcome(line, fast=True) == _verdict_outcome(line, fast=False)


# --- commands ----------------------------------------------------------------------------------


def test_commands_import_files_and_fail_with_the_line(tmp_path, judged, capsys):
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES_YAML)
    call_command("import_rules", str(rules))
    assert "rules: 3 created, 0 unchanged" in capsys.readouterr().out
    calls = tmp_path / "calls.jsonl"
    calls.write_text(call("call-7") + "\n\n" + call("call-8") + "\n")
    call_command("import_transcripts", str(calls))
    assert "transcripts: 2 created" in capsys.readouterr().out
    bad = tmp_path / "v.jsonl"
    bad.write_text(verdict() + "\n" + verdict(transcript="call-2", confidence=101) + "\n")
    with pytest.raises(CommandError) as excinfo:
        call_command("import_verdicts", str(bad))
    assert f"{bad}:2: confidence: must be a whole number from 0 to 100, not 101" in str(
        excinfo.value
    )
    assert Verdict.objects.count() == 0
    out = tmp_path / "export.yaml"
    call_command("export_rules", "-o", str(out))
    assert "boundaries.no-rubric-leak" in out.read_text()
    assert rules_import(text=out.read_text()).unchanged == Rule.objects.count()
    with pytest.raises(CommandError, match="cannot open"):
        call_command("import_verdicts", str(tmp_path / "missing.jsonl"))


def test_progress_bars_stay_silent_when_stderr_is_not_a_terminal(tmp_path, capfd):
    from core.management.importing import Progress

    calls = tmp_path / "calls.jsonl"
    calls.write_text("\n".join(call(f"c-{i}") for i in range(50)) + "\n")
    call_command("import_transcripts", str(calls))
    captured = capfd.readouterr()
    assert "transcripts: 50 created" in captured.out
    assert (
        "reading" not in captured.err and "writing" not in captured.err and "%|" not in captured.err
    )

    class Terminal:
        def isatty(self):
            return True

        def write(self, text):
            pass

        def flush(self):
            pass

    assert Progress(Terminal()).enabled and not Progress().enabled


# --- model constraints -------------------------------------------------------------------------


def test_verdict_key_is_unique():
    v = VerdictFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        Verdict.objects.create(
            transcript=v.transcript, rule_version=v.rule_version, judge=v.judge, flagged=True
        )


def test_one_version_number_per_rule():
    v = RuleVersionFactory(number=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        RuleVersion.objects.create(rule=v.rule, number=1, text="Another text.")


def test_confidence_must_be_at_most_100():
    v = VerdictFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        Verdict.objects.filter(pk=v.pk).update(confidence=101)


def test_agent_versions_are_reused_across_imports():
    transcripts_import(lines=[call("a")])
    transcripts_import(lines=[call("b")])
    assert AgentVersion.objects.count() == 1
