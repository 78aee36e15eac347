"""Axes reports: an agent version's trajectories scored on task success, tool correctness and
faithfulness (the pure scoring is evals.trajectories.axes), stored and compared with the agent's
last green report.

Where the expectations come from, per transcript:

- tau-bench results (imported with their `info` and `reward`, kept in metadata["tau_bench"]):
  the gold actions `info.task.actions` are the expected calls; the domain's write tools the gold
  actions do not use are prohibited; the call count counts write tools; task success is the reward
  (passed at 1).
- tau2-bench results (metadata["tau2_bench"]: the task, with its `evaluation_criteria`, and the
  simulation's reward): the task's gold actions asked of the agent are the expected calls, task
  success is the reward; in the airline and retail domains the write tools count as for
  tau-bench.
- any other trajectory: metadata["expectations"] on the transcript, or a line of an expectations
  file (JSON Lines, one task a line, matched on the transcript's task: metadata["task"], else its
  scenario, else its id). A line looks like
  {"task": "refund-01", "calls": [{"tool": "get_order", "args": {"order_id": "A1"}}],
   "prohibited": ["delete_account"], "count_tools": ["refund"], "side_effect_tools": ["refund"],
   "checklist": {"pre": [...], "post": [{"path": "orders.A1.status", "equals": "refunded"}],
                 "no_extra_side_effects": true, "max_latency_ms": 30000},
   "reward": 1.0}
  Every key is optional. The trajectory's own metadata may report `initial_state`,
  `final_state` and `latency_ms` (else the span of its turn timings).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Prefetch

from core.errors import DomainError
from core.importing import Errors, Invalid, json_records
from evals.catalog.models import AgentVersion, Transcript, Turn
from evals.trajectories import axes
from evals.trajectories.axes import Call, Expectation, Trajectory
from evals.trajectories.models import AxesReport
from evals.trajectories.services.faithfulness import faithfulness_claims

logger = logging.getLogger(__name__)

# tau-bench's tools that change the database (airline and retail domains).
TAU_WRITE_TOOLS = (
    "book_reservation",
    "cancel_reservation",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
    "send_certificate",
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "modify_user_address",
    "return_delivered_order_items",
)
EXPECTATION_KEYS = {
    "task",
    "calls",
    "prohibited",
    "count_tools",
    "side_effect_tools",
    "checklist",
    "reward",
}


# ---- expectations ----------------------------------------------------------------------------


def _names(obj: dict, key: str) -> tuple[str, ...] | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise Invalid(key, "must be a list of tool names")
    return tuple(value)


def _conditions(checklist: dict, key: str) -> None:
    conds = checklist.get(key, [])
    if not isinstance(conds, list):
        raise Invalid(f"checklist.{key}", "must be a list of conditions")
    for i, c in enumerate(conds):
        if not isinstance(c, dict) or not isinstance(c.get("path"), str) or not c["path"]:
            raise Invalid(f"checklist.{key}[{i}].path", "missing")
        ops = {"equals", "exists", "in"} & set(c)
        if len(ops) > 1:
            raise Invalid(f"checklist.{key}[{i}]", "one of equals, exists or in, not several")
        if "in" in c and not isinstance(c["in"], list):
            raise Invalid(f"checklist.{key}[{i}].in", "must be a list")


def expectation_clean(obj: Any) -> Expectation:
    """Return the Expectation an expectations object describes; Invalid names the bad field."""
    if not isinstance(obj, dict):
        raise Invalid("expectations", "must be an object")
    unknown = sorted(set(obj) - EXPECTATION_KEYS)
    if unknown:
        raise Invalid(unknown[0], f"unknown key; use {', '.join(sorted(EXPECTATION_KEYS))}")
    calls = None
    if obj.get("calls") is not None:
        if not isinstance(obj["calls"], list):
            raise Invalid("calls", "must be a list of {tool, args}")
        calls = []
        for i, c in enumerate(obj["calls"]):
            name = c.get("tool", c.get("name")) if isinstance(c, dict) else None
            if not isinstance(name, str) or not name:
                raise Invalid(f"calls[{i}].tool", "missing")
            calls.append(Call(name, c.get("args", c.get("arguments", c.get("kwargs", {})))))
        calls = tuple(calls)
    checklist = obj.get("checklist")
    if checklist is not None:
        if not isinstance(checklist, dict):
            raise Invalid("checklist", "must be an object")
        _conditions(checklist, "pre")
        _conditions(checklist, "post")
        latency = checklist.get("max_latency_ms")
        if latency is not None and (
            isinstance(latency, bool) or not isinstance(latency, (int, float)) or latency < 0
        ):
            raise Invalid("checklist.max_latency_ms", "must be a number of milliseconds")
    reward = obj.get("reward")
    if reward is not None and (isinstance(reward, bool) or not isinstance(reward, (int, float))):
        raise Invalid("reward", "must be a number")
    return Expectation(
        calls=calls,
        prohibited=_names(obj, "prohibited") or (),
        count_tools=_names(obj, "count_tools"),
        side_effect_tools=_names(obj, "side_effect_tools"),
        checklist=checklist,
        reward=float(reward) if reward is not None else None,
    )


def expectations_parse(lines: Iterable[str | bytes], *, source: str = "expectations") -> dict:
    """Return {task: Expectation} from an expectations file (JSON Lines); a bad line raises
    ImportFailed naming the line and field, and nothing is used."""
    errors = Errors(source)
    out: dict[str, Expectation] = {}
    for where, obj in json_records(lines, errors):
        try:
            task = obj.get("task") if isinstance(obj, dict) else None
            if not isinstance(task, str) or not task:
                raise Invalid("task", "missing")
            if task in out:
                raise Invalid("task", f"{task!r} appears twice")
            out[task] = expectation_clean(obj)
        except Invalid as e:
            errors.add(where, e.field, e.reason)
    errors.check()
    return out


def tau_bench_expectation(tau: dict) -> Expectation:
    """The gold actions as expected calls, the unused write tools prohibited, the reward."""
    info = tau.get("info") or {}
    actions = (info.get("task") or {}).get("actions") or []
    calls = tuple(Call(a.get("name", ""), a.get("kwargs", {})) for a in actions)
    used = {c.name for c in calls}
    reward = tau.get("reward")
    return Expectation(
        calls=calls,
        prohibited=tuple(t for t in TAU_WRITE_TOOLS if t not in used),
        count_tools=TAU_WRITE_TOOLS,
        side_effect_tools=TAU_WRITE_TOOLS,
        reward=float(reward) if isinstance(reward, (int, float)) else None,
    )


def tau2_bench_expectation(tau2: dict) -> Expectation:
    """The task's gold agent actions as expected calls and the simulation's reward."""
    criteria = (tau2.get("task") or {}).get("evaluation_criteria") or {}
    actions = [
        a
        for a in criteria.get("actions") or []
        if isinstance(a, dict) and a.get("requestor", "assistant") == "assistant"
    ]
    calls = tuple(Call(a.get("name", ""), a.get("arguments", {})) for a in actions)
    reward = tau2.get("reward")
    writes = (tau2.get("info") or {}).get("environment_info", {}).get("domain_name") in (
        "airline",
        "retail",
    )
    used = {c.name for c in calls}
    return Expectation(
        calls=calls if actions or criteria else None,
        prohibited=tuple(t for t in TAU_WRITE_TOOLS if t not in used) if writes else (),
        count_tools=TAU_WRITE_TOOLS if writes else None,
        side_effect_tools=TAU_WRITE_TOOLS if writes else None,
        reward=float(reward) if isinstance(reward, (int, float)) else None,
    )


# ---- trajectories ----------------------------------------------------------------------------


def trajectory_task(t: Transcript) -> str:
    """The task a transcript ran: tau-bench's task id, metadata task, scenario, else its id."""
    meta = t.metadata or {}
    for key in ("tau_bench", "tau2_bench"):
        tau = meta.get(key)
        if isinstance(tau, dict) and tau.get("task_id") is not None:
            return str(tau["task_id"])
    return str(meta.get("task") or t.scenario or t.external_id)


