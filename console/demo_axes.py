"""The demo's trajectories and their axes reports (a load_demo step).

A small booking agent ("booking-desk") ran four tasks three times on each of two versions. Each
trajectory reports its final state and carries its expectations in metadata (expected calls, a
prohibited tool, an outcome checklist), the generic shape the axes read
(evals.trajectories.services.reports).
The newer version books the wrong fare class on one task and cancels without being asked on
another, so its report is flagged against the older, green one. Faithfulness is scored from
claims put in the judge's cache (as a judge would have answered: every sentence of the agent's
reply is a claim, and "the refund goes to your card" is one no tool result supports), so the
demo needs no judge. Made once: a second load finds the reports and changes nothing.
"""

import json
from pathlib import Path

from django.conf import settings

from evals.catalog.services.importing import transcripts_import
from evals.judging.models import JudgeCacheEntry
from evals.trajectories.models import AxesReport
from evals.trajectories.services.faithfulness import (
    PROMPT_VERSION,
    claims_cache_key,
    output_and_evidence,
)
from evals.trajectories.services.reports import (
    agent_version_transcripts,
    axes_agent_version,
    axes_report_create,
)

AGENT = "booking-desk"
VERSIONS = (
    "2026-11-24.1",
    "2026-11-29.1",
)  # not the phone-screen versions: a bare version names one agent
TRIALS = 3

TASKS = {
    "book-economy": {
        "prompt": "Book me the 9:05 to Seattle on May 20, economy, user mia_li.",
        "calls": [
            ("get_user", {"user_id": "mia_li"}),
            ("book", {"user_id": "mia_li", "flight": "HAT136", "cabin": "economy"}),
        ],
        "post": [{"path": "reservations.R1.cabin", "equals": "economy"}],
        "state": {"reservations": {"R1": {"cabin": "economy", "flight": "HAT136"}}},
        "output": "You are booked on HAT136 to Seattle on May 20 in economy.",
    },
    "cancel-trip": {
        "prompt": "Cancel reservation ZFA04Y, user omar_d.",
        "calls": [
            ("get_reservation", {"reservation_id": "ZFA04Y"}),
            ("cancel", {"reservation_id": "ZFA04Y"}),
        ],
        "post": [{"path": "reservations.ZFA04Y.status", "equals": "cancelled"}],
        "state": {"reservations": {"ZFA04Y": {"status": "cancelled"}}},
        "output": "Reservation ZFA04Y is cancelled; the refund goes to your card.",
    },
    "add-bag": {
        "prompt": "Add one checked bag to reservation K2LM9P.",
        "calls": [
            ("get_reservation", {"reservation_id": "K2LM9P"}),
            ("update_bags", {"reservation_id": "K2LM9P", "total_bags": 2}),
        ],
        "post": [{"path": "reservations.K2LM9P.bags", "equals": 2}],
        "state": {"reservations": {"K2LM9P": {"bags": 2}}},
        "output": "Reservation K2LM9P now has 2 checked bags.",
    },
    "flight-status": {
        "prompt": "Is HAT039 on time today?",
        "calls": [("get_flight_status", {"flight": "HAT039", "date": "2024-05-15"})],
        "post": [],
        "state": {},
        "output": "HAT039 is on time today.",
    },
}
SIDE_EFFECT_TOOLS = ["book", "cancel", "update_bags"]


def _mistake(version: str, task: str, trial: int) -> str:
    """What goes wrong in this trajectory: the newer version's regressions, plus one old slip."""
    if version == VERSIONS[1] and task == "book-economy" and trial < 2:
        return "wrong-cabin"
    if version == VERSIONS[1] and task == "flight-status" and trial == 0:
        return "cancels"
    if version == VERSIONS[0] and task == "add-bag" and trial == 2:
        return "wrong-bags"
    return ""


def demo_trajectory(version: str, task: str, trial: int) -> dict:
    spec = TASKS[task]
    mistake = _mistake(version, task, trial)
    calls = [{"tool": name, "args": dict(args)} for name, args in spec["calls"]]
    state = {k: {kk: dict(vv) for kk, vv in v.items()} for k, v in spec["state"].items()}
    output = spec["output"]
    if mistake == "wrong-cabin":
        calls[1]["args"]["cabin"] = "business"
        state["reservations"]["R1"]["cabin"] = "business"
        output = output.replace("economy", "business")
    elif mistake == "wrong-bags":
        calls[1]["args"]["total_bags"] = 3
        state["reservations"]["K2LM9P"]["bags"] = 3
    elif mistake == "cancels":
        calls.append({"tool": "cancel", "args": {"reservation_id": "HAT039"}})
    for c in calls:
        c["result"] = {"ok": True}
    return {
        "id": f"demo-traj-{version}-{task}-{trial}",
        "agent": AGENT,
        "agent_version": version,
        "scenario": f"booking/{task}",
        "prompt": spec["prompt"],
        "calls": calls,
        "output": output,
        "metadata": {
            "task": task,
            "final_state": state,
            "latency_ms": 8000 + 1500 * trial,
            "expectations": {
                "calls": [{"tool": n, "args": a} for n, a in spec["calls"]],
                "prohibited": [t for t in SIDE_EFFECT_TOOLS if t not in dict(spec["calls"])],
                "side_effect_tools": SIDE_EFFECT_TOOLS,
                "checklist": {
                    "post": spec["post"],
                    "no_extra_side_effects": True,
                    "max_latency_ms": 30000,
                },
            },
        },
    }


UNSUPPORTED = ("the refund goes to your card",)


def demo_claims_cache(version) -> int:
    """Put the claims a judge would find in each of the version's trajectories in the cache."""
    n = 0
    for t in agent_version_transcripts(version):
        output, evidence = output_and_evidence(list(t.turns.all()))
        claims = [
            {
                "claim": part.strip().rstrip(".") + ".",
                "supported": part.strip().rstrip(".") not in UNSUPPORTED,
                "evidence": [] if part.strip().rstrip(".") in UNSUPPORTED else ["U0"],
            }
            for part in output.replace(";", ".").split(".")
            if part.strip()
        ]
        key = claims_cache_key(output=output, evidence=evidence, model=settings.JUDGE_MODEL)
        _, made = JudgeCacheEntry.objects.get_or_create(
            key=key,
            defaults={
                "model": settings.JUDGE_MODEL,
                "prompt_version": PROMPT_VERSION,
                "answer": {"claims": claims},
            },
        )
        n += made
    return n


def demo_axes_load(demo_dir: Path) -> str:
    """Import the booking agent's trajectories and make one axes report per version (once)."""
    lines = [
        demo_trajectory(v, task, trial)
        for v in VERSIONS
        for task in TASKS
        for trial in range(TRIALS)
    ]
    result = transcripts_import(lines=[json.dumps(x) for x in lines], source="demo trajectories")
    if AxesReport.objects.filter(agent_version__agent__name=AGENT).exists():
        return f"{result.summary}; axes reports already made"
    made = []
    for v in VERSIONS:
        version = axes_agent_version(AGENT, v)
        demo_claims_cache(version)
        report = axes_report_create(agent_version=version, faithfulness=True, by="demo")
        made.append(f"{v} {'green' if report.passed else 'flagged'}")
    return f"{result.summary}; axes reports: {', '.join(made)}"
