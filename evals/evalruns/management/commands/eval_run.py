"""Score an agent version on a dataset under a rubric; exit 1 when the pass rate regressed."""

import json
from decimal import Decimal

from django.core.management.base import BaseCommand, CommandError
from django.core.serializers.json import DjangoJSONEncoder

from core.errors import DomainError
from evals.catalog.selectors import agent_version_resolve
from evals.evalruns.selectors import eval_run_get, eval_run_payload
from evals.evalruns.services import (
    RUBRIC_NAMES,
    EvalRunPlan,
    dataset_resolve,
    eval_run_create,
    eval_run_execute,
)

EXIT_REGRESSED = 1
REASON_SHOWN = 110


class Command(BaseCommand):
    help = (
        "Run an agent version over a dataset and have the judge score each row 0-100 under a "
        "rubric; print each row and the pass rate against the last green run of the same dataset "
        "and agent. Exit 1 when the pass rate dropped by more than --max-drop points (or nothing "
        "could be scored). --dry-run prints the calls and the estimated cost and spends nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, metavar="NAME[@VERSION]")
        parser.add_argument("--agent-version", required=True, metavar="[AGENT:]VERSION")
        parser.add_argument("--rubric", required=True, choices=RUBRIC_NAMES)
        parser.add_argument("--rubric-text", default="", help="the text of a custom rubric")
        parser.add_argument("--threshold", type=int, default=70, help="pass at or above (0-100)")
        parser.add_argument("--concurrency", type=int, help="rows at once (EVAL_CONCURRENCY)")
        parser.add_argument(
            "--recorded",
            action="store_true",
            help="score the agent version's recorded transcripts (scenario = row id) instead of "
            "calling the agent",
        )
        parser.add_argument("--cost-cap", type=Decimal, help="USD (default EVAL_COST_CAP_USD)")
        parser.add_argument(
            "--max-drop", type=float, help="pass-rate points that may be lost (EVAL_MAX_DROP)"
        )
        parser.add_argument("--dry-run", action="store_true", help="estimate; spend nothing")
        parser.add_argument("--format", choices=["table", "json"], default="table")

    def handle(self, *args, **o):
        try:
            dataset = dataset_resolve(o["dataset"])
            version = agent_version_resolve(o["agent_version"], what="agent_version")
            result = eval_run_create(
                dataset=dataset,
                agent_version=version,
                rubric=o["rubric"],
                rubric_text=o["rubric_text"],
                threshold=o["threshold"],
                concurrency=o["concurrency"],
                recorded=o["recorded"],
                cost_cap=o["cost_cap"],
                max_drop=o["max_drop"],
                dry_run=o["dry_run"],
                started_by="cli",
            )
        except DomainError as exc:
            raise CommandError(str(exc), returncode=2) from None
        if isinstance(result, EvalRunPlan):
            self._plan(result, o["format"])
            return
        eval_run_execute(run_id=result.pk)
        payload = eval_run_payload(eval_run_get(result.pk))
        if o["format"] == "json":
            self.stdout.write(json.dumps(payload, indent=2, cls=DjangoJSONEncoder))
        else:
            self._table(payload)
        if payload["regressed"] or not payload["rows_scored"]:
            raise SystemExit(EXIT_REGRESSED)

    def _plan(self, plan: EvalRunPlan, fmt: str) -> None:
        if fmt == "json":
            self.stdout.write(json.dumps(plan.as_dict(), indent=2))
            return
        agent = (
            f"{plan.agent_calls} agent call(s) to {plan.agent_model}, " if plan.agent_calls else ""
        )
        self.stdout.write(
            f"Dry run: {plan.rows} rows of {plan.dataset}, rubric {plan.rubric}: {agent}"
            f"{plan.judge_calls} judge call(s) to {plan.judge_model}; about {plan.est_tokens_in:,} "
            f"tokens in and {plan.est_tokens_out:,} out, estimated ${plan.est_cost:.4f} "
            f"(cap ${plan.cost_cap:.2f})."
        )
        if plan.missing_recorded:
            self.stdout.write(
                f"{len(plan.missing_recorded)} row(s) have no recorded output and would error: "
                + ", ".join(plan.missing_recorded[:10])
            )

    def _table(self, p: dict) -> None:
        w = self.stdout.write
        w(
            f"Eval run #{p['id']}: {p['agent']}:{p['agent_version']} on {p['dataset']} "
            f"v{p['dataset_version']}, rubric {p['rubric']}, pass at {p['threshold']}"
        )
        for r in p["rows"]:
            if r["outcome"] == "scored":
                mark = "PASS" if r["passed"] else "FAIL"
                text = r["reason"]
                head = f"{r['score']:>3} {mark}"
            else:
                head, text = f"  - {r['outcome'].upper()}", r["error"] or ""
            if len(text) > REASON_SHOWN:
                text = text[: REASON_SHOWN - 1] + "…"
            w(f"  {r['row']:<24} {head}  {text}")
        rate = "–" if p["pass_rate"] is None else f"{p['pass_rate']:.1f}%"
        mean = "–" if p["mean_score"] is None else f"{p['mean_score']:.1f}"
        w(
            f"{p['status']}: {p['rows_scored']} scored, {p['rows_passed']} passed, "
            f"{p['rows_errored']} errored (left out), {p['rows_skipped']} skipped; "
            f"pass rate {rate}, mean score {mean}, cost ${Decimal(p['cost']):.4f}"
        )
        if p["stop_reason"]:
            w(p["stop_reason"])
        b = p["baseline"]
        if b is None:
            w("No green run of this dataset and agent to compare with yet.")
        else:
            verdict = "REGRESSED" if p["regressed"] else "ok"
            w(
                f"Against run #{b['id']} ({b['agent_version']}, pass rate {b['pass_rate']:.1f}%): "
                f"drop {p['pass_rate_drop']:+.1f} points (max {p['max_drop']:g}): {verdict}"
                if p["pass_rate_drop"] is not None
                else f"Against run #{b['id']}: no pass rate to compare"
            )
        if not p["rows_scored"]:
            w("No row could be scored.")
