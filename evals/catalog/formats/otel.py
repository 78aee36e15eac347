"""OpenTelemetry traces (OTLP/JSON, `{"resourceSpans": [...]}`) whose spans follow the GenAI
semantic conventions or OpenInference: one call per trace, or per session when the spans carry a
session id (`session.id`, `gen_ai.conversation.id`).

An LLM span's messages become turns: its input messages are the conversation so far, so a
message already there (the same speaker, words and tool call ids) is not added twice; its output
messages come after, timed by the span. A tool span becomes the tool's result (and the call that
asked for it, when no LLM span said so), timed by the span. What spans carry besides is kept, per
span, in the call's metadata. The same spans in any order, or sent again, give the same call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from core.importing import Invalid
from evals.catalog.formats.base import Converted, Format, arguments_decode, text_of
from evals.catalog.formats.chat import CHAT_ROLES

MAPPED = (
    "one call per trace (otel-trace-<trace id>), or per session id (otel-session-<id>)",
    (
        "LLM spans' input and output messages (gen_ai.input.messages/gen_ai.output.messages, "
        "gen_ai.prompt.N/gen_ai.completion.N, llm.input_messages/llm.output_messages) -> turns"
    ),
    "message tool calls -> turns[].tool_calls; tool messages -> tool turns",
    "tool spans (gen_ai.tool.name/tool.name, call id, arguments, result) -> tool turns",
    "span start and end times -> turns[].start_ms/end_ms from the first span",
    "resource service.name, service.version -> agent, agent_version (when none is given)",
)
SESSION_KEYS = ("session.id", "gen_ai.conversation.id")
LLM_OPERATIONS = {"chat", "text_completion", "generate_content", "completion"}
TOOL_OPERATIONS = {"execute_tool"}
# The attribute names (or prefixes) a turn holds; the rest of a span's attributes are kept.
MAPPED_PREFIXES = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.prompt.",
    "gen_ai.completion.",
    "llm.input_messages.",
    "llm.output_messages.",
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "tool.name",
    "tool_call.id",
    "tool.parameters",
    "input.value",
    "output.value",
    "session.id",
    "gen_ai.conversation.id",
)
HEX_RE = re.compile(r"^[0-9a-fA-F]+$")
AGENT_NAME_RE = re.compile(r"[^-a-zA-Z0-9_]+")


# ---- OTLP/JSON to spans ----------------------------------------------------------------------


def any_value(value: Any) -> Any:
    """An OTLP AnyValue ({"stringValue": ...}, arrays, key-value lists) as a plain value."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        raw = value["intValue"]
        digits = str(raw).lstrip("-") if isinstance(raw, (str, int)) else ""
        return int(raw) if digits.isascii() and digits.isdigit() else raw
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return attributes((value["kvlistValue"] or {}).get("values") or [])
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def attributes(items: Any, field: str = "attributes") -> dict:
    if items is None:
        return {}
    if not isinstance(items, list):
        raise Invalid(field, "must be a list of {key, value}")
    out = {}
    for i, kv in enumerate(items):
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise Invalid(f"{field}[{i}].key", "missing")
        out[kv["key"]] = any_value(kv.get("value"))
    return out


def _hex_id(value: Any, field: str, size: int) -> str:
    if not isinstance(value, str) or len(value) != size or not HEX_RE.match(value):
        raise Invalid(field, f"must be {size} hex digits, not {value!r}")
    return value.lower()


def _nanos(value: Any, field: str) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise Invalid(field, f"must be nanoseconds since the epoch, not {value!r}") from None
    if n < 0:
        raise Invalid(field, "must not be negative")
    return n


