"""Benchmark results: tau-bench (a JSON array of `{task_id, trial, reward, info, traj}`) and
tau2-bench (one results document `{timestamp, info, tasks, simulations}`, or one simulation run
as its own file)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from django.utils.dateparse import parse_datetime

from core.importing import Invalid
from evals.catalog.formats.base import (
    Converted,
    Format,
    content_digest,
    metadata_with,
    passthrough,
)
from evals.catalog.formats.chat import CHAT_ROLES, chat_turns, content_text, tool_call_clean

TAU_MAPPED = (
    "traj[] (OpenAI chat messages) -> turns",
    "id: when missing, tau-task-<task_id>-trial-<trial>-<sha256 of traj>",
)
TAU2_MAPPED = (
    "messages[].role -> turns[].speaker (assistant: agent)",
    "messages[].content -> turns[].text",
    "messages[].tool_calls (id, name, arguments) -> turns[].tool_calls",
    "tool_calls[].requestor -> the speaker of the turn that made the call (agent or user)",
    "tool messages' id -> turns[].tool_call_id",
    "messages[].timestamp less generation_time_seconds -> turns[].start_ms/end_ms (from start)",
    "start_time -> started_at",
    "id -> id; <domain>/<task_id> -> scenario",
    "info.environment_info.domain_name, info.agent_info.llm -> agent tau2-<domain>, agent_version",
    "reward_info.reward -> task success on the trajectory axes (tau2_bench.reward)",
)
# A tau2 message's own fields that a turn holds; the rest is kept per message in the metadata.
TAU2_MESSAGE_KEYS = {"role", "content", "tool_calls", "timestamp", "id", "requestor"}


# ---- tau-bench -------------------------------------------------------------------------------


def tau_bench_convert(obj: dict) -> Converted:
    native, rest = passthrough(obj, {"traj", "task_id", "trial", "reward", "info"})
    record = {**native, "turns": chat_turns(obj["traj"], "traj")}
    if "id" not in record and "task_id" in obj:
        # From the content, never the file name: the same results are the same calls however
        # they arrive. The digest of the conversation keeps two agents' runs of a task apart.
        digest = content_digest(obj["traj"], 12)
        record["id"] = f"tau-task-{obj['task_id']}-trial-{obj.get('trial', 0)}-{digest}"
    tau = {k: obj[k] for k in ("task_id", "trial", "reward", "info") if k in obj}
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    record["metadata"] = {"tau_bench": tau, **metadata}
    kept = [f"tau_bench.{k}" for k in tau] + metadata_with(record, "tau_bench_extra", rest)
    return Converted(record=record, format="tau-bench", mapped=TAU_MAPPED, kept=kept)


# ---- tau2-bench ------------------------------------------------------------------------------


def _is_tau2_results(obj: dict) -> bool:
    return isinstance(obj.get("simulations"), list) and ("tasks" in obj or "info" in obj)


def _is_tau2_run(obj: dict) -> bool:
    if "tau2_simulation" in obj:
        return True
    return (
        "task_id" in obj
        and "messages" in obj
        and ("reward_info" in obj or "termination_reason" in obj)
        and "turns" not in obj
    )


def tau2_expand(obj: dict) -> Iterator[tuple[str, dict]]:
    """Each simulation of a results document, with its task and the run's info."""
    tasks = obj.get("tasks") or []
    by_id = {str(t.get("id")): t for t in tasks if isinstance(t, dict)}
    info = obj.get("info") if isinstance(obj.get("info"), dict) else {}
    for i, sim in enumerate(obj["simulations"]):
        task = by_id.get(str(sim.get("task_id"))) if isinstance(sim, dict) else None
        yield (
            f"simulations[{i}]",
            {"tau2_simulation": sim, "tau2_task": task, "tau2_info": info},
        )


