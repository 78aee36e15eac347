"""Run the judge: LLM calls per rule group and
detectors, over every transcript or a filtered few."""

import time
from decimal import Decimal

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from evals.judging.selectors.runs import (
    judge_run_errors,
    judge_run_get,
    judge_run_needs_model,
    judge_run_summary,
)
from evals.judging.services.runs import (
    JudgeRunPlan,
    judge_run_create,
    judge_run_resume,
)


def _money(value) -> str:
    return f"${Decimal(value):.4f}"


class Command(BaseCommand):
    help = (
        "Judge transcripts against the current version of every active rule (or the ones named): "
        "one LLM call per transcript and rule group, detector rules in code. --dry-run prints the "
        "number of calls and the estimated cost and spends nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--agent-version",
            metavar="[AGENT:]VERSION",
            help="only transcripts of this agent version",
        )
        parser.add_argument(
            "--transcript",
            action="append",
            default=[],
            metavar="ID",
            help="a transcript id (repeatable)",
        )
        parser.add_argument(
            "--rule",
            action="append",
            default=[],
            metavar="ID",
            help="a rule id, a pattern (asking.*) or a group (signals.*) (repeatable)",
        )
        parser.add_argument(
            "--detectors-only", action="store_true", help="only rules that name a detector"
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="print calls and estimated cost; spend nothing"
        )
        parser.add_argument(
            "--cost-cap", type=Decimal, help="USD to stop at (default JUDGE_COST_CAP_USD)"
        )
        parser.add_argument(
            "--resume",
            type=int,
            metavar="RUN",
            help="queue the pending checks of a stuck run again (a worker or server died)",
        )
        parser.add_argument(
            "--no-wait", action="store_true", help="with a broker, return once the tasks are queued"
        )

    def handle(self, *args, **opts):
        if opts["resume"]:
            run = judge_run_get(opts["resume"])
            if run is None:
                raise CommandError(f"resume: no judge run {opts['resume']}")
            n = judge_run_resume(run_id=run.pk)
            self.stdout.write(f"Judge run {run.pk}: {n} pending checks queued again.")
            self._finish(judge_run_get(run.pk), opts)
            return
        try:
            result = judge_run_create(
                transcript_ids=opts["transcript"] or None,
                rule_ids=opts["rule"] or None,
                agent_version=opts["agent_version"],
                started_by="cli",
                dry_run=opts["dry_run"],
                detectors_only=opts["detectors_only"],
                cost_cap=opts["cost_cap"],
            )
        except DomainError as exc:  # JudgeRunInvalid, an unknown agent version
            raise CommandError(str(exc)) from None
        if isinstance(result, JudgeRunPlan):
            self._print_plan(result)
            return
        run = result
        if not settings.CELERY_TASK_ALWAYS_EAGER:
            self.stdout.write(f"Judge run {run.pk}: {run.tasks_total} tasks queued on the workers.")
        self._finish(run, opts)

    def _finish(self, run, opts) -> None:
        if not settings.CELERY_TASK_ALWAYS_EAGER:
            if opts["no_wait"]:
                return
            while run.finished_at is None:
                time.sleep(1)
                run = judge_run_get(run.pk)
        run = judge_run_get(run.pk)
        self._print_summary(run)

    def _print_plan(self, plan: JudgeRunPlan) -> None:
        cap = f"cost cap {_money(plan.cost_cap)}" if plan.cost_cap > 0 else "no cost cap"
        by_detectors = (
            f"; {plan.detector_calls} of the calls by detector rules that call a model"
            if plan.detector_calls
            else ""
        )
        self.stdout.write(
            f"Dry run: {plan.transcripts} transcripts x {plan.rule_versions} "
            f"rule versions -> {plan.calls} judge calls ({plan.cache_hits} cache "
            f"hits{by_detectors}), {plan.detector_items} detector checks, "
            f"{plan.needs_model} needing a model."
            f"\nModel {plan.model}, "
            f"prompt {plan.prompt_version}: about {plan.est_tokens_in:,} tokens "
            f"in, {plan.est_tokens_out:,} out, estimated cost "
            f"{_money(plan.est_cost)} ({cap}).\nNothing was spent."
        )
        self._print_needs_model(plan.needs_model, plan.needs_model_groups(), "would skip")
        if plan.cost_cap > 0 and plan.est_cost > plan.cost_cap:
            self.stdout.write(
                self.style.WARNING("The estimate exceeds the cost cap: the run would stop early.")
            )

    def _print_needs_model(self, n: int, groups: list[dict], verb: str) -> None:
        if not n:
            return
        self.stdout.write(f"{n} check{'s' if n != 1 else ''} {verb}: they need a model.")
        for g in groups[:10]:
            where = g["group"] + (f"@{g['phase']}" if g["phase"] else "")
            self.stdout.write(
                f"  {where} ({', '.join(g['rules'])}) on {g['calls']} "
                f"call{'s' if g['calls'] != 1 else ''}: {g['reason']}"
            )

    def _print_summary(self, run) -> None:
        s = judge_run_summary(run)
        duration = f"{s['duration_s']:.1f} s" if s["duration_s"] is not None else "-"
        calls = s["calls_made"]
        self.stdout.write(
            f"Judge run {s['id']} {s['status']} in {duration}: {calls} "
            f"call{'s' if calls != 1 else ''}, {s['cache_hits']} cache hits, "
            f"{s['detector_checks']} detector checks, {s['needs_model']} skipped (need a model), "
            f"tokens {s['tokens_in']:,} in / "
            f"{s['tokens_out']:,} out, cost {_money(s['cost'])}, errors {s['errors']}.\nNew "
            f"verdicts: {s['verdicts']['total']} ({s['verdicts']['flagged']} flagged, "
            f"{s['verdicts']['errored']} errored); verdicts already stored are kept."
        )
        if s["stop_reason"]:
            self.stdout.write(self.style.WARNING(s["stop_reason"]))
        self._print_needs_model(s["needs_model"], judge_run_needs_model(run), "skipped")
        errors = judge_run_errors(run, limit=10)
        for e in errors:
            self.stdout.write(
                f"  error: {e.transcript} {e.group}{'@' + e.phase if e.phase else ''} "
                f"({', '.join(e.rules)}): {e.error}"
            )
        if s["errors"] and len(errors) == 10:
            self.stdout.write("  ... see the run page for the rest.")
