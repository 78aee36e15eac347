"""Real trace formats through the one transcript importer, on the samples in examples/traces
(their sources and licences in its README): what each maps, what it keeps in metadata, and that
the same file again changes nothing."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from core.importing import ImportFailed
from evals.catalog.models import AgentVersion, Transcript
from evals.catalog.services.importing import transcripts_import
from evals.trajectories.services.reports import axes_rows

pytestmark = pytest.mark.django_db
SAMPLES = Path(__file__).resolve().parents[3] / "examples" / "traces"


def sample(name: str) -> Path:
    return SAMPLES / name


def imported(name: str, **kwargs):
    with open(sample(name), "rb") as f:
        document = name.endswith(".json") or None
        return transcripts_import(lines=f, source=name, document=document, **kwargs)


def turns_of(external_id: str) -> list:
    return list(Transcript.objects.get(external_id=external_id).turns.order_by("index"))


def test_every_sample_is_named_with_its_source_and_licence():
    readme = (SAMPLES / "README.md").read_text()
    for path in SAMPLES.iterdir():
        if path.name != "README.md":
            assert f"`{path.name}`" in readme, path.name
    for licence in ("MIT", "Apache-2.0"):
        assert licence in readme


# ---- JSON documents ---------------------------------------------------------------------------


def test_a_pretty_printed_object_is_one_call_and_jsonl_stays_line_by_line(tmp_path):
    call = {
        "id": "doc-1",
        "agent": "a",
        "agent_version": "1",
        "turns": [{"speaker": "agent", "text": "Hi."}],
    }
    path = tmp_path / "call.txt"  # no telling extension: told by its content
    path.write_text(json.dumps(call, indent=2))
    out = StringIO()
    call_command("import_transcripts", str(path), stdout=out)
    assert "1 created" in out.getvalue()
    assert Transcript.objects.filter(external_id="doc-1").exists()


def test_a_document_that_is_neither_says_so_once(tmp_path):
    bad = tmp_path / "results.json"
    bad.write_text('{\n  "simulations": [\n    {"id": "x",\n  ]\n}\n')
    with pytest.raises(CommandError) as exc:
        call_command("import_transcripts", str(bad))
    lines = [x for x in str(exc.value).splitlines() if "results.json" in x]
    assert len(lines) == 1 and "not valid JSON" in lines[0] and "one JSON document" in lines[0]

    scalar = tmp_path / "scalar.json"
    scalar.write_text('"just a string"')
    with pytest.raises(CommandError, match="must be an object or an array of objects, not a str"):
        call_command("import_transcripts", str(scalar))

    lines_as_json = tmp_path / "calls.json"  # JSON Lines under a .json name
    lines_as_json.write_text('{"id": "a"}\n{"id": "b"}\n')
    with pytest.raises(CommandError) as exc:
        call_command("import_transcripts", str(lines_as_json))
    message = str(exc.value)
    assert message.count("calls.json:") == 1 and ".jsonl" in message


def test_a_json_body_is_one_document_over_http(client, engineer):
    client.force_login(engineer)
    body = sample("tau2-airline-results.json").read_bytes()
    response = client.post("/api/v1/transcripts/import/", body, content_type="application/json")
    assert response.status_code == 201, response.json()
    payload = response.json()
    assert payload["created"] == 2
    report = payload["formats"]["tau2-bench"]
    assert report["calls"] == 2 and "tau2_bench.reward_info" in report["metadata"]
    assert any("requestor" in m for m in report["mapped"])


# ---- OpenAI chat ------------------------------------------------------------------------------


def test_openai_chat_lines_without_ids_get_ids_from_their_content(tmp_path):
    result = imported("openai-chat-finetune.jsonl", agent="kettle", agent_version="ft-1")
    assert result.created == 3
    ids = sorted(Transcript.objects.values_list("external_id", flat=True))
    assert all(i.startswith("chat-") for i in ids)
    # the same lines under another name, and again: nothing new
    copy = tmp_path / "renamed.jsonl"
    copy.write_bytes(sample("openai-chat-finetune.jsonl").read_bytes())
    with open(copy, "rb") as f:
        again = transcripts_import(lines=f, agent="kettle", agent_version="ft-1")
    assert (again.created, again.unchanged, again.changed) == (0, 3, False)
    assert result.formats["openai-chat"]["metadata"] == [
        "openai_chat.parallel_tool_calls",
        "openai_chat.messages",
    ]


def test_openai_chat_tools_and_system_message_become_the_versions_scope():
    imported("openai-chat-finetune.jsonl", agent="kettle", agent_version="ft-1")
    av = AgentVersion.objects.get(agent__name="kettle", version="ft-1")
    assert av.instructions.startswith("You are Kettle Co.'s order assistant.")
    assert [t["name"] for t in av.tools] == ["get_order", "refund_order"]
    assert av.tools[0]["parameters"]["required"] == ["order_id"]


def test_openai_chat_tool_arguments_are_decoded_however_encoded():
    imported("openai-chat-finetune.jsonl", agent="kettle", agent_version="ft-1")
    calls = [c for t in Transcript.objects.all() for turn in t.turns.all() for c in turn.tool_calls]
    args = {c["name"]: c["arguments"] for c in calls}
    assert args["get_order"] == {"order_id": "KT-1042"}
    assert args["refund_order"] == {"order_id": "KT-2210", "reason": "arrived broken"}  # twice
    weights = [t.metadata.get("openai_chat", {}).get("messages") for t in Transcript.objects.all()]
    assert {"4": {"weight": 1}} in weights and {"1": {"weight": 0}} in weights


def test_a_conflicting_scope_on_a_released_version_is_refused_unless_replacing(tmp_path):
    imported("openai-chat-finetune.jsonl", agent="kettle", agent_version="ft-1")
    line = json.loads(sample("openai-chat-finetune.jsonl").read_text().splitlines()[0])
    line["messages"][0]["content"] = "You are a pirate."
    path = tmp_path / "other.jsonl"
    path.write_text(json.dumps(line) + "\n")
    with open(path, "rb") as f, pytest.raises(ImportFailed) as exc:
        transcripts_import(lines=f, source="other.jsonl", agent="kettle", agent_version="ft-1")
    assert exc.value.first.startswith("other.jsonl:1: agent_instructions: kettle ft-1 already")
    with open(path, "rb") as f:
        transcripts_import(lines=f, agent="kettle", agent_version="ft-1", replace=True)
    av = AgentVersion.objects.get(agent__name="kettle", version="ft-1")
    assert av.instructions == "You are a pirate."


# ---- tau2-bench -------------------------------------------------------------------------------


def test_tau2_results_keep_ids_requestors_timing_reward_costs_and_termination():
    result = imported("tau2-airline-results.json")
    assert result.created == 2
    t = Transcript.objects.get(external_id="3f2c9a1e-5b7d-4c0e-9a61-2d8e4f7b1c03")
    assert (t.agent_version.agent.name, t.agent_version.version) == (
        "tau2-airline",
        "gpt-4.1-mini-2025-04-14",
    )
    assert t.scenario == "airline/7"
    turns = turns_of(t.external_id)
    assert turns[2].speaker == "agent" and turns[2].tool_calls[0]["id"] == "call_a1"
    assert turns[3].speaker == "tool" and turns[3].tool_call_id == "call_a1"
    # 09:10:05.400 less 1.1 s of generation, from the start at 09:10:01
    assert (turns[2].start_ms, turns[2].end_ms) == (3300, 4400)
    tau2 = t.metadata["tau2_bench"]
    assert tau2["reward"] == 1.0 and tau2["reward_info"]["reward_breakdown"]["DB"] == 1.0
    assert (tau2["agent_cost"], tau2["user_cost"]) == (0.0041, 0.0022)
    assert tau2["termination_reason"] == "user_stop"
    assert tau2["messages"]["2"]["usage"] == {"prompt_tokens": 2410, "completion_tokens": 21}
    assert tau2["task"]["evaluation_criteria"]["actions"][1]["name"] == (
        "update_reservation_baggages"
    )
    assert imported("tau2-airline-results.json").changed is False


def test_a_tau2_users_tool_call_is_on_the_users_turn():
    imported("tau2-telecom-simulation.json", agent="tau2-telecom", agent_version="gpt-4.1")
    turns = turns_of("c7e19f44-0d2a-4e8b-b3f6-91a5d0e2c8aa")
    assert turns[3].speaker == "user" and turns[3].tool_calls[0]["name"] == "toggle_airplane_mode"
    assert turns[4].speaker == "tool" and turns[4].tool_call_id == "call_u1"


def test_tau2_reward_feeds_task_success_and_gold_actions_tool_correctness():
    imported("tau2-airline-results.json")
    av = AgentVersion.objects.get(agent__name="tau2-airline")
    rows = {r["id"]: r for r in axes_rows(agent_version=av)}
    good = rows["3f2c9a1e-5b7d-4c0e-9a61-2d8e4f7b1c03"]
    bad = rows["8a41d07b-2e6f-4b93-8c15-7f0a9d3e6b52"]
    assert good["task"] == "7" and good["task_success"]["passed"] is True
    assert bad["task_success"] == {"passed": False, "source": "reward", "reward": 0.0, "checks": []}
    assert good["tool_correctness"]["passed"] is True
    assert bad["tool_correctness"]["passed"] is False  # no lookup, a free bag: args differ


# ---- voice platforms --------------------------------------------------------------------------


def test_vapi_report_keeps_recording_timing_tool_calls_and_the_rest():
    result = imported("vapi-end-of-call-report.json", agent="repairs", agent_version="1")
    t = Transcript.objects.get(external_id="vapi-6a1c2e30-9f4b-4d2a-8e57-3b0c9d1f7a42")
    assert t.audio_url == "https://storage.vapi.example/6a1c2e30-mono.wav"
    turns = turns_of(t.external_id)
    assert [x.speaker for x in turns] == [
        "system", "agent", "user", "agent", "user", "agent", "tool", "agent"
    ]  # fmt: skip
    assert (turns[1].start_ms, turns[1].end_ms) == (900, 2700)
    assert turns[5].tool_calls == [
        {
            "id": "call_vapi_1",
            "name": "book_visit",
            "arguments": {"day": "thursday", "slot": "09:00"},
        }
    ]
    assert turns[6].tool_call_id == "call_vapi_1" and "R-5531" in turns[6].text
    assert t.metadata["vapi"]["endedReason"] == "customer-ended-call"
    assert t.metadata["vapi"]["artifact"]["stereoRecordingUrl"].endswith("stereo.wav")
    assert "vapi.costs" in result.formats["vapi"]["metadata"]


def test_retell_call_keeps_per_word_timing_and_tool_calls():
    imported("retell-call-analyzed.json", agent="clinic", agent_version="3")
    t = Transcript.objects.get(external_id="retell-Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6")
    turns = turns_of(t.external_id)
    assert [x.speaker for x in turns] == ["agent", "user", "agent", "tool", "agent"]
    assert (turns[0].start_ms, turns[0].end_ms) == (700, 2900)
    assert (turns[4].start_ms, turns[4].end_ms) == (8100, 10600)
    assert turns[2].tool_calls[0] == {
        "id": "tc_7f1",
        "name": "reschedule",
        "arguments": {"day": "friday", "time": "10:00"},
    }
    assert t.audio_url.endswith("Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6.wav")
    assert t.started_at.isoformat() == "2025-12-01T08:00:00+00:00"
    assert t.metadata["retell"]["call_analysis"]["call_successful"] is True
    assert t.metadata["retell"]["turn_words"]["0"][0] == ["Hi,", 0.7, 0.9]


def test_elevenlabs_conversation_keeps_time_in_call_tool_calls_and_results():
    imported("elevenlabs-post-call-transcription.json", agent="library", agent_version="1")
    t = Transcript.objects.get(external_id="elevenlabs-conv_2101kb5m7w3ffa0s1t9bq6xzrj")
    turns = turns_of(t.external_id)
    assert [x.speaker for x in turns] == ["agent", "user", "agent", "tool", "agent"]
    assert [x.start_ms for x in turns] == [0, 4000, 9000, 9000, 11000]
    assert turns[2].tool_calls == [
        {"id": "req_hold_1", "name": "check_holds", "arguments": {"card": "77120"}}
    ]
    assert turns[3].tool_call_id == "req_hold_1" and "The Hobbit" in turns[3].text
    assert t.metadata["elevenlabs"]["metadata"]["call_duration_secs"] == 18
    assert t.metadata["elevenlabs"]["turn_extras"]["3"]["tool_latency_secs"] == 0.42


# ---- OpenTelemetry ----------------------------------------------------------------------------


def test_genai_spans_become_one_call_with_timed_turns():
    result = imported("otel-genai.json")
    t = Transcript.objects.get()
    assert t.external_id == "otel-session-conv-lyon-0001"
    assert (t.agent_version.agent.name, t.agent_version.version) == (
        "weather-desk",
        "2026-12-01.1",
    )
    turns = turns_of(t.external_id)
    assert [x.speaker for x in turns] == ["system", "user", "agent", "tool", "agent"]
    assert turns[2].tool_calls[0]["id"] == "call_w1" and turns[3].tool_call_id == "call_w1"
    assert (turns[2].start_ms, turns[2].end_ms) == (10, 900)
    assert (turns[3].start_ms, turns[3].end_ms) == (1300, 1300)
    assert turns[4].text.startswith("Yes: an 80% chance")
    spans = t.metadata["opentelemetry"]["spans"]
    assert [s["kind"] for s in spans] == ["other", "llm", "tool", "llm"]
    assert spans[1]["attributes"]["gen_ai.usage.input_tokens"] == 96
    assert "gen_ai.input.messages" not in spans[1]["attributes"]  # mapped, not kept twice
    assert result.formats["opentelemetry"]["calls"] == 1


def test_openinference_traces_of_one_session_join_one_call_without_repeating_history():
    imported("otel-openinference.json")
    t = Transcript.objects.get()
    assert t.external_id == "otel-session-sess-9f3e"
    turns = turns_of(t.external_id)
    assert [x.speaker for x in turns] == [
        "system",
        "user",
        "agent",
        "user",
        "agent",
        "tool",
        "agent",
    ]
    assert turns[4].tool_calls[0]["name"] == "search_docs"
    assert turns[5].tool_call_id == "call_oi_1"
    assert len(t.metadata["opentelemetry"]["trace_ids"]) == 2
    assert imported("otel-openinference.json").changed is False
