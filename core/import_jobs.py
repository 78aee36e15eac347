"""Imports from the page: a file is stored, its first lines previewed, then imported in the
background (Celery, queued once the start commits) by its kind's importer, the one its command and
its API endpoint call. While it runs, how far it has read and written is kept in the cache (the
import's own transaction hides its rows until the end); when it fails, each error is kept with
the text of its line.

A 1 GB file: the upload streams to a temporary file (Django's upload handler) that is moved into
the imports storage; the worker reads it line by line, as the import command reads a file, so
neither holds the file in memory; the page polls the progress.
"""

import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import PurePath
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.files.storage import storages
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from core import parsing
from core.background import after_commit
from core.errors import Conflict, DomainError, NotFound
from core.import_kinds import IMPORT_KINDS, ImportKind
from core.importing import PAGE, Errors, ImportFailed, json_records
from core.models import ImportJob
from core.permissions import user_can

logger = logging.getLogger(__name__)

IMPORT_TASK = "core.import_job_run"
PREVIEW_BYTES = 64 * 1024  # read for the preview, whatever the file's size
PREVIEW_LINES = 12
SHOWN_CHARS = 300  # of one line, in the preview and beside an error
PROGRESS_EVERY_S = 0.5
STALE_AFTER = timedelta(minutes=5)  # no progress for this long: the worker has stopped
KEEP = timedelta(days=7)  # a file not imported is removed after this long
Status = ImportJob.Status


class FileTooLarge(DomainError):
    status = 413
    code = "body_too_large"


def _storage():
    return storages["imports"]


def _kind(name: str) -> ImportKind:
    kind = IMPORT_KINDS.get(name)
    if kind is None:
        known = ", ".join(sorted(IMPORT_KINDS))
        raise DomainError(f"{name!r} is not a kind of import (one of {known})", field="kind")
    return kind


def _limit(kind: ImportKind) -> tuple[int, str]:
    if kind.whole:
        return settings.DOCKET_CONFIG_MAX_BYTES, "DOCKET_CONFIG_MAX_BYTES"
    return settings.DOCKET_IMPORT_MAX_BYTES, "DOCKET_IMPORT_MAX_BYTES"


def import_job_upload(*, kind: str, upload, actor) -> ImportJob:
    """Store an uploaded file (a Django UploadedFile) for an import of `kind`; nothing is imported
    until the job is started. Files of jobs left for a week are removed first."""
    found = _kind(kind)
    if not user_can(actor, "import_data", found.permission):
        raise DomainError(f"Needs permission: {found.permission}.")
    if upload is None:
        raise DomainError("choose a file", field="file")
    limit, setting = _limit(found)
    if upload.size > limit:
        raise FileTooLarge(f"{upload.size:,} bytes, more than {setting} ({limit:,})", field="file")
    if not upload.size:
        raise DomainError("the file is empty", field="file")
    import_jobs_expire()
    name = PurePath(upload.name or "upload").name[-200:] or "upload"
    stored = _storage().save(f"{uuid.uuid4().hex}/{name}", upload)
    return ImportJob.objects.create(
        kind=found.name, file_name=name, file=stored, size=upload.size, created_by=actor
    )


def import_job_get(*, job_id: int, actor) -> ImportJob:
    """Return a job its creator may see; anyone else's is not found."""
    job = ImportJob.objects.filter(pk=job_id, created_by=actor).first() if actor else None
    if job is None or not user_can(actor, "import_data"):
        raise NotFound("No such import.")
    return job


def import_jobs_of(actor, *, limit: int = 20) -> QuerySet[ImportJob]:
    """Return a user's latest imports."""
    return ImportJob.objects.filter(created_by=actor).order_by("-created_at", "-pk")[:limit]


@dataclass
class Preview:
    """The first lines of a stored file, and what the page asks because of them."""

    lines: list[tuple[int, str, bool]] = field(default_factory=list)  # (number, text, cut)
    more: bool = False  # the file goes on past the lines shown
    missing: set[str] = field(default_factory=set)  # options the first records do not carry
    records_seen: int = 0  # records the `missing` check could read (0: it could not tell)


