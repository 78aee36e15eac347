"""Verdicts: one a line, keyed by (transcript, rule version, judge), written in bulk."""

import logging
import re
import time
from collections.abc import Iterable
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Count
from django.utils import timezone

from evals.models import Judge, RuleVersion, Severity, Transcript, Verdict

from .common import (
    Errors,
    ImportResult,
    Invalid,
    Progress,
    chunked,
    copy_rows,
    is_postgres,
    json_records,
    json_text,
)

logger = logging.getLogger(__name__)

SEVERITIES = frozenset(Severity.values)
VERDICT_COLUMNS = (
    "transcript_id",
    "rule_version_id",
    "judge_id",
    "flagged",
    "turn",
    "turns",
    "severity",
    "rationale",
    "confidence",
    "error",
    "created_at",
)
VERDICT_KEY = ("transcript", "rule_version", "judge")
LLM_NAME_RE = re.compile(
    r"^(gpt|o\d|claude|gemini|llama|mistral|mixtral|qwen|deepseek|phi|command)", re.IGNORECASE
)


def judge_kind_for(name: str) -> tuple[str, str, str]:
    """Return (kind, model, prompt_version) guessed from
    a judge's name, for judges first seen in an import.

    `detector:<name>` or `detector/<name>` is a detector, `classifier:...` a classifier,
    `<llm model>/<prompt version>` (gpt-4o-mini/conduct-v3) an LLM judge; anything else is external.
    """
    head, sep, tail = name.replace(":", "/", 1).partition("/")
    if head.lower() in ("detector", "detectors"):
        return Judge.Kind.DETECTOR, "", ""
    if head.lower() in ("classifier", "classifiers"):
        return Judge.Kind.CLASSIFIER, "", ""
    if LLM_NAME_RE.match(name):
        return Judge.Kind.LLM, head[:200], tail[:100] if sep else ""
    return Judge.Kind.EXTERNAL, "", ""


def _int(
    value: Any, field: str, *, low: int, high: int | None = None, what: str = "a whole number"
) -> int:
    if type(value) is not int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise Invalid(field, f"must be {what}, not {value!r}")
    if value < low or (high is not None and value > high):
        raise Invalid(field, f"must be {what}, not {value!r}")
    return value


def _name(obj: dict, name: str, hint: str) -> str:
    value = obj.get(name)
    if type(value) is not str or not value:
        if value is None or value == "":
            raise Invalid(name, f"missing ({hint})")
        raise Invalid(name, f"must be a string, not {type(value).__name__}")
    if len(value) > 200:
        raise Invalid(name, "longer than 200 characters")
    return value


def _verdict(obj: Any) -> tuple:
    """Return (transcript, rule, number, judge, flagged,
    turn, turns, severity, rationale, confidence, error)."""
    if type(obj) is not dict:
        raise Invalid("verdict", "must be a JSON object")
    transcript = _name(obj, "transcript", "the transcript's id")
    rule = _name(obj, "rule", "the rule's id")
    number = obj.get("rule_version")
    if number is None:
        raise Invalid("rule_version", "missing (the rule's version number)")
    number = _int(number, "rule_version", low=1, what="a version number (1, 2, ...)")
    judge = _name(obj, "judge", "the judge's name, e.g. gpt-4o-mini/conduct-v3")
    error = obj.get("error") or ""
    if type(error) is not str:
        raise Invalid("error", "must be a string")
    flagged = obj.get("flagged")
    if flagged is None and error:
        flagged = False
    elif type(flagged) is not bool:
        raise Invalid(
            "flagged",
            "missing (true or false)"
            if flagged is None
            else f"must be true or false, not {flagged!r}",
        )
    turn = obj.get("turn")
    turns = obj.get("turns")
    if turn is not None:
        turn = _int(turn, "turn", low=0, what="a turn index (0, 1, ...)")
    if turns is not None and turns != []:
        if type(turns) is not list:
            raise Invalid("turns", "must be a list of turn indices")
        turns = [
            _int(t, f"turns[{i}]", low=0, what="a turn index (0, 1, ...)")
            for i, t in enumerate(turns)
        ]
        if len(set(turns)) != len(turns):
            raise Invalid("turns", "cites a turn twice")
        if turn is None:
            turn = turns[0]
        elif turn != turns[0]:
            raise Invalid("turn", f"must be the first of turns ({turns[0]}), not {turn}")
    else:
        turns = [turn] if turn is not None else None
    if not flagged and turn is not None:
        raise Invalid(
            "turn" if obj.get("turn") is not None else "turns",
            "a verdict that is not flagged cites no turn",
        )
    severity = obj.get("severity") or ""
    if severity and severity not in SEVERITIES:
        raise Invalid("severity", f"{severity!r} is not one of minor, major, critical")
    rationale = obj.get("rationale") or ""
    if type(rationale) is not str:
        raise Invalid("rationale", "must be a string")
    confidence = obj.get("confidence")
    if confidence is not None:
        confidence = _int(
            confidence, "confidence", low=0, high=100, what="a whole number from 0 to 100"
        )
    return (
        transcript,
        rule,
        number,
        judge,
        flagged,
        turn,
        turns,
        severity,
        rationale,
        confidence,
        error,
    )


