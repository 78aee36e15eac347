"""Stored conversation judge results for the page, API and browser tests (no LLM)."""

from evals.conversation.services import conversation_result_record
from tests.evals.judge_helpers import make_call
from tests.factories import AgentVersionFactory

DRIFT = [{"type": "repeated_ground", "turns": [4], "note": "Asks the role a second time."}]


def scored_calls():
    """Two versions' calls with stored results: v1 scores 9 and 8, v2 scores 9 and 3 (drift)."""
    old, new = AgentVersionFactory(version="v1"), AgentVersionFactory(version="v2")
    for version, scores in ((old, (9, 8)), (new, (9, 3))):
        for i, score in enumerate(scores):
            t = make_call(f"{version.version}-{i}", agent_version=version)
            conversation_result_record(
                transcript=t,
                judge_name="gpt-4o-mini/conversation-v1",
                answer={
                    "plan_reason": "All phases in order.",
                    "drift_reason": "Drifts." if score < 5 else "Steady.",
                    "findings": DRIFT if score < 5 else [],
                    "score": score,
                },
                plan=["opening", "asking", "closing"],
            )
    return old, new
