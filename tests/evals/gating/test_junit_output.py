"""`gate --format junit` validates against the common JUnit schemas (tests/evals/junit/), and a
gate that cannot run still writes its report in the chosen format (issue 10)."""

import json
from pathlib import Path

import pytest
from lxml import etree

from evals.catalog.models import AgentVersion
from evals.gating import output as gate_output
from evals.gating.models import GateRun
from evals.gating.selectors import gate_run_payload
from tests.evals.gating.test_gating import gate_cmd

SCHEMAS = Path(__file__).parents[1] / "junit"


@pytest.fixture(scope="module")
def schemas():
    return {
        name: etree.XMLSchema(etree.parse(str(SCHEMAS / name)))
        for name in ("junit-10.xsd", "JUnit.xsd")
    }


def valid(schemas, xml: str) -> etree._Element:
    """Return the parsed report after checking it against both schemas (naming what fails)."""
    doc = etree.fromstring(xml.encode())
    for name, schema in schemas.items():
        assert schema.validate(doc), f"{name}: {schema.error_log}"
    return doc


def test_passing_and_failing_gate_reports_are_valid_junit(world, schemas):
    code, out = gate_cmd("--gate", "release", "--candidate", "2026-11-21.1", "--format", "junit")
    assert code == 0
    suite = valid(schemas, out)
    assert suite.get("failures") == "0" and suite.get("errors") == "0"
    assert float(suite.get("time")) > 0 and suite.get("hostname")
    assert len(suite.get("timestamp")) == 19  # 2026-12-01T17:00:03: UTC, no zone
    assert suite.findtext("system-out").startswith("gate release")

    world.flag("2026-11-28.1-0", world.leak)
    code, out = gate_cmd("--gate", "release", "--candidate", "2026-11-28.1", "--format", "junit")
    assert code == 1
    suite = valid(schemas, out)
    failure = suite.find("testcase/failure")
    assert failure.get("type") == "safety_ceiling"
    assert "2026-11-28.1-0 turn 2" in failure.text
    assert suite.get("failures") == "1"


def test_an_error_run_is_valid_junit(world, schemas):
    candidate = AgentVersion.objects.get(version="2026-11-28.1")
    run = GateRun.objects.create(
        gate=world.gate,
        candidate=candidate,
        status=GateRun.Status.ERROR,
        golden_set=world.gate.golden_set,
        error="ValueError: boom",
        started_by="test",
    )
    suite = valid(schemas, gate_output.as_junit(gate_run_payload(run), seconds=1.5))
    assert (suite.get("errors"), suite.get("tests"), suite.get("time")) == ("1", "1", "1.500")
    error = suite.find("testcase/error")
    assert (error.get("type"), error.get("message")) == ("cannot_run", "ValueError: boom")


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--gate", "nope", "--candidate", "2026-11-21.1"], "gate: no gate 'nope'"),
        (
            ["--gate", "release", "--candidate", "1999-01-01.1"],
            "candidate: no agent version '1999-01-01.1'",
        ),
    ],
    ids=["unknown-gate", "unknown-version"],
)
def test_a_gate_that_cannot_run_writes_its_report_in_the_chosen_format(world, schemas, args, error):
    code, out = gate_cmd(*args, "--format", "junit")
    assert code == 2
    xml = out[: out.index("</testsuite>") + len("</testsuite>")]
    suite = valid(schemas, xml)
    assert suite.find("testcase/error").get("message") == error
    assert suite.get("errors") == "1"

    code, out = gate_cmd(*args, "--format", "json")
    assert code == 2
    report = json.loads(out[: out.rindex("}") + 1])
    assert (report["status"], report["passed"], report["error"]) == ("error", False, error)
    assert report["id"] is None
    assert GateRun.objects.filter(status="error").count() == 0  # nothing ran, nothing recorded
