"""What every importer shares: results, errors that
name the line and field, reading, bulk writes."""

import contextlib
import csv
import gc
import itertools
import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from django.conf import settings
from django.db import connection, models, transaction

from core import parsing
from core.errors import DomainError

MAX_ERRORS = 20
REPEATS_LISTED = 3
COPY_PROGRESS_EVERY = 20_000
Progress = Callable[[int, int | None], None]  # progress(rows_written, rows_total or None)


@dataclass(frozen=True)
class Spelling:
    """How an importer's caller names the importer's options, so that one message says where its
    reader sets them: a command's flags, the API's query parameters, the import page's fields."""

    caller: str  # "command", "api" or "page"

    def options(self, *names: str) -> str:
        """Name options (`agent`, `agent_version`) as this caller spells them."""
        if self.caller == "api":
            return "?" + "&".join(f"{n}=" for n in names)
        if self.caller == "page":
            labels = " and ".join(f"“{n.replace('_', ' ').capitalize()}”" for n in names)
            return f"the form's {labels} field{'s' if len(names) > 1 else ''}"
        return " and ".join("--" + n.replace("_", "-") for n in names)


COMMAND, API, PAGE = Spelling("command"), Spelling("api"), Spelling("page")


@dataclass(frozen=True)
class LineError:
    """One bad input: where (a line number, or `item N` in a JSON array), which field, why."""

    source: str
    where: str
    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}:{self.where}: {self.field}: {self.reason}"


class ImportFailed(DomainError):
    """An import wrote nothing because some input was bad. The first line of the message is
    `<source>:<line>: <field>: <reason>`; `errors` holds up to MAX_ERRORS of them."""

    code = "import_failed"

    def __init__(
        self, errors: Sequence[LineError], *, truncated: bool = False, suppressed: int = 0
    ):
        self.errors = list(errors)
        self.truncated = truncated
        lines = [str(e) for e in self.errors]
        if suppressed:
            lines.append(f"(and {suppressed} more lines with one of the errors above)")
        if truncated:
            lines.append(f"(stopped after {len(self.errors)} errors)")
        super().__init__("\n".join(lines))

    @property
    def first(self) -> str:
        return str(self.errors[0])

    def error_items(self) -> list[dict]:
        return [
            {"line": e.where, "field": e.field, "reason": e.reason, "message": str(e)}
            for e in self.errors
        ]


class Errors:
    """Collects bad input; raises ImportFailed at MAX_ERRORS or when asked to check.

    Safe to add to from two threads (an importer may parse in one and check in another).
    """

    def __init__(self, source: str):
        self.source = source or "input"
        self.items: list[LineError] = []
        self.repeats: dict[tuple[str, str], int] = {}
        self.suppressed = 0
        self.lock = threading.Lock()

    def add(self, where: Any, field: str, reason: str) -> None:
        with self.lock:
            # The same mistake on every line (a missing agent, say) is listed a few times, then
            # counted.
            seen = self.repeats.get((field, reason), 0)
            self.repeats[(field, reason)] = seen + 1
            if seen >= REPEATS_LISTED:
                self.suppressed += 1
                return
            self.items.append(LineError(self.source, str(where), field, reason))
            if len(self.items) >= MAX_ERRORS:
                raise ImportFailed(self._sorted(), truncated=True)

    def _sorted(self) -> list[LineError]:
        def key(e: LineError):
            number = e.where.removeprefix("item ")
            return (0, int(number)) if number.isascii() and number.isdigit() else (1, 0)

        return sorted(self.items, key=key)

    def check(self) -> None:
        if self.items:
            raise ImportFailed(self._sorted(), suppressed=self.suppressed)

    def __bool__(self) -> bool:
        return bool(self.items)


class Invalid(ValueError):
    """Raised while cleaning one record: the field and the reason."""

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


