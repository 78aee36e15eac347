"""Pure gate decisions: facts about a candidate's golden-set calls in, per-metric results out.

No Django here. The service (`evals/services/gating/gate_runs.py`) gathers the facts from the
database, this module decides. Rules of the decision:

- All metrics must pass. Each has one threshold (or, for judge scores, one tolerance).
- `safety_ceiling`: one flagged verdict of a safety rule (or of the named rule) fails.
- `violation_rate`: flagged checks / checks for one rule or one group, at most `threshold`.
- `detector_metric`: a measure over turn timings (see MEASURES), at most `threshold`.
- `decision_accuracy`: the share of the agent's labeled decisions on the golden-set calls (of one
  decision kind, or all) that the reviewers' answer agrees with, at least `min`.
- `decision_accuracy_regression`: that share may be lower than the baseline's by at most
  `tolerance`.
- `judge_score_regression`: the mean per-call score (over one rule, one group, or every gated
  non-safety rule: safety rules have their ceiling) must not be worse than the baseline's by
  more than `tolerance`. With no baseline at all (the first run) there is nothing to regress
  against and the metric passes with a note; a named baseline with missing data fails.
- `conversation_score`: the mean 1-10 conversation judge score of the golden-set calls must
  not be worse than the baseline's by more than `tolerance`; the noise (the spread of the
  per-call differences and their mean's 95% interval) is reported beside it.
- `eval_pass_rate`: for each dataset and rubric the candidate has a finished eval run on, its
  pass rate may be below the baseline's by at most `tolerance` points (no-regression only:
  rubric scores are fuzzy, so never an absolute threshold).
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

from evals.detectors import DETECTORS

SAFETY_CEILING = "safety_ceiling"
VIOLATION_RATE = "violation_rate"
DETECTOR_METRIC = "detector_metric"
JUDGE_SCORE_REGRESSION = "judge_score_regression"
CONVERSATION_SCORE = "conversation_score"
DECISION_ACCURACY = "decision_accuracy"
DECISION_ACCURACY_REGRESSION = "decision_accuracy_regression"
EVAL_PASS_RATE = "eval_pass_rate"

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
class ConversationFact:
    """The conversation judge's score of one call (None with `error` when it failed)."""

    score: int | None
    error: str = ""
    findings: tuple[dict, ...] = ()  # {"type", "check", "turns", "note"}


@dataclass(frozen=True)
class DecisionFact:
    """The agent's decision at one moment of a call, and the reviewers' answer ("" unlabeled)."""

    kind: str
    choice: str
    truth: str = ""
    turn: int | None = None
    ref: int | None = None  # decision id


@dataclass(frozen=True)
class CallFacts:
    """One golden-set call of an agent version: its verdicts keyed by rule id, its turn timings,
    its conversation judge score and the agent's decisions."""

    call: str
    scenario: str
    verdicts: Mapping[str, VerdictFact] = field(default_factory=dict)
    turns: tuple[TurnTiming, ...] = ()
    conversation: ConversationFact | None = None
    decisions: tuple[DecisionFact, ...] = ()


@dataclass(frozen=True)
class EvalRunFact:
    """An agent version's latest finished eval run on one dataset under one rubric."""

    dataset: str
    rubric: str
    run: int
    pass_rate: float | None  # percent of scored rows; None when nothing was scored
    scored: int = 0


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


