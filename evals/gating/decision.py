"""Pure gate decisions: facts about a candidate's golden-set calls in, per-metric results out.

No Django here, nor any other app's code: the service (`evals/gating/services/gate_runs.py`)
gathers the facts from the database, this module decides. Rules of the decision:

- All metrics must pass. Each has one threshold (or, for judge scores, one tolerance).
- `safety_ceiling`: one flagged verdict of a safety rule (or of the named rule) fails.
- `violation_rate`: flagged checks / checks for one rule or one group, at most `threshold`.
- `detector_metric`: a measure over turn timings (see MEASURES), at most `threshold`.
- `judge_score_regression`: the mean per-call score (over one rule, one group, or every gated
  non-safety rule: safety rules have their ceiling) must not be worse than the baseline's by
  more than `tolerance`. With no baseline at all (the first run) there is nothing to regress
  against and the metric passes with a note; a named baseline with missing data fails.
- The layers above gating add kinds of their own (`metric_kind_register`, from their
  AppConfig.ready()): `conversation_score` (evals.conversation.gate_metrics),
  `decision_accuracy` and `decision_accuracy_regression` (evals.decisions.gate_metrics),
  `eval_pass_rate` (evals.evalruns.gate_metrics). Their facts come in `CallFacts.layers` (per
  call) and `MetricInput.candidate_layers` / `baseline_layers` (per agent version), keyed by the
  layer's name; this module reads none of them.
- Missing data never passes: a golden scenario with no call, a golden set whose checksum no
  longer matches, a pinned call that changed, a call without a verdict (or with an errored one)
  for a gated rule, or a rule without a promoted version fails and says which.

Noise: every metric carries a 95% interval on its value's scale (Wilson for rates and counts
of flagged checks, normal approximation for means, a distribution-free order-statistic interval
for percentiles, a Poisson approximation for event counts). Two runs' values "moved more than
the noise" when their intervals do not overlap (`moved`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from core.stats import count_interval, mean_interval, percentile, percentile_interval
from core.stats import wilson_interval as wilson
from evals.rules.detectors import DETECTORS

SAFETY_CEILING = "safety_ceiling"
VIOLATION_RATE = "violation_rate"
DETECTOR_METRIC = "detector_metric"
JUDGE_SCORE_REGRESSION = "judge_score_regression"

# How much a flagged verdict weighs in a judge score, by severity (the one copy).
SEVERITY_WEIGHT = {"minor": 1, "major": 3, "critical": 10}

# Judge scores: lower is better for weighted violations, higher is better for the 0-100 score.
WEIGHTED_VIOLATIONS = "weighted_violations"
SCORE_0_100 = "score"
SCORES = {
    WEIGHTED_VIOLATIONS: "mean severity-weighted violations per call",
    SCORE_0_100: "mean 0-100 score",
}

# The detectors' own defaults, so a gate measures talk-over and low ASR as the detectors flag them.
TALK_OVER_MS = DETECTORS["talk_over"].params["max_overlap_ms"]
ASR_FLOOR = DETECTORS["asr_confidence_floor"].params["min"]
LIST_LIMIT = 8  # problems of one kind listed before "and N more"


# ---- facts in --------------------------------------------------------------------------------


@dataclass(frozen=True)
class GatedRule:
    """A rule and the promoted version the gate uses (`version` None: no promoted version)."""

    rule: str
    group: str
    version: int | None
    safety: bool = False
    severity: str = "major"
    rule_version_id: int | None = None

    @property
    def label(self) -> str:
        return f"{self.rule} v{self.version}" if self.version else self.rule


@dataclass(frozen=True)
class VerdictFact:
    """The gate judge's verdict on one call for one gated rule version."""

    flagged: bool
    turns: tuple[int, ...] = ()
    severity: str = ""
    error: str = ""
    ref: int | None = None  # verdict id, for links


@dataclass(frozen=True)
class TurnTiming:
    index: int
    speaker: str
    start_ms: int | None = None
    end_ms: int | None = None
    asr_confidence: float | None = None


@dataclass(frozen=True)
class CallFacts:
    """One golden-set call of an agent version: its verdicts keyed by rule id, its turn timings,
    and the facts of the layers above gating (layer name -> that layer's fact about the call)."""

    call: str
    scenario: str
    verdicts: Mapping[str, VerdictFact] = field(default_factory=dict)
    turns: tuple[TurnTiming, ...] = ()
    layers: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MemberFact:
    """A golden-set member; a pinned call carries its
    pinned and its current checksum (None: gone)."""

    scenario: str
    pinned_call: str = ""
    pinned_checksum: str = ""
    current_checksum: str | None = None