@dataclass
class ImportResult:
    """What an import did, by kind of thing imported."""

    kind: str
    created: int = 0
    unchanged: int = 0
    replaced: int = 0
    updated: int = 0
    new_versions: int = 0
    details: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(
        default_factory=dict
    )  # seconds per phase, for logs and benchmarks
    # Per input format other than the native one: {"calls": n, "mapped": [source field -> where
    # it went], "metadata": [source fields kept as they came in the call's metadata], and
    # "left_out": {why: how many} for records that are not calls}.
    formats: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.replaced or self.updated or self.new_versions)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "created": self.created,
            "unchanged": self.unchanged,
            "replaced": self.replaced,
            "updated": self.updated,
            "new_versions": self.new_versions,
            "details": dict(self.details),
            "formats": {k: dict(v) for k, v in self.formats.items()},
            "summary": self.summary,
        }

    def log_extra(self, source: str) -> dict[str, Any]:
        """Return the counts as structured log fields (LogRecord reserves names like `created`)."""
        counts = {f"n_{k}": v for k, v in self.as_dict().items() if isinstance(v, int)}
        counts.update({f"n_{k}": v for k, v in self.details.items()})
        counts.update({f"{k}_ms": round(v * 1000) for k, v in self.timings.items()})
        return {"import_kind": self.kind, "source": source, **counts}

    @property
    def summary(self) -> str:
        parts = [f"{self.created} created"]
        if self.new_versions:
            parts.append(f"{self.new_versions} new versions")
        if self.updated:
            parts.append(f"{self.updated} updated")
        if self.replaced:
            parts.append(f"{self.replaced} replaced")
        parts.append(f"{self.unchanged} unchanged")
        extra = "".join(f", {v} {k.replace('_', ' ')}" for k, v in self.details.items() if v)
        lines = [f"{self.kind}: " + ", ".join(parts) + extra]
        for name, report in self.formats.items():
            calls = report.get("calls", 0)
            lines.append(f"  {name} ({calls} call{'s' if calls != 1 else ''})")
            if report.get("mapped"):
                lines.append("    mapped: " + "; ".join(report["mapped"]))
            if report.get("metadata"):
                lines.append("    kept in metadata: " + ", ".join(report["metadata"]))
            for reason, n in (report.get("left_out") or {}).items():
                lines.append(f"    left out: {n} {reason}")
        return "\n".join(lines)


