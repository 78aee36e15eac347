import json
import time

from django.core.management.base import BaseCommand, CommandError

from evals.catalog.selectors import AgentVersionUnknown, agent_version_resolve
from evals.gating import output as gate_output
from evals.gating.selectors import gate_run_payload
from evals.gating.services import GateCannotRun, gate_resolve, gate_run_evaluate

EXIT_PASS, EXIT_FAIL, EXIT_CANNOT_RUN = 0, 1, 2


class Command(BaseCommand):
    help = (
        "Run a gate on a candidate agent version: judge what is missing, print one "
        "line per metric, exit 0 on pass, 1 on fail, 2 when the gate could not run."
    )

    def add_arguments(self, parser):
        parser.add_argument("--gate", required=True, help="gate name, e.g. release")
        parser.add_argument(
            "--candidate", required=True, help="agent version (VERSION or AGENT:VERSION)"
        )
        parser.add_argument(
            "--baseline", help="agent version to compare with (default: last passing version)"
        )
        parser.add_argument("--format", choices=["table", "json", "junit"], default="table")
        parser.add_argument(
            "--no-judge",
            action="store_true",
            help="do not ask the judge runner for missing verdicts",
        )

    def handle(self, *args, gate, candidate, baseline, format, no_judge, **options):
        started = time.perf_counter()
        try:
            gate_obj = gate_resolve(gate)
            cand = agent_version_resolve(candidate, what="candidate")
            base = agent_version_resolve(baseline, what="baseline") if baseline else None
            # Decided here (not in a worker): the command waits for the judge, then exits.
            run = gate_run_evaluate(
                gate=gate_obj,
                candidate=cand,
                baseline=base,
                by="cli",
                judge_missing_verdicts=not no_judge,
            )
        except (GateCannotRun, AgentVersionUnknown) as e:
            # No run to report: CI still finds the error where it reads the result.
            payload = gate_output.cannot_run_payload(gate=gate, candidate=candidate, error=str(e))
            self._write(payload, format, time.perf_counter() - started)
            raise CommandError(str(e), returncode=EXIT_CANNOT_RUN) from None
        self._write(gate_run_payload(run), format, time.perf_counter() - started)
        if run.status == "error":
            raise CommandError(
                f"gate run #{run.pk} could not run: {run.error}", returncode=EXIT_CANNOT_RUN
            )
        if run.status != "pass":
            raise SystemExit(EXIT_FAIL)

    def _write(self, payload: dict, format: str, seconds: float) -> None:
        if format == "json":
            self.stdout.write(json.dumps(payload, indent=2))
        elif format == "junit":
            self.stdout.write(gate_output.as_junit(payload, seconds=seconds))
        elif payload["id"] is not None:  # a table for a run; without one, the error line says it
            self.stdout.write(gate_output.as_table(payload))
