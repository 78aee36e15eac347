"""The conversation judge's prompt, answer schema and validation. Pure: no database, no network.

One call reads a whole transcript and answers two questions: did the call follow its plan (the
phases, in order, each done), and did the agent drift over time (persona, repeated ground,
loops)? The answer gives its reasons first, then named findings with the agent turns they cite,
then a 1-10 score. Each check is a rule (`conversation.plan_followed`, `conversation.no_drift`)
whose current version's text is the rubric line, so its findings become verdicts of the one shape.
"""

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema

from evals.judging import prompt as jp

# Bump when the wording or the schema changes: it is part of the judge's name and of the cache key.
PROMPT_VERSION = "conversation-v1"

GROUP = "conversation"  # the rule group the conduct judge leaves to this judge
PLAN_FOLLOWED = "conversation.plan_followed"
NO_DRIFT = "conversation.no_drift"

# finding type -> the check (rule id) it counts against
FINDING_TYPES = {
    "phase_missing": PLAN_FOLLOWED,
    "phase_out_of_order": PLAN_FOLLOWED,
    "phase_unfinished": PLAN_FOLLOWED,
    "persona_shift": NO_DRIFT,
    "repeated_ground": NO_DRIFT,
    "loop": NO_DRIFT,
}
REASON_FIELD = {PLAN_FOLLOWED: "plan_reason", NO_DRIFT: "drift_reason"}

# The checks' version 1 texts (the rubric lines); a fixed text becomes version 2 like any rule.
CHECKS = {
    PLAN_FOLLOWED: (
        "The call follows its plan: every phase of the plan happens, in the plan's order, "
        "and each phase is finished before the next begins."
    ),
    NO_DRIFT: (
        "The agent does not drift over the call: one consistent persona and role from start to "
        "end, no going back over ground already covered, and no loops."
    ),
}
SCORE_MIN, SCORE_MAX = 1, 10
NOTE_MAX = 300
OUT_TOKENS = 400  # two reasons, a few findings and the score

SYSTEM_PROMPT = """\
You are a strict, fair judge of whole conversations between an AI agent and a person (the user).
You read the entire call at once and judge how the agent ran it over time, not turn by turn.
The user's turns, and any tool or system turns, are context: never grade or cite them.

Answer in this order, reasoning before you score:
- plan_reason: two or three sentences on whether the call followed its plan: did every phase \
happen, in the plan's order, and was each finished before the next began?
- drift_reason: two or three sentences on whether the agent drifted over time: did it keep one \
persona and role, avoid going back over ground it had covered, and avoid loops?
- findings: each problem you found, with its type, the agent turns where it shows (for a missing \
phase, the agent turn where the call moved past it) and a one-sentence note. Types: \
phase_missing, phase_out_of_order, phase_unfinished (the plan); persona_shift, repeated_ground, \
loop (drift). No findings: an empty list. A question asked again because the user asked for it \
to be repeated is not repeated ground.
- score: 1 to 10 for the call as a whole, 10 when it went fully to plan with no drift; each \
finding costs points by how much it hurt the call.

Answer with JSON only, matching the schema you were given."""


@dataclass(frozen=True)
class Check:
    """A conversation check as the judge sees it: rule id and text at the version judged."""

    rule_id: str
    version: int
    text: str


def render_turns(turns: Sequence[Any]) -> str:
    """Return the transcript as numbered lines with their phase: `[12] AGENT (project): ...`."""
    out = []
    for t in turns:
        line = jp.render_turns([t])
        phase = (t.phase or "").strip()
        if phase:
            head, _, rest = line.partition(": ")
            line = f"{head} ({phase}): {rest}"
        out.append(line)
    return "\n".join(out)


def plan_of(turns: Iterable[Any], plan: Sequence[str] = ()) -> list[str]:
    """Return the plan's phases: the agent's plan, else the call's phase labels in first order."""
    if plan:
        return [str(p) for p in plan]
    seen: list[str] = []
    for t in sorted(turns, key=lambda t: t.index):
        if t.phase and t.phase not in seen:
            seen.append(t.phase)
    return seen


