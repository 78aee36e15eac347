"""Per-kind data versions (core.data_versions) and the figures cached over them: a cache is
invalidated by what changed (any writer, a factory's row too) and by nothing else."""

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from console.selectors import agent_version_figures, dashboard_figures, dashboard_outcomes
from core.data_versions import data_changed, data_versions
from labeling.charts import outcome_chart
from labeling.models import OutcomeQuestion
from labeling.selectors.outcomes import call_outcomes, outcome_figures
from labeling.services.marks import mark_set
from labeling.services.outcomes import outcome_rate
from tests.factories import JudgeFactory, TranscriptFactory, UserFactory, VerdictFactory

pytestmark = pytest.mark.django_db(transaction=True)  # the bumps run once a transaction commits


def version(kind: str) -> str:
    return data_versions(kind)


def test_each_kind_moves_when_its_table_is_written_and_only_then():
    before = {k: version(k) for k in ("calls", "verdicts", "ratings", "samples")}
    call = TranscriptFactory()
    assert version("calls") != before["calls"]
    assert version("verdicts") == before["verdicts"]
    after_call = version("calls")
    verdict = VerdictFactory(transcript=call, flagged=False)
    assert version("verdicts") != before["verdicts"] and version("calls") == after_call
    after_verdict = version("verdicts")
    mark_set(reviewer=UserFactory(roles=["reviewer"]), verdict=verdict, correct=True)
    assert version("verdicts") == after_verdict  # a mark is not a verdict
    outcome_rate(reviewer=UserFactory(roles=["reviewer"]), transcript=call, rating=4)
    assert version("ratings") != before["ratings"] and version("verdicts") == after_verdict
    data_changed("verdicts")  # outside a transaction: at once
    assert version("verdicts") != after_verdict


@pytest.fixture
def cached(settings):
    settings.DOCKET_FIGURES_CACHE_SECONDS = 60
    cache.clear()
    yield
    cache.clear()


def queries(fn) -> tuple[object, int]:
    with CaptureQueriesContext(connection) as ctx:
        out = fn()
    return out, len(ctx.captured_queries)


def test_dashboard_calls_stay_cached_through_verdicts_and_the_figures_match_a_recompute(cached):
    call = TranscriptFactory()
    verdicts = [VerdictFactory(transcript=call, flagged=i == 0) for i in range(3)]
    _, cold = queries(dashboard_figures)
    warm_figures, warm = queries(dashboard_figures)
    assert warm < cold and warm_figures["agent_versions"] == agent_version_figures()
    mark_set(reviewer=UserFactory(roles=["reviewer"]), verdict=verdicts[0], correct=False)
    _, after_mark = queries(dashboard_figures)
    assert after_mark == warm  # marks changed nothing the figures read
    # The verdict figures are read from the precomputed counts every time, the calls' from the
    # cache until calls change.
    VerdictFactory(transcript=call, flagged=True)
    figures, after_verdict = queries(dashboard_figures)
    assert after_verdict == warm
    assert figures["agent_versions"] == agent_version_figures()
    assert (figures["verdicts"], figures["flagged"]) == (4, 2)
    TranscriptFactory()
    figures, after_call = queries(dashboard_figures)
    assert after_call > warm and figures["calls"] == 2


def test_dashboard_outcomes_are_cached_until_a_rating_changes(cached):
    call, other = TranscriptFactory(), TranscriptFactory()
    reviewer = UserFactory(roles=["reviewer"])
    outcome_rate(reviewer=reviewer, transcript=call, rating=4)

    def recompute():
        q = OutcomeQuestion.objects.get()
        figures = outcome_figures(call_outcomes(question=q), by="week")
        return figures["versions"], outcome_chart(figures["trend"], period="week")

    _, cold = queries(dashboard_outcomes)
    shown, warm = queries(dashboard_outcomes)
    assert warm < cold and (shown[0]["versions"], shown[0]["chart"]) == recompute()
    VerdictFactory(transcript=call, flagged=True)
    assert queries(dashboard_outcomes)[1] == warm  # a verdict is not a rating
    outcome_rate(reviewer=reviewer, transcript=other, rating=1, reason="rude")
    shown, _ = queries(dashboard_outcomes)
    assert (shown[0]["versions"], shown[0]["chart"]) == recompute()
    assert shown[0]["versions"][0]["calls"] == 2


def test_conversation_figures_are_cached_until_a_score_or_a_call_changes(cached):
    from evals.conversation.models import ConversationScore
    from evals.conversation.selectors import _conversation_versions, conversation_versions

    call = TranscriptFactory()
    judge = JudgeFactory(name="gpt-4o-mini/conversation-v1")
    ConversationScore.objects.create(transcript=call, judge=judge, score=4, findings=[])
    _, cold = queries(conversation_versions)
    shown, warm = queries(conversation_versions)
    assert warm < cold and shown == _conversation_versions(None)
    VerdictFactory(transcript=call, flagged=True)
    assert queries(conversation_versions)[1] == warm  # a verdict is not a conversation score
    ConversationScore.objects.create(
        transcript=TranscriptFactory(agent_version=call.agent_version),
        judge=judge,
        score=2,
        findings=[{"type": "phase_missing"}],
    )
    (row,) = conversation_versions()
    assert (row.calls, row.mean, row.finding_counts) == (2, 3.0, {"phase_missing": 1})
    assert [row] == _conversation_versions(None)
