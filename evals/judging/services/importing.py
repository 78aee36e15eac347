"""Verdicts: one a line, keyed by (transcript, rule version, judge), written in bulk."""

import itertools
import logging
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Annotated, Any, Literal

import msgspec
import orjson
from django.db import IntegrityError, connection, transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from core.data_versions import data_changed
from core.import_kinds import ImportKind
from core.importing import (
    Errors,
    ImportResult,
    Invalid,
    Progress,
    chunked,
    copy_rows,
    copy_text,
    gc_paused,
    is_postgres,
    json_records,
)
from evals.catalog.models import Transcript, Turn
from evals.judging.models import Judge, Verdict
from evals.judging.services.counts import verdict_counts_compact_on_commit
from evals.judging.services.runs import judge_items_cancel_replaced
from evals.rules.models import RuleVersion, Severity

logger = logging.getLogger(__name__)

SEVERITIES = frozenset(Severity.values)
MAX_INT32 = 2**31 - 1  # the columns' range: a larger number is a mistake, not a database error
CHUNK_LINES = 50_000  # lines checked and written at a time: bounds the memory an import holds
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
    number = _int(
        number, "rule_version", low=1, high=MAX_INT32, what="a version number (1, 2, ...)"
    )
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
        turn = _int(turn, "turn", low=0, high=MAX_INT32, what="a turn index (0, 1, ...)")
    if turns is not None and turns != []:
        if type(turns) is not list:
            raise Invalid("turns", "must be a list of turn indices")
        turns = [
            _int(t, f"turns[{i}]", low=0, high=MAX_INT32, what="a turn index (0, 1, ...)")
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
    if severity and (type(severity) is not str or severity not in SEVERITIES):
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


_Name = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
_TurnIndex = Annotated[int, msgspec.Meta(ge=0, le=MAX_INT32)]


class _Line(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A verdict line as most files write it, typed so that msgspec checks each field while it
    parses: anything else (another field, a float for a number, a missing name, ...) is not
    matched and is read again by _verdict, which says what is wrong."""

    transcript: _Name
    rule: _Name
    rule_version: Annotated[int, msgspec.Meta(ge=1, le=MAX_INT32)]
    judge: _Name
    flagged: bool | None = None
    turn: _TurnIndex | None = None
    turns: list[_TurnIndex] | None = None
    severity: Literal[(*sorted(SEVERITIES), "")] | None = None
    rationale: str | None = None
    confidence: Annotated[int, msgspec.Meta(ge=0, le=100)] | None = None
    error: str | None = None


def _verdict_reader(
    names: dict[str, str], *, copy: bool = False
) -> Callable[[str | bytes], tuple | None]:
    """Return a reader of one well-formed line into _verdict's tuple, its names kept once in
    `names` (many lines name the same transcript, rule and judge); None when _verdict must tell
    why not (a line holding a NUL escape among them: json_records leaves that check to it). With
    `copy`, the rationale and error come as fields of COPY's text format."""
    decode = msgspec.json.Decoder(_Line).decode
    intern = names.setdefault

    def read(line: str | bytes) -> tuple | None:
        # A JSON string holds a backslash, tab, newline, carriage return or NUL only as an escape,
        # which starts with a backslash: a line without one has nothing COPY must escape and no
        # NUL. Looked for in the line (memchr) rather than in each text: a regular expression per
        # text was a sixth of the CPU of the loop that checks the lines (bench/import_verdicts.py).
        is_bytes = type(line) is bytes
        escaped = line.find(b"\\" if is_bytes else "\\") >= 0
        if escaped and line.find(b"\\u0000" if is_bytes else "\\u0000") >= 0:
            return None
        v = decode(line)
        flagged, turn, turns, error = v.flagged, v.turn, v.turns, v.error or ""
        if turns:
            if turn is None:
                turn = turns[0]
            elif turn != turns[0]:
                return None
            if len(turns) > 1 and len(set(turns)) != len(turns):
                return None
        else:
            turns = None if turn is None else [turn]
        if flagged is None:
            if not error:
                return None
            flagged = False
        if not flagged and turn is not None:
            return None
        t, r, j, rationale = v.transcript, v.rule, v.judge, v.rationale or ""
        if copy and escaped:
            rationale, error = copy_text(rationale), copy_text(error)
        return (
            intern(t, t),
            intern(r, r),
            v.rule_version,
            intern(j, j),
            flagged,
            turn,
            turns,
            v.severity or "",
            rationale,
            v.confidence,
            error,
        )

    return read


def _transcripts_last_turn(external_ids: Sequence[str]) -> list[tuple[str, int, int | None]]:
    """Return (external id, pk, last turn's index) of the transcripts stored among these; the
    last turn is found through the (transcript, index) key, one probe per call."""
    if is_postgres():
        # The ids as one array: the ORM's IN prepares each of them, four times the CPU.
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT t.external_id, t.id, (SELECT u.index FROM {Turn._meta.db_table} u "
                "WHERE u.transcript_id = t.id ORDER BY u.index DESC LIMIT 1) "
                f"FROM {Transcript._meta.db_table} t WHERE t.external_id = ANY(%s)",
                [list(external_ids)],
            )
            return cursor.fetchall()
    last_turn = Turn.objects.filter(transcript=OuterRef("pk")).order_by("-index")
    return list(
        Transcript.objects.filter(external_id__in=external_ids)
        .annotate(last=Subquery(last_turn.values("index")[:1]))
        .values_list("external_id", "pk", "last")
    )


def _key(transcript: int, rule_version: int, judge: int) -> int:
    """One int for a verdict's key (smaller than a tuple, for the keys an import remembers)."""
    return (transcript << 64) | (rule_version << 32) | judge


class _Import:
    """One import, streamed: lines are checked and written a chunk at a time in one transaction,
    so the file is never held whole; the first bad line stops the writing (the transaction is
    rolled back) while the rest is still checked, so one run reports up to MAX_ERRORS lines."""

    def __init__(self, errors: Errors, progress: Progress | None):
        self.errors = errors
        self.progress = progress
        # external id -> (pk, turns, its part of a packed key, its COPY field)
        self.transcripts: dict[str, tuple[int, int, int, str] | None] = {}
        # (rule, n) -> (pk, severity, its part of a packed key, its COPY field)
        self.versions: dict[tuple[str, int], tuple[int, str, int, str]] = {}
        self.rules_seen: set[str] = set()
        self.judges: dict[str, int] = {}
        self.new_judges: set[str] = set()
        self.seen: dict[int, str] = {}  # packed key (_key) -> the line it was first on
        self.now = timezone.now()
        # PostgreSQL: rows are lines of COPY's text format, made as each line is checked (a
        # third of the CPU of psycopg formatting tuples later).
        self.copy_lines = is_postgres()
        self.created = 0
        self.unchanged = 0

    def add(self, parsed: list[tuple]) -> None:
        """Check a chunk of parsed lines (_parsed_chunks); write its new verdicts unless an
        error was found."""
        transcripts = {v[0] for _, v in parsed}
        versions = {(v[1], v[2]) for _, v in parsed}
        judge_names = {v[3] for _, v in parsed}
        self._resolve(transcripts, {r for r, _ in versions}, judge_names)
        existing = self._existing(transcripts, versions, judge_names)
        rows = []
        append = rows.append
        add_error = self.errors.add
        # Bound once: this loop runs once a line.
        transcript_of, version_of, judges = self.transcripts.get, self.versions.get, self.judges
        first_seen, now, copy_lines = self.seen.setdefault, self.now, self.copy_lines
        # Each id is made text (and its part of the key) once, not once a line: a fifth of this
        # loop's CPU (bench/import_verdicts.py).
        judge_field = {name: f"{pk}\t" for name, pk in judges.items()}
        stamp = copy_text(str(now))
        unchanged = 0
        for where, (
            t,
            r,
            number,
            j,
            flagged,
            turn,
            turns,
            severity,
            rationale,
            conf,
            error,
        ) in parsed:
            tr = transcript_of(t)
            if tr is None:
                add_error(
                    where, "transcript", f"{t} is not imported (import the transcripts first)"
                )
                continue
            rv = version_of((r, number))
            if rv is None:
                known = sorted(n for rid, n in self.versions if rid == r)
                has = (
                    f"its versions are {', '.join(map(str, known))}"
                    if known
                    else "no such rule is imported"
                )
                add_error(where, "rule_version", f"{r} version {number} does not exist ({has})")
                continue
            if turns and max(turns) >= tr[1]:
                bad = next(i for i, x in enumerate(turns) if x >= tr[1])
                add_error(
                    where,
                    f"turns[{bad}]" if len(turns) > 1 else "turn",
                    f"turn {turns[bad]} is beyond {t}'s {tr[1]} turns",
                )
                continue
            judge = judges[j]
            key = tr[2] | rv[2] | judge  # _key, its parts made once
            first = first_seen(key, where)
            if first is not where:
                add_error(
                    where,
                    "judge",
                    f"the verdict of {j} on {t} for {r} v{number} appears twice (first at {first})",
                )
                continue
            if key in existing:
                unchanged += 1
                continue
            if flagged and not severity:
                severity = rv[1]
            turns = orjson.dumps(turns).decode() if turns else "[]"
            if copy_lines:
                # The rationale and error come escaped (_parsed_chunks); the severity is one of
                # three words and the turns are JSON numbers.
                append(
                    f"{tr[3]}{rv[3]}{judge_field[j]}{'t' if flagged else 'f'}\t"
                    f"{'\\N' if turn is None else turn}\t{turns}\t{severity}\t{rationale}\t"
                    f"{'\\N' if conf is None else conf}\t{error}\t{stamp}\n"
                )
                continue
            append(
                (tr[0], rv[0], judge, flagged, turn, turns, severity, rationale, conf, error, now)
            )
        self.unchanged += unchanged
        if rows and not self.errors:
            self._write(rows)

    def _resolve(self, transcripts: set[str], rules: set[str], judges: set[str]) -> None:
        """Look up the transcripts, rules' versions and judges a chunk names for the first time."""
        new_ext = sorted(transcripts - self.transcripts.keys())
        for part in chunked(new_ext):
            self.transcripts.update(dict.fromkeys(part))
            for ext, pk, last in _transcripts_last_turn(part):
                self.transcripts[ext] = (pk, 0 if last is None else last + 1, pk << 64, f"{pk}\t")
        new_rules = sorted(rules - self.rules_seen)
        for part in chunked(new_rules):
            self.rules_seen.update(part)
            for rid, number, pk, severity in RuleVersion.objects.filter(
                rule__rule_id__in=part
            ).values_list("rule__rule_id", "number", "pk", "rule__severity"):
                self.versions[(rid, number)] = (pk, severity, pk << 32, f"{pk}\t")
        new_judges = judges - self.judges.keys()
        if new_judges:
            self.judges.update(Judge.objects.filter(name__in=new_judges).values_list("name", "pk"))
            for name in sorted(new_judges - self.judges.keys()):
                kind, model, prompt_version = judge_kind_for(name)
                self.judges[name] = Judge.objects.create(
                    name=name, kind=kind, model=model, prompt_version=prompt_version
                ).pk
                self.new_judges.add(name)

    def _existing(
        self, transcripts: set[str], versions: set[tuple[str, int]], judges: set[str]
    ) -> set[int]:
        """Return the keys already stored among those a chunk names (judges new to Docket have
        none)."""
        judge_ids = sorted(self.judges[j] for j in judges - self.new_judges)
        transcript_ids = sorted(
            tr[0] for t in transcripts if (tr := self.transcripts.get(t)) is not None
        )
        if not judge_ids or not transcript_ids:
            return set()
        version_ids = {rv[0] for v in versions if (rv := self.versions.get(v)) is not None}
        if is_postgres():
            # One probe of the verdict key per transcript, whatever the statistics say (OFFSET 0
            # keeps the planner from scanning all of a judge's verdicts right after a bulk load);
            # a plain cursor skips the ORM's per-row work.
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT x.* FROM unnest(%s::bigint[]) AS t(id) CROSS JOIN LATERAL ("
                    "SELECT v.transcript_id, v.rule_version_id, v.judge_id FROM evals_verdict v "
                    "WHERE v.transcript_id = t.id AND v.judge_id = ANY(%s::bigint[]) OFFSET 0) x",
                    [transcript_ids, judge_ids],
                )
                rows = cursor.fetchall()
        else:
            rows = [
                row
                for part in chunked(transcript_ids, 5000)
                for row in Verdict.objects.filter(
                    transcript_id__in=part, judge_id__in=judge_ids
                ).values_list("transcript_id", "rule_version_id", "judge_id")
            ]
        return {_key(t, rv, j) for t, rv, j in rows if rv in version_ids}

    def _write(self, rows: list[tuple]) -> None:
        written = verdict_rows_write(rows)
        self.created += written
        self.unchanged += len(rows) - written
        if self.progress:
            self.progress(self.created, None)


def verdict_rows_write(rows: list[tuple] | list[str]) -> int:
    """COPY new verdicts in (values in VERDICT_COLUMNS order, turns as JSON text; or, on
    PostgreSQL, lines of COPY's text format); return how many were written. When another import
    stored some of these keys since they were looked up, the rows are written again skipping
    those, as a no-op would. Must run inside a transaction."""
    verdict_counts_compact_on_commit()  # the COPY's triggers append the counts' deltas
    lines = bool(rows) and type(rows[0]) is str
    try:
        with transaction.atomic():
            return copy_rows(Verdict, VERDICT_COLUMNS, rows, total=len(rows), lines=lines)
    except IntegrityError:
        return copy_rows(
            Verdict, VERDICT_COLUMNS, rows, total=len(rows), conflict=VERDICT_KEY, lines=lines
        )


def _parsed_chunks(
    lines: Iterable[str | bytes], errors: Errors, *, copy: bool = False
) -> Iterator[list[tuple]]:
    """Yield the lines' records, parsed and checked field by field, CHUNK_LINES at a time (with
    `copy`, their rationale and error as fields of COPY's text format).

    In the importing thread: parsing a chunk ahead in a thread of its own, to overlap the
    database's work on the chunk before, saved no wall-clock time and cost a quarter more of
    Python's CPU in the two threads' turns at the interpreter lock (bench/import_verdicts.py).
    """
    names: dict[str, str] = {}
    intern = names.setdefault
    read = _verdict_reader(names, copy=copy)
    # Each field kept is checked (by `read` or _verdict), so records are not walked whole.
    records = json_records(lines, errors, check="nul", fast=read)
    while batch := list(itertools.islice(records, CHUNK_LINES)):
        parsed = []
        for item in batch:
            if type(item[1]) is not tuple:  # a line `read` left to _verdict
                where, obj = item
                try:
                    t, r, number, j, *rest = _verdict(obj)
                except Invalid as exc:
                    errors.add(where, exc.field, exc.reason)
                    continue
                if copy:
                    rest[4], rest[6] = copy_text(rest[4]), copy_text(rest[6])
                item = (where, (intern(t, t), intern(r, r), number, intern(j, j), *rest))
            parsed.append(item)
        yield parsed


def verdicts_import(
    *, lines: Iterable[str | bytes], source: str = "", progress: Progress | None = None
) -> ImportResult:
    """Import verdicts (one a line). A key (transcript, rule version, judge) already stored is
    left as it is and counted unchanged, even when the line differs: a verdict, once marked,
    never changes. Judges are created by name when new. Nothing is written unless every line
    is valid.

    Streamed (bench/import_verdicts.py): CHUNK_LINES lines at a time are parsed, their names
    looked up once each, and their new verdicts copied in, all in one
    transaction; the memory held does not grow with the file. A well-formed line is parsed and
    checked by a typed decoder (_Line); any other is read again by _verdict, whose error names
    the line and the field.
    """
    started = time.perf_counter()
    errors = Errors(source)
    result = ImportResult(kind="verdicts")
    with gc_paused(), transaction.atomic():
        job = _Import(errors, progress)
        # The keys are checked once per COPY (core.bulk_keys), each chunk locking the calls it
        # names: files in call order (as judges write them) lock each call once.
        for parsed in _parsed_chunks(lines, errors, copy=job.copy_lines):
            job.add(parsed)
        errors.check()
        data_changed("verdicts")  # again once committed: the trigger's bump came before the commit
        result.created, result.unchanged = job.created, job.unchanged
        result.details["new_judges"] = len(job.new_judges)
    result.timings["total"] = time.perf_counter() - started
    logger.info("verdicts_imported", extra=result.log_extra(source))
    return result


def verdicts_forget(transcript_ids: list[int]) -> dict[str, int]:
    """Delete the verdicts (and through them the marks) made on calls whose turns a replace
    changed, and cancel the checks in flight on them; return how many of each (the transcript
    importer's call part, see apps.py)."""
    _, deleted = Verdict.objects.filter(transcript_id__in=transcript_ids).delete()
    verdict_counts_compact_on_commit()
    return {
        "deleted_verdicts": deleted.get(Verdict._meta.label, 0),
        "deleted_marks": sum(n for label, n in deleted.items() if label.endswith(".Mark")),
        # Checks of running judge runs planned on the old text will store nothing.
        "cancelled_checks": judge_items_cancel_replaced(transcript_ids),
    }


VERDICTS_KIND = ImportKind(
    name="verdicts",
    label="Verdicts",
    formats="JSON Lines, one verdict a line: transcript, rule, rule_version, judge, flagged, ...",
    run=lambda *, lines, source, progress, **_: verdicts_import(
        lines=lines, source=source, progress=progress
    ),
    command="import_verdicts",
    api="api-verdicts-import",
    order=30,
)
