"""Request bodies: JSON everywhere; JSON Lines and YAML on the import endpoints only.

The JSON parser refuses a NUL character anywhere in the body (PostgreSQL cannot store one), so
no endpoint has to. The import parsers hand the view the raw stream, which the importers read
line by line (a large file is never held whole) and check themselves.
"""

from rest_framework import parsers
from rest_framework.exceptions import ParseError


def _nul_path(value, path: str = "") -> str | None:
    """Return where a NUL character sits in parsed JSON (`turns[2].text`), or None."""
    if isinstance(value, str):
        return (path or "body") if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if "\x00" in str(key):
                return where
            found = _nul_path(item, where)
            if found:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _nul_path(item, f"{path}[{i}]")
            if found:
                return found
    return None


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, refusing NUL characters with a 400 that names the field."""

    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        where = _nul_path(data)
        if where:
            raise ParseError(f"{where}: contains a NUL character (\\u0000), which is not allowed")
        return data


class StreamParser(parsers.BaseParser):
    """Accept the body as it comes: the view reads `request.data`, the raw stream."""

    def parse(self, stream, media_type=None, parser_context=None):
        return stream


class JSONLinesParser(StreamParser):
    """JSON Lines (one JSON object a line)."""

    media_type = "application/x-ndjson"


class JSONLParser(StreamParser):
    """JSON Lines under its other common name."""

    media_type = "application/jsonl"


class JSONStreamParser(StreamParser):
    """One JSON document (a rules file, or an array of transcripts), read by the importer."""

    media_type = "application/json"


class YAMLParser(StreamParser):
    """YAML (a rules file)."""

    media_type = "application/yaml"


class XYAMLParser(StreamParser):
    """YAML under its older name."""

    media_type = "application/x-yaml"


JSON_LINES = [JSONLinesParser, JSONLParser, JSONStreamParser]
RULES = [YAMLParser, XYAMLParser, JSONStreamParser]