# ---- metric kinds ----------------------------------------------------------------------------
#
# Each kind of metric is one MetricKind in METRIC_KINDS: the YAML fields it takes (checked by
# evals.services.gating.metric_clean, offered by the gate page's form) and one pure function that
# decides it. To add a kind, write `def _my_kind(inp: MetricInput) -> Outcome` and add its
# MetricKind to METRIC_KINDS; nothing else needs to change (the facts a kind reads come in
# CallFacts: a kind that needs new facts adds them there and in gate_runs._call_facts).

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
    # Eval runs (dataset, rubric): the candidate's and the baseline's latest finished ones.
    candidate_evals: tuple[EvalRunFact, ...] = ()
    baseline_evals: tuple[EvalRunFact, ...] | None = None


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
        out.problems += _listed(
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


def _noise_note(noise: dict) -> str:
    """Whether the mean difference is within the noise (its 95% interval holds 0)."""
    if not noise.get("interval"):
        return ""
    lo, hi = noise["interval"]
    where = "within" if lo <= 0 <= hi else "more than"
    return f"the mean per-call difference ({noise['mean_diff']:+.2f}) is {where} the noise"


def _conversation_scores(calls, who=""):
    """Return ({scenario: score}, problems) for calls' conversation scores."""
    scores, problems = {}, []
    for c in calls:
        f = c.conversation
        if f is None:
            problems.append(f"{who}call {c.call} ({c.scenario}): no conversation score")
        elif f.error or f.score is None:
            problems.append(f"{who}call {c.call} ({c.scenario}): conversation score errored")
        else:
            scores[c.scenario] = float(f.score)
    return scores, _listed(problems)


def _conversation_score(inp: MetricInput) -> Outcome:
    """The mean conversation score may be worse than the baseline's by at most `tolerance`."""
    spec = inp.spec
    scores, problems = _conversation_scores(inp.candidate)
    vals = list(scores.values())
    out = Outcome(passed=False, n=len(vals), problems=problems, interval=mean_interval(vals))
    if not vals:
        out.problems.append("no golden-set call has a conversation score")
        return out
    out.value = sum(vals) / len(vals)
    if inp.baseline is None:
        out.passed = spec.tolerance is not None
        out.note = "no baseline yet: nothing to regress against"
        return out
    base, bproblems = _conversation_scores(inp.baseline, "baseline ")
    present = {c.scenario for c in inp.baseline}
    out.problems += bproblems + _listed(
        [
            f"baseline has no call for scenario {s} (replay the baseline on it, "
            "or name another baseline)"
            for s in inp.scenarios
            if s not in present
        ]
    )
    if not base:
        return out
    bvals = list(base.values())
    out.baseline, out.baseline_interval = sum(bvals) / len(bvals), mean_interval(bvals)
    paired = [s for s in inp.scenarios if s in scores and s in base]
    out.noise = paired_noise([scores[s] - base[s] for s in paired])
    out.note = _noise_note(out.noise)
    out.passed = spec.tolerance is not None and out.baseline - out.value <= spec.tolerance + 1e-9
    if not out.passed:
        base_calls = {c.scenario: c for c in inp.baseline}
        for c in inp.candidate:
            if c.scenario not in paired or scores[c.scenario] >= base[c.scenario]:
                continue
            note = (
                f"score {scores[c.scenario]:g} vs {base[c.scenario]:g} "
                f"in baseline {base_calls[c.scenario].call}"
            )
            findings = (c.conversation.findings if c.conversation else ()) or ({},)
            for f in findings:
                for t in f.get("turns") or (None,):
                    out.evidence.append(
                        Evidence(
                            call=c.call,
                            turn=t,
                            note=f"{f['type'].replace('_', ' ')}: {note}" if f else note,
                        )
                    )
    return out


def _decision_pairs(spec: MetricSpec, calls: Sequence[CallFacts]):
    """Return ([(call, decision)] labeled, how many unlabeled) for the metric's decision kind."""
    labeled, unlabeled = [], 0
    for c in calls:
        for d in c.decisions:
            if spec.measure and d.kind != spec.measure:
                continue
            if d.truth:
                labeled.append((c, d))
            else:
                unlabeled += 1
    return labeled, unlabeled


def _accuracy(spec: MetricSpec, calls: Sequence[CallFacts], who: str = ""):
    """Return (accuracy, interval, n, problems, note, wrong [(call, decision)])."""
    labeled, unlabeled = _decision_pairs(spec, calls)
    what = f"{spec.measure} decisions" if spec.measure else "decisions"
    note = f"{who}{unlabeled} unlabeled {what} left out" if unlabeled else ""
    if not labeled:
        return None, None, 0, [f"{who}no labeled {what} on the golden-set calls"], note, []
    right = sum(1 for _, d in labeled if d.choice == d.truth)
    wrong = [(c, d) for c, d in labeled if d.choice != d.truth]
    return right / len(labeled), wilson(right, len(labeled)), len(labeled), [], note, wrong


def _decision_evidence(wrong) -> list[Evidence]:
    return [
        Evidence(
            call=c.call,
            turn=d.turn,
            note=f"{d.kind}: agent chose {d.choice!r}, reviewers say {d.truth!r}",
        )
        for c, d in wrong
    ]


def _decision_outcome(inp: MetricInput) -> tuple[Outcome, list]:
    value, interval, n, problems, note, wrong = _accuracy(inp.spec, inp.candidate)
    out = Outcome(passed=False, value=value, interval=interval, n=n, problems=problems, note=note)
    if inp.baseline is not None:
        out.baseline, out.baseline_interval, *_ = _accuracy(inp.spec, inp.baseline, "baseline ")
    return out, wrong


def _decision_accuracy(inp: MetricInput) -> Outcome:
    """The share of labeled golden-set decisions the agent got right, at least `min`."""
    out, wrong = _decision_outcome(inp)
    if out.value is None:
        return out
    out.passed = inp.spec.threshold is not None and out.value >= inp.spec.threshold - 1e-9
    if not out.passed:
        out.evidence = _decision_evidence(wrong)
    return out


def _decision_accuracy_regression(inp: MetricInput) -> Outcome:
    """Decision accuracy may be lower than the baseline's by at most `tolerance`."""
    out, wrong = _decision_outcome(inp)
    if out.value is None:
        return out
    if inp.baseline is None:
        out.passed = inp.spec.tolerance is not None
        out.note = "; ".join(
            filter(None, [out.note, "no baseline yet: nothing to regress against"])
        )
    elif out.baseline is None:
        out.problems.append("baseline has no labeled decisions to compare with")
    else:
        worse_by = out.baseline - out.value
        out.passed = inp.spec.tolerance is not None and worse_by <= inp.spec.tolerance + 1e-9
    if not out.passed:
        out.evidence = _decision_evidence(wrong)
    return out


DECISION_HELP = {
    "decision": "a decision kind id (turn-taking...); leave it out for every kind",
    "min": "the lowest accuracy that passes, 0 to 1",
    "max_at_most": "an accuracy is at most 1",
    "tolerance": "how much lower than the baseline's accuracy passes",
}


def _decision_label(s: MetricSpec) -> str:
    return f"decision accuracy: {s.measure or 'every kind'}"


def _eval_pass_rate(inp: MetricInput) -> Outcome:
    """Each dataset and rubric the candidate has an eval run on: its pass rate may be below the
    baseline's by at most `tolerance` points. Rubric scores are fuzzy, so there is no absolute
    threshold; a candidate without any eval run has nothing to show and fails."""
    tolerance = inp.spec.tolerance
    out = Outcome(passed=False, n=len(inp.candidate_evals))
    if not inp.candidate_evals:
        out.problems.append("the candidate has no finished eval run (python manage.py eval_run)")
        return out
    unscored = [
        f"{e.dataset} ({e.rubric}) run #{e.run}" for e in inp.candidate_evals if e.pass_rate is None
    ]
    out.problems += _listed([f"eval run scored no row: {u}" for u in unscored])
    scored = [e for e in inp.candidate_evals if e.pass_rate is not None]
    if scored:
        out.value = min(e.pass_rate for e in scored)
    if inp.baseline_evals is None:
        out.passed = tolerance is not None and not out.problems
        out.note = "no baseline yet: nothing to regress against"
        return out
    base = {(e.dataset, e.rubric): e for e in inp.baseline_evals if e.pass_rate is not None}
    compared, worst = [], None
    for e in scored:
        b = base.get((e.dataset, e.rubric))
        if b is None:
            continue
        drop = b.pass_rate - e.pass_rate
        compared.append(e)
        if worst is None or drop > worst[0]:
            worst = (drop, e, b)
        if tolerance is not None and drop > tolerance + 1e-9:
            out.evidence.append(
                Evidence(
                    call=f"eval run #{e.run}",
                    rule=f"{e.dataset} ({e.rubric})",
                    note=f"pass rate {e.pass_rate:.1f}% vs {b.pass_rate:.1f}% in baseline run "
                    f"#{b.run}: down {drop:.1f} points",
                )
            )
    if worst is not None:
        out.value, out.baseline = worst[1].pass_rate, worst[2].pass_rate
    if not compared:
        out.note = "the baseline has no eval run on the same datasets and rubrics"
    out.passed = tolerance is not None and not out.evidence and not out.problems
    return out


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
        MetricKind(
            name=CONVERSATION_SCORE,
            title="conversation score vs baseline (tolerance)",
            evaluate=_conversation_score,
            label=lambda s: "conversation score (1-10, whole-call judge)",
            fields=("tolerance",),
            required=("tolerance",),
            help={"tolerance": "how many points lower than the baseline's mean passes"},
        ),
        # The decision kind goes in the spec's `measure` (the YAML's `decision`).
        MetricKind(
            name=DECISION_ACCURACY,
            title="decision accuracy (min)",
            evaluate=_decision_accuracy,
            label=_decision_label,
            fields=("decision", "min"),
            required=("min",),
            help=DECISION_HELP,
            max_at_most=1.0,
        ),
        MetricKind(
            name=DECISION_ACCURACY_REGRESSION,
            title="decision accuracy vs baseline (tolerance)",
            evaluate=_decision_accuracy_regression,
            label=lambda s: _decision_label(s) + " vs baseline",
            fields=("decision", "tolerance"),
            required=("tolerance",),
            help=DECISION_HELP,
        ),
        MetricKind(
            name=EVAL_PASS_RATE,
            title="eval pass rate vs baseline (tolerance)",
            evaluate=_eval_pass_rate,
            label=lambda s: "eval pass rate (every dataset and rubric run)",
            fields=("tolerance",),
            required=("tolerance",),
            help={"tolerance": "pass-rate points the candidate may lose to the baseline"},
        ),
    )
}
KINDS = tuple(METRIC_KINDS)


def _evaluate_metric(
    spec, rules, candidate_calls, baseline_calls, scenarios, evals=((), None)
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
            candidate_evals=tuple(evals[0]),
            baseline_evals=None if evals[1] is None else tuple(evals[1]),
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
    return problems + _listed(missing)


def gate_decide(
    *,
    golden: GoldenFacts,
    rules: Mapping[str, GatedRule],
    metrics: Sequence[MetricSpec],
    candidate: Mapping[str, CallFacts],
    baseline: Mapping[str, CallFacts] | None = None,
    candidate_evals: Sequence[EvalRunFact] = (),
    baseline_evals: Sequence[EvalRunFact] | None = None,
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
            (candidate_evals, baseline_evals),
        )
        for spec in metrics
    ]
    decision = GateDecision(
        passed=not problems and all(r.passed for r in results), problems=problems, metrics=results
    )
    return decision
