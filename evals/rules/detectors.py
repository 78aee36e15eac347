"""Deterministic detectors: small pure functions over turns, registered by name.

A rule names a detector in its YAML instead of being judged by the LLM:

    detector: {name: silence_before_agent, max_ms: 3000}

Registered detectors and their parameters (defaults in brackets):

    silence_before_agent   max_ms [3000]
        the gap between the previous spoken turn's end and an agent turn's start exceeds max_ms
    talk_over              max_overlap_ms [500]
        an agent turn overlaps a user turn by more than this
    asr_confidence_floor   min [0.6], speaker ["any"|"agent"|"user"]
        a turn's ASR confidence is below the floor
    agent_response_time    max_ms [2000], percentile [95]
        the percentile of user-end -> agent-start latencies exceeds max_ms (percentile 100 = any
        single turn)
    dropped_call           final_phase [""], end_markers [[]]
        the call ends on a user turn (unless it holds an end marker such as "###STOP###"), or
        (when set) not in final_phase
    markdown_or_emoji      markdown [true], emoji [true]
        markdown syntax or emoji in an agent turn
    multiple_questions     max_questions [1]
        more questions than this in one agent turn
    greeting_repeated      max_greetings [1]
        the agent greets more often than this

Other apps register detectors of their own with `register` from their AppConfig.ready() (the
runtime classifiers, evals.classifiers.detectors); this module names none of them.

Each detector takes a sequence of `TurnView` and its parameters and returns a
`DetectorResult` (flagged, cited turn indices, a one-line rationale that names
turns and figures, never transcript text). Turns without timestamps are skipped
by the timing detectors; empty turns are ignored by the text detectors.
Importers call `detector_validate(spec)`, which fills defaults and raises
`ValueError("detector.<field>: reason")`.
"""

import math
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

AGENT = "agent"
USER = "user"
SPOKEN = (AGENT, USER)


@dataclass(frozen=True)
class TurnView:
    """What a detector sees of a turn: no database, no model."""

    index: int
    speaker: str
    text: str = ""
    start_ms: int | None = None
    end_ms: int | None = None
    asr_confidence: float | None = None
    phase: str = ""

    @property
    def timed(self) -> bool:
        return self.start_ms is not None and self.end_ms is not None


@dataclass(frozen=True)
class DetectorResult:
    flagged: bool
    turns: list[int] = field(default_factory=list)
    rationale: str = ""
    # Runtime classifiers run as detectors too (evals/classifiers/detectors.py): they add a
    # confidence and a category, and `error` when the check could not be made (an errored verdict).
    confidence: int | None = None
    category: str = ""
    error: str = ""


class ModelMeter:
    """What a check's model calls spend, and whether it may make one more: the judge runner gives
    each detector check one, with what is left of the run's cost cap (`budget`, None: no cap), so
    a detector that calls a model is counted and capped like the judge's own calls."""

    def __init__(self, price: Callable[[str, int, int], Decimal], budget: Decimal | None = None):
        self._price, self._budget, self._lock = price, budget, threading.Lock()
        self.calls = self.refused = self.tokens_in = self.tokens_out = 0
        self.cost = Decimal(0)

    def begin(self) -> bool:
        """Count one call about to be made; False (and counted as refused) past the budget."""
        with self._lock:
            if self._budget is not None and self.cost >= self._budget:
                self.refused += 1
                return False
            self.calls += 1
            return True

    def spent(self, model: str, tokens_in: int, tokens_out: int) -> None:
        """Add what one call that answered used."""
        with self._lock:
            self.tokens_in += tokens_in
            self.tokens_out += tokens_out
            self.cost += self._price(model, tokens_in, tokens_out)


@dataclass(frozen=True)
class ModelCall:
    """One model call a check would make, for a run's estimate: the model and its tokens."""

    model: str
    tokens_in: int
    tokens_out: int


