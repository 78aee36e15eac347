"""The runtime classifiers and their signals as detectors, so a rule can name them and the judge
runner checks stored calls with them (verdicts of the one shape, marked and calibrated like any):

    sentiment_floor          floor [-0.5]
        a customer turn's lexicon sentiment is at or below the floor
    loop_detector            similarity [0.6]
        a customer asks for a human, says they are asking again, or repeats a message
    injection_guard          llm [false]
        the injection guard on every customer, tool and system turn (tool results with the
        heuristics for planted instructions too): the always-on layer, plus the model's second
        pass when llm is true (judge "classifier/injection/patterns-v5" or ".../<model>/...")
    scope_drift              (no parameters)
        every agent reply against the agent version's instructions and tools
    frustration_attribution  only_signalled [true]
        at whom the customer's frustration is aimed, on the customer turns where the sentiment
        floor or the loop detector fires (all customer turns when only_signalled is false);
        flagged when it is aimed at the AI, category ai, situation or none

The classifier detectors answer an errored verdict when a model pass fails: a stored check
records the error (and calibration leaves it out) instead of a fail-open guess. A check that
needs the model when none is configured is not made at all: the judge runner skips it as
"needs a model" (and a detector-only run, which makes no model calls, always does). Their model
calls go through the context's meter (counted, priced and stopped at the run's cost cap), and
each says beforehand which calls it would make (`model_calls`, for the run's estimate).
"""

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from evals.classifiers import checks
from evals.classifiers import runtime as rt
from evals.classifiers.signals import loop_check, sentiment
from evals.judging.prompt import estimate_tokens
from evals.rules.detectors import (
    SPOKEN,
    USER,
    DetectorContext,
    DetectorResult,
    ModelCall,
    TurnView,
    register,
)

# v2 (issue 28): the small model joined the heuristics, and tool and system turns are checked.
PATTERNS_VERSION = "patterns-v5"  # a new version whenever the heuristics or the model change
PATTERNS_JUDGE = f"classifier/injection/{PATTERNS_VERSION}"
INPUT_SPEAKERS = (USER, "tool", "system")
PARALLEL_TURNS = 4
OUT_TOKENS = 60  # a one-sentence reason and the verdict's fields


@register(
    "sentiment_floor",
    types={"floor": float},
    checks={"floor": lambda v: None if -1 <= v <= 1 else "must be between -1 and 1"},
    floor=-0.5,
)
def sentiment_floor(turns: Sequence[TurnView], *, floor: float) -> DetectorResult:
    """Flag customer turns whose sentiment is at or below the floor."""
    hits = [(t.index, sentiment(t.text)) for t in turns if t.speaker == USER and t.text]
    low = [(i, s) for i, s in hits if s <= floor]
    if not low:
        return DetectorResult(False, [], f"No customer turn at or below sentiment {floor:+.2f}.")
    worst = min(low, key=lambda x: x[1])
    return DetectorResult(
        True,
        [i for i, _ in low],
        f"{len(low)} customer turn(s) at or below sentiment {floor:+.2f}; "
        f"lowest {worst[1]:+.2f} at turn {worst[0]}.",
    )


@register(
    "loop_detector",
    types={"similarity": float},
    checks={"similarity": lambda v: None if 0 < v <= 1 else "must be above 0, at most 1"},
    similarity=0.6,
)
def loop_detector(turns: Sequence[TurnView], *, similarity: float) -> DetectorResult:
    """Flag customer turns that ask for a human, re-ask, or repeat an earlier message."""
    r = loop_check(
        [(t.index, t.text) for t in turns if t.speaker == USER and t.text], similarity=similarity
    )
    if not r.flagged:
        return DetectorResult(False, [], "No loop: no re-asking, repeats or requests for a human.")
    turns_text = ", ".join(map(str, r.turns[:6])) + ("…" if len(r.turns) > 6 else "")
    return DetectorResult(
        True, list(r.turns), f"Loop signals ({', '.join(r.kinds)}) at turns {turns_text}."
    )


def _config(**over) -> rt.ClassifierConfig:
    """The classifiers' configuration for stored calls: no caller waits, so a model call gets
    the judge's timeout rather than a live turn's budget."""
    from django.conf import settings

    cfg = rt.classifier_config()
    return replace(cfg, timeout_s=max(cfg.timeout_s, settings.JUDGE_TIMEOUT_S), **over)


def _ctx(context: DetectorContext, turn: int) -> rt.Context:
    return rt.Context(
        tenant=context.tenant,
        agent=context.agent,
        agent_version=context.agent_version,
        call=context.call,
        turn=turn,
        log=False,
        meter=context.meter,
    )


def _calls(prompts: list[list[dict]]) -> list[ModelCall]:
    """The model calls that send these prompts, for a run's estimate."""
    model = _config().model
    return [
        ModelCall(model, estimate_tokens(sum(len(m["content"]) for m in p)), OUT_TOKENS)
        for p in prompts
    ]


def _each(items: list, check: Callable) -> list:
    """Run check(item) for every item, a few at a time (each may be a model call)."""
    if len(items) <= 1:
        return [check(i) for i in items]
    with ThreadPoolExecutor(max_workers=PARALLEL_TURNS) as pool:
        return list(pool.map(check, items))


def _recent(turns: Sequence[TurnView], index: int) -> list[dict]:
    before = [t for t in turns if t.index < index and t.speaker in SPOKEN]
    return [{"speaker": t.speaker, "text": t.text} for t in before[-rt.RECENT_TURNS :]]


def _model_judge(classifier: str) -> tuple[str, str, str, str]:
    model = rt.classifier_config().model
    version = rt.PROMPT_VERSIONS[classifier]
    return f"classifier/{classifier}/{model}/{version}", "classifier", model, version