def _lookups(parsed: list[tuple]) -> tuple[dict, dict, dict]:
    """Return {external id: (pk, turn count)}, {(rule
    id, number): (pk, severity)}, {judge name: pk}."""
    ext_ids = sorted({p[1] for p in parsed})
    transcripts = {}
    for chunk in chunked(ext_ids):
        for ext, pk, n in (
            Transcript.objects.filter(external_id__in=chunk)
            .annotate(n=Count("turns"))
            .values_list("external_id", "pk", "n")
        ):
            transcripts[ext] = (pk, n)
    wanted = {(p[2], p[3]) for p in parsed}
    versions = {}
    for chunk in chunked(sorted({r for r, _ in wanted})):
        for rid, number, pk, severity in RuleVersion.objects.filter(
            rule__rule_id__in=chunk
        ).values_list("rule__rule_id", "number", "pk", "rule__severity"):
            versions[(rid, number)] = (pk, severity)
    judges = dict(Judge.objects.filter(name__in={p[4] for p in parsed}).values_list("name", "pk"))
    return transcripts, versions, judges


def _existing_keys(transcripts, versions, judges, judge_index, rv_span, n_judges) -> set[int]:
    """Return the packed keys of the verdicts already
    stored for these transcripts, versions and judges."""
    judge_of = {pk: judge_index[name] for name, pk in judges.items() if name in judge_index}
    if not judge_of:
        return set()  # every judge is new: nothing can exist yet
    version_ids = {pk for pk, _ in versions.values()}
    transcript_ids = sorted(pk for pk, _ in transcripts.values())
    keys = set()
    if is_postgres():
        # One query with array parameters; a plain cursor
        # skips the ORM's per-row work (a million rows).
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT transcript_id, rule_version_id, judge_id FROM evals_verdict "
                "WHERE transcript_id = ANY(%s) AND judge_id = ANY(%s)",
                [transcript_ids, list(judge_of)],
            )
            rows = cursor.fetchall()
    else:
        rows = [
            row
            for chunk in chunked(transcript_ids, 5000)
            for row in Verdict.objects.filter(
                transcript_id__in=chunk, judge_id__in=list(judge_of)
            ).values_list("transcript_id", "rule_version_id", "judge_id")
        ]
    for t, rv, j in rows:
        if rv in version_ids:
            keys.add((t * rv_span + rv) * n_judges + judge_of[j])
    return keys


