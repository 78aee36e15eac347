"""OpenTelemetry over OTLP/HTTP: JSON and protobuf (gzip or not), token auth; spans of one trace
that arrive in several requests join one call, and spans sent again change nothing."""

import base64
import copy
import gzip
import json
from pathlib import Path

import pytest
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from evals.catalog.models import Transcript
from evals.ingest.models import TraceSpan
from evals.ingest.services import otlp_receive
from tests.factories import api_key

pytestmark = pytest.mark.django_db
SAMPLES = Path(__file__).resolve().parents[3] / "examples" / "traces"
URL = "/api/otel/v1/traces"


def export(name: str) -> dict:
    return json.loads((SAMPLES / name).read_text())


def protobuf(doc: dict) -> bytes:
    """The same export as the protobuf an SDK sends (ids as bytes: base64 in ParseDict's JSON)."""
    doc = copy.deepcopy(doc)
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return ParseDict(doc, ExportTraceServiceRequest()).SerializeToString()


def split(doc: dict, keep) -> dict:
    """The export with only the spans `keep(index)` says."""
    doc = copy.deepcopy(doc)
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"] = [s for i, s in enumerate(spans) if keep(i)]
    return doc


@pytest.fixture
def auth(engineer):
    return {"HTTP_AUTHORIZATION": f"Token {api_key(engineer)}"}


def post(client, auth, body, content_type="application/json", **extra):
    if isinstance(body, dict):
        body = json.dumps(body).encode()
    return client.post(URL, body, content_type=content_type, **auth, **extra)


def speakers(external_id: str) -> list[str]:
    t = Transcript.objects.get(external_id=external_id)
    return list(t.turns.order_by("index").values_list("speaker", flat=True))


def test_otlp_json_becomes_a_call_and_the_same_spans_again_change_nothing(client, auth):
    response = post(client, auth, export("otel-genai.json"))
    assert response.status_code == 200 and response.json() == {}
    assert response["Docket-Import"].startswith("transcripts: 1 created")
    assert speakers("otel-session-conv-lyon-0001") == ["system", "user", "agent", "tool", "agent"]
    again = post(client, auth, export("otel-genai.json"))
    assert again["Docket-Import"].startswith("transcripts: 0 created, 1 unchanged")
    assert TraceSpan.objects.count() == 4 and Transcript.objects.count() == 1


def test_otlp_protobuf_and_gzip_answer_in_kind(client, auth):
    body = gzip.compress(protobuf(export("otel-openinference.json")))
    response = post(
        client, auth, body, content_type="application/x-protobuf", HTTP_CONTENT_ENCODING="gzip"
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-protobuf"
    ExportTraceServiceResponse.FromString(response.content)  # a valid response message
    assert speakers("otel-session-sess-9f3e") == [
        "system", "user", "agent", "user", "agent", "tool", "agent"
    ]  # fmt: skip
    t = Transcript.objects.get()
    assert (t.agent_version.agent.name, t.agent_version.version) == ("router-help", "3.4.0")


def test_spans_of_one_trace_in_several_requests_join_one_call_in_any_order(client, auth):
    doc = export("otel-genai.json")
    # the tool span and the last chat span first, the root and first chat later
    assert post(client, auth, split(doc, lambda i: i >= 2)).status_code == 200
    first = speakers("otel-session-conv-lyon-0001")
    assert post(client, auth, split(doc, lambda i: i < 2)).status_code == 200
    assert first.count("tool") == 1  # the tool's call and result once, not again from the LLM
    assert speakers("otel-session-conv-lyon-0001") == ["system", "user", "agent", "tool", "agent"]
    assert Transcript.objects.count() == 1
    whole = post(client, auth, doc)
    assert whole["Docket-Import"].startswith("transcripts: 0 created, 1 unchanged")


def test_a_trace_without_session_is_a_call_of_its_own(client, auth):
    doc = export("otel-genai.json")
    for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["attributes"] = [a for a in span["attributes"] if a["key"] != "gen_ai.conversation.id"]
    post(client, auth, doc)
    assert Transcript.objects.get().external_id == "otel-trace-5b8efff798038103d269b633813fc60c"


def test_the_agent_version_comes_from_the_query_when_the_resource_has_none(client, auth):
    doc = export("otel-genai.json")
    doc["resourceSpans"][0]["resource"]["attributes"] = []
    refused = post(client, auth, doc)
    assert refused.status_code == 400 and "agent" in refused.json()["detail"]
    assert TraceSpan.objects.count() == 0  # nothing kept from a refused export
    ok = client.post(
        URL + "?agent=weather&agent_version=7",
        json.dumps(doc),
        content_type="application/json",
        **auth,
    )
    assert ok.status_code == 200
    assert Transcript.objects.get().agent_version.version == "7"


def test_bad_spans_are_named_and_bodies_checked(client, auth):
    doc = export("otel-genai.json")
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["traceId"] = "xyz"
    response = post(client, auth, doc)
    assert response.status_code == 400
    assert "resourceSpans[0].scopeSpans[0].spans[1].traceId" in response.json()["detail"]
    garbage = post(client, auth, b"\x0a\xff\xff", content_type="application/x-protobuf")
    assert garbage.status_code == 400 and garbage.json()["code"] == "otlp_invalid"
    assert post(client, auth, b"<xml/>", content_type="text/xml").status_code == 415
    assert Transcript.objects.count() == 0


def test_an_attribute_index_of_unicode_digits_stays_a_key_not_a_server_error(client, auth):
    doc = export("otel-openinference.json")
    span = next(
        s
        for rs in doc["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
        if any(a["key"].startswith("llm.input_messages.") for a in s.get("attributes", []))
    )
    span["attributes"].append(
        {"key": "llm.input_messages.².message.role", "value": {"stringValue": "user"}}
    )
    response = post(client, auth, doc)
    assert response.status_code < 500, response.content


def test_otlp_needs_a_token_with_import_data(client, reviewer):
    assert post(client, {}, export("otel-genai.json")).status_code == 401
    token = api_key(reviewer)
    refused = post(client, {"HTTP_AUTHORIZATION": f"Token {token}"}, export("otel-genai.json"))
    assert refused.status_code == 403


def test_a_trace_with_no_conversation_is_left_out_and_said_so(client, auth):
    doc = export("otel-genai.json")
    root = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    web = copy.deepcopy(root)
    web.update(traceId="9" * 32, spanId="9" * 16, name="GET /health")
    web["attributes"] = [{"key": "http.route", "value": {"stringValue": "/health"}}]
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"].append(web)
    response = post(client, auth, doc)
    assert response.status_code == 200
    assert Transcript.objects.count() == 1
    assert not TraceSpan.objects.filter(trace_id="9" * 32).exists()
    result = otlp_receive(export=doc)
    assert result.formats["opentelemetry"]["left_out"] == {
        "traces with no GenAI or OpenInference span (no LLM, tool, input or output)": 1
    }
    assert "left out: 1 traces with no GenAI" in result.summary