def import_job_preview(job: ImportJob) -> Preview:
    """Read the first PREVIEW_BYTES of the file: its first lines (each cut at SHOWN_CHARS), and
    which of the kind's options its first records lack. A file kept whole within those bytes is
    read as the importer would read it; a longer JSON document cannot be told from its start."""
    preview = Preview()
    if not job.file:
        return preview
    try:
        with _storage().open(job.file, "rb") as handle:
            head = handle.read(PREVIEW_BYTES + 1)
    except OSError:
        return preview
    whole = len(head) <= PREVIEW_BYTES
    head = head[:PREVIEW_BYTES]
    raw_lines = head.split(b"\n")
    if not whole and len(raw_lines) > 1:
        raw_lines = raw_lines[:-1]  # the last one is cut by the read
    for number, raw in enumerate(raw_lines[:PREVIEW_LINES], start=1):
        text = raw.decode("utf-8", errors="replace").rstrip("\r")
        if number == 1:
            text = text.removeprefix("\ufeff")
        cut = len(text) > SHOWN_CHARS or (not whole and number == len(raw_lines) == 1)
        preview.lines.append((number, text[:SHOWN_CHARS], cut))
    preview.more = len(raw_lines) > PREVIEW_LINES or not whole
    while preview.lines and not preview.lines[-1][1].strip() and whole:
        preview.lines.pop()
    kind = IMPORT_KINDS.get(job.kind)
    if kind is not None and kind.missing is not None:
        records = _first_records(raw_lines if not whole else [head], whole=whole, job=job)
        preview.records_seen = len(records)
        preview.missing = set(kind.missing(records)) if records else set()
    return preview


def _first_records(chunks: list[bytes], *, whole: bool, job: ImportJob, at_most: int = 50):
    errors = Errors(job.file_name)
    document = _document(job.file_name)
    lines = chunks if not whole else chunks[0].splitlines(keepends=True)
    records = []
    try:
        for _, obj in json_records(lines, errors, document=document if whole else False):
            records.append(obj)
            if len(records) >= at_most:
                break
    except ImportFailed:
        pass
    return [r for r in records if isinstance(r, dict)]


def _document(file_name: str) -> bool | None:
    """As the import command tells: `.json` is one document, `.jsonl`/`.ndjson` lines, else by
    the content."""
    suffix = file_name.lower().rsplit(".", 1)[-1] if "." in file_name else ""
    return {"json": True, "jsonl": False, "ndjson": False}.get(suffix)


def import_job_options_clean(kind: ImportKind, values) -> dict[str, Any]:
    """Return the kind's options from a form's values (text stripped, flags true or false)."""
    options: dict[str, Any] = {}
    for option in kind.options:
        if option.flag:
            options[option.name] = str(values.get(option.name, "")).lower() in ("1", "on", "true")
            continue
        value = str(values.get(option.name) or "").strip()
        if len(value) > option.max_length:
            raise DomainError(f"at most {option.max_length} characters", field=option.name)
        if "\x00" in value:
            raise DomainError("must not contain NUL characters", field=option.name)
        if option.required and not value:
            raise DomainError(f"give the {option.label.lower()}", field=option.name)
        if value:
            options[option.name] = value
    return options


def import_job_start(*, job_id: int, actor, values) -> ImportJob:
    """Queue the import of a stored file with the options from `values` (a form's); a job
    imported already, or running and not stale, is refused."""
    with transaction.atomic():
        job = import_job_get(job_id=job_id, actor=actor)
        job = ImportJob.objects.select_for_update().get(pk=job.pk)
        if not (job.startable or import_job_stale(job)) or not job.file:
            raise Conflict(f"This import is {job.get_status_display()}; upload the file again.")
        kind = _kind(job.kind)
        if not user_can(actor, kind.permission):
            raise DomainError(f"Needs permission: {kind.permission}.")
        job.options = import_job_options_clean(kind, values)
        job.status = Status.QUEUED
        job.result, job.errors, job.detail = {}, [], ""
        job.started_at = job.finished_at = None
        job.save()
        cache.delete_many([_key(job.pk, "read"), _key(job.pk, "rows"), _key(job.pk, "at")])
        after_commit(IMPORT_TASK, job.pk)
    return job