@dataclass(frozen=True)
class GoldenFacts:
    name: str
    checksum: str  # frozen at creation
    current_checksum: str  # recomputed from the members now
    members: tuple[MemberFact, ...]


@dataclass(frozen=True)
class MetricSpec:
    kind: str
    rule: str = ""
    group: str = ""
    measure: str = ""
    threshold: float | None = None
    tolerance: float | None = None

    @property
    def label(self) -> str:
        kind = METRIC_KINDS.get(self.kind)
        return kind.label(self) if kind else self.kind


# ---- results out -----------------------------------------------------------------------------


@dataclass
class Evidence:
    """A call and turn behind a failure, and the verdict that says so when there is one."""

    call: str
    turn: int | None = None
    rule: str = ""
    verdict: int | None = None
    note: str = ""


@dataclass
class MetricResult:
    label: str
    kind: str
    passed: bool
    value: float | None = None
    threshold: float | None = None
    tolerance: float | None = None
    baseline: float | None = None
    n: int = 0
    interval: tuple[float, float] | None = None
    baseline_interval: tuple[float, float] | None = None
    rules: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    note: str = ""
    spec: dict = field(default_factory=dict)
    noise: dict = field(default_factory=dict)  # paired differences against the baseline


@dataclass
class GateDecision:
    passed: bool
    problems: list[str]
    metrics: list[MetricResult]

    def to_dict(self) -> dict:
        return {
            "passed": self.passed,
            "problems": list(self.problems),
            "metrics": [asdict(m) for m in self.metrics],
        }


# ---- small maths -----------------------------------------------------------------------------


def listed(items: list[str]) -> list[str]:
    """The first LIST_LIMIT problems, and how many more."""
    if len(items) <= LIST_LIMIT:
        return items
    return items[:LIST_LIMIT] + [f"… and {len(items) - LIST_LIMIT} more"]


# ---- detector measures -----------------------------------------------------------------------


def _spoken(turns: Iterable[TurnTiming]) -> list[TurnTiming]:
    return sorted((t for t in turns if t.speaker in ("agent", "user")), key=lambda t: t.index)


def _silences(call: CallFacts) -> list[tuple[float, int]]:
    """(gap ms, agent turn) for every agent turn: time since the previous spoken turn ended."""
    out, prev_end = [], None
    for t in _spoken(call.turns):
        if t.speaker == "agent" and t.start_ms is not None and prev_end is not None:
            out.append((float(max(0, t.start_ms - prev_end)), t.index))
        if t.end_ms is not None:
            prev_end = t.end_ms if prev_end is None else max(prev_end, t.end_ms)
    return out


def _response_times(call: CallFacts) -> list[tuple[float, int]]:
    out, prev = [], None
    for t in _spoken(call.turns):
        if (
            t.speaker == "agent"
            and prev is not None
            and prev.speaker == "user"
            and prev.end_ms is not None
            and t.start_ms is not None
        ):
            out.append((float(max(0, t.start_ms - prev.end_ms)), t.index))
        prev = t
    return out


def _talk_overs(call: CallFacts) -> list[tuple[float, int]]:
    users = [
        t
        for t in call.turns
        if t.speaker == "user" and t.start_ms is not None and t.end_ms is not None
    ]
    out = []
    for a in call.turns:
        if a.speaker != "agent" or a.start_ms is None or a.end_ms is None:
            continue
        worst = max(
            (min(a.end_ms, u.end_ms) - max(a.start_ms, u.start_ms) for u in users), default=0
        )
        if worst > TALK_OVER_MS:
            out.append((float(worst), a.index))
    return out


def _timed(call: CallFacts) -> bool:
    return any(t.start_ms is not None and t.end_ms is not None for t in call.turns)


def _low_asr(call: CallFacts) -> list[tuple[float, int]]:
    return [
        (t.asr_confidence, t.index)
        for t in call.turns
        if t.asr_confidence is not None and t.asr_confidence < ASR_FLOOR
    ]


