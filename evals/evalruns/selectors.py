"""Reads for datasets and eval runs: lists, one run with its rows, and the payload the API, the
command and the pages share."""

from __future__ import annotations

from django.db.models import QuerySet

from evals.catalog.models import AgentVersion
from evals.evalruns.gate_metrics import EvalRunFact
from evals.evalruns.models import Dataset, EvalRun, EvalRunRow


def dataset_list() -> QuerySet[Dataset]:
    return Dataset.objects.order_by("name", "-version")


def eval_run_list() -> QuerySet[EvalRun]:
    return EvalRun.objects.select_related("dataset", "agent_version__agent", "baseline").order_by(
        "-created_at", "-pk"
    )


def eval_run_get(pk: int) -> EvalRun | None:
    return eval_run_list().filter(pk=pk).first()


def eval_run_rows(run: EvalRun) -> QuerySet[EvalRunRow]:
    return run.rows.select_related("dataset_row", "transcript").order_by("position")


def eval_run_finished(run: EvalRun) -> bool:
    return run.finished_at is not None


def _num(value, digits=2):
    return None if value is None else round(value, digits)


def eval_run_summary(run: EvalRun) -> dict:
    """A run's figures and its comparison with the baseline (the last green run)."""
    base = run.baseline
    drop = None
    if base is not None and base.pass_rate is not None and run.pass_rate is not None:
        drop = round(base.pass_rate - run.pass_rate, 2)
    return {
        "id": run.pk,
        "status": run.status,
        "dataset": run.dataset.name,
        "dataset_version": run.dataset.version,
        "dataset_checksum": run.dataset.checksum,
        "agent": run.agent_version.agent.name,
        "agent_version": run.agent_version.version,
        "rubric": run.rubric,
        "rubric_text": run.rubric_text,
        "threshold": run.threshold,
        "concurrency": run.concurrency,
        "source": run.source,
        "judge_model": run.judge_model,
        "agent_model": run.agent_model,
        "rows_total": run.rows_total,
        "rows_done": run.rows_done,
        "progress": round(100 * run.rows_done / run.rows_total) if run.rows_total else 100,
        "rows_scored": run.rows_scored,
        "rows_passed": run.rows_passed,
        "rows_errored": run.rows_errored,
        "rows_skipped": max(0, run.rows_done - run.rows_scored - run.rows_errored),
        "mean_score": _num(run.mean_score),
        "pass_rate": _num(run.pass_rate),
        "tokens_in": run.tokens_in,
        "tokens_out": run.tokens_out,
        "cost": str(run.cost),
        "cost_cap": str(run.cost_cap),
        "stop_reason": run.stop_reason,
        "baseline": (
            {
                "id": base.pk,
                "agent_version": base.agent_version.version,
                "dataset_version": base.dataset.version,
                "pass_rate": _num(base.pass_rate),
            }
            if base
            else None
        ),
        "pass_rate_drop": drop,
        "max_drop": run.max_drop,
        "regressed": run.regressed,
        "green": run.green,
        "started_by": run.started_by,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
    }


def eval_run_row_payload(row: EvalRunRow) -> dict:
    return {
        "position": row.position,
        "row": row.dataset_row.row_id,
        "outcome": row.outcome,
        "score": row.score,
        "passed": row.passed,
        "reason": row.reason,
        "error": row.error,
        "output": row.output,
        "tool_calls": [c.get("name") for c in row.tool_calls if isinstance(c, dict)],
        "transcript": row.transcript.external_id if row.transcript_id else None,
        "cached": row.cached,
    }


def eval_run_payload(run: EvalRun, *, rows: bool = True) -> dict:
    data = eval_run_summary(run)
    if rows:
        data["rows"] = [eval_run_row_payload(r) for r in eval_run_rows(run)]
    return data


def eval_run_facts(version: AgentVersion) -> list[EvalRunFact]:
    """The version's latest finished (done) eval run per dataset and rubric, for gates."""
    latest: dict[tuple[str, str], EvalRunFact] = {}
    runs = (
        EvalRun.objects.filter(agent_version=version, status=EvalRun.Status.DONE)
        .select_related("dataset")
        .order_by("-finished_at", "-pk")
    )
    for r in runs:
        rubric = r.rubric if not r.rubric_text else f"{r.rubric}: {r.rubric_text[:40]}"
        latest.setdefault(
            (r.dataset.name, rubric),
            EvalRunFact(
                dataset=r.dataset.name,
                rubric=rubric,
                run=r.pk,
                pass_rate=r.pass_rate,
                scored=r.rows_scored,
            ),
        )
    return [latest[k] for k in sorted(latest)]