def _model_missing() -> str:
    """Why the classifiers' model cannot be called now ("" when it can): the judge runner skips
    such a check as "needs a model" instead of recording an errored verdict."""
    if _config().llm_configured:
        return ""
    return (
        "no classifier model is configured (DOCKET_CLASSIFIER_BASE_URL or "
        "DOCKET_CLASSIFIER_API_KEY, or the judge's)"
    )


def _injection_judge(params: dict) -> tuple[str, str, str, str]:
    if not params.get("llm"):
        return PATTERNS_JUDGE, "classifier", "patterns", PATTERNS_VERSION
    return _model_judge(rt.INJECTION)


def _inputs(turns: Sequence[TurnView]) -> list[TurnView]:
    return [t for t in turns if t.speaker in INPUT_SPEAKERS and t.text.strip()]


def _injection_calls(
    turns: Sequence[TurnView], context: DetectorContext, params: dict
) -> list[ModelCall]:
    """At most one call per input long enough to ask (a short one the patterns flag is not)."""
    return _calls(
        [
            rt.injection_messages(t.text, t.speaker)
            for t in _inputs(turns)
            if len(t.text.strip()) >= rt.SHORT_INPUT_CHARS
        ]
    )


@register(
    "injection_guard",
    types={"llm": bool},
    context=True,
    judge=_injection_judge,
    uses_model=lambda params: bool(params.get("llm")),
    model_missing=_model_missing,
    model_calls=_injection_calls,
    llm=False,
)
def injection_guard(
    turns: Sequence[TurnView], *, context: DetectorContext, llm: bool
) -> DetectorResult:
    """The injection guard on every customer, tool and system turn."""
    cfg = _config(injection_llm=llm)
    if llm and not cfg.llm_configured:
        return DetectorResult(False, error="no classifier model is configured")
    checked = _each(
        _inputs(turns),
        lambda t: (
            t.index,
            rt.classify_injection(t.text, source=t.speaker, ctx=_ctx(context, t.index), config=cfg),
        ),
    )
    return checks.call_result(
        rt.INJECTION, checked, nothing="No customer, tool or system turns to check."
    )


def _replies(turns: Sequence[TurnView]) -> list[TurnView]:
    return [
        t for t in turns if t.speaker == "agent" and len(t.text.strip()) >= rt.SHORT_REPLY_CHARS
    ]


def _scope_calls(
    turns: Sequence[TurnView], context: DetectorContext, params: dict
) -> list[ModelCall]:
    """One call per agent reply long enough to drift, when the agent version has instructions."""
    if not context.instructions.strip():
        return []
    return _calls(
        [
            rt.scope_messages(
                t.text,
                instructions=context.instructions,
                tools=context.tools,
                turns=_recent(turns, t.index),
            )
            for t in _replies(turns)
        ]
    )


@register(
    "scope_drift",
    types={},
    context=True,
    judge=lambda params: _model_judge(rt.SCOPE_DRIFT),
    uses_model=lambda params: True,
    model_missing=_model_missing,
    model_calls=_scope_calls,
)
def scope_drift(turns: Sequence[TurnView], *, context: DetectorContext) -> DetectorResult:
    """Every agent reply against the agent version's instructions."""
    if not context.instructions.strip():
        return DetectorResult(
            False, [], "The agent version has no instructions: nothing to drift from."
        )
    cfg = _config()
    if not cfg.llm_configured:
        return DetectorResult(False, error="no classifier model is configured")
    checked = _each(
        _replies(turns),
        lambda t: (
            t.index,
            rt.classify_scope_drift(
                t.text,
                instructions=context.instructions,
                tools=context.tools,
                turns=_recent(turns, t.index),
                ctx=_ctx(context, t.index),
                config=cfg,
            ),
        ),
    )
    return checks.call_result(
        rt.SCOPE_DRIFT, checked, nothing="No agent reply long enough to drift."
    )


def _frustrated(turns: Sequence[TurnView], *, only_signalled: bool) -> list[TurnView]:
    """The customer turns frustration attribution asks about."""
    users = [t for t in turns if t.speaker == USER and t.text.strip()]
    if only_signalled:
        loops = set(loop_check([(t.index, t.text) for t in users]).turns)
        users = [t for t in users if t.index in loops or sentiment(t.text) <= rt.SENTIMENT_FLOOR]
    return users


def _frustration_calls(
    turns: Sequence[TurnView], context: DetectorContext, params: dict
) -> list[ModelCall]:
    """One call per customer turn asked about."""
    return _calls(
        [
            rt.frustration_messages(t.text, _recent(turns, t.index))
            for t in _frustrated(turns, only_signalled=params["only_signalled"])
        ]
    )


@register(
    "frustration_attribution",
    types={"only_signalled": bool},
    context=True,
    judge=lambda params: _model_judge(rt.FRUSTRATION),
    uses_model=lambda params: True,
    model_missing=_model_missing,
    model_calls=_frustration_calls,
    only_signalled=True,
)
def frustration_attribution(
    turns: Sequence[TurnView], *, context: DetectorContext, only_signalled: bool
) -> DetectorResult:
    """At whom the customer's frustration is aimed, on the turns where a signal fires."""
    cfg = _config()
    if not cfg.llm_configured:
        return DetectorResult(False, error="no classifier model is configured")
    checked = _each(
        _frustrated(turns, only_signalled=only_signalled),
        lambda t: (
            t.index,
            rt.classify_frustration(
                t.text, turns=_recent(turns, t.index), ctx=_ctx(context, t.index), config=cfg
            ),
        ),
    )
    return checks.call_result(
        rt.FRUSTRATION, checked, nothing="No frustrated customer turn (no signal fired)."
    )