def verdicts_import(
    *, lines: Iterable[str | bytes], source: str = "", progress: Progress | None = None
) -> ImportResult:
    """Import verdicts (one a line). A key (transcript, rule version, judge) already stored is left
    as it is and counted unchanged, even when the line differs: a verdict, once marked, never
    changes. Judges are created by name when new. Nothing is written unless every line is valid."""
    started = time.perf_counter()
    errors = Errors(source)
    parsed: list[tuple] = []
    intern: dict[str, str] = {}
    for where, obj in json_records(lines, errors):
        try:
            v = _verdict(obj)
        except Invalid as exc:
            errors.add(where, exc.field, exc.reason)
            continue
        # Many lines share a transcript, rule and judge: keep one copy of each name.
        t, r, j = (intern.setdefault(s, s) for s in (v[0], v[1], v[3]))
        parsed.append((where, t, r, v[2], j) + v[4:])
    # Lines that parsed are checked against the database
    # too, so one run reports both kinds of error.

    result = ImportResult(kind="verdicts")
    result.timings["parse"] = time.perf_counter() - started
    with transaction.atomic():
        transcripts, versions, judges = _lookups(parsed)
        judge_index = {name: i for i, name in enumerate(sorted({p[4] for p in parsed}))}
        n_judges = len(judge_index) + 1
        rv_span = max((v[0] for v in versions.values()), default=0) + 1
        existing = _existing_keys(transcripts, versions, judges, judge_index, rv_span, n_judges)
        seen: set[int] = set()
        rows = []
        unchanged = 0
        for (
            where,
            t,
            r,
            number,
            j,
            flagged,
            turn,
            turns,
            severity,
            rationale,
            confidence,
            error,
        ) in parsed:
            tr = transcripts.get(t)
            if tr is None:
                errors.add(
                    where, "transcript", f"{t} is not imported (import the transcripts first)"
                )
                continue
            rv = versions.get((r, number))
            if rv is None:
                known = sorted(n for rid, n in versions if rid == r)
                has = (
                    f"its versions are {', '.join(map(str, known))}"
                    if known
                    else "no such rule is imported"
                )
                errors.add(where, "rule_version", f"{r} version {number} does not exist ({has})")
                continue
            if turns and max(turns) >= tr[1]:
                bad = next(i for i, x in enumerate(turns) if x >= tr[1])
                errors.add(
                    where,
                    f"turns[{bad}]" if len(turns) > 1 else "turn",
                    f"turn {turns[bad]} is beyond {t}'s {tr[1]} turns",
                )
                continue
            key = (tr[0] * rv_span + rv[0]) * n_judges + judge_index[j]
            if key in seen:
                first = next(p[0] for p in parsed if (p[1], p[2], p[3], p[4]) == (t, r, number, j))
                errors.add(
                    where,
                    "judge",
                    f"the verdict of {j} on {t} for {r} v{number} appears twice (first at {first})",
                )
                continue
            seen.add(key)
            if key in existing:
                unchanged += 1
                continue
            if flagged and not severity:
                severity = rv[1]
            rows.append(
                (
                    tr[0],
                    rv[0],
                    j,
                    flagged,
                    turn,
                    json_text(turns) if turns else "[]",
                    severity,
                    rationale,
                    confidence,
                    error,
                )
            )
        errors.check()
        del seen, existing, parsed
        new_judges = [name for name in judge_index if name not in judges]
        for name in new_judges:
            kind, model, prompt_version = judge_kind_for(name)
            judges[name] = Judge.objects.create(
                name=name, kind=kind, model=model, prompt_version=prompt_version
            ).pk
        result.details["new_judges"] = len(new_judges)
        result.timings["check"] = time.perf_counter() - started - result.timings["parse"]
        now = timezone.now()

        def values():
            return ((t, rv, judges[j], *rest, now) for t, rv, j, *rest in rows)

        created = 0
        if rows:
            try:
                with transaction.atomic():
                    created = copy_rows(
                        Verdict, VERDICT_COLUMNS, values(), total=len(rows), progress=progress
                    )
            except IntegrityError:
                # Another import stored some of these keys since
                # we looked: skip those, as a no-op would.
                created = copy_rows(
                    Verdict,
                    VERDICT_COLUMNS,
                    values(),
                    total=len(rows),
                    conflict=VERDICT_KEY,
                    progress=progress,
                )
        result.created = created
        result.unchanged = unchanged + len(rows) - created
    result.timings["write"] = (
        time.perf_counter() - started - result.timings["parse"] - result.timings["check"]
    )
    logger.info("verdicts_imported", extra=result.log_extra(source))
    return result
