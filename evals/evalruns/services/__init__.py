"""Dataset evals: datasets of rows, and eval runs that score an agent version on one under a
rubric (LLM-judged, 0-100, pass at a threshold), compared with the last green run.

- datasets: import JSON Lines rows as a versioned, checksummed dataset.
- rubrics: the rubric judge's prompt, schema and answer (pure).
- agent: the agent under test, one chat-completions call with its instructions and tools.
- runs: plan, record, execute and compare runs.
"""

from evals.evalruns.services.datasets import dataset_checksum, dataset_import, dataset_resolve
from evals.evalruns.services.rubrics import RUBRIC_NAMES
from evals.evalruns.services.runs import (
    EvalRunInvalid,
    EvalRunPlan,
    eval_run_baseline,
    eval_run_create,
    eval_run_execute,
    eval_run_fail,
    eval_run_finished,
    eval_run_plan,
    eval_runs_recover,
    pass_rate_drop,
)

__all__ = [
    "RUBRIC_NAMES",
    "EvalRunInvalid",
    "EvalRunPlan",
    "dataset_checksum",
    "dataset_import",
    "dataset_resolve",
    "eval_run_baseline",
    "eval_run_create",
    "eval_run_execute",
    "eval_run_fail",
    "eval_run_finished",
    "eval_run_plan",
    "eval_runs_recover",
    "pass_rate_drop",
]
