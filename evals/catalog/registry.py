"""What the apps above the catalog keep per call and the transcript importer carries for them,
registered from their AppConfig.ready(); the catalog names none of them.

A call part is parsed from a call's line (the decisions an agent reported, those its timings
imply), written in the import's transaction, and forgotten when a replace changes the call's
turns: what was made on the old text (verdicts and their marks, decisions) goes with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CallPart:
    name: str
    # parser() -> parse(line object, parsed turns) -> the part's value for that call; called
    # once per import (to load what parsing needs once). Raise core.importing.Invalid on a bad
    # line.
    parser: Callable[[], Callable[[dict, Sequence[dict]], Any]] | None = None
    # write([(where, transcript pk, value)], replace=, errors=) -> (counts for the import's
    # details, the transcript pks it changed); every line's value, unchanged calls' too.
    write: Callable[..., tuple[dict[str, int], set[int]]] | None = None
    # forget(transcript pks) -> counts for the details: delete what was made on the old turns.
    forget: Callable[[list[int]], dict[str, int]] | None = None
    counts: tuple[str, ...] = ()  # the detail counts it reports, 0 when nothing happened
    keys: tuple[str, ...] = ()  # the line's keys it reads (a converted format passes them on)


CALL_PARTS: dict[str, CallPart] = {}


def call_part_register(part: CallPart) -> None:
    """Have the transcript importer carry this part of a call."""
    CALL_PARTS[part.name] = part