def _when(value: Any, field: str) -> datetime:
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None:
        raise Invalid(field, f"not an ISO 8601 date and time: {value!r}")
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _tau2_turn(m: Any, i: int, start: datetime | None) -> tuple[dict, dict]:
    """(the turn, the message's other fields) of one tau2 message."""
    f = f"messages[{i}]"
    if not isinstance(m, dict):
        raise Invalid(f, "must be an object with a role")
    role = m.get("role")
    if role not in ("system", "user", "assistant", "tool"):
        raise Invalid(f"{f}.role", f"{role!r} is not one of system, user, assistant, tool")
    turn: dict[str, Any] = {"speaker": CHAT_ROLES[role]}
    # An audio message's content is the base64 of its sound, not words: kept aside, not as text.
    audio = bool(m.get("is_audio"))
    turn["text"] = "" if audio else content_text(m.get("content"), f"{f}.content")
    if m.get("tool_calls"):
        if not isinstance(m["tool_calls"], list):
            raise Invalid(f"{f}.tool_calls", "must be a list")
        turn["tool_calls"] = [
            tool_call_clean(c, f"{f}.tool_calls[{j}]") for j, c in enumerate(m["tool_calls"])
        ]
    if role == "tool":
        call_id = m.get("id") or m.get("tool_call_id") or ""
        if not isinstance(call_id, str):
            raise Invalid(f"{f}.id", "must be a string")
        turn["tool_call_id"] = call_id
    if start is not None and m.get("timestamp"):
        at = _when(m["timestamp"], f"{f}.timestamp")
        end = max(0, round((at - start).total_seconds() * 1000))
        generation = m.get("generation_time_seconds")
        took = round(generation * 1000) if isinstance(generation, (int, float)) else 0
        turn["start_ms"], turn["end_ms"] = max(0, end - max(0, took)), end
    extras = {k: v for k, v in m.items() if k not in TAU2_MESSAGE_KEYS}
    if audio and m.get("content"):
        extras.pop("content", None)
    return turn, extras


def tau2_convert(obj: dict) -> Converted:
    if "tau2_simulation" in obj:
        sim, task, info = obj["tau2_simulation"], obj.get("tau2_task"), obj.get("tau2_info") or {}
    else:
        sim, task, info = obj, None, {}
    if not isinstance(sim, dict):
        raise Invalid("simulation", "must be an object")
    sim_id = sim.get("id")
    if not isinstance(sim_id, str) or not sim_id:
        raise Invalid("id", "missing: every tau2 simulation has one")
    messages = sim.get("messages") or []
    if not isinstance(messages, list):
        raise Invalid("messages", "must be a list of messages")
    start = _when(sim["start_time"], "start_time") if sim.get("start_time") else None
    turns, per_message = [], {}
    for i, m in enumerate(messages):
        turn, extras = _tau2_turn(m, i, start)
        turns.append(turn)
        if extras:
            per_message[str(i)] = extras
    domain = ((info.get("environment_info") or {}) if isinstance(info, dict) else {}).get(
        "domain_name"
    ) or (task or {}).get("user_scenario", {}).get("instructions", {}).get("domain")
    record: dict[str, Any] = {
        "id": sim_id,
        "turns": turns,
        "scenario": f"{domain}/{sim.get('task_id')}" if domain else f"tau2/{sim.get('task_id')}",
    }
    if start is not None:
        record["started_at"] = start.isoformat()
    reward_info = sim.get("reward_info") if isinstance(sim.get("reward_info"), dict) else None
    kept_run = {
        k: v for k, v in sim.items() if k not in {"id", "messages", "start_time", "reward_info"}
    }
    tau2: dict[str, Any] = {
        "task_id": sim.get("task_id"),
        "trial": sim.get("trial"),
        "reward": reward_info.get("reward") if reward_info else None,
        "reward_info": reward_info,
        **{k: v for k, v in kept_run.items() if k not in ("task_id", "trial")},
    }
    if per_message:
        tau2["messages"] = per_message
    if task is not None:
        tau2["task"] = task
    if info:
        tau2["info"] = info
    kept = metadata_with(record, "tau2_bench", tau2)
    defaults = {}
    if domain:
        defaults["agent"] = f"tau2-{domain}"
    llm = (info.get("agent_info") or {}).get("llm") if isinstance(info, dict) else None
    if isinstance(llm, str) and llm:
        defaults["agent_version"] = llm
    return Converted(
        record=record, format="tau2-bench", mapped=TAU2_MAPPED, kept=kept, defaults=defaults
    )


FORMATS = (
    Format(name="tau-bench", detect=lambda obj: "traj" in obj, convert=tau_bench_convert),
    Format(name="tau2-bench results", detect=_is_tau2_results, expand=tau2_expand),
    Format(name="tau2-bench", detect=_is_tau2_run, convert=tau2_convert),
)
