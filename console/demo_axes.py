"""The demo's trajectories and their axes reports (a load_demo step).

A small booking agent ("booking-desk") ran four tasks three times on each of two versions. Each
trajectory reports its final state and carries its expectations in metadata (expected calls, a
prohibited tool, an outcome checklist), the generic shape the axes read (evals.services.axes).
The newer version books the wrong fare class on one task and cancels without being asked on
another, so its report is flagged against the older, green one. Made once: a second load finds
the reports and changes nothing.
"""

import json
from pathlib import Path

from evals.models import AxesReport
from evals.services.axes import axes_agent_version, axes_report_create
from evals.services.importing import transcripts_import

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
        report = axes_report_create(agent_version=axes_agent_version(AGENT, v), by="demo")
        made.append(f"{v} {'green' if report.passed else 'flagged'}")
    return f"{result.summary}; axes reports: {', '.join(made)}"