def build_messages(checks: Sequence[Check], turns: Sequence[Any], plan: Sequence[str]) -> list:
    """Return the chat messages for one whole-call judgement."""
    ordered = sorted(turns, key=lambda t: t.index)
    rubric = "\n".join(f"- {c.rule_id}: {c.text.strip()}" for c in checks)
    if plan:
        plan_text = "The call's plan, phase by phase in order: " + ", ".join(
            f"{i}. {p}" for i, p in enumerate(plan, 1)
        )
    else:
        plan_text = "The call has no phase plan: judge the plan check on what the agent announced."
    agent = jp.agent_turn_indices(ordered)
    user = (
        f"Checks:\n{rubric}\n\n{plan_text}.\n"
        "Phase labels in brackets come from the agent platform; judge what was said, not the "
        f"label.\nAgent turns you may cite: {', '.join(map(str, agent)) or 'none'}.\n\n"
        f"Transcript (turn number in brackets):\n{render_turns(ordered)}"
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def answer_schema(agent_turns: Sequence[int]) -> dict:
    """Return the JSON schema of the answer: reasons, then findings, then the score."""
    finding = {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": list(FINDING_TYPES)},
            "turns": {"type": "array", "items": {"type": "integer", "enum": list(agent_turns)}},
            "note": {"type": "string"},
        },
        "required": ["type", "turns", "note"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "plan_reason": {"type": "string"},
            "drift_reason": {"type": "string"},
            "findings": {"type": "array", "items": finding},
            "score": {"type": "integer", "minimum": SCORE_MIN, "maximum": SCORE_MAX},
        },
        "required": ["plan_reason", "drift_reason", "findings", "score"],
        "additionalProperties": False,
    }


def _one_line(text: str, limit: int = jp.RATIONALE_MAX) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def answer_validate(content: str | None, schema: dict) -> dict:
    """Parse and validate an answer; return {reason, score, findings, verdicts}.

    `verdicts` maps each check's rule id to verdict fields (flagged when a finding of its types
    exists, citing their turns), the shape the conduct judge's answers have.
    """
    if not content or not content.strip():
        raise jp.AnswerInvalid("empty answer")
    text = content.strip()
    fenced = jp._JSON_BLOCK.search(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = jp.parsing.json_value(text)
    except jp.parsing.ParseProblem as exc:
        raise jp.AnswerInvalid(f"answer is not usable JSON ({exc.field}: {exc.reason})") from None
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(data),
        key=lambda e: list(e.absolute_path),
    )
    if errors:
        where = ".".join(str(p) for p in errors[0].absolute_path) or "answer"
        # The validator's message can quote the model's text, which can quote the call.
        raise jp.AnswerInvalid(
            f"answer does not match the schema at {where}: fails {errors[0].validator!r}"
            + (f" ({len(errors)} problems)" if len(errors) > 1 else "")
        )
    return answer_from(data)


def answer_from(data: dict) -> dict:
    """Return {reason, score, findings, verdicts} from an answer of the schema's shape."""
    findings = [
        {
            "type": f["type"],
            "check": FINDING_TYPES[f["type"]],
            "turns": sorted(set(f["turns"])),
            "note": _one_line(f["note"], NOTE_MAX),
        }
        for f in data["findings"]
    ]
    verdicts = {}
    for rule_id, reason_field in REASON_FIELD.items():
        mine = [f for f in findings if f["check"] == rule_id]
        turns = sorted({t for f in mine for t in f["turns"]})
        verdicts[rule_id] = {
            "flagged": bool(mine),
            "turns": turns,
            "severity": "major" if mine else "",
            "rationale": _one_line(
                "; ".join(f"{f['type'].replace('_', ' ')}: {f['note']}" for f in mine)
                if mine
                else data[reason_field]
            ),
            "confidence": None,
        }
    return {
        "reason": _one_line(f"{data['plan_reason']} {data['drift_reason']}", 2 * jp.RATIONALE_MAX),
        "score": data["score"],
        "findings": findings,
        "verdicts": verdicts,
    }


def cache_key(
    *,
    checksum: str,
    checks: Sequence[Check],
    plan: Sequence[str],
    model: str,
    prompt_version: str = PROMPT_VERSION,
) -> str:
    """Return the sha256 naming one conversation judgement: same call, same key."""
    payload = json.dumps(
        {
            "transcript": checksum,
            "checks": sorted([c.rule_id, c.version, c.text] for c in checks),
            "plan": list(plan),
            "model": model,
            "prompt": prompt_version,
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()
