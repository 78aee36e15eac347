"""Pure gate decisions: facts about a candidate's golden-set calls in, per-metric results out.

No Django here. The service (`evals/services/gating/gate_runs.py`) gathers the facts from the
database, this module decides. Rules of the decision:

- All metrics must pass. Each has one threshold (or, for judge scores, one tolerance).
- `safety_ceiling`: one flagged verdict of a safety rule (or of the named rule) fails.
- `violation_rate`: flagged checks / checks for one rule or one group, at most `threshold`.
- `detector_metric`: a measure over turn timings (see MEASURES), at most `threshold`.
- `judge_score_regression`: the mean per-call score (over one rule, one group, or every gated
  non-safety rule: safety rules have their ceiling) must not be worse than the baseline's by
  more than `tolerance`. With no baseline at all (the first run) there is nothing to regress
  against and the metric passes with a note; a named baseline with missing data fails.
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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

SAFETY_CEILING = "safety_ceiling"
VIOLATION_RATE = "violation_rate"
DETECTOR_METRIC = "detector_metric"
JUDGE_SCORE_REGRESSION = "judge_score_regression"
KINDS = (SAFETY_CEILING, VIOLATION_RATE, DETECTOR_METRIC, JUDGE_SCORE_REGRESSION)

# Same weights as evals.models.SEVERITY_WEIGHT (kept here so this module has no Django import).
SEVERITY_WEIGHT = {"minor": 1, "major": 3, "critical": 10}

# Judge scores: lower is better for weighted violations, higher is better for the 0-100 score.
WEIGHTED_VIOLATIONS = "weighted_violations"
SCORE_0_100 = "score"
SCORES = {
    WEIGHTED_VIOLATIONS: "mean severity-weighted violations per call",
    SCORE_0_100: "mean 0-100 score",
}

TALK_OVER_MS = 500  # same default as the talk_over detector
ASR_FLOOR = 0.6  # same default as the asr_confidence_floor detector
Z95 = 1.959963984540054
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
    """One golden-set call of an agent version: its
    verdicts keyed by rule id, and its turn timings."""

    call: str
    scenario: str
    verdicts: Mapping[str, VerdictFact] = field(default_factory=dict)
    turns: tuple[TurnTiming, ...] = ()


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
        if self.kind == SAFETY_CEILING:
            return f"safety ceiling: {self.rule or 'every safety rule'}"
        if self.kind == VIOLATION_RATE:
            return f"violation rate: {self.rule or 'group ' + self.group}"
        if self.kind == DETECTOR_METRIC:
            return f"detector: {self.measure}"
        scope = self.rule or (f"group {self.group}" if self.group else "all gated non-safety rules")
        return f"judge score: {self.measure or WEIGHTED_VIOLATIONS} ({scope})"


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


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Return the Wilson score interval for successes/n, or None when n is 0."""
    if n <= 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def percentile(values: Sequence[float], pct: float) -> float | None:
    """Nearest-rank percentile (one real observation, as the response-time detector does)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return float(ordered[rank - 1])


def percentile_interval(values: Sequence[float], pct: float) -> tuple[float, float] | None:
    """Distribution-free 95% interval for a percentile from binomial order-statistic ranks."""
    n = len(values)
    if n == 0:
        return None
    ordered = sorted(values)
    p = pct / 100
    spread = Z95 * math.sqrt(n * p * (1 - p))
    lo = max(1, math.floor(n * p - spread))
    hi = min(n, math.ceil(n * p + spread) + 1)
    return (float(ordered[lo - 1]), float(ordered[hi - 1]))


def mean_interval(values: Sequence[float]) -> tuple[float, float] | None:
    """Normal-approximation 95% interval for a mean (None below two values)."""
    n = len(values)
    if n < 2:
        return None
    m = sum(values) / n
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    half = Z95 * sd / math.sqrt(n)
    return (m - half, m + half)


def count_interval(count: int) -> tuple[float, float]:
    """Poisson-approximation 95% interval for an event count."""
    half = Z95 * math.sqrt(count + 1)
    return (max(0.0, count - half), count + half)


def moved(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    """True when two values' 95% intervals do not overlap: the change is more than the noise."""
    if a is None or b is None:
        return False
    return a[1] < b[0] or b[1] < a[0]


