"""Voice platforms' finished calls, as their end-of-call webhooks (or call exports) carry them:
Vapi's `end-of-call-report`, Retell's `call_ended` / `call_analyzed` call object, ElevenLabs'
`post_call_transcription` conversation. The call's id is the platform's, prefixed with the
platform's name, so a webhook delivered twice is the same call."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from core.importing import Invalid
from evals.catalog.formats.base import (
    Converted,
    Format,
    arguments_decode,
    metadata_with,
    objects,
    seconds_ms,
    text_of,
)
from evals.catalog.formats.chat import tool_call_clean

VAPI_ROLES = {"bot": "agent", "assistant": "agent", "user": "user", "system": "system"}
VAPI_MAPPED = (
    "call.id -> id (vapi-<id>)",
    "artifact.messages[] (system, bot, user, tool_calls, tool_call_result) -> turns",
    "messages[].secondsFromStart, endTime - time -> turns[].start_ms/end_ms",
    "toolCalls[] -> turns[].tool_calls; tool_call_result.toolCallId, result -> a tool turn",
    "artifact.recordingUrl (else recordingUrl) -> audio_url",
    "startedAt -> started_at",
    "artifact.transcript, artifact.messagesOpenAIFormatted: the same words as the turns",
)
RETELL_MAPPED = (
    "call_id -> id (retell-<call_id>)",
    "transcript_with_tool_calls[] (else transcript_object[]) -> turns",
    "words[].start/end (seconds) -> turns[].start_ms/end_ms",
    "tool_call_invocation (tool_call_id, name, arguments) -> turns[].tool_calls",
    "tool_call_result (tool_call_id, content) -> a tool turn",
    "recording_url -> audio_url; start_timestamp -> started_at",
    "transcript: the same words as the turns",
)
ELEVENLABS_MAPPED = (
    "conversation_id -> id (elevenlabs-<conversation_id>)",
    "transcript[].role, message -> turns[].speaker, text",
    "transcript[].time_in_call_secs -> turns[].start_ms",
    "transcript[].tool_calls[] (request_id, tool_name, params_as_json) -> turns[].tool_calls",
    "transcript[].tool_results[] (request_id, result_value) -> tool turns",
    "metadata.start_time_unix_secs -> started_at",
)


def _epoch(value: Any, field: str, *, unit: float) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Invalid(field, f"must be a number, not {value!r}")
    return datetime.fromtimestamp(value / unit, tz=UTC).isoformat()


def _id(prefix: str, value: Any, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise Invalid(field, "missing: the platform's call id")
    return f"{prefix}-{value}"


def _rest(obj: dict, mapped: set[str]) -> dict:
    return {k: v for k, v in obj.items() if k not in mapped}


# ---- Vapi ------------------------------------------------------------------------------------


def _vapi_message(obj: dict) -> dict:
    return obj["message"] if isinstance(obj.get("message"), dict) else obj


def vapi_agent_id(obj: dict) -> str:
    """The Vapi assistant a report belongs to (what a hook maps to a Docket agent)."""
    m = _vapi_message(obj)
    assistant = m.get("assistant") if isinstance(m.get("assistant"), dict) else {}
    call = m.get("call") if isinstance(m.get("call"), dict) else {}
    return str(assistant.get("id") or call.get("assistantId") or "")


def vapi_convert(obj: dict) -> Converted:
    m = _vapi_message(obj)
    call = m.get("call") if isinstance(m.get("call"), dict) else {}
    artifact = m.get("artifact") if isinstance(m.get("artifact"), dict) else {}
    messages = artifact.get("messages", m.get("messages"))
    turns = []
    for f, msg in objects(messages, "message.artifact.messages"):
        role = msg.get("role")
        start = seconds_ms(msg.get("secondsFromStart"), f"{f}.secondsFromStart")
        end = None
        t0, t1 = msg.get("time"), msg.get("endTime")
        timed = all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in (t0, t1))
        if start is not None and timed and t1 >= t0:
            end = start + round(t1 - t0)
        if role == "tool_calls":
            calls = msg.get("toolCalls") or []
            turn = {
                "speaker": "agent",
                "text": "",
                "tool_calls": [
                    tool_call_clean(c, f"{f}.toolCalls[{j}]") for j, c in enumerate(calls)
                ],
            }
        elif role == "tool_call_result":
            result = msg.get("result")
            turn = {
                "speaker": "tool",
                "text": text_of(result),
                "tool_call_id": str(msg.get("toolCallId") or ""),
            }
        elif role in VAPI_ROLES:
            turn = {"speaker": VAPI_ROLES[role], "text": str(msg.get("message") or "")}
        else:
            raise Invalid(
                f"{f}.role",
                f"{role!r} is not one of bot, user, system, tool_calls, tool_call_result",
            )
        turn["start_ms"], turn["end_ms"] = start, end
        turns.append(turn)
    record: dict[str, Any] = {
        "id": _id("vapi", call.get("id"), "message.call.id"),
        "turns": turns,
        "audio_url": artifact.get("recordingUrl") or m.get("recordingUrl") or "",
    }
    if m.get("startedAt") or call.get("startedAt"):
        record["started_at"] = m.get("startedAt") or call.get("startedAt")
    kept_message = _rest(m, {"artifact", "recordingUrl", "startedAt", "messages", "transcript"})
    kept_artifact = _rest(
        artifact, {"messages", "messagesOpenAIFormatted", "recordingUrl", "transcript"}
    )
    if kept_artifact:
        kept_message["artifact"] = kept_artifact
    kept = metadata_with(record, "vapi", kept_message)
    return Converted(record=record, format="vapi", mapped=VAPI_MAPPED, kept=kept)


def _is_vapi(obj: dict) -> bool:
    m = _vapi_message(obj)
    return m.get("type") == "end-of-call-report"


# ---- Retell ----------------------------------------------------------------------------------


def _retell_call(obj: dict) -> dict:
    return obj["call"] if isinstance(obj.get("call"), dict) else obj


def retell_agent_id(obj: dict) -> str:
    return str(_retell_call(obj).get("agent_id") or "")


def _words_span(words: Any, f: str) -> tuple[int | None, int | None]:
    if not isinstance(words, list) or not words:
        return None, None
    first, last = words[0], words[-1]
    if not isinstance(first, dict) or not isinstance(last, dict):
        raise Invalid(f, "must be a list of {word, start, end}")
    return seconds_ms(first.get("start"), f"{f}[0].start"), seconds_ms(
        last.get("end"), f"{f}[{len(words) - 1}].end"
    )


def retell_convert(obj: dict) -> Converted:
    call = _retell_call(obj)
    items = call.get("transcript_with_tool_calls")
    source = "transcript_with_tool_calls"
    if not items:
        items, source = call.get("transcript_object") or [], "transcript_object"
    # The utterances of transcript_object, in order: their word timings, when the items with
    # tool calls come without them.
    timed = [
        u
        for u in (call.get("transcript_object") or [])
        if source != "transcript_object" and isinstance(u, dict) and u.get("words")
    ]
    turns, words = [], {}
    for f, item in objects(items, f"call.{source}", what="utterances"):
        role = item.get("role")
        if role in ("agent", "user"):
            if not item.get("words") and timed and timed[0].get("role") == role:
                item = {**item, "words": timed.pop(0)["words"]}
            elif item.get("words") and timed:
                timed.pop(0)
            start, end = _words_span(item.get("words"), f"{f}.words")
            turn = {"speaker": role, "text": str(item.get("content") or "")}
            if item.get("words"):
                # Per-word timing: the turn's start and end come from it; the words are kept.
                words[str(len(turns))] = [
                    [w.get("word"), w.get("start"), w.get("end")]
                    for w in item["words"]
                    if isinstance(w, dict)
                ]
        elif role == "tool_call_invocation":
            start = end = None
            turn = {
                "speaker": "agent",
                "text": "",
                "tool_calls": [
                    {
                        "id": str(item.get("tool_call_id") or ""),
                        "name": str(item.get("name") or ""),
                        "arguments": arguments_decode(item.get("arguments")),
                    }
                ],
            }
            if not turn["tool_calls"][0]["name"]:
                raise Invalid(f"{f}.name", "missing")
        elif role == "tool_call_result":
            start = end = None
            turn = {
                "speaker": "tool",
                "text": str(item.get("content") or ""),
                "tool_call_id": str(item.get("tool_call_id") or ""),
            }
        else:
            raise Invalid(
                f"{f}.role",
                f"{role!r} is not one of agent, user, tool_call_invocation, tool_call_result",
            )
        turn["start_ms"], turn["end_ms"] = start, end
        extras = {
            k: v
            for k, v in item.items()
            if k not in {"role", "content", "words", "tool_call_id", "name", "arguments"}
        }
        if extras:
            words.setdefault("extras", {})[str(len(turns))] = extras
        turns.append(turn)
    record: dict[str, Any] = {
        "id": _id("retell", call.get("call_id"), "call.call_id"),
        "turns": turns,
        "audio_url": call.get("recording_url") or "",
    }
    started = _epoch(call.get("start_timestamp"), "call.start_timestamp", unit=1000)
    if started:
        record["started_at"] = started
    kept_call = _rest(
        call,
        {
            "call_id",
            "transcript",
            "transcript_object",
            "transcript_with_tool_calls",
            "recording_url",
            "start_timestamp",
        },
    )
    if words:
        kept_call["turn_words"] = {k: v for k, v in words.items() if k != "extras"}
        if "extras" in words:
            kept_call["turn_extras"] = words["extras"]
    if isinstance(obj.get("event"), str):
        kept_call["event"] = obj["event"]
    kept = metadata_with(record, "retell", kept_call)
    return Converted(record=record, format="retell", mapped=RETELL_MAPPED, kept=kept)


def _is_retell(obj: dict) -> bool:
    if obj.get("event") in ("call_ended", "call_analyzed") and isinstance(obj.get("call"), dict):
        return True
    return "call_id" in obj and ("transcript_object" in obj or "transcript_with_tool_calls" in obj)


# ---- ElevenLabs ------------------------------------------------------------------------------


def _elevenlabs_data(obj: dict) -> dict:
    return obj["data"] if isinstance(obj.get("data"), dict) else obj


def elevenlabs_agent_id(obj: dict) -> str:
    return str(_elevenlabs_data(obj).get("agent_id") or "")


def elevenlabs_convert(obj: dict) -> Converted:
    data = _elevenlabs_data(obj)
    turns, extras_by_turn = [], {}
    for f, item in objects(data.get("transcript"), "data.transcript", what="turns"):
        role = item.get("role")
        if role not in ("agent", "user"):
            raise Invalid(f"{f}.role", f"{role!r} is not one of agent, user")
        start = seconds_ms(item.get("time_in_call_secs"), f"{f}.time_in_call_secs")
        calls = []
        for j, c in enumerate(item.get("tool_calls") or []):
            if not isinstance(c, dict) or not c.get("tool_name"):
                raise Invalid(f"{f}.tool_calls[{j}].tool_name", "missing")
            calls.append(
                {
                    "id": str(c.get("request_id") or c.get("tool_call_id") or ""),
                    "name": str(c["tool_name"]),
                    "arguments": arguments_decode(c.get("params_as_json", c.get("params"))),
                }
            )
        turn: dict[str, Any] = {
            "speaker": role,
            "text": str(item.get("message") or ""),
            "start_ms": start,
        }
        if calls:
            turn["tool_calls"] = calls
        extras = {
            k: v
            for k, v in item.items()
            if k not in {"role", "message", "time_in_call_secs", "tool_results"}
            and v not in (None, [], {})
        }
        for c in extras.pop("tool_calls", None) or []:
            more = {
                k: v for k, v in c.items() if k not in {"request_id", "tool_name", "params_as_json"}
            }
            if more:
                extras.setdefault("tool_calls", []).append(more)
        if extras:
            extras_by_turn[str(len(turns))] = extras
        turns.append(turn)
        for j, r in enumerate(item.get("tool_results") or []):
            if not isinstance(r, dict):
                raise Invalid(f"{f}.tool_results[{j}]", "must be an object")
            value = r.get("result_value", r.get("result"))
            turns.append(
                {
                    "speaker": "tool",
                    "text": text_of(value),
                    "tool_call_id": str(r.get("request_id") or r.get("tool_call_id") or ""),
                    "start_ms": start,
                }
            )
            more = {k: v for k, v in r.items() if k not in {"request_id", "result_value"}}
            if more:
                extras_by_turn[str(len(turns) - 1)] = more
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    record: dict[str, Any] = {
        "id": _id("elevenlabs", data.get("conversation_id"), "data.conversation_id"),
        "turns": turns,
    }
    started = _epoch(meta.get("start_time_unix_secs"), "data.metadata.start_time_unix_secs", unit=1)
    if started:
        record["started_at"] = started
    kept_data = _rest(data, {"conversation_id", "transcript"})
    if extras_by_turn:
        kept_data["turn_extras"] = extras_by_turn
    for k in ("type", "event_timestamp"):
        if k in obj and obj is not data:
            kept_data[k] = obj[k]
    kept = metadata_with(record, "elevenlabs", kept_data)
    return Converted(record=record, format="elevenlabs", mapped=ELEVENLABS_MAPPED, kept=kept)


def _is_elevenlabs(obj: dict) -> bool:
    if obj.get("type") == "post_call_transcription" and isinstance(obj.get("data"), dict):
        return True
    return "conversation_id" in obj and isinstance(obj.get("transcript"), list)


FORMATS = (
    Format(name="vapi", detect=_is_vapi, convert=vapi_convert),
    Format(name="retell", detect=_is_retell, convert=retell_convert),
    Format(name="elevenlabs", detect=_is_elevenlabs, convert=elevenlabs_convert),
)
# Where each platform's payload names the platform's agent (a hook maps it to a Docket agent).
AGENT_IDS = {"vapi": vapi_agent_id, "retell": retell_agent_id, "elevenlabs": elevenlabs_agent_id}