def spans_from_export(obj: dict) -> list[dict]:
    """The spans of an OTLP/JSON ExportTraceServiceRequest, each as {trace_id, span_id,
    parent_id, name, kind, start_ns, end_ns, attributes, events, status, resource}."""
    groups = obj.get("resourceSpans")
    if not isinstance(groups, list):
        raise Invalid("resourceSpans", "must be a list")
    spans = []
    for i, rs in enumerate(groups):
        f = f"resourceSpans[{i}]"
        if not isinstance(rs, dict):
            raise Invalid(f, "must be an object")
        resource = attributes((rs.get("resource") or {}).get("attributes"), f"{f}.resource")
        for j, ss in enumerate(rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []):
            for k, span in enumerate((ss or {}).get("spans") or []):
                g = f"{f}.scopeSpans[{j}].spans[{k}]"
                if not isinstance(span, dict):
                    raise Invalid(g, "must be an object")
                start = _nanos(span.get("startTimeUnixNano"), f"{g}.startTimeUnixNano")
                end = _nanos(span.get("endTimeUnixNano", start), f"{g}.endTimeUnixNano")
                spans.append(
                    {
                        "trace_id": _hex_id(span.get("traceId"), f"{g}.traceId", 32),
                        "span_id": _hex_id(span.get("spanId"), f"{g}.spanId", 16),
                        "parent_id": (span.get("parentSpanId") or "").lower(),
                        "name": str(span.get("name") or ""),
                        "kind": span.get("kind"),
                        "start_ns": start,
                        "end_ns": max(start, end),
                        "attributes": attributes(span.get("attributes"), f"{g}.attributes"),
                        "events": [
                            {
                                "name": str((e or {}).get("name") or ""),
                                "time_ns": _nanos((e or {}).get("timeUnixNano", start), g),
                                "attributes": attributes((e or {}).get("attributes"), g),
                            }
                            for e in span.get("events") or []
                        ],
                        "status": span.get("status") or {},
                        "resource": resource,
                    }
                )
    return spans


def span_session(span: dict) -> str | None:
    for key in SESSION_KEYS:
        value = span["attributes"].get(key)
        if isinstance(value, (str, int)) and str(value):
            return str(value)
    return None


def spans_keyed(spans: list[dict], known: dict[str, str] | None = None) -> dict[str, list[dict]]:
    """Group spans into calls: a trace whose spans (or `known`: trace id -> key, for spans seen
    before) carry a session id joins that session's call; any other trace is a call of its own."""
    trace_key = dict(known or {})
    for span in spans:
        session = span_session(span)
        if session is not None:
            trace_key[span["trace_id"]] = f"otel-session-{session}"[:200]
    out: dict[str, list[dict]] = {}
    for span in spans:
        key = trace_key.get(span["trace_id"], f"otel-trace-{span['trace_id']}")
        out.setdefault(key, []).append(span)
    return out


def otlp_expand(obj: dict) -> Iterator[tuple[str, dict]]:
    for key, spans in spans_keyed(spans_from_export(obj)).items():
        yield key, {"otel_key": key, "otel_spans": spans}


# ---- spans to turns --------------------------------------------------------------------------


def _unflatten(attrs: dict, prefix: str) -> list:
    """`llm.input_messages.0.message.role` style attributes under `prefix` as a list of dicts."""
    root: dict = {}
    for key, value in attrs.items():
        if not key.startswith(prefix + "."):
            continue
        node = root
        parts = key[len(prefix) + 1 :].split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                break
        else:
            node[parts[-1]] = value
    return _listify(root)


