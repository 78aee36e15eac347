"""Demo steps for decision points: the kinds (before the calls, so each call's turn-taking
decisions come from its timings), the decisions the agent reported, reviewers' labels, and a few
hard moments on today's sample.

What reviewers say (seeded, so the same on every load): the agent took the turn too early when it
talked over the candidate, and now and then when it came in within a moment of the candidate
stopping (more often in the newer version); reported decisions are mostly right. Every decision on
the golden calls is labeled (the release gate counts them); about 60% of the others are, the rest
wait for a reviewer on the review page.
"""

import hashlib
import json
import random
from pathlib import Path

from django.utils import timezone

from console.demo_data import demo_truth
from console.demo_history import _quiet, _user, demo_users_ensure
from evals.catalog.models import Transcript
from evals.catalog.services.importing import transcripts_import
from evals.decisions.models import Decision
from evals.decisions.services.kinds import decision_kinds_import
from labeling.models import HardMoment, SampleItem
from labeling.services.decisions import decision_labels_bulk, hard_moments_queue

SEED = "docket-demo-decisions"
LABELERS = ("sam", "noor")
LABELED_SHARE = 0.6
EARLY_MS = (450, 600)  # a take this soon after the candidate stopped is sometimes too early
EARLY_WRONG = {"2026-11-21.1": 0.3, "2026-11-28.1": 0.45}
REPORTED_WRONG = {"interruption": 0.2, "handoff": 0.25, "tool-or-answer": 0.15}


def _u(*parts) -> float:
    """A stable number in [0, 1) for these parts."""
    digest = hashlib.sha256("|".join(map(str, (SEED, *parts))).encode()).hexdigest()
    return int(digest[:12], 16) / 16**12


def demo_decision_kinds_load(demo_dir: Path) -> str:
    """Import demo/decision_kinds.yaml."""
    path = demo_dir / "decision_kinds.yaml"
    return decision_kinds_import(text=path.read_bytes(), source=path.name).summary


def _reported(call: dict) -> list[dict]:
    """The decisions the agent platform reports for a regular demo call (seeded by its id)."""
    rng = random.Random(f"{SEED}-{call['id']}")
    turns = call["turns"]
    agent = [i for i, t in enumerate(turns) if t["speaker"] == "agent" and i > 0]
    out = []
    if agent:
        i = rng.choice(agent)
        t = turns[i]
        out.append(
            {
                "kind": "interruption",
                "at_ms": (t["start_ms"] + t["end_ms"]) // 2,
                "choice": "go on" if rng.random() < 0.7 else "stop",
                "confidence": round(rng.uniform(0.3, 0.97), 2),
            }
        )
    users = [i for i, t in enumerate(turns) if t["speaker"] == "user"]
    if users and rng.random() < 0.35:
        out.append(
            {
                "kind": "handoff",
                "turn": users[-1],
                "choice": "keep helping",
                "confidence": round(rng.uniform(0.4, 0.95), 2),
            }
        )
    asking = [i for i in agent if turns[i].get("phase") == "candidate-questions"]
    if asking and rng.random() < 0.5:
        out.append(
            {
                "kind": "tool-or-answer",
                "turn": rng.choice(asking),
                "choice": "answer directly",
                "confidence": round(rng.uniform(0.5, 0.99), 2),
            }
        )
    return out


def _truth(d: Decision, version: str) -> str:
    answers = d.kind_version.answers
    u = _u(d.transcript.external_id, d.kind.kind_id, d.key)
    if d.kind.kind_id == "turn-taking":
        gap = d.gap_ms if d.gap_ms is not None else 1000
        if gap < 0:
            return "wait"
        if EARLY_MS[0] <= gap < EARLY_MS[1] and u < EARLY_WRONG.get(version, 0.3):
            return "wait"
        return "wait" if u > 0.97 else "take the turn"
    wrong = u < REPORTED_WRONG.get(d.kind.kind_id, 0.2)
    return next(a for a in answers if a != d.choice) if wrong else d.choice


def demo_decisions_load(demo_dir: Path) -> str:
    """Add the reported decisions to the demo calls (through the transcript importer) and label
    them and the derived ones."""
    path = demo_dir / "calls.jsonl"
    week = set(demo_truth(demo_dir)["versions"])  # not the archive of an earlier version
    lines = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        call = json.loads(raw)
        if call["agent_version"] in week and not call.get("scenario", "").startswith("golden/"):
            call["decisions"] = _reported(call)
            lines.append(json.dumps(call))
    imported = transcripts_import(lines=lines, source="decisions on " + path.name)
    demo_users_ensure()
    labelers = [_user(name) for name in LABELERS]
    decisions = Decision.objects.filter(
        transcript__agent_version__agent__name="phone-screen",
        transcript__agent_version__version__in=week,
    ).select_related("transcript__agent_version", "kind", "kind_version")
    labels = []
    for d in decisions.order_by("transcript__external_id", "kind__kind_id", "key"):
        golden = d.transcript.scenario.startswith("golden/")
        if not golden and _u("labeled", d.transcript.external_id, d.kind_id, d.key) > LABELED_SHARE:
            continue
        who = labelers[int(_u("who", d.transcript.external_id, d.key) * len(labelers))]
        labels.append((who, d, _truth(d, d.transcript.agent_version.version)))
    with _quiet():
        new = decision_labels_bulk(labels)
    return (
        f"{imported.details.get('decisions', 0)} reported decisions added; "
        f"{decisions.count()} decisions, {new} labels new ({len(labels)} labeled)"
    )


def demo_hard_moments_load(demo_dir: Path) -> str:
    """Queue the hard moments of today's sample calls, as a lead would."""
    ids = list(
        SampleItem.objects.filter(sample__day=timezone.localdate()).values_list(
            "transcript_id", flat=True
        )
    )
    with _quiet():
        made = hard_moments_queue(by=_user("lena"), transcript_ids=ids, limit=12)
    calls = Transcript.objects.filter(decisions__hard_moment__isnull=False).distinct().count()
    return (
        f"{len(made)} hard moments queued ({HardMoment.objects.count()} in all, on {calls} calls)"
    )
