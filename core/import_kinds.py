"""The kinds of file the import page takes, registered from each app's AppConfig.ready(): core
names none of them. Each kind calls the same importer as its command and its API endpoint, so a
file imports the same way wherever it comes in (all or nothing, errors naming line and field).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from core.importing import ImportResult
from core.permissions import user_can


@dataclass(frozen=True)
class ImportOption:
    """A setting the page asks beside the file; `name` is the importer's keyword, as the API's
    query parameter spells it."""

    name: str
    label: str
    help: str = ""
    flag: bool = False  # a checkbox (true or false), else text
    required: bool = False  # asked whatever the file holds (a dataset's name)
    max_length: int = 200


@dataclass(frozen=True)
class ImportKind:
    name: str  # "transcripts": the page's choice and the job's kind
    label: str  # "Transcripts"
    formats: str  # one line: what the file may be
    # run(lines=, source=, document=, progress=, spelling=, by=, **options) -> ImportResult:
    # the kind's importer, called with the file's lines (bytes) or, for `whole` kinds, its text
    run: Callable[..., ImportResult]
    options: tuple[ImportOption, ...] = ()
    # missing(records) -> the names of options the file's first records do not carry (the page
    # asks them then): e.g. transcripts without an agent and version
    missing: Callable[[Iterable[Any]], set[str]] | None = None
    whole: bool = False  # read as one text (YAML): bounded by DOCKET_CONFIG_MAX_BYTES
    command: str = ""  # the management command that imports the same files
    api: str = ""  # the URL name of the API endpoint that does
    permission: str = "import_data"  # what its command's API endpoint needs too
    order: int = 100  # place in the page's list


IMPORT_KINDS: dict[str, ImportKind] = {}


def import_kind_register(kind: ImportKind) -> None:
    """Offer this kind of file on the import page."""
    IMPORT_KINDS[kind.name] = kind


def import_kinds(user=None) -> list[ImportKind]:
    """Return the registered kinds in the page's order (those `user` may import, if given)."""
    kinds = sorted(IMPORT_KINDS.values(), key=lambda k: (k.order, k.name))
    return [k for k in kinds if user is None or user_can(user, k.permission)]
