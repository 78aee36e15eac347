"""Scoring the 200 tau-bench airline trajectories on the axes: how long a report takes.

Imports ../shared/datasets/tau-bench-airline/gpt-4o-airline.json into a throwaway SQLite database,
then times, five times each: the pure scoring alone (evals.trajectories.axes over trajectories
already read), reading and scoring (axes_rows), and a whole stored report (axes_report_create:
read, score, compare, store), and prints the stored report's size.

    .venv/bin/python bench/trajectory_axes.py
"""

import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from support import ROOT, django_setup

TAU = ROOT.parent / "shared" / "datasets" / "tau-bench-airline" / "gpt-4o-airline.json"
REPEAT = 5


def timed(work) -> list[float]:
    out = []
    for _ in range(REPEAT):
        started = time.perf_counter()
        work()
        out.append((time.perf_counter() - started) * 1000)
    return out


def child() -> None:
    django_setup(migrate=True)
    from django.core.management import call_command

    from evals.trajectories import axes
    from evals.trajectories.models import AxesReport
    from evals.trajectories.services.reports import (
        agent_version_transcripts,
        axes_agent_version,
        axes_report_create,
        axes_rows,
        expectation_of,
        trajectory_of,
    )

    call_command(
        "import_transcripts",
        str(TAU),
        "--agent",
        "tau-airline",
        "--agent-version",
        "gpt-4o",
        stdout=io.StringIO(),
    )
    av = axes_agent_version("tau-airline", "gpt-4o")
    read = []
    for t in agent_version_transcripts(av):
        traj = trajectory_of(t, list(t.turns.all()))
        read.append((traj, expectation_of(t, traj.task, None)))

    def pure():
        rows = [
            {
                "id": tr.id,
                "task": tr.task,
                "task_success": axes.task_success(tr, ex),
                "tool_correctness": axes.tool_correctness(tr.calls, ex),
                "faithfulness": None,
            }
            for tr, ex in read
        ]
        axes.axes_summarize(rows)

    figures = {
        "pure scoring + summary": timed(pure),
        "read + score (axes_rows)": timed(lambda: axes_rows(agent_version=av)),
        "whole report, stored": timed(lambda: axes_report_create(agent_version=av)),
    }
    print(f"{len(read)} tau-bench airline trajectories, {REPEAT} runs each (ms):")
    for name, ms in figures.items():
        print(f"  {name:28} median {statistics.median(ms):8.1f}  min {min(ms):8.1f}")
    report = AxesReport.objects.order_by("-pk").first()
    size = len(json.dumps(report.results))
    print(
        f"  stored report: {size / 1024:.0f} KiB of JSON ({size // len(read)} bytes a trajectory)"
    )


def main() -> None:
    if not TAU.exists():
        print(f"bench/trajectory_axes.py needs {TAU}", file=sys.stderr)
        sys.exit(2)
    if "--child" in sys.argv:
        child()
        return
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")
        }
        env.update(DJANGO_DEBUG="1", DOCKET_VAR_DIR=tmp, DOCKET_LOG_LEVEL="WARNING")
        subprocess.run([sys.executable, __file__, "--child"], env=env, cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