# name -> (description, per-call observations, how they aggregate, needs timings)
MEASURES = {
    "silence_p95_ms": ("p95 silence before an agent turn (ms)", _silences, "p95", True),
    "silence_max_ms": ("longest silence before an agent turn (ms)", _silences, "max", True),
    "response_time_p95_ms": ("p95 user-end to agent-start (ms)", _response_times, "p95", True),
    "talk_over_count": (
        f"agent turns overlapping the user by more than {TALK_OVER_MS} ms",
        _talk_overs,
        "count",
        True,
    ),
    "low_asr_turns": (f"turns under ASR confidence {ASR_FLOOR}", _low_asr, "count", False),
}


def _measure(
    spec: MetricSpec, calls: Sequence[CallFacts]
) -> tuple[float | None, tuple | None, list, list[str], int]:
    """Return (value, interval, [(call, observation, turn)], problems, n) for a detector measure."""
    _, observe, agg, needs_timing = MEASURES[spec.measure]
    problems = []
    if needs_timing:
        untimed = [c.call for c in calls if not _timed(c)]
        problems += [f"call {c}: no turn timings to measure {spec.measure}" for c in untimed]
    obs = [(c.call, v, i) for c in calls for v, i in observe(c)]
    values = [v for _, v, _ in obs]
    if agg == "count":
        return float(len(obs)), count_interval(len(obs)), obs, problems, len(calls)
    if not values:
        problems.append(f"no observations of {spec.measure} in the golden-set calls")
        return None, None, obs, problems, 0
    if agg == "max":
        return max(values), None, obs, problems, len(values)
    return percentile(values, 95), percentile_interval(values, 95), obs, problems, len(values)


# ---- scopes and checks -----------------------------------------------------------------------


def metric_rules(
    spec: MetricSpec, rules: Mapping[str, GatedRule]
) -> tuple[list[GatedRule], list[str], str]:
    """Return (the gated rules a metric counts, problems that stop it, a note on rules left out).

    A rule the metric names must have a promoted version. A group (or, by the kind's scope,
    every safety rule or every non-safety rule) counts its rules' promoted versions; rules still
    without one are left out and named in the note, and a scope with no promoted rule at all is a
    problem.
    """
    kind = METRIC_KINDS[spec.kind]
    if kind.scope == NO_RULES:
        return [], [], ""
    if spec.rule:
        rule = rules.get(spec.rule)
        if rule is None:
            return [], [f"rule {spec.rule}: unknown or retired"], ""
        if rule.version is None:
            return (
                [],
                [
                    (
                        f"rule {spec.rule}: no promoted version "
                        "(promote one, or take it out of the gate)"
                    )
                ],
                "",
            )
        return [rule], [], ""
    if kind.scope == SAFETY_RULES:
        members, empty = (
            [r for r in rules.values() if r.safety],
            "no promoted safety rule to hold at zero",
        )
    elif spec.group:
        members, empty = (
            [r for r in rules.values() if r.group == spec.group],
            f"group {spec.group}: no promoted rule",
        )
    elif kind.scope == RULE_OR_GROUP:
        return [], [f"a {kind.name.replace('_', ' ')} needs a rule or a group"], ""
    else:
        # Safety rules are held at zero by their ceiling; the fuzzy score averages the other rules.
        members, empty = [r for r in rules.values() if not r.safety], "no promoted rule to score"
    scope = sorted((r for r in members if r.version is not None), key=lambda r: r.rule)
    left_out = sorted(r.rule for r in members if r.version is None)
    note = f"left out (no promoted version): {', '.join(left_out)}" if left_out else ""
    return scope, ([] if scope else [empty]), note


def _checks(
    scope: list[GatedRule], calls: Sequence[CallFacts], who: str = ""
) -> tuple[list, list[str]]:
    """Return ([(call, rule, verdict)] usable checks, problems for missing or errored verdicts)."""
    checks, missing = [], []
    for c in calls:
        for r in scope:
            v = c.verdicts.get(r.rule)
            if v is None:
                missing.append(f"{who}call {c.call} ({c.scenario}): no verdict for {r.label}")
            elif v.error:
                missing.append(f"{who}call {c.call} ({c.scenario}): verdict for {r.label} errored")
            else:
                checks.append((c, r, v))
    return checks, listed(missing)


def _flag_evidence(checks) -> list[Evidence]:
    out = []
    for c, r, v in checks:
        if v.flagged:
            for t in v.turns or (None,):
                out.append(Evidence(call=c.call, turn=t, rule=r.label, verdict=v.ref))
    return out


