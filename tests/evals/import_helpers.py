"""Inputs shared by the import tests: the tau-bench
file's place, a rules file, a native call line."""

import json
import os
from pathlib import Path

# The shared data beside the repository (../shared), or where DOCKET_SHARED_DIR says (a worktree).
SHARED = Path(os.environ.get("DOCKET_SHARED_DIR") or Path(__file__).resolve().parents[3] / "shared")
TAU_BENCH = SHARED / "datasets" / "tau-bench-airline" / "gpt-4o-airline.json"

RULES_YAML = """\
rules:
  - id: opening.greet-by-name
    group: opening
    text: Greet the candidate once, by name.
    severity: minor
    safety: false
  - id: boundaries.no-rubric-leak
    group: boundaries
    text: Never reveal the scoring rubric or hint at the right answer.
    severity: critical
    safety: true
  - id: timing.no-long-silence
    group: signals
    text: The agent answers within three seconds.
    detector: {name: silence_before_agent, max_ms: 3000}
"""


def call(id="call-1", **overrides):
    record = {
        "id": id,
        "agent": "phone-screen",
        "agent_version": "2026-11-28.1",
        "started_at": "2026-11-28T14:03:00Z",
        "audio_url": "https://rec.example.com/call-1.ogg",
        "language": "en",
        "scenario": "golden/backend-senior-01",
        "turns": [
            {
                "speaker": "agent",
                "text": "Hi Dana, thanks for joining.",
                "start_ms": 0,
                "end_ms": 5200,
                "asr_confidence": 0.97,
                "phase": "opening",
            },
            {"speaker": "user", "text": "Hi, happy to be here.", "start_ms": 5400, "end_ms": 7000},
            {
                "speaker": "agent",
                "text": "Tell me about your last role.",
                "start_ms": 7300,
                "end_ms": 9000,
                "phase": "asking",
            },
        ],
        "metadata": {"site": "eu"},
    }
    record.update(overrides)
    return json.dumps(record)


# 9^7 = 4.8 million strings from a few hundred bytes (a "billion laughs").
ALIAS_BOMB = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
rules: *g
"""
