"""The OpenAI chat shape: `{"messages": [...], "tools": [...]}`, one call a record, with or without
an id (the fine-tuning files of the OpenAI cookbook have none: the id is derived from the
messages, so the same call sent again, under any file name, is the same call)."""

from __future__ import annotations

from typing import Any

from core.importing import Invalid
from evals.catalog.formats.base import (
    Converted,
    Format,
    arguments_decode,
    content_digest,
    metadata_with,
    objects,
    passthrough,
)

CHAT_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "agent",
    "tool": "tool",
    "function": "tool",
}
# What a message carries that a turn holds; anything else is kept in the metadata.
MESSAGE_KEYS = {"role", "content", "tool_calls", "function_call", "tool_call_id"}
MAPPED = (
    "messages[].role -> turns[].speaker (assistant: agent, tool/function: tool, developer: system)",
    "messages[].content -> turns[].text (text parts joined)",
    "messages[].tool_calls (arguments decoded however encoded) -> turns[].tool_calls",
    "messages[].tool_call_id -> turns[].tool_call_id",
    "the first system message -> the agent version's instructions",
    "tools (or functions) -> the agent version's tools",
    "id: when missing, derived from the messages (chat-<sha256>)",
)


def content_text(content: Any, field: str) -> str:
    """The text of a message's content: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    raise Invalid(
        field, f"must be a string or a list of content parts, not {type(content).__name__}"
    )


def tool_call_clean(call: Any, field: str) -> dict:
    """Return a tool call as {"id", "name", "arguments"}; OpenAI's function wrapper is unwrapped
    and the arguments decoded however they are encoded (a JSON string, twice encoded, or not)."""
    if not isinstance(call, dict):
        raise Invalid(field, "must be an object with a name")
    function = call.get("function")
    if isinstance(function, dict):
        name, arguments = function.get("name"), function.get("arguments")
    else:
        name, arguments = call.get("name"), call.get("arguments", call.get("args"))
    if not isinstance(name, str) or not name:
        raise Invalid(f"{field}.name", "missing")
    call_id = call.get("id") or ""
    if not isinstance(call_id, str):
        raise Invalid(f"{field}.id", "must be a string")
    arguments = arguments_decode(arguments)
    return {"id": call_id, "name": name, "arguments": arguments if arguments is not None else {}}


def chat_turns(messages: Any, field: str = "messages") -> list[dict]:
    """Return native turns from OpenAI chat messages (assistant -> agent, tool results -> tool)."""
    if messages is None:
        raise Invalid(field, "must be a list of messages")
    turns = []
    for f, m in objects(messages, field):
        role = m.get("role")
        if role not in CHAT_ROLES:
            raise Invalid(f"{f}.role", f"{role!r} is not one of {', '.join(CHAT_ROLES)}")
        turn = {"speaker": CHAT_ROLES[role], "text": content_text(m.get("content"), f"{f}.content")}
        calls = m.get("tool_calls")
        if calls:
            if not isinstance(calls, list):
                raise Invalid(f"{f}.tool_calls", "must be a list")
            turn["tool_calls"] = [
                tool_call_clean(c, f"{f}.tool_calls[{j}]") for j, c in enumerate(calls)
            ]
        elif isinstance(m.get("function_call"), dict):
            turn["tool_calls"] = [tool_call_clean({"function": m["function_call"]}, f)]
        if turn["speaker"] == "tool":
            turn["tool_call_id"] = m.get("tool_call_id") or ""
        turns.append(turn)
    return turns


def system_text(messages: list) -> str | None:
    """The first system (or developer) message's text, or None."""
    for m in messages:
        if isinstance(m, dict) and CHAT_ROLES.get(m.get("role")) == "system":
            return content_text(m.get("content"), "messages") or None
    return None


def chat_convert(obj: dict) -> Converted:
    messages = obj["messages"]
    turns = chat_turns(messages)
    native, rest = passthrough(obj, {"messages", "tools", "functions"})
    record = {**native, "turns": turns}
    if "id" not in record:
        record["id"] = f"chat-{content_digest(messages)}"
    if "agent_instructions" not in record:
        instructions = system_text(messages)
        if instructions is not None:
            record["agent_instructions"] = instructions
    tools = obj.get("tools", obj.get("functions"))
    if tools is not None and "agent_tools" not in record:
        record["agent_tools"] = tools
    extras = {
        str(i): {k: v for k, v in m.items() if k not in MESSAGE_KEYS}
        for i, m in enumerate(messages)
        if isinstance(m, dict) and set(m) - MESSAGE_KEYS
    }
    if extras:
        rest["messages"] = extras  # per message index: e.g. the fine-tuning `weight`, `name`
    kept = metadata_with(record, "openai_chat", rest)
    return Converted(record=record, format="openai-chat", mapped=MAPPED, kept=kept)


FORMATS = (
    Format(
        name="openai-chat",
        detect=lambda obj: "messages" in obj and "turns" not in obj,
        convert=chat_convert,
    ),
)