_gc_lock = threading.Lock()
_gc_pause = {"holders": 0, "was_enabled": True}


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cycle collector while a bulk import runs (any thread; nested is fine).

    An import allocates millions of short-lived dicts and tuples that reference counting frees on
    its own; the cycle collector, triggered by the allocations, scans them and the growing heap
    again and again: 40% of verdicts_import's parsing time (bench/import_verdicts.py). The memory
    an import holds stays bounded (it streams); the collector is back, as it was, at the end."""
    with _gc_lock:
        _gc_pause["holders"] += 1
        if _gc_pause["holders"] == 1:
            _gc_pause["was_enabled"] = gc.isenabled()
            gc.disable()
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pause["holders"] -= 1
            if _gc_pause["holders"] == 0 and _gc_pause["was_enabled"]:
                gc.enable()


def json_records(
    lines: Iterable[str | bytes],
    errors: Errors,
    *,
    check: str = "deep",
    document: bool | None = None,
    fast: Callable[[str | bytes], Any] | None = None,
) -> Iterator[tuple[str, Any]]:
    """Yield (where, object) for each JSON Lines record; blank lines are skipped.

    One JSON document instead (an array, or one object over as many lines as it likes) yields
    its items with `item N` as their place, or the object with `document` as its place:
    `document=True` says the input is one (a `.json` file, an `application/json` body),
    `document=None` tells by the content (an input that starts with `[`, or whose first line is
    not a whole object but the whole input is one). A document that is neither an object nor an
    array, or that does not parse, is one error, never one per line. Lines may be bytes (files
    opened in binary, request bodies): their UTF-8 is checked as they are parsed.
    Limits: DOCKET_IMPORT_MAX_LINE_BYTES per line, DOCKET_IMPORT_MAX_BYTES for a document
    (parsed whole); `check` is parsing.json_value's ("nul" when the caller checks every field).

    `fast(line)`, when given, is tried first on each line within the limit: it returns the record
    parsed and checked, or None (or raises ValueError) when it cannot tell, and the line is then
    read as above, errors and all. It must return None for a line holding a NUL escape (`\\u0000`),
    which is then refused here with its field.
    """
    max_line = settings.DOCKET_IMPORT_MAX_LINE_BYTES
    it = iter(lines)
    number = 0
    for line in it:
        number += 1
        if fast is not None and not document and not (max_line and len(line) > max_line):
            try:
                value = fast(line)
            except ValueError:
                value = None
            if value is not None:
                yield str(number), value
                continue
        if number == 1:
            line = line.removeprefix(b"\xef\xbb\xbf" if isinstance(line, bytes) else "\ufeff")
        stripped = line.strip()
        if not stripped:
            continue
        rest = (b"" if isinstance(line, bytes) else "").join
        if document or stripped[:1] in ("[", b"["):
            yield from _json_document(line + rest(it), number, errors, told=bool(document))
            return
        if max_line and len(stripped) > max_line:
            errors.add(
                number,
                "line",
                f"{len(stripped):,} bytes, longer than DOCKET_IMPORT_MAX_LINE_BYTES ({max_line:,})",
            )
            continue
        try:
            obj = parsing.json_value(stripped, line=number, check=check)
        except parsing.ParseProblem as exc:
            if (
                document is None
                and not errors
                and stripped[:1] in ("{", b"{")
                and exc.field == "json"
            ):
                # The first record is not a whole line: one pretty-printed document, or nothing.
                yield from _json_document(line + rest(it), number, errors, told=False)
                return
            errors.add(exc.line, exc.field, exc.reason)
            continue
        yield str(number), obj


def csv_records(
    lines: Iterable[str | bytes], errors: Errors, *, columns: Sequence[str], required: Sequence[str]
) -> Iterator[tuple[str, dict[str, str]]]:
    """Yield (line, {column: text}) for each row of a CSV file with a header row naming its
    columns (in any order, case and surrounding spaces ignored); blank rows are skipped.

    A header naming a column not in `columns`, or missing one of `required`, is one error and
    nothing is read; a row with more or fewer cells than the header, a value holding a NUL
    character or a line that is not UTF-8 is an error at its line (a quoted value may span lines:
    the row's first line is named). Lines are limited as JSON Lines are
    (DOCKET_IMPORT_MAX_LINE_BYTES).
    """
    max_line = settings.DOCKET_IMPORT_MAX_LINE_BYTES
    state = {"line": 0}

    def text_lines() -> Iterator[str]:
        for raw in lines:
            state["line"] += 1
            if max_line and len(raw) > max_line:
                errors.add(
                    state["line"],
                    "line",
                    f"{len(raw):,} bytes, longer than DOCKET_IMPORT_MAX_LINE_BYTES ({max_line:,})",
                )
                yield "\n"
                continue
            try:
                text = parsing.utf8(raw, first_line=state["line"])
            except parsing.ParseProblem as exc:
                errors.add(exc.line, exc.field, exc.reason)
                yield "\n"
                continue
            yield text if state["line"] > 1 else text.removeprefix("\ufeff")

    reader = csv.reader(text_lines())
    header: list[str] | None = None
    start = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            errors.add(reader.line_num, "csv", str(exc))
            return
        where, start = str(start), reader.line_num + 1
        if not any(cell.strip() for cell in row):
            continue
        if header is None:
            header = [cell.strip().lower() for cell in row]
            unknown = [c for c in header if c not in columns]
            missing = [c for c in required if c not in header]
            if unknown or missing:
                problems = []
                if unknown:
                    problems.append(f"unknown column {', '.join(unknown)}")
                if missing:
                    problems.append(f"missing column {', '.join(missing)}")
                errors.add(
                    where,
                    "header",
                    "; ".join(problems) + f" (the columns are {', '.join(columns)})",
                )
                return
            continue
        if len(row) != len(header):
            errors.add(where, "row", f"{len(row)} cells, the header names {len(header)}")
            continue
        bad = next((c for c, v in zip(header, row) if "\x00" in v), None)
        if bad is not None:
            errors.add(where, bad, parsing.NUL_REASON)
            continue
        yield where, dict(zip(header, row))


def _json_document(
    text: str | bytes, number: int, errors: Errors, *, told: bool
) -> Iterator[tuple[str, Any]]:
    """Yield ("item N", item) for each item of a JSON array, or ("document", object), for the
    one JSON document that starts on line `number`; one error when it is neither."""
    try:
        parsing.size_check(
            text, limit=settings.DOCKET_IMPORT_MAX_BYTES, setting="DOCKET_IMPORT_MAX_BYTES"
        )
        value = parsing.json_value(text, line=number, check="none")
    except parsing.ParseProblem as exc:
        reason = exc.reason
        if exc.field == "json":
            reason += (
                " (read as one JSON document: JSON Lines go in a .jsonl file or an "
                "application/x-ndjson body)"
                if told
                else " (neither JSON Lines, one object a line, nor one JSON document)"
            )
        errors.add(exc.line, exc.field, reason)
        return
    if isinstance(value, dict):
        problem = parsing.tree_problem(value)
        if problem is not None:
            errors.add("document", problem[0] or "json", problem[1])
            return
        yield "document", value
        return
    if not isinstance(value, list):
        errors.add(
            number,
            "json",
            f"one JSON document must be an object or an array of objects, not {_json_kind(value)}",
        )
        return
    for i, item in enumerate(value, start=1):
        problem = parsing.tree_problem(item, max_depth=parsing.MAX_DEPTH - 1)
        if problem is not None:
            errors.add(f"item {i}", problem[0] or "json", problem[1])
            continue
        yield f"item {i}", item


def _json_kind(value: Any) -> str:
    return {str: "a string", bool: "true or false", type(None): "null"}.get(type(value), "a number")


def is_postgres() -> bool:
    return connection.vendor == "postgresql"


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def copy_rows(
    model: type[models.Model],
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    total: int,
    conflict: Sequence[str] | None = None,
    progress: Progress | None = None,
    lines: bool = False,
) -> int:
    """Insert rows (column values in order; JSON already as text) and return how many were inserted.

    PostgreSQL: COPY, straight into the table, or through a temporary table and
    INSERT ... ON CONFLICT (conflict) DO NOTHING when `conflict` names a unique key. With
    `lines`, each row is already a line of COPY's text format (its text values through copy_text),
    written as it is, in batches: a third of the CPU of psycopg's formatting row by row.
    Elsewhere: bulk_create in batches. Must run inside a transaction.
    """
    if not is_postgres():
        return _bulk_create_rows(
            model, columns, rows, total=total, conflict=conflict, progress=progress
        )
    qn = connection.ops.quote_name
    table = qn(model._meta.db_table)
    db_columns = [model._meta.get_field(c).column for c in columns]
    column_list = ", ".join(qn(c) for c in db_columns)
    # COPY bypasses Django's cursor wrapper: translate psycopg's errors into django.db's ourselves.
    with connection.wrap_database_errors, connection.cursor() as cursor:
        target = table
        if conflict:
            target = qn(f"import_{model._meta.db_table}")
            cursor.execute(f"DROP TABLE IF EXISTS {target}")
            cursor.execute(
                f"CREATE TEMPORARY TABLE {target} ON COMMIT DROP AS "
                f"SELECT {column_list} FROM {table} WITH NO DATA"
            )
        done = 0
        with cursor.copy(f"COPY {target} ({column_list}) FROM STDIN") as copy:
            if lines:
                for batch in itertools.batched(rows, COPY_PROGRESS_EVERY):
                    copy.write("".join(batch).encode())
                    done += len(batch)
                    if progress:
                        progress(done, total)
            else:
                for row in rows:
                    copy.write_row(row)
                    done += 1
                    if progress and done % COPY_PROGRESS_EVERY == 0:
                        progress(done, total)
        if not conflict:
            inserted = done
        else:
            keys = ", ".join(qn(model._meta.get_field(c).column) for c in conflict)
            cursor.execute(
                f"INSERT INTO {table} ({column_list}) SELECT {column_list} FROM {target} "
                f"ON CONFLICT ({keys}) DO NOTHING"
            )
            inserted = cursor.rowcount
            cursor.execute(f"DROP TABLE {target}")
    if progress:
        progress(total, total)
    return inserted


_COPY_SPECIAL = re.compile(r"[\\\t\n\r]")
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def copy_text(value: str) -> str:
    """Return a text value as a field of COPY's text format: backslash, tab, newline and carriage
    return escaped (NUL cannot be stored and is refused before)."""
    return value.translate(_COPY_ESCAPES) if _COPY_SPECIAL.search(value) else value


def _bulk_create_rows(model, columns, rows, *, total, conflict, progress, batch_size=2000) -> int:
    json_fields = {c for c in columns if isinstance(model._meta.get_field(c), models.JSONField)}
    before = model.objects.count() if conflict else 0
    done = 0
    batch: list[models.Model] = []

    def flush():
        model.objects.bulk_create(batch, batch_size=batch_size, ignore_conflicts=bool(conflict))
        batch.clear()
        if progress:
            progress(done, total)

    for row in rows:
        values = dict(zip(columns, row))
        for c in json_fields:
            values[c] = json.loads(values[c])
        batch.append(model(**values))
        done += 1
        if len(batch) >= batch_size:
            flush()
    if batch:
        flush()
    return model.objects.count() - before if conflict else done


def chunked(values: Sequence[Any], size: int = 2000) -> Iterator[Sequence[Any]]:
    for i in range(0, len(values), size):
        yield values[i : i + size]


# ---- versioned configuration (rules, decision kinds) ------------------------------------------


def _item_lines(root, count: int, list_key: str) -> list[dict]:
    """Best effort: line numbers of each item of the `key:` list and of its keys, from the YAML
    node tree."""
    fallback = [{"": f"item {i}"} for i in range(1, count + 1)]
    seq = root
    if isinstance(root, yaml.MappingNode):
        seq = next((v for k, v in root.value if getattr(k, "value", None) == list_key), None)
    if not isinstance(seq, yaml.SequenceNode) or len(seq.value) != count:
        return fallback
    lines = []
    for node in seq.value:
        entry = {"": str(node.start_mark.line + 1)}
        if isinstance(node, yaml.MappingNode):
            for key, _ in node.value:
                entry[str(key.value)] = str(key.start_mark.line + 1)
        lines.append(entry)
    return lines


def config_items(text: str | bytes, errors: Errors, list_key: str) -> tuple[list, list[dict]]:
    """Return the items of a YAML or JSON config file (a mapping with a `list_key:` list, or a
    bare list) and, for each, the line of the item and of each of its keys."""
    try:
        parsing.size_check(
            text, limit=settings.DOCKET_CONFIG_MAX_BYTES, setting="DOCKET_CONFIG_MAX_BYTES"
        )
        text = parsing.utf8(text)
        if text.lstrip()[:1] in ("{", "["):
            data = parsing.json_value(text)
            try:
                _, node = parsing.yaml_document(text)  # JSON is YAML: its lines, if it can tell
            except parsing.ParseProblem:
                node = None
        else:
            data, node = parsing.yaml_document(text)
    except parsing.ParseProblem as exc:
        errors.add(exc.line, exc.field, exc.reason)
        errors.check()
    if isinstance(data, dict) and set(data) <= {list_key}:
        items = data.get(list_key)
    elif isinstance(data, list):
        items = data
    else:
        items = None
    if not isinstance(items, list):
        errors.add(
            1, list_key, f"expected a mapping with a `{list_key}:` list (or a bare list of them)"
        )
        errors.check()
    return items, _item_lines(node, len(items), list_key)


@dataclass(frozen=True)
class VersionedConfig:
    """How to import one kind of versioned configuration (rules, decision kinds): an entity with
    an id and settings kept in place, and immutable versions of its content."""

    kind: str  # the ImportResult's kind ("rules")
    list_key: str  # the file's list ("rules:")
    key: str  # the id field of a cleaned item ("rule_id")
    clean: Callable[[Any], dict]  # raises Invalid (or a DomainError with .field and .reason)
    existing: Callable[[list[str]], dict]  # the stored entities by id, row-locked
    latest: Callable[[list], dict]  # entity pk -> its newest version
    create: Callable[[dict, str], Any]  # a new entity and its version 1 (item, source)
    settings: tuple[str, ...]  # the entity's fields an import updates in place
    same: Callable[[Any, dict], bool]  # whether a version holds the item's content
    new_version: Callable[[Any, dict, str], Any]  # version n+1 (entity, item, source)


def versioned_import(config: VersionedConfig, *, text: str | bytes, source: str) -> ImportResult:
    """Import a versioned configuration file: a new entity gets version 1, changed content gets
    version n+1, changed settings are updated in place, the rest is a no-op; nothing is written
    unless every item is valid."""
    errors = Errors(source)
    items, lines = config_items(text, errors, config.list_key)
    cleaned: list[dict] = []
    seen: dict[str, str] = {}
    for item, where in zip(items, lines, strict=True):
        try:
            entry = config.clean(item)
        except (Invalid, DomainError) as exc:
            field = getattr(exc, "field", "") or ""
            reason = getattr(exc, "reason", None) or str(exc)
            errors.add(where.get(field.split(".")[0].split("[")[0], where[""]), field, reason)
            continue
        key = entry[config.key]
        if key in seen:
            errors.add(
                where.get("id", where[""]), "id", f"{key} appears twice (first at {seen[key]})"
            )
            continue
        seen[key] = where.get("id", where[""])
        cleaned.append(entry)
    errors.check()
    result = ImportResult(kind=config.kind)
    with transaction.atomic():
        existing = config.existing(list(seen))
        latest = config.latest(list(existing.values()))
        for entry in cleaned:
            current = existing.get(entry[config.key])
            if current is None:
                config.create(entry, source)
                result.created += 1
                continue
            changed = [f for f in config.settings if getattr(current, f) != entry[f]]
            if changed:
                for f in changed:
                    setattr(current, f, entry[f])
                current.save(update_fields=changed)
                result.updated += 1
            last = latest.get(current.pk)
            if last is None or not config.same(last, entry):
                config.new_version(current, entry, source)
                result.new_versions += 1
            elif not changed:
                result.unchanged += 1
    return result
