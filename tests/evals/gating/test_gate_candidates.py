"""A gate runs only on its own agent's versions: the page offers only those, and the service (so
the API, the page and the command) refuses another agent's with a 400 and stores no run."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from evals.gating import selectors as sel
from evals.gating import services as gating
from evals.gating.models import GateRun
from tests.factories import (
    AgentFactory,
    AgentVersionFactory,
    TranscriptFactory,
    logged_in,
    token_client,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def other(world):
    """A second agent, with a call of its own, that the release gate's golden set never saw."""
    av = AgentVersionFactory(agent=AgentFactory(name="booking-desk"), version="2026-11-30.1")
    TranscriptFactory(agent_version=av, external_id="booking-1")
    return av


def test_the_gate_gates_the_agents_its_golden_set_has_calls_of(world, other):
    assert [a.name for a in sel.gate_agents(world.gate)] == ["phone-screen"]
    assert [str(v) for v in sel.gate_candidates(world.gate)] == [
        "phone-screen 2026-11-28.1",
        "phone-screen 2026-11-21.1",
    ]


def test_the_api_refuses_another_agents_candidate_and_stores_nothing(world, other, engineer):
    c = token_client(engineer)
    r = c.post(
        "/api/v1/gate-runs/",
        {"gate": "release", "candidate": "booking-desk:2026-11-30.1"},
        format="json",
    )
    assert r.status_code == 400, r.content
    body = r.json()
    assert body["code"] == "gate_cannot_run" and body["errors"][0]["field"] == "candidate"
    assert body["errors"][0]["message"] == (
        "booking-desk 2026-11-30.1 is a version of agent booking-desk, but gate release gates "
        "phone-screen (its golden set release-set has calls of that agent only): choose a "
        "version of phone-screen"
    )
    # A baseline of another agent is refused the same way.
    r = c.post(
        "/api/v1/gate-runs/",
        {"gate": "release", "candidate": "2026-11-28.1", "baseline": "booking-desk:2026-11-30.1"},
        format="json",
    )
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "baseline"
    assert not GateRun.objects.exists()


def test_the_command_refuses_it_and_exits_2(world, other):
    out = StringIO()
    with pytest.raises(CommandError, match="is a version of agent booking-desk") as exc:
        call_command(
            "gate", "--gate", "release", "--candidate", "booking-desk:2026-11-30.1", stdout=out
        )
    assert exc.value.returncode == 2 and not GateRun.objects.exists()


def test_the_page_offers_only_the_gates_agent_and_says_why_it_refuses(world, other, lead):
    c = logged_in(Client(), lead)
    page = c.get("/gates/release/").content.decode()
    assert "phone-screen 2026-11-28.1" in page and "booking-desk" not in page
    r = c.post("/gates/release/run/", {"candidate": other.pk}, follow=True)
    assert "The gate could not run: candidate: booking-desk 2026-11-30.1 is a version" in (
        r.content.decode()
    )
    assert not GateRun.objects.exists()


def test_a_gate_whose_golden_set_has_no_call_yet_takes_any_version(world, other):
    golden = gating.golden_set_create(name="new-set", members=["golden/none-01"], by="lena")
    gate, _ = gating.gate_save(
        name="nightly", golden_set=golden, by="lena", metrics=[{"kind": "safety_ceiling"}]
    )
    assert sel.gate_agents(gate) == []
    run = gating.gate_run_start(gate=gate, candidate=other, by="lena", background=False)
    assert run.status == "fail"  # the run itself says no call of the candidate was found
