"""Untrusted text, parsed in one place: JSON, JSON Lines records and YAML documents.

Every import (rules, gates, transcripts, verdicts) and every API body goes through here, from the
command line and over HTTP alike, so each gets the same limits and the same errors: a problem
names its line and field, and costs milliseconds, not seconds.

- UTF-8 is checked, and a bad byte is reported with its line.
- Nesting is at most MAX_DEPTH levels (deeper input would exhaust Python's recursion further on).
- YAML aliases count at the size they expand to: a document may expand to at most MAX_YAML_NODES
  nodes, so a few hundred bytes of `&a [*b, *b, ...]` cannot cost seconds of CPU or gigabytes.
- NUL characters (which PostgreSQL cannot store), infinities, NaN and integers beyond 64 bits are
  refused with the path of the value that holds them.
- A whole number in a query parameter, a path, a form or a body field is read by
  `whole_number`: ASCII digits only ("²" and "٣" are digits to `str.isdigit()` but not to
  `int()`'s callers' columns) and bounded to the column it goes to.
"""

import datetime as dt
import json
import math
import re
from collections.abc import Iterator
from typing import Any

import orjson
import yaml

from core.errors import DomainError

MAX_DEPTH = 64
MAX_YAML_NODES = 200_000
MAX_INT = 2**63 - 1  # a bigint column (ids, counts)
MAX_INT32 = 2**31 - 1  # an integer column (turns, ratings, sizes)
_NOTHING = object()
ORJSON_MAX_DEPTH = 1024  # orjson refuses anything deeper itself
NUL_REASON = "contains a NUL character (\\u0000), which cannot be stored"
MAX_INT_DIGITS = 30  # a YAML integer with more digits is refused before Python converts it


class _YamlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """The safe loader (libyaml's C one: about eight times faster than PyYAML's Python loader),
    with integers longer than any column refused at their own line."""

    def construct_yaml_int(self, node):
        if len(node.value.replace("_", "")) > MAX_INT_DIGITS:
            raise yaml.constructor.ConstructorError(
                None, None, "a whole number beyond 64 bits", node.start_mark
            )
        return super().construct_yaml_int(node)


_YamlLoader.add_constructor("tag:yaml.org,2002:int", _YamlLoader.construct_yaml_int)


def whole_number(
    value: Any,
    *,
    field: str,
    low: int = 0,
    high: int = MAX_INT,
    default: Any = _NOTHING,
) -> int:
    """Return `value` (an int, or text of ASCII digits with an optional sign) as an int from `low`
    to `high`; raise DomainError naming `field` otherwise.

    With `default`, a missing value (None or blank text) returns it instead.
    """
    missing = value is None or (isinstance(value, str) and not value.strip())
    if missing and default is not _NOTHING:
        return default
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text[:1] in "+-" else text
        if digits.isascii() and digits.isdigit() and len(digits) <= 20:
            number = int(text)
    if number is None:
        shown = repr(value)[:40] if isinstance(value, str) else type(value).__name__
        raise DomainError(f"must be a whole number, got {shown}", field=field)
    if not low <= number <= high:
        raise DomainError(f"must be a whole number from {low} to {high}", field=field)
    return number


def calendar_date(value: str | None, *, field: str) -> dt.date | None:
    """Return `value` (YYYY-MM-DD) as a date, None when blank; raise DomainError naming `field`."""
    raw = (value or "").strip()
    if not raw:
        return None
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        raise DomainError(f"{raw[:40]!r} is not a date (YYYY-MM-DD)", field=field) from None


class ParseProblem(ValueError):
    """Input that cannot be used: the line (1-based) it is on, the field, and why."""

    def __init__(self, line: int, field: str, reason: str):
        self.line = line
        self.field = field
        self.reason = reason
        super().__init__(f"{line}: {field}: {reason}")


def size_check(data: bytes | str, *, limit: int, setting: str) -> None:
    """Raise ParseProblem when a document is larger than `limit` bytes (named by its setting)."""
    size = len(data.encode("utf-8") if isinstance(data, str) else data)
    if limit and size > limit:
        raise ParseProblem(1, "size", f"{size:,} bytes, more than {setting} ({limit:,} bytes)")


def utf8(data: bytes | str, *, first_line: int = 1) -> str:
    """Return the text of UTF-8 bytes (BOM dropped); raise ParseProblem naming a bad byte's line."""
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ParseProblem(
            line,
            "encoding",
            f"not UTF-8: byte 0x{data[exc.start]:02x} at column {column}",
        ) from None


