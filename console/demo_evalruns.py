"""The demo's eval runs (a load_demo step): a tool_selection dataset, two versions of a booking
agent's recorded calls on it, and one finished run for each, the second regressed.

`make run` has no LLM, so the judge's answers come from demo/evalruns/judge_answers.json: they are
put in the judge cache under the very keys a run asks for, and the runs then score every row from
the cache, through the same code as a run against a real judge.
"""

import json
from pathlib import Path

from evals.catalog.selectors import agent_version_resolve
from evals.catalog.services.importing import transcripts_import
from evals.evalruns.models import EvalRun
from evals.evalruns.services import dataset_import, eval_run_create, eval_run_execute
from evals.evalruns.services import rubrics as rb
from evals.evalruns.services.runs import recorded_judge_requests
from evals.judging.client import judge_settings
from evals.judging.models import JudgeCacheEntry


def demo_evalruns_load(demo_dir: Path) -> str:
    """Import the dataset and the recorded calls, and score each demo version once."""
    base = demo_dir / "evalruns"
    spec = json.loads((base / "judge_answers.json").read_text(encoding="utf-8"))
    with (base / "dataset.jsonl").open("rb") as handle:
        dataset, _ = dataset_import(
            lines=handle,
            name=spec["dataset"],
            source="dataset.jsonl",
            description="Which tools a booking assistant should call, and when none.",
            by="demo",
        )
    with (base / "trajectories.jsonl").open("rb") as handle:
        transcripts_import(lines=handle, source="trajectories.jsonl")
    model = judge_settings().model
    made = []
    for version_name, answers in spec["answers"].items():
        version = agent_version_resolve(f"{spec['agent']}:{version_name}")
        if EvalRun.objects.filter(
            dataset=dataset, agent_version=version, rubric=spec["rubric"]
        ).exists():
            continue
        requests = recorded_judge_requests(
            dataset=dataset,
            agent_version=version,
            rubric=spec["rubric"],
            rubric_text="",
            model=model,
        )
        for row_id, request in requests.items():
            answer = rb.answer_with_tools_named(rb.RubricAnswer(**answers[row_id]))
            JudgeCacheEntry.objects.get_or_create(
                key=request.key,
                defaults={
                    "model": model,
                    "prompt_version": rb.PROMPT_VERSION,
                    "answer": answer.as_dict(),
                },
            )
        run = eval_run_create(
            dataset=dataset,
            agent_version=version,
            rubric=spec["rubric"],
            recorded=True,
            started_by="demo",
        )
        run = eval_run_execute(run_id=run.pk)
        made.append(f"{version_name} {run.pass_rate:.0f}%{' (regressed)' if run.regressed else ''}")
    if not made:
        return f"{dataset}: runs already there"
    return f"{dataset} ({dataset.rows_count} rows): tool_selection runs " + ", ".join(made)