def _call_score(measure: str, c: CallFacts, scope: list[GatedRule]) -> float:
    weights = {r.rule: SEVERITY_WEIGHT.get(r.severity, 3) for r in scope}
    flagged = 0.0
    total = 0.0
    for r in scope:
        v = c.verdicts[r.rule]
        w = SEVERITY_WEIGHT.get(v.severity, weights[r.rule]) if v.flagged else weights[r.rule]
        total += weights[r.rule]
        if v.flagged:
            flagged += w
    if measure == SCORE_0_100:
        return 100.0 * max(0.0, 1 - flagged / total) if total else 100.0
    return flagged


# ---- metric kinds ----------------------------------------------------------------------------
#
# Each kind of metric is one MetricKind in METRIC_KINDS: the YAML fields it takes (checked by
# evals.gating.services.metric_clean, offered by the gate page's form) and one pure function that
# decides it. To add a kind, write `def my_kind(inp: MetricInput) -> Outcome` and register its
# MetricKind with `metric_kind_register` from the app's ready(); a kind that reads facts of its
# own layer registers a gate source for them too (evals.gating.registry).

# Which gated rules a kind counts (MetricInput.scope).
NO_RULES = "none"  # it reads no verdicts of rules (detector measures over timings)
SAFETY_RULES = "safety"  # the named rule, or every safety rule
RULE_OR_GROUP = "rule_or_group"  # the named rule or group: one of them is required
NON_SAFETY_RULES = "non_safety"  # the named rule or group, else every non-safety rule


@dataclass(frozen=True)
class MetricInput:
    """What a kind's evaluate function decides on."""

    spec: MetricSpec
    scope: list[GatedRule]  # the gated rules it counts (see the kind's `scope`)
    candidate: list[CallFacts]  # the candidate's golden-set calls, in scenario order
    baseline: list[CallFacts] | None  # the baseline's, or None when there is no baseline
    scenarios: list[str]  # the golden set's scenarios
    # Facts of the layers above gating about each agent version (layer name -> facts): the
    # candidate's, and the baseline's (None when there is no baseline).
    candidate_layers: Mapping[str, Any] = field(default_factory=dict)
    baseline_layers: Mapping[str, Any] | None = None


@dataclass
class Outcome:
    """What a kind's evaluate function returns; `passed` is overruled by any problem."""

    passed: bool
    value: float | None = None
    interval: tuple[float, float] | None = None
    n: int = 0
    baseline: float | None = None
    baseline_interval: tuple[float, float] | None = None
    problems: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    note: str = ""
    noise: dict = field(default_factory=dict)


@dataclass(frozen=True)
class MetricKind:
    """One kind of gate metric: the YAML fields it takes and the pure function that decides it."""

    name: str
    title: str  # how the gate page names it
    evaluate: Callable[[MetricInput], Outcome]
    label: Callable[[MetricSpec], str]
    # YAML fields beside `kind`: rule, group, measure or score (the spec's `measure`), max (the
    # spec's `threshold`) and tolerance. `required` must be given; `help` says what each means.
    fields: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    help: Mapping[str, str] = field(default_factory=dict)  # also "max_at_most": why
    options: Mapping[str, str] = field(default_factory=dict)  # measure/score -> description
    default_option: str = ""  # the score when the YAML leaves it out
    scope: str = NO_RULES
    max_at_most: float | None = None  # e.g. 1 for a rate
    fixed_threshold: float | None = None  # e.g. 0 for a ceiling, not configurable
    # A field naming something of the kind's own layer (a decision kind: "decision"), kept in the
    # spec's `measure`; `names()` lists the known ones (its layer reads them; None: any name).
    named: str = ""
    names: Callable[[], Iterable[str]] | None = None


def _flag_counts(inp: MetricInput, calls, who=""):
    checks, problems = _checks(inp.scope, calls, who)
    return checks, sum(1 for _, _, v in checks if v.flagged), problems


