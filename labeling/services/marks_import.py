"""Marks made elsewhere, imported: labels a team already has count like marks made in Docket.

Three shapes, each naming the verdict by its key and the reviewer by username:

- JSON Lines (docs/contract.md), or one JSON array of the same objects:
  {"transcript": ID, "rule": ID, "rule_version": N, "judge": NAME, "reviewer": USERNAME,
   "correct": true|false, "note": "..."}
- CSV with a header row naming the same columns (`note` may be left out); `correct` is true/false,
  right/wrong, yes/no or 1/0.
- Label Studio's JSON export: an array of tasks whose `data` holds the verdict's key (transcript,
  rule, rule_version, judge), each annotation one reviewer's mark: its `choices` result says right
  or wrong (from the control named `correct`, or the only one), a `textarea` result is the note,
  and `completed_by` is the reviewer (its `email` when the export gives the user, `label-studio-N`
  for user id N otherwise). Cancelled (skipped) annotations are left out and counted.

An import is all or nothing and idempotent: every line is checked first (errors name the line, or
`item N`, and the field), then every mark is written by `marks_write`, the service the review page
uses, so the tally's triggers count imported marks exactly like the others; each keeps where it
came from in `Mark.source`. A mark that says what the reviewer's mark already says is unchanged;
another answer or note changes it. The reviewer must be a user who may review (the reviewer or
lead role), unless `create_reviewers` makes the missing ones reviewers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import transaction

from core.errors import DomainError
from core.import_kinds import ImportKind, ImportOption
from core.importing import (
    Errors,
    ImportResult,
    Invalid,
    Progress,
    chunked,
    csv_records,
    json_records,
)
from core.permissions import users_with_permission
from core.roles import REVIEWER, roles_sync
from evals.catalog.models import Transcript
from evals.judging.models import Judge, Verdict
from evals.rules.models import RuleVersion
from labeling.services.marks import MarkInput, _clean_note, mark_refusal, marks_write

logger = logging.getLogger(__name__)

FIELDS = ("transcript", "rule", "rule_version", "judge", "reviewer", "correct", "note")
KEY_FIELDS = ("transcript", "rule", "rule_version", "judge")
FORMATS = ("jsonl", "csv", "label-studio")  # label-studio reads as JSON: tasks tell themselves
FORMAT_NAMES = {"jsonl": "JSON Lines", "csv": "CSV", "label-studio": "Label Studio"}
TRUE_WORDS = {"true", "right", "correct", "yes", "1"}
FALSE_WORDS = {"false", "wrong", "incorrect", "no", "0"}
MAX_INT32 = 2**31 - 1


def _text(obj: dict, name: str, hint: str, *, where: str = "") -> str:
    value = obj.get(name)
    field = f"{where}{name}"
    if value is None or value == "":
        raise Invalid(field, f"missing ({hint})")
    if type(value) is not str:
        raise Invalid(field, f"must be a string, not {type(value).__name__}")
    if len(value) > 200:
        raise Invalid(field, "longer than 200 characters")
    return value


def _version(value: Any, field: str) -> int:
    if value is None or value == "":
        raise Invalid(field, "missing (the rule's version number)")
    if type(value) is str and value.strip().isascii() and value.strip().isdigit():
        value = int(value.strip())  # ASCII only: "²" is a digit to isdigit() but not to int()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if type(value) is not int or not 1 <= value <= MAX_INT32:
        raise Invalid(field, f"must be a version number (1, 2, ...), not {value!r}")
    return value


def _correct(value: Any, field: str = "correct") -> bool:
    if type(value) is bool:
        return value
    if type(value) is str and value.strip().lower() in TRUE_WORDS | FALSE_WORDS:
        return value.strip().lower() in TRUE_WORDS
    if value is None or value == "":
        raise Invalid(field, "missing (true: the judge was right, false: wrong)")
    raise Invalid(field, f"must be true or false (or right/wrong), not {value!r}")


def _note(value: Any, field: str = "note") -> str:
    if value is None:
        return ""
    if type(value) is not str:
        raise Invalid(field, "must be a string")
    try:
        return _clean_note(value)
    except DomainError as exc:
        raise Invalid(field, str(exc).removeprefix("note: ")) from None


def _key(obj: dict, where: str = "") -> tuple[str, str, int, str]:
    return (
        _text(obj, "transcript", "the transcript's id", where=where),
        _text(obj, "rule", "the rule's id", where=where),
        _version(obj.get("rule_version"), f"{where}rule_version"),
        _text(obj, "judge", "the judge's name, e.g. gpt-4o-mini/conduct-v3", where=where),
    )


def _mark(obj: Any) -> tuple:
    """Return (key, reviewer, correct, note) of one mark object (a JSON line, a CSV row)."""
    if type(obj) is not dict:
        raise Invalid("mark", "must be a JSON object")
    unknown = sorted(set(obj) - set(FIELDS))
    if unknown:
        raise Invalid(unknown[0], f"unknown field (a mark has {', '.join(FIELDS)})")
    return (
        _key(obj),
        _text(obj, "reviewer", "the reviewer's username"),
        _correct(obj.get("correct")),
        _note(obj.get("note")),
    )


def _label_studio_reviewer(completed_by: Any, field: str) -> str:
    if isinstance(completed_by, dict):
        email = completed_by.get("email")
        if isinstance(email, str) and email:
            return email
        completed_by = completed_by.get("id")
    if type(completed_by) is int:
        return f"label-studio-{completed_by}"
    raise Invalid(field, "missing (the annotator: a user id, or a user with an email)")


def _label_studio_marks(task: dict) -> Iterator[tuple[str, tuple | None]]:
    """Yield (field prefix, mark) for each annotation of a Label Studio task; a cancelled one as
    (prefix, None)."""
    data = task.get("data")
    if not isinstance(data, dict):
        raise Invalid("data", "missing (the task's data, holding the verdict's key)")
    key = _key(data, where="data.")
    annotations = task.get("annotations")
    if not isinstance(annotations, list):
        raise Invalid("annotations", "must be a list")
    for i, ann in enumerate(annotations):
        at = f"annotations[{i}]"
        if not isinstance(ann, dict):
            raise Invalid(at, "must be an object")
        if ann.get("was_cancelled"):
            yield at, None
            continue
        reviewer = _label_studio_reviewer(ann.get("completed_by"), f"{at}.completed_by")
        results = ann.get("result")
        if not isinstance(results, list):
            raise Invalid(f"{at}.result", "must be a list")
        choices = [
            (j, r)
            for j, r in enumerate(results)
            if isinstance(r, dict) and r.get("type") == "choices"
        ]
        named = [(j, r) for j, r in choices if r.get("from_name") == "correct"]
        if len(named) == 1 or len(choices) == 1:
            j, chosen = (named or choices)[0]
        else:
            raise Invalid(
                f"{at}.result",
                "needs one choices result saying right or wrong "
                f"(found {len(choices)}; name the control `correct`)",
            )
        picked = (chosen.get("value") or {}).get("choices")
        if not isinstance(picked, list) or len(picked) != 1:
            raise Invalid(f"{at}.result[{j}].value.choices", "must hold exactly one choice")
        correct = _correct(picked[0], f"{at}.result[{j}].value.choices")
        texts = [
            t
            for r in results
            if isinstance(r, dict) and r.get("type") == "textarea"
            for t in ((r.get("value") or {}).get("text") or [])
            if isinstance(t, str)
        ]
        yield at, (key, reviewer, correct, _note(" ".join(texts), f"{at}.result"))


def _records(lines, errors: Errors, fmt: str) -> Iterator[tuple[str, str, tuple | None]]:
    """Yield (where, field prefix, mark or None for a skipped annotation) for every mark read."""
    if fmt == "csv":
        for where, row in csv_records(
            lines, errors, columns=FIELDS, required=[f for f in FIELDS if f != "note"]
        ):
            try:
                yield where, "", _mark(row)
            except Invalid as exc:
                errors.add(where, exc.field, exc.reason)
        return
    for where, obj in json_records(lines, errors):
        try:
            if isinstance(obj, dict) and "annotations" in obj and "data" in obj:
                for prefix, mark in _label_studio_marks(obj):
                    yield where, prefix, mark
            else:
                yield where, "", _mark(obj)
        except Invalid as exc:
            errors.add(where, exc.field, exc.reason)


def format_for(name: str) -> str:
    """Return the format a file's name implies: csv for .csv, else JSON (lines or a document:
    Label Studio tasks are told apart by their content)."""
    return "csv" if name.lower().endswith(".csv") else "jsonl"


class _Resolver:
    """Looks up, a chunk at a time, the verdicts and reviewers the lines name."""

    def __init__(self, create_reviewers: bool):
        self.create_reviewers = create_reviewers

    def verdicts(self, keys: set[tuple[str, str, int, str]]) -> dict:
        """Return key -> (verdict id, transcript id, error) for the keys that exist, and the
        reason each other key does not."""
        transcripts: dict[str, int] = {}
        for part in chunked(sorted({k[0] for k in keys})):
            transcripts.update(
                Transcript.objects.filter(external_id__in=part).values_list("external_id", "pk")
            )
        versions = {
            (r, n): pk
            for r, n, pk in RuleVersion.objects.filter(
                rule__rule_id__in={k[1] for k in keys}
            ).values_list("rule__rule_id", "number", "pk")
        }
        judges = dict(Judge.objects.filter(name__in={k[3] for k in keys}).values_list("name", "pk"))
        found: dict = {}
        wanted = {
            (transcripts[t], versions[(r, n)], judges[j]): (t, r, n, j)
            for t, r, n, j in keys
            if t in transcripts and (r, n) in versions and j in judges
        }
        ids = sorted({t for t, _, _ in wanted})
        for part in chunked(ids):
            for vid, t, rv, j, error in Verdict.objects.filter(
                transcript_id__in=part, judge_id__in=set(judges.values())
            ).values_list("pk", "transcript_id", "rule_version_id", "judge_id", "error"):
                key = wanted.get((t, rv, j))
                if key is not None:
                    found[key] = (vid, t, error)
        missing = {}
        for t, r, n, j in keys:
            if (t, r, n, j) in found:
                continue
            if t not in transcripts:
                missing[(t, r, n, j)] = ("transcript", f"{t} is not imported")
            elif (r, n) not in versions:
                missing[(t, r, n, j)] = ("rule_version", f"{r} version {n} does not exist")
            elif j not in judges:
                missing[(t, r, n, j)] = ("judge", f"no judge is named {j}")
            else:
                missing[(t, r, n, j)] = (
                    "judge",
                    f"{j} has no verdict on {t} for {r} v{n} (import the verdicts first)",
                )
        return {"found": found, "missing": missing}

    def reviewers(self, names: set[str]) -> dict:
        """Return username -> user id for those who may review, and why each other name cannot
        (or that it is to be created)."""
        User = get_user_model()
        may = {}
        for part in chunked(sorted(names)):
            may.update(
                users_with_permission("review")
                .filter(username__in=part)
                .values_list("username", "pk")
            )
        others = names - may.keys()
        exists = set(User.objects.filter(username__in=others).values_list("username", flat=True))
        problems, create = {}, set()
        validate = UnicodeUsernameValidator()
        for name in others:
            if name in exists:
                problems[name] = f"{name} may not review (not in the reviewer or lead role)"
            elif not self.create_reviewers:
                problems[name] = (
                    f"{name} is not a Docket user (create_reviewers makes them reviewers)"
                )
            else:
                try:
                    validate(name)
                except ValidationError:
                    problems[name] = (
                        f"{name!r} cannot be a username (letters, digits and @ . + - _)"
                    )
                else:
                    create.add(name)
        return {"ids": may, "problems": problems, "create": create}


def marks_import(
    *,
    lines: Iterable[str | bytes],
    source: str = "",
    fmt: str = "jsonl",
    create_reviewers: bool = False,
    origin: str | None = None,
    progress: Progress | None = None,
) -> ImportResult:
    """Import marks (JSON Lines or a JSON array, Label Studio's JSON export, or CSV). Nothing is
    written unless every mark is valid; marks that say what is already there are unchanged.

    `source` names the input in errors (a file name, `body`); `origin` (default: the source) is
    kept on each mark written, with the format read."""
    if fmt not in FORMATS:
        raise ValueError(f"fmt: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    started = time.perf_counter()
    errors = Errors(source)
    result = ImportResult(kind="marks")
    read: list[tuple[str, str, tuple]] = []
    skipped = 0
    label_studio = False
    for where, prefix, mark in _records(lines, errors, fmt):
        label_studio = label_studio or bool(prefix)
        if mark is None:
            skipped += 1
            continue
        read.append((where, prefix, mark))
    resolver = _Resolver(create_reviewers)
    verdicts = resolver.verdicts({m[0] for _, _, m in read})
    reviewers = resolver.reviewers({m[1] for _, _, m in read})
    seen: dict[tuple[int, str], str] = {}
    for where, prefix, (key, reviewer, _, _) in read:
        problem = verdicts["missing"].get(key)
        if problem is not None:
            field = problem[0] if not prefix else f"data.{problem[0]}"
            errors.add(where, field, problem[1])
            continue
        vid, _t, error = verdicts["found"][key]
        refusal = mark_refusal(verdict_id=vid, error=error)
        if refusal:
            errors.add(where, "data.judge" if prefix else "judge", refusal)
            continue
        reviewer_field = f"{prefix}.completed_by" if prefix else "reviewer"
        if reviewer in reviewers["problems"]:
            errors.add(where, reviewer_field, reviewers["problems"][reviewer])
            continue
        place = f"{where} {prefix}".strip()
        first = seen.setdefault((vid, reviewer), place)
        if first != place:
            errors.add(
                where,
                reviewer_field,
                f"{reviewer} marks the verdict of {key[3]} on {key[0]} for {key[1]} v{key[2]} "
                f"twice (first at {first})",
            )
    errors.check()
    kind = "label-studio" if label_studio else fmt
    stamp = f"{origin or source or 'input'} ({FORMAT_NAMES[kind]})"
    with transaction.atomic():
        ids = dict(reviewers["ids"])
        if reviewers["create"]:
            ids.update(_reviewers_create(reviewers["create"]))
        marks = [
            MarkInput(
                verdicts["found"][key][0], verdicts["found"][key][1], ids[reviewer], correct, note
            )
            for _, _, (key, reviewer, correct, note) in read
        ]
        written = marks_write(marks, source=stamp)
    result.created, result.updated, result.unchanged = (
        written.created,
        written.updated,
        written.unchanged,
    )
    result.details["new_reviewers"] = len(reviewers["create"])
    result.details["cancelled_annotations"] = skipped
    result.timings["total"] = time.perf_counter() - started
    if progress:
        progress(len(marks), len(marks))
    logger.info("marks_imported", extra=result.log_extra(source))
    return result


def _reviewers_create(names: set[str]) -> dict[str, int]:
    """Create users in the reviewer role (no usable password: they log in once a lead sets one)."""
    User = get_user_model()
    if not Group.objects.filter(name=REVIEWER).exists():
        roles_sync()  # the roles are made after every migrate; a flushed database lacks them
    group = Group.objects.get(name=REVIEWER)
    users = [User(username=name) for name in sorted(names)]
    for user in users:
        user.set_unusable_password()
    User.objects.bulk_create(users)
    created = list(User.objects.filter(username__in=names))
    group.user_set.add(*created)
    return {u.username: u.pk for u in created}


MARKS_KIND = ImportKind(
    name="marks",
    label="Marks",
    formats="JSON Lines or a JSON array (transcript, rule, rule_version, judge, reviewer, correct, "
    "note), Label Studio's JSON export, or CSV with the same columns",
    run=lambda *, lines, source, progress, by="", create_reviewers=False, **_: marks_import(
        lines=lines,
        source=source,
        fmt=format_for(source),
        create_reviewers=bool(create_reviewers),
        origin=f"{source} from {by}" if by else source,
        progress=progress,
    ),
    options=(
        ImportOption(
            "create_reviewers",
            "Create reviewers",
            help="make a user in the reviewer role for each reviewer the file names that "
            "Docket does not know",
            flag=True,
        ),
    ),
    command="import_marks",
    api="api-marks-import",
    permission="import_marks",
    order=40,
)
