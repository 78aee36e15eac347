"""Trajectory axes, pure (no Django): task success, tool correctness and faithfulness.

The three axes never mix: each trajectory gets one result per axis (or none, when that axis has
nothing to score it against), and every figure is per axis.

- Task success: pass or fail. From an imported reward (tau-bench: passed when reward >= 1), or
  from an outcome checklist against the state the trajectory reports: pre-conditions on its
  `initial_state`, post-conditions on its `final_state`, no extra side effects, optional latency.
- Tool correctness against the expected calls: per expected call, the right tool 1 point and each
  matching argument 1 point; the call count as expected 1 point; no prohibited side effect
  1 point. score = points / maximum; raw points kept. Passed at full marks (settable).
- Faithfulness: the output's atomic claims, each supported by the tool results or context or not
  (the claims come from the judge; see evals.trajectories.services.faithfulness). supported / total.

A condition of the checklist: {"path": "reservations.ZFA04Y.status", "equals": "cancelled"},
{"path": ..., "exists": false} or {"path": ..., "in": [...]}; a path is dot-separated keys
(or list indices) into the state.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

AXES = ("task_success", "tool_correctness", "faithfulness")
AXIS_TITLES = {
    "task_success": "Task success",
    "tool_correctness": "Tool correctness",
    "faithfulness": "Faithfulness",
}
MAX_DROP = 0.05


@dataclass(frozen=True)
class Call:
    name: str
    args: Any = field(default_factory=dict)


@dataclass(frozen=True)
class Expectation:
    """What one task expects of a trajectory (any part may be missing)."""

    calls: tuple[Call, ...] | None = None
    prohibited: tuple[str, ...] = ()
    count_tools: tuple[str, ...] | None = None
    side_effect_tools: tuple[str, ...] | None = None
    checklist: dict | None = None
    reward: float | None = None
    reward_pass: float = 1.0


@dataclass(frozen=True)
class Trajectory:
    id: str
    task: str
    calls: tuple[Call, ...] = ()
    initial_state: dict | None = None
    final_state: dict | None = None
    latency_ms: int | None = None


# ---- values ----------------------------------------------------------------------------------


def normalize(value: Any) -> Any:
    """A value in a form where equal JSON means equal: 250 == 250.0, dict order ignored."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, dict):
        return {str(k): normalize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalize(v) for v in value]
    return value


def _lookup(state: Any, path: str) -> tuple[bool, Any]:
    here = state
    for key in str(path).split("."):
        if isinstance(here, dict) and key in here:
            here = here[key]
        elif (
            isinstance(here, list)
            and key.lstrip("-").isascii()
            and key.lstrip("-").isdigit()
            and -len(here) <= int(key) < len(here)
        ):
            here = here[int(key)]
        else:
            return False, None
    return True, here


def condition_holds(state: dict | None, cond: dict) -> bool:
    """Whether one checklist condition holds on `state` (None: no state reported: never)."""
    if state is None:
        return False
    found, value = _lookup(state, cond.get("path", ""))
    if "exists" in cond:
        return found == bool(cond["exists"])
    if "equals" in cond:
        return found and normalize(value) == normalize(cond["equals"])
    if "in" in cond:
        return found and normalize(value) in [normalize(v) for v in cond["in"]]
    return found


def condition_text(cond: dict) -> str:
    path = cond.get("path", "")
    if "exists" in cond:
        return f"{path} {'exists' if cond['exists'] else 'is absent'}"
    if "equals" in cond:
        return f"{path} == {cond['equals']!r}"
    if "in" in cond:
        return f"{path} in {cond['in']!r}"
    return f"{path} exists"


# ---- axes ------------------------------------------------------------------------------------


