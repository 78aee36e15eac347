import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from evals.trajectories import output as axes_output
from evals.trajectories.services.reports import (
    axes_agent_version,
    axes_report_create,
    axes_report_payload,
    expectations_parse,
)

EXIT_PASS, EXIT_FLAGGED, EXIT_CANNOT_RUN = 0, 1, 2


class Command(BaseCommand):
    help = (
        "Score an agent version's trajectories on three axes (task success, tool correctness, "
        "faithfulness), per task and overall; store the report and compare it with the agent's "
        "last green report: exit 1 when an axis's pass rate dropped more than --max-drop."
    )

    def add_arguments(self, parser):
        parser.add_argument("--agent", required=True, help="agent name, e.g. tau-airline")
        parser.add_argument("--agent-version", required=True, help="the version to score")
        parser.add_argument("--format", choices=["table", "json", "junit"], default="table")
        parser.add_argument(
            "--max-drop",
            type=float,
            default=None,
            help="largest allowed drop of an axis's pass rate, absolute (default "
            "DOCKET_AXES_MAX_DROP, 0.05 = five points)",
        )
        parser.add_argument(
            "--expectations",
            help="JSON Lines file of expected calls and checklists, one task a line",
        )
        parser.add_argument(
            "--faithfulness",
            action="store_true",
            help="also score faithfulness with the judge (one cached call per trajectory)",
        )
        parser.add_argument(
            "--rows", action="store_true", help="with --format json: every trajectory's result"
        )

    def handle(self, *args, agent, agent_version, format, max_drop, expectations, **options):
        started = time.perf_counter()
        try:
            version = axes_agent_version(agent, agent_version)
            expected = None
            if expectations:
                with Path(expectations).open("rb") as f:
                    expected = expectations_parse(f, source=Path(expectations).name)
            report = axes_report_create(
                agent_version=version,
                max_drop=max_drop,
                expectations=expected,
                faithfulness=options["faithfulness"],
                by="cli",
            )
        except (DomainError, OSError) as e:
            raise CommandError(str(e), returncode=EXIT_CANNOT_RUN) from None
        payload = axes_report_payload(report, rows=options["rows"])
        if format == "json":
            self.stdout.write(json.dumps(payload, indent=2))
        elif format == "junit":
            self.stdout.write(axes_output.as_junit(payload, seconds=time.perf_counter() - started))
        else:
            self.stdout.write(axes_output.as_table(payload))
        if not report.passed:
            raise SystemExit(EXIT_FLAGGED)
