"""The conversation judge: one LLM call per transcript over the whole call; and an agent's plan."""

from decimal import Decimal

from django.core.management.base import CommandError

from core.errors import DomainError
from evals.conversation.selectors import conversation_scores_for_run, finding_label
from evals.conversation.services import agent_plan_set, conversation_judge_create
from evals.judging.management.commands.judge import Command as JudgeCommand
from evals.judging.selectors.runs import judge_run_get
from evals.judging.services.runs import JudgeRunPlan


class Command(JudgeCommand):
    help = (
        "`run`: judge whole transcripts (did the call follow its plan, did the agent drift): one "
        "LLM call each, a 1-10 score and named findings with turns, cached. `plan AGENT PHASES`: "
        "set the phases an agent's calls go through, in order (comma-separated)."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        run = sub.add_parser("run", help="judge transcripts")
        run.add_argument("--agent-version", metavar="[AGENT:]VERSION")
        run.add_argument("--transcript", action="append", default=[], metavar="ID")
        run.add_argument("--dry-run", action="store_true")
        run.add_argument(
            "--cost-cap", type=Decimal, help="USD to stop at (default JUDGE_COST_CAP_USD)"
        )
        run.add_argument("--no-wait", action="store_true")
        plan = sub.add_parser("plan", help="set an agent's conversation plan")
        plan.add_argument("agent")
        plan.add_argument("phases", help="comma-separated, in order: opening,background,closing")

    def handle(self, *args, **opts):
        try:
            if opts["action"] == "plan":
                agent = agent_plan_set(agent=opts["agent"], phases=opts["phases"].split(","))
                self.stdout.write(
                    f"{agent.name}: plan {' → '.join(agent.conversation_plan) or '(none)'}"
                )
                return
            result = conversation_judge_create(
                transcript_ids=opts["transcript"] or None,
                agent_version=opts["agent_version"],
                started_by="cli",
                dry_run=opts["dry_run"],
                cost_cap=opts["cost_cap"],
            )
        except DomainError as exc:  # JudgeRunInvalid, an unknown agent version
            raise CommandError(str(exc)) from None
        if isinstance(result, JudgeRunPlan):
            self._print_plan(result)
            return
        self._finish(result, opts)

    def _print_summary(self, run) -> None:
        super()._print_summary(run)
        run = judge_run_get(run.pk)
        for s in conversation_scores_for_run(run):
            if s.error:
                self.stdout.write(f"  {s.transcript.external_id}  error: {s.error}")
                continue
            findings = " ".join(finding_label(f) for f in s.findings) or "no findings"
            self.stdout.write(f"  {s.transcript.external_id}  {s.score}/10  {findings}")
