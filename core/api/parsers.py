"""Request bodies: JSON everywhere; JSON Lines, YAML and CSV on the import endpoints only.

The JSON parser goes through the one parsing home (core.parsing): bounded size and nesting, and
no NUL character (PostgreSQL cannot store one) or number beyond 64 bits, so no endpoint has to
check. The import parsers hand the view the raw stream, which the importers read line by line
(a large file is never held whole, and never more than its limit: 413 naming the setting).
"""

from collections.abc import Iterator

from django.conf import settings
from rest_framework import parsers, renderers, status
from rest_framework.exceptions import APIException, ParseError

from core import parsing


class BodyTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "body_too_large"

    def __init__(self, *, limit: int, setting: str):
        super().__init__(f"The request body is larger than {setting} ({limit:,} bytes).")


def _declared_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def body_lines(request, *, limit: int, setting: str) -> Iterator[bytes]:
    """Yield an import body's lines as they arrive; raise BodyTooLarge past `limit` bytes.

    Reading `request.data` makes DRF check the content type against the view's parsers (415
    for any other); the import parsers return the raw stream.
    """
    if limit and _declared_length(request) > limit:
        raise BodyTooLarge(limit=limit, setting=setting)
    stream = request.data
    if not hasattr(stream, "readline"):
        return
    read = 0
    while True:
        # A line is read at most up to the limit, so one endless line cannot fill the memory.
        line = stream.readline(limit - read + 1) if limit else stream.readline()
        if not line:
            return
        read += len(line)
        if limit and read > limit:
            raise BodyTooLarge(limit=limit, setting=setting)
        yield line


def body_bytes(request, *, limit: int, setting: str) -> bytes:
    """Return a whole import body; raise BodyTooLarge when it is longer than `limit` bytes."""
    return b"".join(body_lines(request, limit=limit, setting=setting))


class JSONParser(parsers.BaseParser):
    """JSON bodies, bounded: DATA_UPLOAD_MAX_MEMORY_SIZE bytes (413 past it), nesting, numbers
    and NUL characters checked by the one parsing home (core.parsing), a 400 naming the field.

    Not a subclass of DRF's: DRF reads those parsers' bodies through `request.body`, whose size
    error is Django's bare HTML 400; this one reads the stream itself.
    """

    media_type = "application/json"
    renderer_class = renderers.JSONRenderer

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0
        data = stream.read(limit + 1) if limit else stream.read()
        if limit and len(data) > limit:
            raise BodyTooLarge(limit=limit, setting="DATA_UPLOAD_MAX_MEMORY_SIZE")
        encoding = parsers.get_encoding(parser_context or {})
        if encoding.lower().replace("-", "") != "utf8":
            try:
                data = data.decode(encoding)
            except UnicodeDecodeError as exc:
                raise ParseError(f"JSON parse error - not {encoding}: {exc.reason}") from None
        try:
            return parsing.json_value(data)
        except parsing.ParseProblem as exc:
            if exc.field in ("json", "encoding"):
                raise ParseError(f"JSON parse error - line {exc.line}: {exc.reason}") from None
            raise ParseError({exc.field: [exc.reason]}) from None


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


class CSVParser(StreamParser):
    """CSV with a header row (marks), read by the importer."""

    media_type = "text/csv"


JSON_LINES = [JSONLinesParser, JSONLParser, JSONStreamParser]
MARKS = [*JSON_LINES, CSVParser]
RULES = [YAMLParser, XYAMLParser, JSONStreamParser]