def tree_problem(value: Any, *, max_depth: int = MAX_DEPTH) -> tuple[str, str] | None:
    """Return (path, reason) for the first value that cannot be stored, or None.

    Walks without recursion, so a deep value cannot exhaust the stack while being checked.
    """
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return path, NUL_REASON
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not -MAX_INT <= item <= MAX_INT:
                return path, "a whole number beyond 64 bits"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return path, f"{item!r} is not a finite number"
        elif isinstance(item, dict | list):
            if depth >= max_depth:
                shown = path if len(path) <= 80 else f"{path[:40]}...{path[-30:]}"
                return shown, f"nested deeper than {max_depth} levels"
            if isinstance(item, dict):
                children = []
                for key, child in item.items():
                    here = f"{path}.{key}" if path else str(key)
                    if isinstance(key, str) and "\x00" in key:
                        return here, NUL_REASON
                    children.append((child, here, depth + 1))
            else:
                children = [(child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item)]
            stack.extend(reversed(children))
    return None


def json_value(data: bytes | str, *, line: int = 1, check: str = "deep") -> Any:
    """Return one parsed JSON value; raise ParseProblem with the line of the mistake.

    `check`: "deep" checks the whole value (tree_problem); "nul" only looks for NUL characters,
    enough when the caller checks every field it keeps (verdict lines); "none" leaves it to the
    caller.
    """
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if isinstance(data, bytes):
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                utf8(data, first_line=line)  # raises, naming the byte and its line
        raise ParseProblem(line + exc.lineno - 1, "json", f"not valid JSON: {exc.msg}") from None
    problem = None
    if check == "deep":
        problem = tree_problem(value)
        if problem is None and _LONG_DIGITS[type(data)].search(data):
            problem = _big_int_problem(data)
    elif check == "nul" and (b"\\u0000" if isinstance(data, bytes) else "\\u0000") in data:
        problem = tree_problem(value, max_depth=ORJSON_MAX_DEPTH)
    if problem is not None:
        path, reason = problem
        raise ParseProblem(line, path or "json", reason)
    return value


_LONG_DIGITS = {bytes: re.compile(rb"[0-9]{19}"), str: re.compile(r"[0-9]{19}")}


def _big_int_problem(data: bytes | str) -> tuple[str, str] | None:
    """orjson reads an integer past 64 bits as a float: read the document again with the standard
    library, which keeps it whole, so it is refused at its path instead of stored rounded."""
    try:
        exact = json.loads(data)
    except ValueError:  # an integer longer than Python converts
        return "", "a whole number beyond 64 bits"
    return tree_problem(exact)


def _yaml_problem(exc: yaml.YAMLError) -> ParseProblem:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    return ParseProblem(mark.line + 1 if mark else 1, "yaml", f"not valid YAML: {problem}")


def _yaml_events_check(text: str, *, max_depth: int, max_nodes: int) -> None:
    """Check the parser's events (in C) before anything is built: depth, size with aliases."""
    depth = 0
    used = 0
    open_nodes: list[tuple[str | None, int]] = []  # (anchor, nodes used before it started)
    expanded: dict[str, int] = {}
    for event in yaml.parse(text, Loader=_YamlLoader):
        if isinstance(event, yaml.AliasEvent):
            used += expanded.get(event.anchor, 1)
        elif isinstance(event, yaml.ScalarEvent):
            used += 1
            if event.anchor:
                expanded[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > max_depth:
                raise ParseProblem(
                    event.start_mark.line + 1, "yaml", f"nested deeper than {max_depth} levels"
                )
            open_nodes.append((event.anchor, used))
            used += 1
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            anchor, before = open_nodes.pop()
            if anchor:
                expanded[anchor] = used - before
        else:
            continue
        if used > max_nodes:
            raise ParseProblem(
                event.start_mark.line + 1,
                "yaml",
                f"expands to more than {max_nodes:,} values (aliases counted at their full size)",
            )


def yaml_document(
    text: str, *, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_YAML_NODES
) -> tuple[Any, yaml.Node | None]:
    """Return (data, root node) of one YAML document (JSON is YAML too); raise ParseProblem.

    The node tree keeps each value's line, for errors that name the line of a field.
    """
    try:
        _yaml_events_check(text, max_depth=max_depth, max_nodes=max_nodes)
        loader = _YamlLoader(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise _yaml_problem(exc) from None
    except ParseProblem:
        raise
    except ValueError as exc:  # e.g. an integer longer than Python converts (4,300 digits)
        raise ParseProblem(1, "yaml", f"not usable: {exc}") from None
    problem = tree_problem(data, max_depth=max_depth)
    if problem is not None:
        path, reason = problem
        raise ParseProblem(_node_line(node, path), path or "yaml", reason)
    return data, node


def _node_line(node: yaml.Node | None, path: str) -> int:
    """Return the line of the value at `path` (a.b[2].c), or of its closest parent."""
    line = node.start_mark.line + 1 if node is not None else 1
    for part in _path_parts(path):
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            node = next((v for k, v in node.value if str(k.value) == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            node = node.value[part] if part < len(node.value) else None
        else:
            node = None
        if node is None:
            break
        line = node.start_mark.line + 1
    return line


def _path_parts(path: str) -> Iterator[str | int]:
    for chunk in path.split(".") if path else []:
        name, *indices = chunk.split("[")
        if name:
            yield name
        for index in indices:
            yield int(index.rstrip("]"))