def _listify(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    if node and all(k.isascii() and k.isdigit() for k in node):
        return [_listify(node[k]) for k in sorted(node, key=int)]
    return {k: _listify(v) for k, v in node.items()}


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _message_turn(role: Any, text: str, calls: list, call_id: str = "") -> dict | None:
    speaker = CHAT_ROLES.get(str(role or "").lower())
    if speaker is None:
        return None
    turn: dict[str, Any] = {"speaker": speaker, "text": text or ""}
    if calls:
        turn["tool_calls"] = calls
    if speaker == "tool":
        turn["tool_call_id"] = call_id
    return turn


def _genai_parts_message(m: dict) -> dict | None:
    """A GenAI semconv message {role, parts: [{type: text|tool_call|tool_call_response}]}."""
    texts, calls, call_id = [], [], ""
    for p in m.get("parts") or []:
        if not isinstance(p, dict):
            continue
        kind = p.get("type")
        if kind == "text":
            texts.append(str(p.get("content") or ""))
        elif kind == "tool_call":
            calls.append(
                {
                    "id": str(p.get("id") or ""),
                    "name": str(p.get("name") or ""),
                    "arguments": arguments_decode(p.get("arguments")),
                }
            )
        elif kind == "tool_call_response":
            call_id = str(p.get("id") or "")
            response = p.get("response")
            texts.append(response if isinstance(response, str) else json.dumps(response))
    if "content" in m and not texts:
        texts.append(str(m.get("content") or ""))
    role = m.get("role")
    if call_id and role not in ("tool",):
        role = "tool"
    return _message_turn(role, "\n".join(texts), calls, call_id)


def _flat_message(m: dict) -> dict | None:
    """An OpenInference `message.*` (or an OpenLLMetry prompt/completion) as a turn."""
    m = m.get("message", m) if isinstance(m, dict) else {}
    if not isinstance(m, dict):
        return None
    text = m.get("content")
    if not isinstance(text, str):
        parts = m.get("contents") or []
        text = "\n".join(
            str((p.get("message_content") or p).get("text") or "")
            for p in parts
            if isinstance(p, dict)
        )
    calls = []
    for c in m.get("tool_calls") or []:
        c = (c or {}).get("tool_call", c) if isinstance(c, dict) else {}
        function = c.get("function") if isinstance(c.get("function"), dict) else c
        name = function.get("name")
        if name:
            calls.append(
                {
                    "id": str(c.get("id") or ""),
                    "name": str(name),
                    "arguments": arguments_decode(function.get("arguments")),
                }
            )
    return _message_turn(m.get("role"), text or "", calls, str(m.get("tool_call_id") or ""))


def _llm_messages(span: dict) -> tuple[list[dict], list[dict]]:
    """(input turns, output turns) of an LLM span, in whichever convention it uses."""
    a = span["attributes"]
    inputs, outputs = [], []
    if "gen_ai.input.messages" in a or "gen_ai.output.messages" in a:
        system = _json(a.get("gen_ai.system_instructions"))
        if isinstance(system, list):
            text = "\n".join(str(p.get("content") or "") for p in system if isinstance(p, dict))
            inputs.append({"speaker": "system", "text": text})
        for key, into in (("gen_ai.input.messages", inputs), ("gen_ai.output.messages", outputs)):
            for m in _json(a.get(key)) or []:
                turn = _genai_parts_message(m) if isinstance(m, dict) else None
                if turn:
                    into.append(turn)
    elif any(k.startswith(("llm.input_messages.", "llm.output_messages.")) for k in a):
        for prefix, into in (("llm.input_messages", inputs), ("llm.output_messages", outputs)):
            for m in _unflatten(a, prefix):
                turn = _flat_message(m) if isinstance(m, dict) else None
                if turn:
                    into.append(turn)
    elif any(k.startswith(("gen_ai.prompt.", "gen_ai.completion.")) for k in a):
        for prefix, into in (("gen_ai.prompt", inputs), ("gen_ai.completion", outputs)):
            for m in _unflatten(a, prefix):
                turn = _flat_message(m) if isinstance(m, dict) else None
                if turn:
                    into.append(turn)
    else:  # the older GenAI events: gen_ai.user.message, gen_ai.choice, ...
        for e in span["events"]:
            name, body = e["name"], e["attributes"]
            role = {
                "gen_ai.system.message": "system",
                "gen_ai.user.message": "user",
                "gen_ai.assistant.message": "assistant",
                "gen_ai.tool.message": "tool",
                "gen_ai.choice": "assistant",
            }.get(name)
            if role is None:
                continue
            message = _json(body.get("message")) if "message" in body else body
            message = message if isinstance(message, dict) else {"content": message}
            turn = _flat_message({"role": role, **message, "tool_call_id": body.get("id", "")})
            if turn:
                (outputs if name == "gen_ai.choice" else inputs).append(turn)
    return inputs, outputs


def span_kind(span: dict) -> str:
    """ "llm", "tool" or "other"."""
    a = span["attributes"]
    oi = str(a.get("openinference.span.kind") or "").upper()
    op = str(a.get("gen_ai.operation.name") or "").lower()
    if oi == "TOOL" or op in TOOL_OPERATIONS:
        return "tool"
    if oi in ("LLM",) or op in LLM_OPERATIONS:
        return "llm"
    if any(k.startswith(("llm.input_messages.", "gen_ai.prompt.")) for k in a) or (
        "gen_ai.input.messages" in a
    ):
        return "llm"
    if any(e["name"].startswith("gen_ai.") for e in span["events"]):
        return "llm"
    return "other"


def _key(turn: dict) -> tuple:
    if turn["speaker"] == "tool" and turn.get("tool_call_id"):
        return ("tool", turn["tool_call_id"])
    calls = turn.get("tool_calls") or []
    if calls and all(c.get("id") for c in calls):
        return (turn["speaker"], "", tuple(c["id"] for c in calls), True)
    names = tuple(c.get("name") for c in calls)
    return (turn["speaker"], turn.get("text") or "", names, False)


def _kept_attributes(attrs: dict) -> dict:
    return {k: v for k, v in attrs.items() if not k.startswith(MAPPED_PREFIXES)}


LEFT_OUT = "traces with no GenAI or OpenInference span (no LLM, tool, input or output)"


def spans_conversational(spans: list[dict]) -> bool:
    """Whether any span is an LLM or tool span, or carries an input or output."""
    return any(
        span_kind(s) != "other"
        or isinstance(s["attributes"].get("input.value"), str)
        or isinstance(s["attributes"].get("output.value"), str)
        for s in spans
    )


class _Turns:
    """The call's turns as the spans reveal them, each message once."""

    def __init__(self):
        self.turns: list[dict] = []
        self.keys: list[tuple] = []

    def add(self, turn: dict, start: int, end: int, *, after: int) -> int:
        """Add the turn unless it is already there at or after position `after`; return the
        position after it."""
        k = _key(turn)
        # A tool call or result is known by its id wherever it is; other messages by their
        # words, from where the span's messages have got to (a second "yes" is a new turn).
        identified = len(k) == 2 or k[3]
        for p in range(0 if identified else after, len(self.keys)):
            if self.keys[p] == k:
                return max(p + 1, after)
        self.turns.append({**turn, "start_ms": start, "end_ms": end})
        self.keys.append(k)
        return len(self.keys)

    def llm_span(self, span: dict, start: int, end: int) -> None:
        """An LLM span: its input is the conversation so far, its output comes after."""
        inputs, outputs = _llm_messages(span)
        pos = 0
        for turn in inputs:
            pos = self.add(turn, start, start, after=pos)
        for turn in outputs:
            pos = self.add(turn, start, end, after=pos)

    def tool_span(self, span: dict, start: int, end: int) -> None:
        """A tool span: the call (unless an LLM span already asked for it), then its result."""
        a = span["attributes"]
        name = str(a.get("gen_ai.tool.name") or a.get("tool.name") or span["name"])
        call_id = str(a.get("gen_ai.tool.call.id") or a.get("tool_call.id") or span["span_id"])
        args = arguments_decode(
            a.get("gen_ai.tool.call.arguments", a.get("tool.parameters", a.get("input.value")))
        )
        asked = any(c.get("id") == call_id for t in self.turns for c in t.get("tool_calls") or [])
        if not asked:
            call = {"id": call_id, "name": name, "arguments": args}
            self.add(
                {"speaker": "agent", "text": "", "tool_calls": [call]},
                start,
                start,
                after=len(self.keys),
            )
        result = text_of(a.get("gen_ai.tool.call.result", a.get("output.value")))
        self.add({"speaker": "tool", "text": result, "tool_call_id": call_id}, end, end, after=0)

    def from_root(self, spans: list[dict], ms) -> None:
        """No LLM or tool span: the root span's input and output, if it has them."""
        root = next((s for s in spans if not s.get("parent_id")), spans[0])
        a = root["attributes"]
        for speaker, key in (("user", "input.value"), ("agent", "output.value")):
            if isinstance(a.get(key), str):
                end = root["end_ns"] if speaker == "agent" else root["start_ns"]
                self.turns.append(
                    {
                        "speaker": speaker,
                        "text": a[key],
                        "start_ms": ms(root["start_ns"]),
                        "end_ms": ms(end),
                    }
                )


TOKEN_COUNTS = (
    ("input_tokens", ("gen_ai.usage.input_tokens", "llm.token_count.prompt")),
    ("output_tokens", ("gen_ai.usage.output_tokens", "llm.token_count.completion")),
)


def _llm_usage(a: dict, models: set, usage: dict) -> None:
    """Note an LLM span's model and add its token counts (GenAI or OpenInference names)."""
    model = (
        a.get("gen_ai.response.model") or a.get("gen_ai.request.model") or a.get("llm.model_name")
    )
    if model:
        models.add(str(model))
    for ours, names in TOKEN_COUNTS:
        found = next((a[n] for n in names if isinstance(a.get(n), int)), None)
        if found is not None:
            usage[ours] += found


def _span_kept(span: dict, kind: str, start: int, end: int, ms) -> dict:
    """What the call's metadata keeps of a span: its place, and what no turn carries."""
    kept = {
        "span_id": span["span_id"],
        "trace_id": span["trace_id"],
        "name": span["name"],
        "kind": kind,
        "start_ms": start,
        "end_ms": end,
    }
    if span.get("parent_id"):
        kept["parent_id"] = span["parent_id"]
    rest = _kept_attributes(span["attributes"])
    if rest:
        kept["attributes"] = rest
    if span.get("status"):
        kept["status"] = span["status"]
    events = [e for e in span["events"] if not e["name"].startswith("gen_ai.")]
    if events:
        kept["events"] = [
            {"name": e["name"], "at_ms": ms(e["time_ns"]), "attributes": e["attributes"]}
            for e in events
        ]
    return kept


def _agent_defaults(resource: dict) -> dict:
    """The agent and version a trace names: its resource's service name and version."""
    defaults = {}
    service = resource.get("service.name")
    if isinstance(service, str) and service.strip():
        defaults["agent"] = AGENT_NAME_RE.sub("-", service.strip())[:100]
    version = resource.get("service.version")
    if isinstance(version, (str, int)) and str(version):
        defaults["agent_version"] = str(version)[:100]
    return defaults


KEPT = [
    "opentelemetry.trace_ids",
    "opentelemetry.resource",
    "opentelemetry.spans (per span: name, kind, times, other attributes, events, status)",
]


def spans_convert(obj: dict) -> Converted:
    spans = sorted(obj["otel_spans"], key=lambda s: (s["start_ns"], s["end_ns"], s["span_id"]))
    if not spans_conversational(spans):  # a web request's trace, say: not a conversation
        return Converted(record=None, format="opentelemetry", mapped=MAPPED, left_out=LEFT_OUT)
    t0 = spans[0]["start_ns"]

    def ms(ns: int) -> int:
        return max(0, (ns - t0) // 1_000_000)

    turns = _Turns()
    kept_spans, models, usage = [], set(), {"input_tokens": 0, "output_tokens": 0}
    for span in spans:
        kind = span_kind(span)
        start, end = ms(span["start_ns"]), ms(span["end_ns"])
        if kind == "llm":
            turns.llm_span(span, start, end)
            _llm_usage(span["attributes"], models, usage)
        elif kind == "tool":
            turns.tool_span(span, start, end)
        kept_spans.append(_span_kept(span, kind, start, end, ms))
    if not turns.turns:
        turns.from_root(spans, ms)
    resource = spans[0].get("resource") or {}
    meta: dict[str, Any] = {
        "trace_ids": sorted({s["trace_id"] for s in spans}),
        "resource": resource,
        "spans": kept_spans,
    }
    if models:
        meta["models"] = sorted(models)
    if any(usage.values()):
        meta["usage"] = usage
    record = {
        "id": obj["otel_key"],
        "turns": turns.turns,
        "started_at": datetime.fromtimestamp(t0 / 1e9, tz=UTC).isoformat(),
        "metadata": {"opentelemetry": meta},
    }
    return Converted(
        record=record,
        format="opentelemetry",
        mapped=MAPPED,
        kept=KEPT,
        defaults=_agent_defaults(resource),
    )


FORMATS = (
    Format(
        name="opentelemetry export",
        detect=lambda obj: isinstance(obj.get("resourceSpans"), list),
        expand=otlp_expand,
    ),
    Format(name="opentelemetry", detect=lambda obj: "otel_spans" in obj, convert=spans_convert),
)