@dataclass(frozen=True)
class DetectorContext:
    """What a detector that needs more than turns sees of the call: the agent version's scope,
    and the meter its model calls go through (None: not counted, no cap)."""

    call: str = ""
    tenant: str = ""
    agent: str = ""
    agent_version: str = ""
    instructions: str = ""
    tools: list = field(default_factory=list)
    meter: ModelMeter | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Detector:
    name: str
    func: Callable[..., Any]
    params: dict[str, Any]  # parameter name -> default (None means required)
    doc: str = ""
    types: dict[str, type] = field(default_factory=dict)
    checks: dict[str, Callable[[Any], str | None]] = field(default_factory=dict)
    # A contextual detector is also called with `context=DetectorContext`; `judge(params)` names
    # the judge of its verdicts (name, kind, model, prompt version) instead of "detector/<name>".
    context: bool = False
    judge: Callable[[dict], tuple[str, str, str, str]] | None = None
    # A detector that calls a model (a runtime classifier's second pass) says when: `uses_model(
    # params)`, and `model_missing()` says why that model cannot be called now ("" when it can).
    uses_model: Callable[[dict], bool] | None = None
    model_missing: Callable[[], str] | None = None
    # `model_calls(turns, context, params)`: the model calls a check on these turns would make
    # (an upper bound where the detector decides as it goes), for a run's estimate.
    model_calls: Callable[[Sequence[TurnView], DetectorContext, dict], list[ModelCall]] | None = (
        None
    )


DETECTORS: dict[str, Detector] = {}


def register(
    name: str,
    *,
    types: dict[str, type],
    checks: dict | None = None,
    context: bool = False,
    judge: Callable[[dict], tuple[str, str, str, str]] | None = None,
    uses_model: Callable[[dict], bool] | None = None,
    model_missing: Callable[[], str] | None = None,
    model_calls: Callable[[Sequence[TurnView], DetectorContext, dict], list[ModelCall]]
    | None = None,
    **defaults,
):
    """Decorator: register a detector under `name` with typed parameters and their defaults."""

    def decorator(func):
        DETECTORS[name] = Detector(
            name=name,
            func=func,
            params=dict(defaults),
            doc=(func.__doc__ or "").strip(),
            types=types,
            checks=checks or {},
            context=context,
            judge=judge,
            uses_model=uses_model,
            model_missing=model_missing,
            model_calls=model_calls,
        )
        return func

    return decorator


def _type_ok(value: Any, expected: type) -> bool:
    if isinstance(value, bool):
        return expected is bool
    if expected is float:
        return isinstance(value, (int, float)) and math.isfinite(value)
    if expected is list:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, expected)


_TYPE_NAMES = {
    int: "an integer",
    float: "a number",
    bool: "true or false",
    str: "a string",
    list: "a list of strings",
}


def detector_validate(spec: Any) -> dict:
    """Return the detector spec with defaults filled in, or raise ValueError naming the field."""
    if not isinstance(spec, Mapping):
        # ValueError, not TypeError: importers report every ValueError as a field error.
        raise ValueError("detector: must be a mapping with a name")  # noqa: TRY004
    name = spec.get("name")
    if name not in DETECTORS:
        known = ", ".join(sorted(DETECTORS)) or "none registered"
        raise ValueError(f"detector.name: unknown detector {name!r} (known: {known})")
    det = DETECTORS[name]
    out: dict[str, Any] = {"name": name}
    for key, value in spec.items():
        if key == "name":
            continue
        if key not in det.params:
            known = ", ".join(det.params) or "none"
            raise ValueError(
                f"detector.{key}: {name} has no parameter {key!r} (parameters: {known})"
            )
        if not _type_ok(value, det.types[key]):
            raise ValueError(
                f"detector.{key}: must be {_TYPE_NAMES[det.types[key]]}, got {value!r}"
            )
        problem = det.checks.get(key, lambda v: None)(value)
        if problem:
            raise ValueError(f"detector.{key}: {problem}")
        out[key] = float(value) if det.types[key] is float else value
    for key, default in det.params.items():
        if key not in out:
            if default is None:
                raise ValueError(f"detector.{key}: required by {name}")
            out[key] = list(default) if isinstance(default, list) else default
    return out


def detector_run(
    spec: Mapping, turns: Iterable[TurnView], context: DetectorContext | None = None
) -> DetectorResult:
    """Validate the spec and run its detector over the turns (ordered by index)."""
    params = detector_validate(spec)
    det = DETECTORS[params.pop("name")]
    ordered = sorted(turns, key=lambda t: t.index)
    if det.context:
        return det.func(ordered, context=context or DetectorContext(), **params)
    return det.func(ordered, **params)