def _safety_ceiling(inp: MetricInput) -> Outcome:
    """One flagged verdict of a safety rule (or of the named rule) fails."""
    checks, flagged, problems = _flag_counts(inp, inp.candidate)
    n, w = len(checks), wilson(flagged, len(checks))
    out = Outcome(
        passed=flagged == 0,
        value=float(flagged),
        interval=(w[0] * n, w[1] * n) if w else None,
        n=n,
        problems=problems,
    )
    if inp.baseline is not None:
        bchecks, bflagged, _ = _flag_counts(inp, inp.baseline, "baseline ")
        bw = wilson(bflagged, len(bchecks))
        out.baseline = float(bflagged)
        out.baseline_interval = (bw[0] * len(bchecks), bw[1] * len(bchecks)) if bw else None
    if not out.passed:
        out.evidence = _flag_evidence(checks)
    return out


def _rate(inp: MetricInput, calls, who=""):
    checks, flagged, problems = _flag_counts(inp, calls, who)
    if not checks:
        return None, None, 0, checks, problems + ["no verdicts to count"]
    return flagged / len(checks), wilson(flagged, len(checks)), len(checks), checks, problems


def _violation_rate(inp: MetricInput) -> Outcome:
    """Flagged checks / checks for one rule or group, at most `max`."""
    value, interval, n, checks, problems = _rate(inp, inp.candidate)
    out = Outcome(passed=False, value=value, interval=interval, n=n, problems=problems)
    if inp.baseline is not None:
        out.baseline, out.baseline_interval, *_ = _rate(inp, inp.baseline, "baseline ")
    if value is None:
        return out
    out.passed = inp.spec.threshold is not None and value <= inp.spec.threshold
    if not out.passed:
        out.evidence = _flag_evidence(checks)
    return out


def _detector_metric(inp: MetricInput) -> Outcome:
    """A measure over the golden-set calls' turn timings (see MEASURES), at most `max`."""
    spec = inp.spec
    value, interval, obs, problems, n = _measure(spec, inp.candidate)
    out = Outcome(passed=False, value=value, interval=interval, n=n, problems=problems)
    if inp.baseline is not None:
        out.baseline, out.baseline_interval, *_ = _measure(spec, inp.baseline)
    if value is None:
        return out
    out.passed = spec.threshold is not None and value <= spec.threshold
    if not out.passed:
        out.evidence = [
            Evidence(call=c, turn=t, note=f"{v:g}")
            for c, v, t in obs
            if spec.threshold is None or v > spec.threshold or MEASURES[spec.measure][2] == "count"
        ]
    return out


def _scores(inp: MetricInput, calls, who=""):
    """Return (mean, interval, n, problems, per-scenario scores) of the judge score over calls."""
    _, problems = _checks(inp.scope, calls, who)
    complete = [
        c
        for c in calls
        if all(r.rule in c.verdicts and not c.verdicts[r.rule].error for r in inp.scope)
    ]
    measure = inp.spec.measure or WEIGHTED_VIOLATIONS
    scores = {c.scenario: _call_score(measure, c, inp.scope) for c in complete}
    if not scores:
        return None, None, 0, problems + [f"{who}no call with every verdict to score"], scores
    vals = list(scores.values())
    return sum(vals) / len(vals), mean_interval(vals), len(vals), problems, scores


def _judge_score_regression(inp: MetricInput) -> Outcome:
    """The mean per-call judge score may be worse than the baseline's by at most `tolerance`."""
    spec = inp.spec
    value, interval, n, problems, scores = _scores(inp, inp.candidate)
    out = Outcome(passed=False, value=value, interval=interval, n=n, problems=problems)
    base_scores: dict = {}
    if inp.baseline is not None:
        out.baseline, out.baseline_interval, _, bproblems, base_scores = _scores(
            inp, inp.baseline, "baseline "
        )
        present = {c.scenario for c in inp.baseline}
        out.problems += listed(
            [
                f"baseline has no call for scenario {s} (replay the baseline on it, "
                "or name another baseline)"
                for s in inp.scenarios
                if s not in present
            ]
        )
        out.problems += bproblems
    if value is None:
        return out
    if inp.baseline is None:
        out.passed = spec.tolerance is not None
        out.note = "no baseline yet: nothing to regress against"
    elif out.baseline is not None:
        higher_is_better = (spec.measure or WEIGHTED_VIOLATIONS) == SCORE_0_100
        worse_by = (out.baseline - value) if higher_is_better else (value - out.baseline)
        out.passed = spec.tolerance is not None and worse_by <= spec.tolerance + 1e-9
        if not out.passed:
            out.evidence = _regression_evidence(
                inp.candidate, inp.baseline, inp.scope, scores, base_scores, higher_is_better
            )
    return out


