"""Voice platforms' end-of-call webhooks: each verified with the platform's own signature scheme,
mapped to the Docket agent version its hook names, idempotent on the platform's call id; a
refused signature is a 401 with nothing stored. Hooks are configured by leads."""

import json
import time
from pathlib import Path

import pytest

from evals.catalog.models import Transcript
from evals.ingest.models import VoiceHook
from evals.ingest.services import voice_hook_save
from evals.ingest.signing import sign_headers
from tests.factories import api_key

pytestmark = pytest.mark.django_db
SAMPLES = Path(__file__).resolve().parents[3] / "examples" / "traces"
PAYLOADS = {
    "vapi": ("vapi-end-of-call-report.json", "asst-repairs-01", "vapi-6a1c2e30-"),
    "retell": ("retell-call-analyzed.json", "oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD", "retell-Jabr9"),
    "elevenlabs": (
        "elevenlabs-post-call-transcription.json",
        "agent_8201kb5m0x4ef9rt3hq2y7cnpd",
        "elevenlabs-conv_",
    ),
}
SECRET = "whsec-test-0123456789"


def wsgi_headers(headers: dict) -> dict:
    return {"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}


def post(client, platform: str, body: bytes, headers: dict):
    return client.post(
        f"/api/v1/hooks/{platform}/",
        body,
        content_type="application/json",
        **wsgi_headers(headers),
    )


@pytest.fixture
def hooks(db):
    return {
        platform: voice_hook_save(
            platform=platform,
            platform_agent_id=agent_id,
            agent=f"{platform}-agent",
            agent_version="2026-12-01.1",
            secret=SECRET,
        )
        for platform, (_, agent_id, _) in PAYLOADS.items()
    }


@pytest.mark.parametrize("platform", sorted(PAYLOADS))
def test_a_signed_end_of_call_webhook_is_one_call_of_the_mapped_version(client, hooks, platform):
    name, _, prefix = PAYLOADS[platform]
    body = (SAMPLES / name).read_bytes()
    response = post(client, platform, body, sign_headers(platform, body, SECRET))
    assert response.status_code == 201, response.json()
    t = Transcript.objects.get()
    assert t.external_id.startswith(prefix)
    assert (t.agent_version.agent.name, t.agent_version.version) == (
        f"{platform}-agent",
        "2026-12-01.1",
    )
    assert t.turns.filter(speaker="tool").exists()
    assert t.turns.exclude(start_ms=None).count() >= 3
    assert response.json()["formats"][platform]["calls"] == 1
    # delivered again (platforms retry): the same call, nothing new
    again = post(client, platform, body, sign_headers(platform, body, SECRET))
    assert again.status_code == 200 and again.json()["unchanged"] == 1
    assert Transcript.objects.count() == 1
    hooks[platform].refresh_from_db()
    assert hooks[platform].last_received_at is not None


@pytest.mark.parametrize("platform", sorted(PAYLOADS))
def test_a_wrong_or_missing_signature_is_a_401_and_nothing_is_stored(client, hooks, platform):
    body = (SAMPLES / PAYLOADS[platform][0]).read_bytes()
    for headers in ({}, sign_headers(platform, body, "another-secret-xyz")):
        response = post(client, platform, body, headers)
        assert response.status_code == 401
        assert response.json()["code"] == "signature_refused"
    tampered = body.replace(b"Thursday", b"Tuesday").replace(b"Friday", b"Monday")
    tampered = tampered.replace(b"library", b"LIBRARY")
    response = post(client, platform, tampered, sign_headers(platform, body, SECRET))
    assert response.status_code == 401
    assert Transcript.objects.count() == 0


@pytest.mark.parametrize("stamp", ["²", "١٧٠٠٠٠٠٠٠٠"])
def test_a_signature_stamp_of_unicode_digits_is_refused_not_a_server_error(client, hooks, stamp):
    body = (SAMPLES / PAYLOADS["elevenlabs"][0]).read_bytes()
    headers = {"ElevenLabs-Signature": f"t={stamp},v0=" + "0" * 64}
    response = post(client, "elevenlabs", body, headers)
    assert response.status_code == 401 and response.json()["code"] == "signature_refused"
    assert Transcript.objects.count() == 0


def test_vapi_also_takes_its_server_url_secret_header(client, hooks):
    body = (SAMPLES / "vapi-end-of-call-report.json").read_bytes()
    assert post(client, "vapi", body, {"X-Vapi-Secret": "nope"}).status_code == 401
    assert post(client, "vapi", body, {"X-Vapi-Secret": SECRET}).status_code == 201


@pytest.mark.parametrize(("platform", "age_s"), [("retell", 6 * 60), ("elevenlabs", 31 * 60)])
def test_an_old_signature_is_refused_as_a_replay(client, hooks, platform, age_s):
    body = (SAMPLES / PAYLOADS[platform][0]).read_bytes()
    old = sign_headers(platform, body, SECRET, now=time.time() - age_s)
    assert post(client, platform, body, old).status_code == 401
    assert Transcript.objects.count() == 0


def test_other_events_are_answered_and_not_stored(client, hooks):
    body = json.dumps({"message": {"type": "status-update", "status": "in-progress"}}).encode()
    response = post(client, "vapi", body, sign_headers("vapi", body, SECRET))
    assert response.status_code == 200 and response.json() == {"ignored": "status-update"}
    body = json.dumps({"event": "call_started", "call": {"call_id": "c1"}}).encode()
    response = post(client, "retell", body, sign_headers("retell", body, SECRET))
    assert response.json() == {"ignored": "call_started"}
    assert Transcript.objects.count() == 0


def test_a_platform_agent_no_hook_maps_is_refused(client, hooks):
    payload = json.loads((SAMPLES / "retell-call-analyzed.json").read_text())
    payload["call"]["agent_id"] = "someone-else"
    body = json.dumps(payload).encode()
    response = post(client, "retell", body, sign_headers("retell", body, SECRET))
    assert response.status_code == 422 and "someone-else" in response.json()["detail"]
    # a catch-all hook (no platform agent) takes any agent its secret signs for
    voice_hook_save(platform="retell", agent="retell-any", agent_version="1", secret=SECRET)
    assert post(client, "retell", body, sign_headers("retell", body, SECRET)).status_code == 201
    assert Transcript.objects.get().agent_version.agent.name == "retell-any"


def test_a_later_event_about_the_same_call_adds_to_its_metadata(client, hooks):
    analyzed = json.loads((SAMPLES / "retell-call-analyzed.json").read_text())
    ended = {"event": "call_ended", "call": dict(analyzed["call"])}
    del ended["call"]["call_analysis"]
    for payload, status in ((ended, 201), (analyzed, 201)):
        body = json.dumps(payload).encode()
        response = post(client, "retell", body, sign_headers("retell", body, SECRET))
        assert response.status_code == status
    assert response.json()["updated"] == 1
    t = Transcript.objects.get()
    assert t.metadata["retell"]["call_analysis"]["call_successful"] is True
    assert t.metadata["retell"]["event"] == "call_analyzed"


def test_an_inactive_hook_verifies_nothing(client, hooks):
    hooks["vapi"].active = False
    hooks["vapi"].save()
    body = (SAMPLES / "vapi-end-of-call-report.json").read_bytes()
    assert post(client, "vapi", body, sign_headers("vapi", body, SECRET)).status_code == 401


# ---- the hooks leads configure ----------------------------------------------------------------


def test_a_lead_maps_a_platform_agent_and_sets_its_secret_never_shown_again(client, lead):
    token = api_key(lead)
    auth = {"HTTP_AUTHORIZATION": f"Token {token}"}
    created = client.post(
        "/api/v1/voice-hooks/",
        {
            "platform": "elevenlabs",
            "platform_agent_id": "agent_x",
            "agent": "library",
            "agent_version": "v2",
            "secret": "wsec_abcdef0123456789",
        },
        content_type="application/json",
        **auth,
    )
    assert created.status_code == 201, created.json()
    hook = created.json()
    assert hook["secret_set"] is True and "secret" not in hook
    assert hook["endpoint"].endswith("/api/v1/hooks/elevenlabs/")
    clash = client.post(
        "/api/v1/voice-hooks/",
        {
            "platform": "elevenlabs",
            "platform_agent_id": "agent_x",
            "agent": "b",
            "agent_version": "1",
        },
        content_type="application/json",
        **auth,
    )
    assert clash.status_code == 400 and clash.json()["errors"][0]["field"] == "platform_agent_id"
    patched = client.patch(
        f"/api/v1/voice-hooks/{hook['id']}/",
        {"agent_version": "v3", "active": False},
        content_type="application/json",
        **auth,
    )
    assert patched.status_code == 200 and patched.json()["agent_version"] == "v3"
    assert VoiceHook.objects.get().secret == "wsec_abcdef0123456789"
    listed = client.get("/api/v1/voice-hooks/", **auth).json()
    assert listed["count"] == 1 and "secret" not in listed["results"][0]
    assert client.delete(f"/api/v1/voice-hooks/{hook['id']}/", **auth).status_code == 204


def test_a_hook_without_a_secret_gets_a_random_one(db):
    hook = voice_hook_save(platform="vapi", agent="a", agent_version="1")
    assert len(hook.secret) == 64


def test_a_hook_body_is_bounded_before_anything_is_verified(client, hooks, settings):
    settings.DOCKET_IMPORT_MAX_LINE_BYTES = 1000
    body = (SAMPLES / "vapi-end-of-call-report.json").read_bytes()
    response = post(client, "vapi", body, sign_headers("vapi", body, SECRET))
    assert response.status_code == 413
    assert "DOCKET_IMPORT_MAX_LINE_BYTES" in response.json()["detail"]
