"""The trace formats the transcript importer reads besides its native one, each converted to the
native shape by a pure function: which format a record is, and what it carries that Docket has
fields for (mapped) or keeps as it came in the call's metadata.

A format is detected on each record (a line, an item of an array, or a whole JSON document); a
container format (a tau2-bench results document, an OTLP export) expands into one record per
call first. The formats here need nothing but the record; an app above the catalog that knows
another format registers it with `format_register` from its AppConfig.ready().
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evals.catalog.formats import chat, otel, tau, voice
from evals.catalog.formats.base import Converted, Format

FORMATS: list[Format] = []


def format_register(fmt: Format) -> None:
    """Have the transcript importer read this format (detected before the ones registered
    earlier, so a narrower shape can claim its records first)."""
    FORMATS.insert(0, fmt)


def format_of(obj: dict) -> Format | None:
    for fmt in FORMATS:
        if fmt.detect(obj):
            return fmt
    return None


def records_expand(where: str, obj: Any) -> Iterator[tuple[str, Any]]:
    """Yield (where, record) for each call of a record; a container yields each of its calls."""
    fmt = format_of(obj) if isinstance(obj, dict) else None
    if fmt is None or fmt.expand is None:
        yield where, obj
        return
    prefix = "" if where == "document" else f"{where}: "
    for place, record in fmt.expand(obj):
        yield f"{prefix}{place}", record


def record_convert(obj: dict) -> Converted | None:
    """Return the record converted to the native shape, or None when it is native already."""
    fmt = format_of(obj)
    if fmt is None or fmt.convert is None:
        return None
    return fmt.convert(obj)


# Later registrations are tried first: the broadest shape (OpenAI chat) goes in first.
for _fmt in (*chat.FORMATS, *tau.FORMATS, *voice.FORMATS, *otel.FORMATS):
    format_register(_fmt)
