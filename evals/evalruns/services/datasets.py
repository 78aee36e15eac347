"""Datasets: import JSON Lines rows as a new version of a named dataset, or find it unchanged."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import Max

from core.errors import DomainError
from core.import_kinds import ImportKind, ImportOption
from core.importing import Errors, ImportResult, Invalid, json_records
from core.parsing import MAX_INT32, whole_number
from evals.evalruns.models import Dataset, DatasetRow

logger = logging.getLogger(__name__)

ROLES = ("system", "user", "assistant", "tool")
ROW_FIELDS = ("id", "input", "messages", "tools", "reference", "metadata")
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
NAME = re.compile(r"^[-a-zA-Z0-9_]{1,100}$")
MAX_ROWS = 100_000


def _message(raw: Any, field: str) -> dict:
    if not isinstance(raw, dict):
        raise Invalid(field, "must be an object with role and content")
    role = raw.get("role")
    if role not in ROLES:
        raise Invalid(f"{field}.role", f"{role!r} is not one of {', '.join(ROLES)}")
    content = raw.get("content")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise Invalid(f"{field}.content", f"must be a string, not {type(content).__name__}")
    return {"role": role, "content": content}


def tool_clean(raw: Any, field: str) -> dict:
    """Return a tool as {name, description, parameters}; OpenAI's function wrapper is unwrapped."""
    if not isinstance(raw, dict):
        raise Invalid(field, "must be an object with a name")
    if isinstance(raw.get("function"), dict):
        raw, field = raw["function"], f"{field}.function"
    name = raw.get("name")
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        raise Invalid(f"{field}.name", "missing or not a tool name (letters, digits, _ . -)")
    description = raw.get("description") or ""
    if not isinstance(description, str):
        raise Invalid(f"{field}.description", "must be a string")
    parameters = raw.get("parameters") or {"type": "object", "properties": {}}
    if not isinstance(parameters, dict):
        raise Invalid(f"{field}.parameters", "must be a JSON schema object")
    return {"name": name, "description": description, "parameters": parameters}


def row_clean(raw: Any, number: int) -> dict:
    """Validate one dataset line; return its canonical row (raises Invalid naming the field)."""
    if not isinstance(raw, dict):
        raise Invalid("line", "must be a JSON object with messages (or input)")
    for key in raw:
        if key not in ROW_FIELDS:
            raise Invalid(key, f"not a field of a dataset row (fields: {', '.join(ROW_FIELDS)})")
    row_id = raw.get("id", f"row-{number}")
    if isinstance(row_id, int) and not isinstance(row_id, bool):
        row_id = str(row_id)
    if not isinstance(row_id, str) or not row_id.strip() or len(row_id) > 200:
        raise Invalid("id", "must be a non-empty string of at most 200 characters")
    if "messages" in raw and "input" in raw:
        raise Invalid("input", "give messages or input, not both")
    if "input" in raw:
        if not isinstance(raw["input"], str) or not raw["input"].strip():
            raise Invalid("input", "must be a non-empty string")
        messages = [{"role": "user", "content": raw["input"]}]
    else:
        given = raw.get("messages")
        if not isinstance(given, list) or not given:
            raise Invalid("messages", "missing: a non-empty list of {role, content} (or input)")
        messages = [_message(m, f"messages[{i}]") for i, m in enumerate(given)]
    tools = raw.get("tools") or []
    if not isinstance(tools, list):
        raise Invalid("tools", "must be a list of {name, description, parameters}")
    tools = [tool_clean(t, f"tools[{i}]") for i, t in enumerate(tools)]
    names = [t["name"] for t in tools]
    if len(set(names)) != len(names):
        raise Invalid("tools", "two tools share a name")
    reference = raw.get("reference")
    if reference is not None and not isinstance(reference, str):
        reference = json.dumps(reference, ensure_ascii=False, sort_keys=True)
    metadata = raw.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise Invalid("metadata", "must be an object")
    return {
        "row_id": row_id.strip(),
        "messages": messages,
        "tools": tools,
        "reference": reference or "",
        "metadata": metadata,
    }


