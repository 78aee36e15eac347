"""The indexes kept for a page's query serve it (docs/operations.md)."""

import pytest
from django.db import connection, transaction

from evals.judging.selectors.browse import VerdictFilters, verdict_filtered
from tests.factories import JudgeFactory, RuleVersionFactory, TranscriptFactory, VerdictFactory

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def test_a_rules_flagged_verdicts_are_read_through_verdict_flagged():
    version = RuleVersionFactory()
    flagged = [VerdictFactory(rule_version=version, flagged=True) for _ in range(3)]
    VerdictFactory(rule_version=version, flagged=False)
    qs = verdict_filtered(VerdictFilters(rule=version.rule.rule_id, flagged=True))
    with transaction.atomic(), connection.cursor() as cursor:
        # A few rows: make the planner pick an index whenever one can serve the query.
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = qs[:51].explain()
        assert "verdict_flagged" in plan
        assert [v.pk for v in qs[:51]] == sorted((v.pk for v in flagged), reverse=True)


def test_the_conversation_score_list_reads_its_order_from_conversation_score_order():
    from evals.conversation.api import SCORE_LIST_ORDER
    from evals.conversation.models import ConversationScore

    judge = JudgeFactory()
    for score in (7, 3, None, 5):
        ConversationScore.objects.create(
            transcript=TranscriptFactory(),
            judge=judge,
            score=score,
            error="" if score else "timeout",
        )
    qs = ConversationScore.objects.order_by(*SCORE_LIST_ORDER)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        assert "conversation_score_order" in qs[:100].explain()
    assert [s.score for s in qs] == [3, 5, 7, None]  # lowest first, errored last