def import_job_discard(*, job_id: int, actor) -> None:
    """Remove a job that is not running, and its file."""
    with transaction.atomic():
        job = import_job_get(job_id=job_id, actor=actor)
        if job.status in (Status.QUEUED, Status.RUNNING) and not import_job_stale(job):
            raise Conflict("This import is running; it can be removed once it ends.")
        _file_remove(job)
        job.delete()


def import_jobs_expire() -> int:
    """Remove the files of jobs not imported within KEEP (the jobs stay, saying so)."""
    old = ImportJob.objects.exclude(file="").filter(created_at__lt=timezone.now() - KEEP)
    removed = 0
    for job in old.exclude(status=Status.RUNNING):
        _file_remove(job)
        ImportJob.objects.filter(pk=job.pk).update(file="")
        removed += 1
    return removed


def _file_remove(job: ImportJob) -> None:
    if job.file:
        storage = _storage()
        storage.delete(job.file)
        folder = str(PurePath(job.file).parent)
        try:
            if folder not in ("", ".") and not any(storage.listdir(folder)):
                storage.delete(folder)
        except OSError:
            pass


# ---- progress, kept in the cache while the import's transaction hides its rows ---------------


def _key(job_id: int, what: str) -> str:
    return f"import-job:{job_id}:{what}"


def import_job_progress(job: ImportJob) -> dict[str, Any]:
    """How far a queued or running import has got: bytes read (and the share of the file), rows
    written, and when it last moved."""
    got = cache.get_many([_key(job.pk, w) for w in ("read", "rows", "at")])
    read = got.get(_key(job.pk, "read")) or 0
    return {
        "read": read,
        "percent": min(100, round(100 * read / job.size)) if job.size else 0,
        "rows": got.get(_key(job.pk, "rows")),
        "moved_at": got.get(_key(job.pk, "at")),
    }


def import_job_stale(job: ImportJob) -> bool:
    """Whether a queued or running import has not moved for STALE_AFTER (its worker stopped)."""
    if job.status not in (Status.QUEUED, Status.RUNNING):
        return False
    moved = cache.get(_key(job.pk, "at"))
    last = moved if moved is not None else (job.started_at or job.created_at).timestamp()
    return time.time() - last > STALE_AFTER.total_seconds()


