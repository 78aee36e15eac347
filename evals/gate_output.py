"""Render a gate run payload (see evals.selectors.gating.gate_run_payload) as text or JUnit XML."""

from __future__ import annotations

from xml.etree import ElementTree as ET

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
    if metric["kind"] == "judge_score_regression":
        return f"tolerance {fmt(metric.get('tolerance'))}"
    if metric["kind"] == "safety_ceiling":
        return "ceiling 0"
    return f"max {fmt(metric.get('threshold'))}"


def metric_line(metric: dict) -> str:
    verdict = "PASS" if metric["passed"] else "FAIL"
    parts = [
        f"{verdict}  {metric['label']}",
        f"value {fmt(metric.get('value'))}",
        threshold_text(metric),
        f"baseline {fmt(metric.get('baseline'))}",
    ]
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


def as_junit(payload: dict) -> str:
    """JUnit XML: one test case per metric (and one per golden-set problem)."""
    metrics = payload.get("metrics", [])
    problems = payload.get("problems", [])
    failures = sum(1 for m in metrics if not m["passed"]) + len(problems)
    suite = ET.Element(
        "testsuite",
        {
            "name": f"gate.{payload['gate']}",
            "tests": str(len(metrics) + len(problems) or 1),
            "failures": str(failures),
            "errors": "1" if payload["status"] == "error" else "0",
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
    for m in metrics:
        case = ET.SubElement(
            suite, "testcase", {"classname": f"gate.{payload['gate']}", "name": m["label"]}
        )
        if not m["passed"]:
            fail = ET.SubElement(case, "failure", {"message": metric_line(m)})
            fail.text = evidence_text(m, limit=50)
    for p in problems:
        case = ET.SubElement(
            suite, "testcase", {"classname": f"gate.{payload['gate']}", "name": "golden set data"}
        )
        ET.SubElement(case, "failure", {"message": p})
    if payload["status"] == "error":
        case = ET.SubElement(
            suite, "testcase", {"classname": f"gate.{payload['gate']}", "name": "run"}
        )
        ET.SubElement(case, "error", {"message": payload.get("error") or "could not run"})
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)
