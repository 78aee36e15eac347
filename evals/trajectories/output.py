"""Render an axes report payload (evals.trajectories.services.reports.axes_report_payload) as
text or JUnit."""

from __future__ import annotations

import socket
from xml.etree import ElementTree as ET

from evals.gating.output import _junit_timestamp, fmt
from evals.trajectories.axes import AXES, AXIS_TITLES


def pct(value) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def axis_text(axis: str, fig: dict) -> str:
    """`84/200 passed (42.0%)`, with the axis's own raw figures beside it; `not scored`."""
    if not fig or not fig.get("n"):
        return "not scored"
    text = f"{fig['passed']}/{fig['n']} passed ({pct(fig['pass_rate'])})"
    if axis == "task_success" and fig.get("mean_reward") is not None:
        text += f", mean reward {fmt(fig['mean_reward'])}"
    elif axis == "tool_correctness":
        text += f", points {fig['points']}/{fig['max']}, mean score {fmt(fig['mean_score'])}"
    elif axis == "faithfulness":
        text += f", claims {fig['supported']}/{fig['total']} supported"
    return text


def comparison_line(c: dict) -> str:
    mark = "FLAG" if c["flagged"] else "ok"
    return (
        f"{mark:4}  {AXIS_TITLES[c['axis']]}: pass rate {pct(c['pass_rate'])}"
        f" vs {pct(c['baseline_pass_rate'])} (drop {c['drop'] * 100:+.1f} points)"
    )


def _cell(fig: dict) -> str:
    if not fig or not fig.get("n"):
        return "–"
    return f"{fig['passed']}/{fig['n']}"


def as_table(payload: dict) -> str:
    """Header, each axis overall, the comparison, one line per task, the result line."""
    base = payload.get("baseline")
    base_text = f"report #{base['id']} ({base['agent_version']})" if base else "none"
    header = (
        f"axes · agent {payload['agent']} {payload['agent_version']}"
        f" · {payload['trajectories']} trajectories"
        f" · baseline {base_text}"
        f" · max drop {payload['max_drop'] * 100:g} points"
    )
    lines = [header, "overall:"]
    lines += [f"  {AXIS_TITLES[a]:17} {axis_text(a, payload['overall'].get(a, {}))}" for a in AXES]
    if payload.get("comparison"):
        lines.append("against the last green report:")
        lines += [f"  {comparison_line(c)}" for c in payload["comparison"]]
    tasks = payload.get("tasks", [])
    if tasks:
        width = max(4, *(len(t["task"]) for t in tasks))
        lines.append(
            f"{'task':{width}}  {'n':>3}  {'success':>8}  {'tools':>8}  {'tool pts':>10}"
            f"  {'faithful':>8}"
        )
        for t in tasks:
            tc = t["tool_correctness"]
            points = f"{tc['points']}/{tc['max']}" if tc.get("n") else "–"
            lines.append(
                f"{t['task']:{width}}  {t['trajectories']:>3}  {_cell(t['task_success']):>8}"
                f"  {_cell(tc):>8}  {points:>10}  {_cell(t['faithfulness']):>8}"
            )
    result = "PASS" if payload["passed"] else "FAIL (an axis dropped more than allowed)"
    lines.append(f"result: {result} (axes report #{payload['id']}, {payload['url']})")
    return "\n".join(lines)


def as_junit(payload: dict, *, seconds: float = 0.0, hostname: str | None = None) -> str:
    """JUnit XML, valid like the gate's: one case per axis overall (failed when flagged against
    the last green report), the table in system-out."""
    classname = f"axes.{payload['agent']}"
    flagged = {c["axis"]: c for c in payload.get("comparison", []) if c["flagged"]}
    suite = ET.Element(
        "testsuite",
        {
            "name": classname,
            "tests": str(len(AXES)),
            "failures": str(len(flagged)),
            "errors": "0",
            "skipped": str(sum(1 for a in AXES if not (payload["overall"].get(a) or {}).get("n"))),
            "time": f"{max(seconds, 0.0):.3f}",
            "timestamp": _junit_timestamp(payload.get("created_at")),
            "hostname": hostname or socket.gethostname() or "localhost",
        },
    )
    props = ET.SubElement(suite, "properties")
    base = payload.get("baseline") or {}
    for name, value in (
        ("agent_version", payload["agent_version"]),
        ("baseline_report", base.get("id", "")),
        ("max_drop", payload["max_drop"]),
    ):
        ET.SubElement(props, "property", {"name": name, "value": str(value)})
    for axis in AXES:
        fig = payload["overall"].get(axis) or {}
        case = ET.SubElement(
            suite,
            "testcase",
            {"classname": classname, "name": f"{axis}: {axis_text(axis, fig)}", "time": "0"},
        )
        if axis in flagged:
            fail = ET.SubElement(
                case, "failure", {"message": comparison_line(flagged[axis]), "type": "regression"}
            )
            fail.text = comparison_line(flagged[axis])
        elif not fig.get("n"):
            ET.SubElement(case, "skipped", {"message": "not scored"})
    ET.SubElement(suite, "system-out").text = as_table(payload)
    ET.SubElement(suite, "system-err").text = ""
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)