class _Meter:
    """Counts what the import has read and written; writes it to the cache at most every
    PROGRESS_EVERY_S (from the reading thread and the writing one alike)."""

    def __init__(self, job_id: int):
        self.job_id = job_id
        self.read = 0
        self.rows: int | None = None
        self.last = 0.0

    def lines(self, handle):
        for line in handle:
            self.read += len(line)
            self.tick()
            yield line
        self.tick(force=True)

    def written(self, done: int, total: int | None = None) -> None:
        self.rows = done
        self.tick()

    def tick(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last >= PROGRESS_EVERY_S:
            self.last = now
            values = {_key(self.job_id, "read"): self.read, _key(self.job_id, "at"): time.time()}
            if self.rows is not None:
                values[_key(self.job_id, "rows")] = self.rows
            cache.set_many(values, timeout=86400)


def import_job_run(job_id: int) -> str:
    """Import a queued job's file with its kind's importer (the task's body); return its status.
    Nothing is written unless every line is valid; the errors are kept with their lines' text."""
    claimed = ImportJob.objects.filter(pk=job_id, status=Status.QUEUED).update(
        status=Status.RUNNING, started_at=timezone.now()
    )
    if not claimed:
        return "not queued"
    job = ImportJob.objects.select_related("created_by").get(pk=job_id)
    kind = IMPORT_KINDS[job.kind]
    meter = _Meter(job.pk)
    by = job.created_by.get_username() if job.created_by else ""
    outcome: dict[str, Any] = {}
    try:
        with _storage().open(job.file, "rb") as handle:
            result = kind.run(
                lines=meter.lines(handle),
                source=job.file_name,
                document=_document(job.file_name),
                progress=meter.written,
                spelling=PAGE,
                by=by,
                **job.options,
            )
    except ImportFailed as exc:
        outcome = {"detail": exc.first, "errors": _with_lines(job, exc.error_items())}
        if exc.truncated:
            outcome["detail"] += f" (and more: the first {len(exc.errors)} errors are listed)"
    except parsing.ParseProblem as exc:
        outcome = {"detail": str(exc), "errors": []}
    except DomainError as exc:
        outcome = {"detail": exc.detail, "errors": exc.error_items()}
    except Exception as exc:  # noqa: BLE001 - rolled back: said on the page, logged without text
        # Only the exception's type: its message may quote the input (a transcript's words).
        error = type(exc).__name__
        logger.error("import_job_failed", extra={"job": job.pk, "kind": job.kind, "error": error})
        outcome = {
            "detail": f"The import stopped ({error}); nothing was imported. "
            "The server's log has the details (import_job_failed).",
            "errors": [],
        }
        if error == "SoftTimeLimitExceeded":
            outcome["detail"] = (
                f"The import took longer than DOCKET_IMPORT_TIME_LIMIT_S "
                f"({settings.DOCKET_IMPORT_TIME_LIMIT_S} s); nothing was imported."
            )
    meter.tick(force=True)
    now = timezone.now()
    if outcome:
        ImportJob.objects.filter(pk=job.pk).update(
            status=Status.FAILED,
            finished_at=now,
            detail=outcome["detail"],
            errors=outcome["errors"],
        )
        logger.info("import_job_refused", extra={"job": job.pk, "kind": job.kind})
        return Status.FAILED
    ImportJob.objects.filter(pk=job.pk).update(
        status=Status.DONE, finished_at=now, result=result.as_dict(), file=""
    )
    _file_remove(job)
    logger.info("import_job_done", extra={"job": job.pk, **result.log_extra(job.file_name)})
    return Status.DONE


def _with_lines(job: ImportJob, items: list[dict]) -> list[dict]:
    """Add to each error the text of its line (cut at SHOWN_CHARS), read from the stored file."""
    wanted = {int(e["line"]) for e in items if str(e.get("line", "")).isdigit()}
    texts = _line_texts(job, wanted) if wanted else {}
    for e in items:
        line = str(e.get("line", ""))
        if line.isdigit() and int(line) in texts:
            e["text"], e["cut"] = texts[int(line)]
    return items


def _line_texts(job: ImportJob, wanted: set[int]) -> dict[int, tuple[str, bool]]:
    """Return {line number: (its first SHOWN_CHARS characters, whether it was cut)}, reading
    no more of a long line than that."""
    found: dict[int, bytearray] = {}
    cut: set[int] = set()
    last = max(wanted)
    keep = SHOWN_CHARS * 4 + 4  # bytes enough for SHOWN_CHARS characters of UTF-8
    number = 1
    with _storage().open(job.file, "rb") as handle:
        while number <= last:
            chunk = handle.readline(64 * 1024)
            if not chunk:
                break
            if number in wanted:
                held = found.setdefault(number, bytearray())
                if len(held) < keep:
                    held += chunk[: keep - len(held)]
                if len(held) >= keep:
                    cut.add(number)
            if chunk.endswith(b"\n"):
                number += 1
    out = {}
    for n, raw in found.items():
        text = bytes(raw).decode("utf-8", errors="replace").rstrip("\r\n")
        if n == 1:
            text = text.removeprefix("\ufeff")
        out[n] = (text[:SHOWN_CHARS], n in cut or len(text) > SHOWN_CHARS)
    return out