def task_success(traj: Trajectory, exp: Expectation) -> dict | None:
    """{passed, source, reward, checks: [{kind, what, ok}]}, or None with nothing to score on."""
    if exp.reward is not None:
        return {
            "passed": exp.reward >= exp.reward_pass,
            "source": "reward",
            "reward": exp.reward,
            "checks": [],
        }
    checklist = exp.checklist
    if not checklist:
        return None
    checks = []
    for cond in checklist.get("pre", []):
        checks.append(
            {
                "kind": "pre",
                "what": condition_text(cond),
                "ok": condition_holds(traj.initial_state, cond),
            }
        )
    for cond in checklist.get("post", []):
        checks.append(
            {
                "kind": "post",
                "what": condition_text(cond),
                "ok": condition_holds(traj.final_state, cond),
            }
        )
    if checklist.get("no_extra_side_effects"):
        extra = extra_side_effects(traj.calls, exp)
        checks.append(
            {
                "kind": "side_effects",
                "what": "no extra side effects"
                + (f" (extra: {', '.join(extra)})" if extra else ""),
                "ok": not extra,
            }
        )
    if checklist.get("max_latency_ms") is not None:
        limit = checklist["max_latency_ms"]
        ok = traj.latency_ms is not None and traj.latency_ms <= limit
        shown = "unknown" if traj.latency_ms is None else f"{traj.latency_ms} ms"
        checks.append({"kind": "latency", "what": f"latency {shown} <= {limit} ms", "ok": ok})
    return {
        "passed": all(c["ok"] for c in checks),
        "source": "checklist",
        "reward": None,
        "checks": checks,
    }


def _side_effect_tools(exp: Expectation) -> set[str]:
    if exp.side_effect_tools is not None:
        return set(exp.side_effect_tools)
    return {c.name for c in exp.calls or ()} | set(exp.prohibited)


def extra_side_effects(calls: Sequence[Call], exp: Expectation) -> list[str]:
    """Calls to side-effecting tools beyond those expected (by tool, counted), and prohibited."""
    tools = _side_effect_tools(exp)
    allowed: dict[str, int] = defaultdict(int)
    for c in exp.calls or ():
        allowed[c.name] += 1
    extra = []
    for c in calls:
        if c.name not in tools:
            continue
        if c.name in exp.prohibited or allowed[c.name] == 0:
            extra.append(c.name)
        else:
            allowed[c.name] -= 1
    return extra


def _arg_points(expected: Any, actual: Any) -> tuple[int, int, list[str]]:
    """(matching, maximum, names of the mismatching arguments) for one call's arguments."""
    if not isinstance(expected, dict):
        ok = normalize(expected) == normalize(actual)
        return int(ok), 1, [] if ok else ["(arguments)"]
    actual = actual if isinstance(actual, dict) else {}
    wrong = [
        k for k, v in expected.items() if k not in actual or normalize(actual[k]) != normalize(v)
    ]
    return len(expected) - len(wrong), len(expected), wrong


def tool_correctness(
    calls: Sequence[Call], exp: Expectation, *, pass_at: float = 1.0
) -> dict | None:
    """{score, points, max, passed, calls: [...], count: {...}, prohibited: [...]}, or None
    when no calls are expected (nothing to score against; an empty list is an expectation)."""
    if exp.calls is None:
        return None
    used: set[int] = set()
    points = maximum = 0
    items = []
    for e in exp.calls:
        _, arg_max, _ = _arg_points(e.args, {})
        maximum += 1 + arg_max
        candidates = [i for i, c in enumerate(calls) if i not in used and c.name == e.name]
        if not candidates:
            items.append({"tool": e.name, "found": False, "points": 0, "max": 1 + arg_max})
            continue
        scored = [(_arg_points(e.args, calls[i].args), i) for i in candidates]
        (matching, _, wrong), best = max(scored, key=lambda s: (s[0][0], -s[1]))
        used.add(best)
        points += 1 + matching
        items.append(
            {
                "tool": e.name,
                "found": True,
                "points": 1 + matching,
                "max": 1 + arg_max,
                "call": best,
                "wrong_args": wrong,
            }
        )
    counted = set(exp.count_tools) if exp.count_tools is not None else {c.name for c in exp.calls}
    expected_n = sum(1 for c in exp.calls if c.name in counted)
    actual_n = sum(1 for c in calls if c.name in counted)
    count_ok = expected_n == actual_n
    prohibited = [c.name for c in calls if c.name in exp.prohibited]
    points += int(count_ok) + int(not prohibited)
    maximum += 2
    score = points / maximum
    return {
        "score": round(score, 4),
        "points": points,
        "max": maximum,
        "passed": score >= pass_at - 1e-9,
        "calls": items,
        "count": {"expected": expected_n, "actual": actual_n, "ok": count_ok},
        "prohibited": prohibited,
    }


