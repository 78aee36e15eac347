"""OTLP/HTTP bodies: protobuf or JSON, gzip or not, to the OTLP/JSON shape the converter reads."""

import base64
import zlib

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from core import parsing
from core.errors import DomainError

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


class BodyRefused(DomainError):
    code = "otlp_invalid"


def json_object(body: bytes, refuse: type[DomainError] = DomainError, what: str = "a JSON object"):
    """The body's JSON object (through the one parsing home); `refuse` says why it is not."""
    try:
        value = parsing.json_value(body)
    except parsing.ParseProblem as exc:
        raise refuse(f"line {exc.line}: {exc.reason}", field=exc.field) from None
    if not isinstance(value, dict):
        raise refuse(f"must be {what}", field="body")
    return value


def gunzip(data: bytes, *, limit: int, setting: str) -> bytes:
    """The body inflated, at most `limit` bytes (a small body must not inflate without bound)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as exc:
        raise BodyRefused(f"not gzip: {exc}", field="body") from None
    if len(out) > limit:
        raise BodyRefused(f"inflates past DOCKET_IMPORT_MAX_BYTES ({limit:,} bytes)", field="body")
    return out


def _hex_ids(node):
    """MessageToDict writes bytes as base64; OTLP/JSON writes trace and span ids in hex."""
    if isinstance(node, dict):
        for key in ("traceId", "spanId", "parentSpanId"):
            if isinstance(node.get(key), str):
                node[key] = base64.b64decode(node[key]).hex()
        for value in node.values():
            _hex_ids(value)
    elif isinstance(node, list):
        for value in node:
            _hex_ids(value)
    return node


def export_request(body: bytes, content_type: str) -> dict:
    """The ExportTraceServiceRequest in a body, in its OTLP/JSON shape."""
    if content_type == PROTOBUF:
        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except DecodeError as exc:
            raise BodyRefused(f"not an ExportTraceServiceRequest: {exc}", field="body") from None
        return _hex_ids(MessageToDict(request))
    return json_object(body, BodyRefused, "an ExportTraceServiceRequest object")


def export_response(content_type: str) -> bytes:
    """A full success, in the request's encoding."""
    if content_type == PROTOBUF:
        return ExportTraceServiceResponse().SerializeToString()
    return b"{}"