def detector_judge(spec: Mapping) -> tuple[str, str, str, str]:
    """Return (name, kind, model, prompt version) of the judge whose verdicts a spec produces."""
    name = str(spec.get("name") or "unknown") if isinstance(spec, Mapping) else "unknown"
    det = DETECTORS.get(name)
    if det is not None and det.judge is not None:
        try:
            return det.judge(detector_validate(spec))
        except ValueError:
            pass  # an invalid spec errors when it runs; its judge is the plain one
    return f"detector/{name}", "detector", name, ""


def detector_model_need(spec: Mapping) -> tuple[bool, str]:
    """Return (whether the spec's check calls a model, why that model cannot be called now or "").

    An invalid spec calls none: it errors when it runs."""
    name = spec.get("name") if isinstance(spec, Mapping) else None
    det = DETECTORS.get(name) if isinstance(name, str) else None
    if det is None or det.uses_model is None:
        return False, ""
    try:
        params = detector_validate(spec)
    except ValueError:
        return False, ""
    if not det.uses_model(params):
        return False, ""
    return True, det.model_missing() if det.model_missing is not None else ""


def detector_model_calls(
    spec: Mapping, turns: Iterable[TurnView], context: DetectorContext
) -> list[ModelCall]:
    """Return the model calls the spec's check would make on these turns (none for an invalid
    spec or a detector that calls no model)."""
    name = spec.get("name") if isinstance(spec, Mapping) else None
    det = DETECTORS.get(name) if isinstance(name, str) else None
    if det is None or det.model_calls is None or det.uses_model is None:
        return []
    try:
        params = detector_validate(spec)
    except ValueError:
        return []
    if not det.uses_model(params):
        return []
    params.pop("name")
    return det.model_calls(sorted(turns, key=lambda t: t.index), context, params)


def turn_views(rows: Iterable[Any]) -> list[TurnView]:
    """Build TurnViews from Turn model instances or dicts with the same field names."""
    out = []
    for r in rows:
        get = r.get if isinstance(r, Mapping) else (lambda k, d=None, r=r: getattr(r, k, d))
        out.append(
            TurnView(
                index=get("index"),
                speaker=get("speaker") or "",
                text=get("text") or "",
                start_ms=get("start_ms"),
                end_ms=get("end_ms"),
                asr_confidence=get("asr_confidence"),
                phase=get("phase") or "",
            )
        )
    return out


def _non_negative(v):
    return None if v >= 0 else "must be 0 or more"


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.1f} s"


def _cite(prefix: str, items: list[str], limit: int = 3) -> str:
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return prefix + "; ".join(items[:limit]) + more


# ---- timing ---------------------------------------------------------------------------------


@register(
    "silence_before_agent", types={"max_ms": int}, checks={"max_ms": _non_negative}, max_ms=3000
)
def silence_before_agent(turns: Sequence[TurnView], *, max_ms: int) -> DetectorResult:
    """Flag agent turns that start more than max_ms after the previous spoken turn ended."""
    hits, notes = [], []
    prev_end = None
    for t in turns:
        if t.speaker not in SPOKEN:
            continue
        if t.speaker == AGENT and t.start_ms is not None and prev_end is not None:
            gap = t.start_ms - prev_end
            if gap > max_ms:
                hits.append(t.index)
                notes.append(f"{_seconds(gap)} silence before turn {t.index}")
        if t.end_ms is not None:
            # Overlapping turns: the silence is measured from the latest end seen.
            prev_end = t.end_ms if prev_end is None else max(prev_end, t.end_ms)
    if not hits:
        return DetectorResult(
            False, [], f"No silence over {_seconds(max_ms)} before an agent turn."
        )
    return DetectorResult(True, hits, _cite("", notes) + f" (limit {_seconds(max_ms)}).")


@register(
    "talk_over",
    types={"max_overlap_ms": int},
    checks={"max_overlap_ms": _non_negative},
    max_overlap_ms=500,
)
def talk_over(turns: Sequence[TurnView], *, max_overlap_ms: int) -> DetectorResult:
    """Flag agent turns that overlap a user turn by more than max_overlap_ms."""
    users = [t for t in turns if t.speaker == USER and t.timed and t.end_ms >= t.start_ms]
    hits, notes = [], []
    for a in turns:
        if a.speaker != AGENT or not a.timed or a.end_ms < a.start_ms:
            continue
        worst, worst_user = 0, None
        for u in users:
            overlap = min(a.end_ms, u.end_ms) - max(a.start_ms, u.start_ms)
            if overlap > worst:
                worst, worst_user = overlap, u
        if worst > max_overlap_ms:
            hits.append(a.index)
            notes.append(f"turn {a.index} overlaps user turn {worst_user.index} by {worst} ms")
    if not hits:
        return DetectorResult(
            False, [], f"No agent turn overlaps the user by more than {max_overlap_ms} ms."
        )
    return DetectorResult(True, hits, _cite("Talk-over: ", notes) + ".")


