"""Demo step: the conversation judge's results on the golden calls of both demo versions.

`make run` has no LLM, so the judge's answers were made ahead and live in demo/conversation.jsonl
(one answer of the conversation judge's schema per call). They are stored as what the judge
would have stored: a ConversationScore per call and the verdicts of the two conversation checks.
The newer version drifts on one golden call (golden/sre-senior-01: the interviewer turns coach at
turn 10), so its mean score drops and the release gate's conversation score fails on it.
"""

import json
from pathlib import Path

from evals.catalog.models import Agent, Transcript
from evals.conversation.services import agent_plan_set, conversation_result_record

DEMO_AGENT = "phone-screen"
DEMO_PLAN = ["opening", "background", "project", "candidate-questions", "closing"]


def demo_conversation_load(demo_dir: Path) -> str:
    """Set the demo agent's plan and store the precomputed conversation judge results."""
    if Agent.objects.filter(name=DEMO_AGENT).exists():
        agent_plan_set(agent=DEMO_AGENT, phases=DEMO_PLAN)
    path = demo_dir / "conversation.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    calls = Transcript.objects.in_bulk([r["transcript"] for r in rows], field_name="external_id")
    written = 0
    for number, row in enumerate(rows, 1):
        transcript = calls.get(row["transcript"])
        if transcript is None:
            raise ValueError(f"{path.name} line {number}: no call {row['transcript']!r}")
        answer = {k: row[k] for k in ("plan_reason", "drift_reason", "findings", "score")}
        written += conversation_result_record(
            transcript=transcript, judge_name=row["judge"], answer=answer, plan=DEMO_PLAN
        )
    drifting = sum(1 for r in rows if r["findings"])
    return (
        f"{len(rows)} golden calls scored by the conversation judge ({written} newly), "
        f"{drifting} with findings"
    )