def dataset_checksum(rows: Iterable[dict]) -> str:
    """Return the sha256 of the canonical rows, in order."""
    payload = json.dumps(list(rows), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


def _name_clean(name: str) -> str:
    if not isinstance(name, str) or not NAME.match(name or ""):
        raise DomainError("a dataset name: letters, digits, - and _", field="name")
    return name


def dataset_import(
    *, lines: Iterable[str | bytes], name: str, source: str = "", description: str = "", by=""
) -> tuple[Dataset, ImportResult]:
    """Import JSON Lines rows as dataset `name`; return (its version, what the import did).

    The same rows as the latest version are a no-op; other rows become version n+1. A bad line
    imports nothing and is named with its field.
    """
    name = _name_clean(name)
    errors = Errors(source or "body")
    rows: list[dict] = []
    seen: dict[str, str] = {}
    for where, obj in json_records(lines, errors):
        number = int(where.removeprefix("item ")) if where.removeprefix("item ").isdigit() else 0
        try:
            row = row_clean(obj, number or len(rows) + 1)
        except Invalid as exc:
            errors.add(where, exc.field, exc.reason)
            continue
        if row["row_id"] in seen:
            errors.add(where, "id", f"{row['row_id']!r} already used on line {seen[row['row_id']]}")
            continue
        seen[row["row_id"]] = where
        rows.append(row)
        if len(rows) > MAX_ROWS:
            errors.add(where, "line", f"more than {MAX_ROWS:,} rows in one dataset")
            break
    if not rows and not errors:
        errors.add(1, "line", "no rows: a dataset needs at least one")
    errors.check()
    return _dataset_write(name=name, rows=rows, description=description, by=by)


@transaction.atomic
def _dataset_write(*, name: str, rows: list[dict], description: str, by: str):
    checksum = dataset_checksum(rows)
    result = ImportResult(kind="dataset rows")
    # Lock the name's versions, so two imports of new content cannot both become version n+1.
    latest = Dataset.objects.select_for_update().filter(name=name).order_by("-version").first()
    if latest is not None and latest.checksum == checksum:
        result.unchanged = latest.rows_count
        return latest, result
    version = (Dataset.objects.filter(name=name).aggregate(m=Max("version"))["m"] or 0) + 1
    dataset = Dataset.objects.create(
        name=name,
        version=version,
        checksum=checksum,
        description=description or (latest.description if latest else ""),
        rows_count=len(rows),
        created_by=by,
    )
    DatasetRow.objects.bulk_create(
        [DatasetRow(dataset=dataset, position=i, **row) for i, row in enumerate(rows)],
        batch_size=1000,
    )
    result.created = len(rows)
    if latest is not None:
        result.new_versions = 1
    logger.info(
        "dataset_imported", extra={"dataset": dataset.pk, "version": version, "rows": len(rows)}
    )
    return dataset, result


def dataset_resolve(text: str) -> Dataset:
    """Find a dataset by `NAME` (its latest version) or `NAME@VERSION`."""
    name, _, version = (text or "").partition("@")
    qs = Dataset.objects.filter(name=name)
    if version:
        try:
            number = whole_number(version, field="dataset", low=1, high=MAX_INT32)
        except DomainError:
            raise DomainError(
                f"{text[:200]!r}: write NAME or NAME@VERSION (a version from 1 to {MAX_INT32})",
                field="dataset",
            ) from None
        qs = qs.filter(version=number)
    found = qs.order_by("-version").first()
    if found is None:
        raise DomainError(f"no dataset {text!r}", field="dataset")
    return found


def _dataset_run(*, lines, source, name="", description="", by="", **_) -> ImportResult:
    return dataset_import(lines=lines, name=name, source=source, description=description, by=by)[1]


DATASETS_KIND = ImportKind(
    name="dataset",
    label="Datasets (for eval runs)",
    formats='JSON Lines, one row a line: {"id", "messages" or "input", "tools", "reference"}',
    run=_dataset_run,
    options=(
        ImportOption(
            "name", "Dataset name", help="e.g. booking-tools", required=True, max_length=100
        ),
        ImportOption("description", "Description", max_length=500),
    ),
    command="import_dataset",
    api="api-datasets-import",
    order=50,
)
