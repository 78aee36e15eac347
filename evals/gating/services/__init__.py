"""Golden sets, gates and gate runs: the writes. The decision itself is pure
(`evals/gating/decision.py`).

- golden_sets: frozen, versioned lists of scenarios and pinned calls.
- gate_config: gates and their metrics (validation, edits, settings).
- gate_yaml: golden sets and gates to and from the team's YAML.
- gate_facts: the facts a run decides on (promoted rules, golden-set calls, verdicts, timings).
- gate_runs: run a gate on a candidate agent version (queued, or here for the CLI) and record it.

The public names are importable from here (`from evals.gating import services as gating`).
"""

from evals.gating.services.errors import GateCannotRun, GateConfigInvalid
from evals.gating.services.gate_config import (
    gate_metric_add,
    gate_metric_delete,
    gate_metric_update,
    gate_save,
    gate_settings_update,
    metric_as_yaml,
    metric_clean,
    metric_limit_field,
)
from evals.gating.services.gate_facts import metric_specs, metric_specs_one, promoted_rules
from evals.gating.services.gate_runs import (
    gate_default_baseline,
    gate_resolve,
    gate_run_evaluate,
    gate_run_finish,
    gate_run_start,
    gate_run_step,
    gate_runs_recover,
    judge_missing_start,
)
from evals.gating.services.gate_yaml import gates_export, gates_import
from evals.gating.services.golden_sets import (
    MemberSpec,
    golden_checksum,
    golden_set_create,
    golden_set_member_specs,
    golden_set_revise,
)

__all__ = [
    "GateCannotRun",
    "GateConfigInvalid",
    "MemberSpec",
    "gate_default_baseline",
    "gate_metric_add",
    "gate_metric_delete",
    "gate_metric_update",
    "gate_resolve",
    "gate_run_evaluate",
    "gate_run_finish",
    "gate_run_start",
    "gate_run_step",
    "gate_runs_recover",
    "gate_save",
    "gate_settings_update",
    "gates_export",
    "gates_import",
    "golden_checksum",
    "golden_set_create",
    "golden_set_member_specs",
    "golden_set_revise",
    "judge_missing_start",
    "metric_as_yaml",
    "metric_clean",
    "metric_limit_field",
    "metric_specs",
    "metric_specs_one",
    "promoted_rules",
]