def _regression_evidence(
    candidate_calls, baseline_calls, scope, scores, base_scores, higher_is_better
):
    """The calls that got worse than the baseline's call of the same scenario, and the new flags."""
    base_by_scenario = {c.scenario: c for c in baseline_calls}
    out = []
    for c in candidate_calls:
        if c.scenario not in scores or c.scenario not in base_scores:
            continue
        delta = scores[c.scenario] - base_scores[c.scenario]
        if (delta < 0) if higher_is_better else (delta > 0):
            b = base_by_scenario[c.scenario]
            for r in scope:
                v = c.verdicts[r.rule]
                if v.flagged and not b.verdicts[r.rule].flagged:
                    for t in v.turns or (None,):
                        out.append(
                            Evidence(
                                call=c.call,
                                turn=t,
                                rule=r.label,
                                verdict=v.ref,
                                note=f"worse than baseline {b.call} by {abs(delta):g}",
                            )
                        )
    return out


def paired_noise(diffs: Sequence[float]) -> dict:
    """The noise of a paired comparison: per-call differences (candidate - baseline), their
    spread (sample standard deviation) and the 95% interval of their mean (normal approximation).
    """
    n = len(diffs)
    if n == 0:
        return {"pairs": 0}
    m = sum(diffs) / n
    sd = math.sqrt(sum((d - m) ** 2 for d in diffs) / (n - 1)) if n > 1 else None
    interval = mean_interval(diffs)
    return {
        "pairs": n,
        "mean_diff": round(m, 4),
        "sd": None if sd is None else round(sd, 4),
        "interval": None if interval is None else [round(interval[0], 4), round(interval[1], 4)],
        "min": min(diffs),
        "max": max(diffs),
    }


def noise_note(noise: dict) -> str:
    """Whether the mean difference is within the noise (its 95% interval holds 0)."""
    if not noise.get("interval"):
        return ""
    lo, hi = noise["interval"]
    where = "within" if lo <= 0 <= hi else "more than"
    return f"the mean per-call difference ({noise['mean_diff']:+.2f}) is {where} the noise"


def _scope_label(spec: MetricSpec, everything: str) -> str:
    return spec.rule or (f"group {spec.group}" if spec.group else everything)


METRIC_KINDS: dict[str, MetricKind] = {
    k.name: k
    for k in (
        MetricKind(
            name=SAFETY_CEILING,
            title="safety ceiling (zero)",
            evaluate=_safety_ceiling,
            label=lambda s: f"safety ceiling: {s.rule or 'every safety rule'}",
            fields=("rule",),
            scope=SAFETY_RULES,
            fixed_threshold=0.0,
        ),
        MetricKind(
            name=VIOLATION_RATE,
            title="violation rate (max)",
            evaluate=_violation_rate,
            label=lambda s: f"violation rate: {s.rule or 'group ' + s.group}",
            fields=("rule", "group", "max"),
            required=("max",),
            help={
                "max": "the highest violation rate that passes, 0 to 1",
                "max_at_most": "a rate is at most 1",
            },
            scope=RULE_OR_GROUP,
            max_at_most=1.0,
        ),
        MetricKind(
            name=DETECTOR_METRIC,
            title="detector metric (max)",
            evaluate=_detector_metric,
            label=lambda s: f"detector: {s.measure}",
            fields=("measure", "max"),
            required=("measure", "max"),
            options={name: m[0] for name, m in MEASURES.items()},
        ),
        MetricKind(
            name=JUDGE_SCORE_REGRESSION,
            title="judge score vs baseline (tolerance)",
            evaluate=_judge_score_regression,
            label=lambda s: (
                f"judge score: {s.measure or WEIGHTED_VIOLATIONS} "
                f"({_scope_label(s, 'all gated non-safety rules')})"
            ),
            fields=("rule", "group", "score", "tolerance"),
            required=("tolerance",),
            help={"tolerance": "how much worse than the baseline passes"},
            options=SCORES,
            default_option=WEIGHTED_VIOLATIONS,
            scope=NON_SAFETY_RULES,
        ),
    )
}


def metric_kind_register(kind: MetricKind) -> None:
    """Add a kind of metric (another layer's, from its AppConfig.ready())."""
    METRIC_KINDS[kind.name] = kind


