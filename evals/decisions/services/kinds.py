"""Decision kinds from the YAML (or JSON) file teams keep in git, and back.

```yaml
decision_kinds:
  - id: turn-taking
    question: Is the candidate done talking?
    answers: [take the turn, wait]
    derive: turn_gap      # optional: every agent turn right after a user turn is a decision
                          # for the first answer, with the gap between the two
```

A new kind gets version 1; a changed question or answer list gets version n+1 (older decisions
keep theirs); `derive` and `status` are settings, changed in place; the rest is a no-op.
"""

import logging
import re
from typing import Any

import yaml
from django.db.models import Max

from core.import_kinds import ImportKind
from core.importing import ImportResult, Invalid, VersionedConfig, versioned_import
from evals.decisions.models import DecisionKind, DecisionKindVersion

logger = logging.getLogger(__name__)

KIND_FIELDS = ("id", "question", "answers", "derive", "status")
KIND_ID_RE = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*$")
MAX_ANSWERS = 10


def kind_clean(item: Any) -> dict:
    """Return a decision kind's fields from its YAML shape, or raise Invalid naming the field."""
    if not isinstance(item, dict):
        raise Invalid("decision_kind", "expected a mapping with id, question and answers")
    unknown = sorted(set(map(str, item)) - set(KIND_FIELDS))
    if unknown:
        raise Invalid(unknown[0], f"unknown field (known: {', '.join(KIND_FIELDS)})")
    kind_id = item.get("id")
    if not isinstance(kind_id, str) or not kind_id.strip():
        raise Invalid("id", "missing (a stable id such as turn-taking)")
    kind_id = kind_id.strip()
    if len(kind_id) > 50 or not KIND_ID_RE.match(kind_id):
        raise Invalid(
            "id", f"{kind_id!r}: use up to 50 lower-case letters, digits, '.', '-' and '_'"
        )
    question = item.get("question")
    if not isinstance(question, str) or not question.strip():
        raise Invalid("question", "missing (what the reviewer answers at the moment)")
    answers = item.get("answers")
    if not isinstance(answers, list) or not 2 <= len(answers) <= MAX_ANSWERS:
        raise Invalid("answers", f"a list of 2 to {MAX_ANSWERS} answers")
    cleaned = []
    for i, a in enumerate(answers):
        if not isinstance(a, str) or not a.strip() or len(a.strip()) > 100:
            raise Invalid(f"answers[{i}]", "an answer is a non-empty text of up to 100 characters")
        if a.strip() in cleaned:
            raise Invalid(f"answers[{i}]", f"{a.strip()!r} appears twice")
        cleaned.append(a.strip())
    derive = item.get("derive") or ""
    if derive not in DecisionKind.Derive.values:
        known = ", ".join(v for v in DecisionKind.Derive.values if v)
        raise Invalid("derive", f"{derive!r} is not one of {known} (or leave it out)")
    status = item.get("status") or DecisionKind.Status.ACTIVE
    if status not in DecisionKind.Status.values:
        raise Invalid("status", f"{status!r} is not one of {', '.join(DecisionKind.Status.values)}")
    return {
        "kind_id": kind_id,
        "question": question.strip(),
        "answers": cleaned,
        "derive": derive,
        "status": status,
    }


def decision_kind_version_create(
    *, kind: DecisionKind, question: str, answers: list[str], source: str = ""
) -> DecisionKindVersion:
    """Add version n+1 to a decision kind (numbered under a row lock on the kind)."""
    locked = DecisionKind.objects.select_for_update().get(pk=kind.pk)
    last = locked.versions.aggregate(n=Max("number"))["n"] or 0
    return DecisionKindVersion.objects.create(
        kind=locked, number=last + 1, question=question, answers=answers, source=source[:200]
    )


def latest_kind_versions() -> dict[int, DecisionKindVersion]:
    """Return kind pk -> its newest version."""
    latest = {}
    for v in DecisionKindVersion.objects.order_by("kind_id", "number"):
        latest[v.kind_id] = v
    return latest


def _kind_create(kind: dict, source: str) -> None:
    created = DecisionKind.objects.create(
        kind_id=kind["kind_id"], derive=kind["derive"], status=kind["status"]
    )
    decision_kind_version_create(
        kind=created, question=kind["question"], answers=kind["answers"], source=source
    )


DECISION_KINDS = VersionedConfig(
    kind="decision kinds",
    list_key="decision_kinds",
    key="kind_id",
    clean=kind_clean,
    existing=lambda ids: {
        k.kind_id: k for k in DecisionKind.objects.filter(kind_id__in=ids).select_for_update()
    },
    latest=lambda kinds: latest_kind_versions(),
    create=_kind_create,
    settings=("derive", "status"),
    same=lambda v, kind: v.question == kind["question"] and v.answers == kind["answers"],
    new_version=lambda current, kind, source: decision_kind_version_create(
        kind=current, question=kind["question"], answers=kind["answers"], source=source
    ),
)


def decision_kinds_import(*, text: str | bytes, source: str = "") -> ImportResult:
    """Import decision kinds (YAML or JSON); nothing is written unless every kind is valid."""
    result = versioned_import(DECISION_KINDS, text=text, source=source)
    logger.info("decision_kinds_imported", extra=result.log_extra(source))
    return result


def decision_kinds_export() -> str:
    """Return every decision kind with its newest version as YAML that imports back as a no-op."""
    latest = latest_kind_versions()
    out = []
    for kind in DecisionKind.objects.order_by("kind_id"):
        version = latest.get(kind.pk)
        if version is None:
            continue
        item: dict[str, Any] = {
            "id": kind.kind_id,
            "question": version.question,
            "answers": list(version.answers),
        }
        if kind.derive:
            item["derive"] = kind.derive
        if kind.status != DecisionKind.Status.ACTIVE:
            item["status"] = kind.status
        out.append(item)
    return yaml.safe_dump({"decision_kinds": out}, sort_keys=False, allow_unicode=True, width=100)


DECISION_KINDS_KIND = ImportKind(
    name="decision-kinds",
    label="Decision kinds",
    formats="YAML (or JSON): a list of decision kinds; a changed definition is a new version",
    run=lambda *, lines, source, **_: decision_kinds_import(text=b"".join(lines), source=source),
    whole=True,
    command="import_decision_kinds",
    api="api-decision-kinds-import",
    order=60,
)