def faithfulness(claims: Sequence[dict] | None, *, pass_at: float = 1.0) -> dict | None:
    """{score, supported, total, passed, claims} from the judged claims; None when not judged.
    An output with no factual claim has nothing unfaithful in it: passed, score None."""
    if claims is None:
        return None
    total = len(claims)
    supported = sum(1 for c in claims if c.get("supported"))
    score = supported / total if total else None
    return {
        "score": round(score, 4) if score is not None else None,
        "supported": supported,
        "total": total,
        "passed": score is None or score >= pass_at - 1e-9,
        "claims": list(claims),
    }


# ---- figures ---------------------------------------------------------------------------------


def _axis_figures(results: Iterable[dict | None], axis: str) -> dict:
    scored = [r for r in results if r is not None]
    n = len(scored)
    passed = sum(1 for r in scored if r["passed"])
    out: dict = {
        "n": n,
        "passed": passed,
        "pass_rate": round(passed / n, 4) if n else None,
    }
    if axis == "task_success":
        rewards = [r["reward"] for r in scored if r.get("reward") is not None]
        out["mean_reward"] = round(sum(rewards) / len(rewards), 4) if rewards else None
    elif axis == "tool_correctness":
        out["points"] = sum(r["points"] for r in scored)
        out["max"] = sum(r["max"] for r in scored)
        out["mean_score"] = round(sum(r["score"] for r in scored) / n, 4) if n else None
    else:
        out["supported"] = sum(r["supported"] for r in scored)
        out["total"] = sum(r["total"] for r in scored)
        with_claims = [r["score"] for r in scored if r["score"] is not None]
        out["mean_score"] = round(sum(with_claims) / len(with_claims), 4) if with_claims else None
    return out


def axes_summarize(rows: Sequence[dict]) -> dict:
    """Per axis overall (over trajectories) and per task, from rows of
    {id, task, task_success, tool_correctness, faithfulness}."""
    by_task: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_task[r["task"]].append(r)
    return {
        "trajectories": len(rows),
        "overall": {a: _axis_figures((r[a] for r in rows), a) for a in AXES},
        "tasks": [
            {
                "task": task,
                "trajectories": len(group),
                **{a: _axis_figures((r[a] for r in group), a) for a in AXES},
            }
            for task, group in sorted(by_task.items(), key=lambda kv: _task_order(kv[0]))
        ],
    }


def _task_order(task: str) -> tuple:
    # ASCII digits only: "²" is a digit to isdigit() but not a number to int().
    return (0, int(task), "") if task.isascii() and task.isdigit() else (1, 0, task)


def axes_compare(current: dict, baseline: dict | None, *, max_drop: float = MAX_DROP) -> list:
    """One entry per axis both reports scored: its pass rates and whether it dropped more than
    `max_drop` (absolute, 0.05 = five points); axes either report did not score are skipped."""
    if not baseline:
        return []
    out = []
    for axis in AXES:
        now, before = current.get(axis, {}), baseline.get(axis, {})
        if now.get("pass_rate") is None or before.get("pass_rate") is None:
            continue
        drop = round(before["pass_rate"] - now["pass_rate"], 4)
        out.append(
            {
                "axis": axis,
                "pass_rate": now["pass_rate"],
                "baseline_pass_rate": before["pass_rate"],
                "drop": drop,
                "flagged": drop > max_drop + 1e-9,
            }
        )
    return out