def _evaluate_metric(
    spec, rules, candidate_calls, baseline_calls, scenarios, layers=(None, None)
) -> MetricResult:
    res = MetricResult(
        label=spec.label,
        kind=spec.kind,
        passed=False,
        threshold=spec.threshold,
        tolerance=spec.tolerance,
        spec=asdict(spec),
    )
    kind = METRIC_KINDS.get(spec.kind)
    if kind is None:
        res.problems.append(f"unknown metric kind {spec.kind!r}")
        return res
    option = spec.measure or kind.default_option
    if kind.options and option not in kind.options:
        what = "judge score" if "score" in kind.fields else "detector measure"
        res.problems.append(f"unknown {what} {spec.measure!r} (known: {', '.join(kind.options)})")
        return res
    if kind.fixed_threshold is not None:
        res.threshold = kind.fixed_threshold
    elif ("max" in kind.required or "min" in kind.required) and spec.threshold is None:
        res.problems.append("no threshold set")
    elif "tolerance" in kind.required and spec.tolerance is None:
        res.problems.append("no tolerance set")

    scope, scope_problems, res.note = metric_rules(spec, rules)
    res.rules = [r.label for r in scope]
    res.problems += scope_problems
    if scope_problems:
        return res
    out = kind.evaluate(
        MetricInput(
            spec=spec,
            scope=scope,
            candidate=list(candidate_calls),
            baseline=None if baseline_calls is None else list(baseline_calls),
            scenarios=list(scenarios),
            candidate_layers=layers[0] or {},
            baseline_layers=layers[1],
        )
    )
    res.value, res.interval, res.n = out.value, out.interval, out.n
    res.baseline, res.baseline_interval = out.baseline, out.baseline_interval
    res.problems += out.problems
    res.evidence = out.evidence
    res.noise = out.noise
    res.note = "; ".join(filter(None, [res.note, out.note]))
    res.passed = out.passed and not res.problems
    return res


# ---- the decision ----------------------------------------------------------------------------


def golden_problems(golden: GoldenFacts, candidate: Mapping[str, CallFacts]) -> list[str]:
    """Problems with the golden set itself and the candidate's coverage of it."""
    problems = []
    if not golden.members:
        problems.append(f"golden set {golden.name} has no members")
    if golden.current_checksum != golden.checksum:
        problems.append(
            f"golden set {golden.name}: checksum mismatch (frozen {golden.checksum[:12]}, "
            f"members now give {golden.current_checksum[:12]})"
        )
    for m in golden.members:
        if m.pinned_call and m.current_checksum is None:
            problems.append(f"scenario {m.scenario}: pinned call {m.pinned_call} is gone")
        elif m.pinned_call and m.current_checksum != m.pinned_checksum:
            problems.append(
                f"scenario {m.scenario}: pinned call {m.pinned_call} changed (checksum "
                f"{m.pinned_checksum[:12]} pinned, {(m.current_checksum or '')[:12]} now)"
            )
    missing = [
        f"scenario {m.scenario}: no call from the candidate"
        for m in golden.members
        if m.scenario not in candidate
    ]
    return problems + listed(missing)


def gate_decide(
    *,
    golden: GoldenFacts,
    rules: Mapping[str, GatedRule],
    metrics: Sequence[MetricSpec],
    candidate: Mapping[str, CallFacts],
    baseline: Mapping[str, CallFacts] | None = None,
    candidate_layers: Mapping[str, Any] | None = None,
    baseline_layers: Mapping[str, Any] | None = None,
) -> GateDecision:
    """Decide a gate: every metric must pass and no data may be missing.

    `rules` maps every active rule id to its promoted version (version None when it has none);
    `candidate` and `baseline` map golden scenario -> that agent version's call.
    """
    problems = golden_problems(golden, candidate)
    if not metrics:
        problems.append("the gate has no metrics")
    scenarios = [m.scenario for m in golden.members]
    candidate_calls = [candidate[s] for s in scenarios if s in candidate]
    baseline_calls = None if baseline is None else [baseline[s] for s in scenarios if s in baseline]
    results = [
        _evaluate_metric(
            spec,
            rules,
            candidate_calls,
            baseline_calls,
            scenarios,
            (candidate_layers, baseline_layers),
        )
        for spec in metrics
    ]
    decision = GateDecision(
        passed=not problems and all(r.passed for r in results), problems=problems, metrics=results
    )
    return decision
