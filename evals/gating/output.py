"""Render a gate run payload (see evals.gating.selectors.gate_run_payload) as text or JUnit XML."""

from __future__ import annotations

import socket
from datetime import UTC, datetime
from xml.etree import ElementTree as ET

from evals.gating import decision as gates

EVIDENCE_LIMIT = 5


def fmt(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if value.is_integer():
            return str(int(value))
        return f"{value:.3f}".rstrip("0").rstrip(".")
    return str(value)


def evidence_text(metric: dict, limit: int = EVIDENCE_LIMIT) -> str:
    """`call-000412 turn 7 (rule v1); ...` for the calls and turns behind a failure."""
    items = []
    for e in metric.get("evidence", []):
        where = e["call"] + (f" turn {e['turn']}" if e.get("turn") is not None else "")
        what = e.get("rule") or e.get("note") or ""
        items.append(f"{where} ({what})" if what else where)
    more = f"; and {len(items) - limit} more" if len(items) > limit else ""
    return "; ".join(items[:limit]) + more


def threshold_text(metric: dict) -> str:
    kind = gates.METRIC_KINDS.get(metric["kind"])
    fields = kind.fields if kind else ()
    if "tolerance" in fields:
        return f"tolerance {fmt(metric.get('tolerance'))}"
    if kind is not None and kind.fixed_threshold is not None:
        return f"ceiling {fmt(kind.fixed_threshold)}"
    if "min" in fields:
        return f"min {fmt(metric.get('threshold'))}"
    return f"max {fmt(metric.get('threshold'))}"


def metric_line(metric: dict) -> str:
    verdict = "PASS" if metric["passed"] else "FAIL"
    parts = [
        f"{verdict}  {metric['label']}",
        f"value {fmt(metric.get('value'))}",
        threshold_text(metric),
        f"baseline {fmt(metric.get('baseline'))}",
    ]
    noise = metric.get("noise") or {}
    if noise.get("interval"):
        lo, hi = noise["interval"]
        parts.append(
            f"noise: per-call diff sd {fmt(noise['sd'])}, mean {fmt(noise['mean_diff'])} "
            f"[{fmt(lo)}, {fmt(hi)}] over {noise['pairs']} calls"
        )
    line = " | ".join(parts)
    if not metric["passed"]:
        why = "; ".join(metric.get("problems", []))
        ev = evidence_text(metric)
        if ev:
            line += f" | calls: {ev}"
        if why:
            line += f" | why: {why}"
    return line


def as_table(payload: dict) -> str:
    """One header, one line per metric, the problems, then the result line."""
    gs = payload.get("golden_set") or {}
    base = payload.get("baseline") or "none"
    if payload.get("baseline_run"):
        base += f" (run #{payload['baseline_run']})"
    rules = (
        ", ".join(f"{r['rule']} v{r['version']}" for r in payload.get("rule_versions", []))
        or "none"
    )
    lines = [
        (
            f"gate {payload['gate']} · candidate {payload['agent']} {payload['candidate']}"
            f" · baseline {base}"
        ),
        (
            f"golden set {gs.get('name')} v{gs.get('version')}"
            f" sha256 {str(gs.get('checksum', ''))[:12]}"
            f" · judge {payload.get('judge') or 'none'} · judged now {payload.get('judged', 0)}"
        ),
        f"rule versions: {rules}",
    ]
    lines += [metric_line(m) for m in payload.get("metrics", [])]
    lines += [f"FAIL  {p}" for p in payload.get("problems", [])]
    lines += [f"note: {n}" for n in payload.get("notes", [])]
    if payload.get("error"):
        lines.append(f"error: {payload['error']}")
    lines.append(
        f"result: {payload['status'].upper()} (gate run #{payload['id']}, {payload['url']})"
    )
    return "\n".join(lines)


def cannot_run_payload(*, gate: str, candidate: str, error: str) -> dict:
    """The payload's shape for a gate that could not run and left no run (an unknown gate or
    version): CI reading --format json or junit finds the error where a result would be."""
    return {
        "id": None,
        "gate": gate,
        "status": "error",
        "passed": False,
        "candidate": candidate,
        "agent": None,
        "baseline": None,
        "baseline_run": None,
        "golden_set": None,
        "judge": None,
        "rule_versions": [],
        "judged": 0,
        "problems": [],
        "notes": [],
        "metrics": [],
        "calls": {},
        "error": error,
        "created_at": datetime.now(UTC).isoformat(),
        "url": None,
    }


def _junit_timestamp(created_at: str | None) -> str:
    """UTC without a zone, as the Ant schema's timestamp wants (2026-12-01T17:00:03)."""
    when = datetime.fromisoformat(created_at) if created_at else datetime.now(UTC)
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S")


def as_junit(payload: dict, *, seconds: float = 0.0, hostname: str | None = None) -> str:
    """JUnit XML: one test case per metric (and one per golden-set problem).

    Valid against both common schemas, Jenkins' junit-10.xsd and Apache Ant's JUnit.xsd (see
    tests/evals/junit/): the suite has its time, timestamp and hostname, every case a time, every
    failure and error a type, and the sequence properties, cases, system-out, system-err.
    """
    gate = payload.get("gate") or "unknown"
    classname = f"gate.{gate}"
    metrics = payload.get("metrics", [])
    problems = payload.get("problems", [])
    errored = payload["status"] == "error"
    failures = sum(1 for m in metrics if not m["passed"]) + len(problems)
    tests = len(metrics) + len(problems) + (1 if errored else 0)
    suite = ET.Element(
        "testsuite",
        {
            "name": classname,
            "tests": str(tests),
            "failures": str(failures),
            "errors": "1" if errored else "0",
            "skipped": "0",
            "time": f"{max(seconds, 0.0):.3f}",
            "timestamp": _junit_timestamp(payload.get("created_at")),
            "hostname": hostname or socket.gethostname() or "localhost",
        },
    )
    props = ET.SubElement(suite, "properties")
    for k in ("candidate", "baseline", "judge"):
        ET.SubElement(props, "property", {"name": k, "value": str(payload.get(k) or "")})
    ET.SubElement(
        props,
        "property",
        {
            "name": "golden_set_checksum",
            "value": str((payload.get("golden_set") or {}).get("checksum", "")),
        },
    )
    case_time = {"time": "0"}  # the metrics are decided together; the suite holds the run's time
    for m in metrics:
        case = ET.SubElement(
            suite, "testcase", {"classname": classname, "name": m["label"], **case_time}
        )
        if not m["passed"]:
            fail = ET.SubElement(
                case, "failure", {"message": metric_line(m), "type": m.get("kind") or "metric"}
            )
            fail.text = evidence_text(m, limit=50)
    for p in problems:
        case = ET.SubElement(
            suite, "testcase", {"classname": classname, "name": "golden set data", **case_time}
        )
        ET.SubElement(case, "failure", {"message": p, "type": "missing_data"})
    if errored:
        case = ET.SubElement(
            suite, "testcase", {"classname": classname, "name": "run", **case_time}
        )
        error = ET.SubElement(
            case,
            "error",
            {"message": payload.get("error") or "could not run", "type": "cannot_run"},
        )
        error.text = payload.get("error") or "could not run"
    out = ET.SubElement(suite, "system-out")
    out.text = as_table(payload) if payload.get("id") is not None else ""
    ET.SubElement(suite, "system-err").text = payload.get("error") or ""
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)
