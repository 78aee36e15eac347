"""Fixtures the evals tests share."""

import pytest

from tests.evals.evalrun_helpers import AGENT_REPLIES, SCORES


@pytest.fixture
def world(db):
    """Two agent versions, one call per golden scenario, three gated rules and a release gate."""
    from tests.evals.gating_helpers import World

    return World()


@pytest.fixture
def fake_chat(settings):
    """The fake chat server (tests/evals/evalrun_server.py) as the agent under test and the judge,
    with the eval-run tests' replies and scores."""
    from tests.evals.evalrun_server import FakeChat

    server = FakeChat().start()
    server.agent_replies = dict(AGENT_REPLIES)
    server.scores = dict(SCORES)
    server.judge_fail_for = ["JUDGE-DOWN"]
    for prefix in ("JUDGE", "EVAL_AGENT"):
        setattr(settings, f"{prefix}_BASE_URL", server.base_url)
        setattr(settings, f"{prefix}_MODEL", "gpt-4o-mini")
        setattr(settings, f"{prefix}_API_KEY", "test-key")
    settings.JUDGE_TIMEOUT_S = 5
    settings.JUDGE_MAX_RETRIES = 0
    settings.EVAL_COST_CAP_USD = 0
    yield server
    server.stop()