@register(
    "agent_response_time",
    types={"max_ms": int, "percentile": int},
    checks={
        "max_ms": _non_negative,
        "percentile": lambda v: None if 1 <= v <= 100 else "must be 1 to 100",
    },
    max_ms=2000,
    percentile=95,
)
def agent_response_time(
    turns: Sequence[TurnView], *, max_ms: int, percentile: int
) -> DetectorResult:
    """Flag when the percentile of the agent's response
    times (user end -> agent start) exceeds max_ms."""
    latencies: list[tuple[int, int]] = []  # (latency ms, agent turn index)
    prev = None
    for t in turns:
        if t.speaker not in SPOKEN:
            continue
        if (
            t.speaker == AGENT
            and prev is not None
            and prev.speaker == USER
            and prev.end_ms is not None
            and t.start_ms is not None
        ):
            latencies.append((max(0, t.start_ms - prev.end_ms), t.index))
        prev = t
    if not latencies:
        return DetectorResult(False, [], "No timed user-to-agent exchanges to measure.")
    values = sorted(v for v, _ in latencies)
    # Nearest-rank percentile: no interpolation, so the figure is one real response time.
    rank = max(1, math.ceil(percentile / 100 * len(values)))
    p = values[rank - 1]
    if p <= max_ms:
        return DetectorResult(
            False,
            [],
            f"p{percentile} response time {_seconds(p)} over "
            f"{len(values)} replies (limit {_seconds(max_ms)}).",
        )
    slow = [i for v, i in latencies if v > max_ms]
    return DetectorResult(
        True,
        slow,
        f"p{percentile} response time {_seconds(p)} over {len(values)} replies exceeds "
        f"{_seconds(max_ms)}; {len(slow)} slow repl{'y' if len(slow) == 1 else 'ies'}.",
    )


# ---- transcription --------------------------------------------------------------------------


@register(
    "asr_confidence_floor",
    types={"min": float, "speaker": str},
    checks={
        "min": lambda v: None if 0 <= v <= 1 else "must be between 0 and 1",
        "speaker": lambda v: None if v in ("any", AGENT, USER) else "must be any, agent or user",
    },
    min=0.6,
    speaker="any",
)
def asr_confidence_floor(turns: Sequence[TurnView], *, min: float, speaker: str) -> DetectorResult:
    """Flag turns whose transcription confidence is below the floor."""
    hits, notes = [], []
    for t in turns:
        if t.asr_confidence is None or (speaker != "any" and t.speaker != speaker):
            continue
        if t.asr_confidence < min:
            hits.append(t.index)
            notes.append(f"turn {t.index} at {t.asr_confidence:.2f}")
    if not hits:
        return DetectorResult(False, [], f"No turn below ASR confidence {min:.2f}.")
    return DetectorResult(
        True, hits, _cite("ASR confidence below floor: ", notes) + f" (floor {min:.2f})."
    )


# ---- shape of the call ----------------------------------------------------------------------


@register(
    "dropped_call", types={"final_phase": str, "end_markers": list}, final_phase="", end_markers=[]
)
def dropped_call(
    turns: Sequence[TurnView], *, final_phase: str, end_markers: list[str]
) -> DetectorResult:
    """Flag a call that ends on a user turn, or (with final_phase) ends before reaching that phase.

    A final user turn holding one of `end_markers` (a simulator's "###STOP###") is a deliberate end.
    """
    spoken = [t for t in turns if t.speaker in SPOKEN]
    if not spoken:
        return DetectorResult(False, [], "No spoken turns.")
    last = spoken[-1]
    if last.speaker == USER and any(m and m in last.text for m in end_markers):
        return DetectorResult(
            False, [], f"The user ends the call deliberately (turn {last.index})."
        )
    if last.speaker == USER:
        return DetectorResult(
            True, [last.index], f"The call ends on a user turn (turn {last.index})."
        )
    if final_phase and last.phase and last.phase != final_phase:
        return DetectorResult(
            True,
            [last.index],
            f"The call ends in phase {last.phase!r} at turn {last.index}, not in {final_phase!r}.",
        )
    return DetectorResult(False, [], "The call ends on an agent turn.")


