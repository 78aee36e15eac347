"""The verdict table's partial indexes serve the queries they are kept for (docs/operations.md)."""

import pytest
from django.db import connection, transaction

from evals.judging.selectors.browse import VerdictFilters, verdict_filtered
from tests.factories import RuleVersionFactory, VerdictFactory

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