def trajectory_of(t: Transcript, turns: Iterable[Turn]) -> Trajectory:
    """The calls the agent made, in order, and the state and latency the trajectory reports."""
    turns = list(turns)
    calls = tuple(
        Call(c.get("name", ""), c.get("arguments", {}))
        for turn in turns
        if turn.speaker == Turn.Speaker.AGENT
        for c in turn.tool_calls or []
        if isinstance(c, dict)
    )
    meta = t.metadata or {}
    latency = meta.get("latency_ms")
    if not isinstance(latency, (int, float)) or isinstance(latency, bool):
        starts = [x.start_ms for x in turns if x.start_ms is not None]
        ends = [x.end_ms for x in turns if x.end_ms is not None]
        latency = (max(ends) - min(starts)) if starts and ends else None
    state = meta.get("final_state")
    initial = meta.get("initial_state")
    return Trajectory(
        id=t.external_id,
        task=trajectory_task(t),
        calls=calls,
        initial_state=initial if isinstance(initial, dict) else None,
        final_state=state if isinstance(state, dict) else None,
        latency_ms=int(latency) if latency is not None else None,
    )


def expectation_of(t: Transcript, task: str, external: dict | None) -> Expectation | None:
    """Tau-bench gold actions, else the file's line for the task, else metadata expectations."""
    meta = t.metadata or {}
    if isinstance(meta.get("tau_bench"), dict):
        return tau_bench_expectation(meta["tau_bench"])
    if isinstance(meta.get("tau2_bench"), dict):
        return tau2_bench_expectation(meta["tau2_bench"])
    if external and task in external:
        return external[task]
    if meta.get("expectations") is not None:
        try:
            return expectation_clean(meta["expectations"])
        except Invalid as e:
            raise DomainError(f"{t.external_id}: metadata.expectations.{e}") from None
    return None