# ---- text of agent turns --------------------------------------------------------------------

_MARKDOWN = [
    ("bold", re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")),
    ("heading", re.compile(r"(?m)^\s{0,3}#{1,6}\s+\S")),
    ("bullet list", re.compile(r"(?m)^\s*[-*+]\s+\S")),
    ("numbered list", re.compile(r"(?m)^\s*\d+[.)]\s+\S.*\n\s*\d+[.)]\s+\S")),
    ("code", re.compile(r"`[^`\n]+`")),
    ("link", re.compile(r"\[[^\]\n]+\]\([^)\s]+\)")),
    ("table", re.compile(r"(?m)^\s*\|.*\|\s*$")),
]


def _emoji(text: str) -> bool:
    for ch in text:
        cp = ord(ch)
        if 0x1F000 <= cp <= 0x1FAFF or 0x2600 <= cp <= 0x27BF or cp in (0xFE0F, 0x200D):
            return True
        if unicodedata.category(ch) == "So" and cp >= 0x2190:
            return True
    return False


@register("markdown_or_emoji", types={"markdown": bool, "emoji": bool}, markdown=True, emoji=True)
def markdown_or_emoji(turns: Sequence[TurnView], *, markdown: bool, emoji: bool) -> DetectorResult:
    """Flag agent turns whose spoken text carries markdown syntax or emoji."""
    hits, notes = [], []
    for t in turns:
        if t.speaker != AGENT or not t.text:
            continue
        kinds = [k for k, rx in _MARKDOWN if markdown and rx.search(t.text)]
        if emoji and _emoji(t.text):
            kinds.append("emoji")
        if kinds:
            hits.append(t.index)
            notes.append(f"turn {t.index} ({', '.join(kinds)})")
    if not hits:
        return DetectorResult(False, [], "No markdown or emoji in agent turns.")
    return DetectorResult(True, hits, _cite("Markdown or emoji in speech: ", notes) + ".")


_QUESTION = re.compile(r"[?？][?？!]*")


@register(
    "multiple_questions",
    types={"max_questions": int},
    checks={"max_questions": lambda v: None if v >= 1 else "must be 1 or more"},
    max_questions=1,
)
def multiple_questions(turns: Sequence[TurnView], *, max_questions: int) -> DetectorResult:
    """Flag agent turns that ask more than max_questions questions (counted by question marks)."""
    hits, notes = [], []
    for t in turns:
        if t.speaker != AGENT or not t.text:
            continue
        n = len(_QUESTION.findall(t.text))
        if n > max_questions:
            hits.append(t.index)
            notes.append(f"turn {t.index} asks {n}")
    if not hits:
        return DetectorResult(
            False, [], f"No agent turn asks more than {max_questions} question(s)."
        )
    return DetectorResult(True, hits, _cite("Several questions in one turn: ", notes) + ".")


_GREETING = re.compile(
    r"^\W*(hi|hello|hey|good (morning|afternoon|evening|day)|greetings|welcome|"
    r"thanks? (you )?for (calling|contacting|reaching out))\b",
    re.IGNORECASE,
)


@register(
    "greeting_repeated",
    types={"max_greetings": int},
    checks={"max_greetings": lambda v: None if v >= 1 else "must be 1 or more"},
    max_greetings=1,
)
def greeting_repeated(turns: Sequence[TurnView], *, max_greetings: int) -> DetectorResult:
    """Flag when more than max_greetings agent turns open with a greeting; cites the extra ones."""
    greetings = [
        t.index for t in turns if t.speaker == AGENT and t.text and _GREETING.search(t.text)
    ]
    if len(greetings) <= max_greetings:
        return DetectorResult(False, [], f"The agent greets {len(greetings)} time(s).")
    extra = greetings[max_greetings:]
    return DetectorResult(
        True,
        extra,
        f"The agent greets {len(greetings)} times (turns {', '.join(map(str, greetings[:6]))}"
        f"{'…' if len(greetings) > 6 else ''}); limit {max_greetings}.",
    )
