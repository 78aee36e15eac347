"""What every trace format's converter shares: the converted record, the format, helpers."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from core.importing import Invalid
from evals.catalog.registry import CALL_PARTS

# The native record's own keys: a converter passes these through when the record has them.
NATIVE_KEYS = (
    "id",
    "agent",
    "agent_version",
    "started_at",
    "audio_url",
    "language",
    "scenario",
    "tenant",
    "metadata",
    "agent_instructions",
    "agent_tools",
)


@dataclass
class Converted:
    """A record in the native shape, and what the conversion did."""

    record: dict | None  # None: the record is left out, for the reason `left_out` gives
    format: str
    mapped: tuple[str, ...] = ()  # "source field -> Docket field", one entry per kind of field
    kept: list[str] = field(default_factory=list)  # metadata keys holding what had no field
    defaults: dict[str, str] = field(default_factory=dict)  # agent, agent_version if none given
    left_out: str = ""  # why a record is not a call (the import summary says so)


@dataclass(frozen=True)
class Format:
    name: str
    detect: Callable[[dict], bool]
    convert: Callable[[dict], Converted] | None = None  # one call; raises Invalid
    # A container: yield (place, record) for each call in it (the place is added to `where`).
    expand: Callable[[dict], Iterator[tuple[str, dict]]] | None = None


# ---- helpers the converters share ------------------------------------------------------------


def content_digest(value: Any, size: int = 16) -> str:
    """A short sha256 of a JSON value (keys sorted): an id derived from the content."""
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()[:size]


def arguments_decode(value: Any) -> Any:
    """Return tool arguments as JSON values however they were encoded: an object, a JSON string,
    a JSON string of a JSON string (double-encoded); text that is not JSON stays text."""
    for _ in range(4):
        if not isinstance(value, (str, bytes)):
            return value
        text = value.strip() if isinstance(value, str) else value
        if not text:
            return {}
        try:
            decoded = json.loads(text)
        except (ValueError, TypeError):
            return value
        if decoded == value:
            return decoded
        value = decoded
    return value


def seconds_ms(value: Any, field_name: str) -> int | None:
    """Seconds (a number) as whole milliseconds, or None; Invalid for anything else."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Invalid(field_name, f"must be a number of seconds, not {value!r}")
    if value < 0:
        raise Invalid(field_name, f"must not be negative: {value!r}")
    return round(value * 1000)


def passthrough(obj: dict, own: set[str]) -> tuple[dict, dict]:
    """Split a record's keys: (the native keys and registered call parts' keys, passed on as
    they are; the rest, which is neither the format's own nor Docket's, for the metadata)."""
    part_keys = [k for part in CALL_PARTS.values() for k in part.keys]
    native = {k: obj[k] for k in (*NATIVE_KEYS, *part_keys) if k in obj}
    rest = {k: v for k, v in obj.items() if k not in native and k not in own}
    return native, rest


def metadata_with(record: dict, key: str, kept: dict) -> list[str]:
    """Put `kept` (when not empty) under metadata[key], after what the record's metadata has;
    return the names kept, for the import summary."""
    if not kept:
        return []
    metadata = record.get("metadata")
    metadata = dict(metadata) if isinstance(metadata, dict) else {}
    metadata[key] = (
        {**kept, **(metadata.get(key) or {})} if isinstance(metadata.get(key), dict) else kept
    )
    record["metadata"] = metadata
    return [f"{key}.{name}" for name in kept]


def text_of(value: Any) -> str:
    """A tool result or message as text: a string as it is, anything else as JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def objects(value: Any, field: str, *, what: str = "messages") -> Iterator[tuple[str, dict]]:
    """Yield (its place, the object) for each item of a list of objects; Invalid names the list
    or the item that is not what a record needs."""
    if value is None:
        return
    if not isinstance(value, list):
        raise Invalid(field, f"must be a list of {what}")
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise Invalid(f"{field}[{i}]", "must be an object with a role")
        yield f"{field}[{i}]", item