def agent_version_transcripts(agent_version: AgentVersion):
    return (
        Transcript.objects.filter(agent_version=agent_version)
        .order_by("external_id")
        .prefetch_related(Prefetch("turns", queryset=Turn.objects.order_by("index")))
    )


def axes_rows(
    *,
    agent_version: AgentVersion,
    expectations: dict | None = None,
    faithfulness: bool = False,
) -> list[dict]:
    """One row per transcript of the version: {id, task, task_success, tool_correctness,
    faithfulness} (each None when that axis has nothing to score against)."""
    tool_pass = settings.DOCKET_AXES_TOOL_PASS
    rows = []
    for t in agent_version_transcripts(agent_version):
        turns = list(t.turns.all())
        traj = trajectory_of(t, turns)
        exp = expectation_of(t, traj.task, expectations) or Expectation()
        row = {
            "id": t.external_id,
            "task": traj.task,
            "task_success": axes.task_success(traj, exp),
            "tool_correctness": axes.tool_correctness(traj.calls, exp, pass_at=tool_pass),
            "faithfulness": None,
        }
        if faithfulness:
            claims, error = faithfulness_claims(t, turns)
            row["faithfulness"] = axes.faithfulness(
                claims, pass_at=settings.DOCKET_AXES_FAITHFULNESS_PASS
            )
            if error:
                row["faithfulness_error"] = error
        rows.append(row)
    return rows


def axes_agent_version(agent: str, version: str) -> AgentVersion:
    """The agent version, or DomainError naming what is unknown."""
    found = AgentVersion.objects.select_related("agent").filter(agent__name=agent, version=version)
    av = found.first()
    if av is None:
        raise DomainError(f"no version {version!r} of agent {agent!r}", field="agent_version")
    return av


def axes_baseline(agent_version: AgentVersion) -> AxesReport | None:
    """The agent's last green report (any version of the same agent)."""
    return (
        AxesReport.objects.filter(agent_version__agent_id=agent_version.agent_id, passed=True)
        .order_by("-created_at", "-pk")
        .first()
    )


@transaction.atomic
def axes_report_create(
    *,
    agent_version: AgentVersion,
    max_drop: float | None = None,
    expectations: dict | None = None,
    faithfulness: bool = False,
    by: str = "",
) -> AxesReport:
    """Score the version's trajectories, compare with the agent's last green report, store it.
    The report is green unless an axis's pass rate dropped more than `max_drop` (absolute)."""
    max_drop = settings.DOCKET_AXES_MAX_DROP if max_drop is None else max_drop
    if not 0 <= max_drop <= 1:
        raise DomainError("between 0 and 1 (0.05 = five points)", field="max_drop")
    rows = axes_rows(
        agent_version=agent_version, expectations=expectations, faithfulness=faithfulness
    )
    if not rows:
        raise DomainError(
            f"{agent_version}: no trajectories imported for this version", field="agent_version"
        )
    summary = axes.axes_summarize(rows)
    baseline = axes_baseline(agent_version)
    comparison = axes.axes_compare(
        summary["overall"],
        baseline.results.get("overall") if baseline else None,
        max_drop=max_drop,
    )
    flagged = [c for c in comparison if c["flagged"]]
    report = AxesReport.objects.create(
        agent_version=agent_version,
        baseline=baseline,
        passed=not flagged,
        max_drop=max_drop,
        results={**summary, "comparison": comparison, "rows": rows},
        created_by=by,
    )
    logger.info(
        "axes_report_created",
        extra={
            "axes_report": report.pk,
            "agent_version": agent_version.pk,
            "trajectories": len(rows),
            "flagged": len(flagged),
        },
    )
    return report


def axes_report_payload(report: AxesReport, *, rows: bool = False) -> dict:
    """The JSON shape of a report (command --format json, API, page); rows on request."""
    results = report.results or {}
    av = report.agent_version
    payload = {
        "id": report.pk,
        "agent": av.agent.name,
        "agent_version": av.version,
        "passed": report.passed,
        "max_drop": report.max_drop,
        "baseline": (
            {
                "id": report.baseline.pk,
                "agent_version": report.baseline.agent_version.version,
            }
            if report.baseline_id
            else None
        ),
        "trajectories": results.get("trajectories", 0),
        "overall": results.get("overall", {}),
        "comparison": results.get("comparison", []),
        "tasks": results.get("tasks", []),
        "created_at": report.created_at.isoformat() if report.created_at else None,
        "created_by": report.created_by,
        "url": f"/axes/{report.pk}/",
    }
    if rows:
        payload["rows"] = results.get("rows", [])
    return payload