def _listed(items: list[str]) -> list[str]:
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

    A rule the metric names must have a promoted version. A group (or "every safety rule", or
    for a judge score with no rule or group, every non-safety rule) counts its rules' promoted
    versions; rules still without one are left out and named in the note, and a scope with no
    promoted rule at all is a problem.
    """
    if spec.kind == DETECTOR_METRIC:
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
    if spec.kind == SAFETY_CEILING:
        members, empty = (
            [r for r in rules.values() if r.safety],
            "no promoted safety rule to hold at zero",
        )
    elif spec.group:
        members, empty = (
            [r for r in rules.values() if r.group == spec.group],
            f"group {spec.group}: no promoted rule",
        )
    elif spec.kind == VIOLATION_RATE:
        return [], ["a violation rate needs a rule or a group"], ""
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
    return checks, _listed(missing)


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


# ---- per-metric evaluation -------------------------------------------------------------------


def _value(spec, scope, calls, who=""):
    """Return (value, interval, n, usable checks,
    problems, per-call scores) of a metric on calls."""
    if spec.kind == DETECTOR_METRIC:
        value, interval, obs, problems, n = _measure(spec, calls)
        return value, interval, n, obs, problems, {}
    checks, problems = _checks(scope, calls, who)
    n = len(checks)
    flagged = sum(1 for _, _, v in checks if v.flagged)
    if spec.kind == SAFETY_CEILING:
        w = wilson(flagged, n)
        return float(flagged), (w[0] * n, w[1] * n) if w else None, n, checks, problems, {}
    if spec.kind == VIOLATION_RATE:
        if n == 0:
            return None, None, 0, checks, problems + ["no verdicts to count"], {}
        return flagged / n, wilson(flagged, n), n, checks, problems, {}
    complete = [
        c
        for c in calls
        if all(r.rule in c.verdicts and not c.verdicts[r.rule].error for r in scope)
    ]
    scores = {
        c.scenario: _call_score(spec.measure or WEIGHTED_VIOLATIONS, c, scope) for c in complete
    }
    if not scores:
        return (
            None,
            None,
            0,
            checks,
            problems + [f"{who}no call with every verdict to score"],
            scores,
        )
    vals = list(scores.values())
    return sum(vals) / len(vals), mean_interval(vals), len(vals), checks, problems, scores


def _evaluate_metric(spec, rules, candidate_calls, baseline_calls, scenarios) -> MetricResult:
    res = MetricResult(
        label=spec.label,
        kind=spec.kind,
        passed=False,
        threshold=spec.threshold,
        tolerance=spec.tolerance,
        spec=asdict(spec),
    )
    if spec.kind not in KINDS:
        res.problems.append(f"unknown metric kind {spec.kind!r}")
        return res
    if spec.kind == DETECTOR_METRIC and spec.measure not in MEASURES:
        res.problems.append(
            f"unknown detector measure {spec.measure!r} (known: {', '.join(MEASURES)})"
        )
        return res
    if spec.kind == JUDGE_SCORE_REGRESSION and (spec.measure or WEIGHTED_VIOLATIONS) not in SCORES:
        res.problems.append(f"unknown judge score {spec.measure!r} (known: {', '.join(SCORES)})")
        return res
    if spec.kind == SAFETY_CEILING:
        res.threshold = 0.0
    elif spec.kind in (VIOLATION_RATE, DETECTOR_METRIC) and spec.threshold is None:
        res.problems.append("no threshold set")
    elif spec.kind == JUDGE_SCORE_REGRESSION and spec.tolerance is None:
        res.problems.append("no tolerance set")

    scope, scope_problems, res.note = metric_rules(spec, rules)
    res.rules = [r.label for r in scope]
    res.problems += scope_problems
    if scope_problems:
        return res

    value, interval, n, used, problems, scores = _value(spec, scope, candidate_calls)
    res.value, res.interval, res.n = value, interval, n
    res.problems += problems

    base_scores: dict = {}
    if baseline_calls is not None:
        bvalue, binterval, _, _, bproblems, base_scores = _value(
            spec, scope, baseline_calls, who="baseline "
        )
        res.baseline, res.baseline_interval = bvalue, binterval
        if spec.kind == JUDGE_SCORE_REGRESSION:
            present = {c.scenario for c in baseline_calls}
            res.problems += _listed(
                [
                    f"baseline has no call for scenario {s} (replay the baseline on it, "
                    "or name another baseline)"
                    for s in scenarios
                    if s not in present
                ]
            )
            res.problems += bproblems

    if value is None:
        return res

    if spec.kind == SAFETY_CEILING:
        res.passed = value <= 0
        if not res.passed:
            res.evidence = _flag_evidence(used)
    elif spec.kind == VIOLATION_RATE:
        res.passed = spec.threshold is not None and value <= spec.threshold
        if not res.passed:
            res.evidence = _flag_evidence(used)
    elif spec.kind == DETECTOR_METRIC:
        res.passed = spec.threshold is not None and value <= spec.threshold
        if not res.passed:
            res.evidence = [
                Evidence(call=c, turn=t, note=f"{v:g}")
                for c, v, t in used
                if spec.threshold is None
                or v > spec.threshold
                or MEASURES[spec.measure][2] == "count"
            ]
    else:
        if baseline_calls is None:
            res.passed = spec.tolerance is not None
            res.note = "; ".join(
                filter(None, [res.note, "no baseline yet: nothing to regress against"])
            )
        elif res.baseline is None:
            res.passed = False
        else:
            higher_is_better = (spec.measure or WEIGHTED_VIOLATIONS) == SCORE_0_100
            worse_by = (res.baseline - value) if higher_is_better else (value - res.baseline)
            res.passed = spec.tolerance is not None and worse_by <= spec.tolerance + 1e-9
            if not res.passed:
                res.evidence = _regression_evidence(
                    candidate_calls, baseline_calls, scope, scores, base_scores, higher_is_better
                )
    res.passed = res.passed and not res.problems
    return res


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
    return problems + _listed(missing)


def gate_decide(
    *,
    golden: GoldenFacts,
    rules: Mapping[str, GatedRule],
    metrics: Sequence[MetricSpec],
    candidate: Mapping[str, CallFacts],
    baseline: Mapping[str, CallFacts] | None = None,
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
        _evaluate_metric(spec, rules, candidate_calls, baseline_calls, scenarios)
        for spec in metrics
    ]
    decision = GateDecision(
        passed=not problems and all(r.passed for r in results), problems=problems, metrics=results
    )
    return decision
