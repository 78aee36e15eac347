"""Two leads promoting versions of the same rule at once
on PostgreSQL: one gated version, one audit trail."""

import itertools
import threading

import pytest
from django.db import connection

from core.errors import DomainError
from evals.rules.models import RuleVersion
from labeling.models import PromotionDecision
from labeling.services.promotion import rule_version_promote
from tests import factories as f
from tests.labeling.known_calibration import make_marked

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_concurrent_promotions_leave_exactly_one_gated_version(make_user):
    reviewer = make_user("reviewer", username="rev")
    leads = [make_user("lead", username=f"lead{i}") for i in range(4)]
    judge = f.JudgeFactory()
    rule = f.RuleFactory(rule_id="asking.one-question")
    old = f.RuleVersionFactory(rule=rule, number=1, status="gated")
    versions = []
    for n in (2, 3, 4, 5):
        rv = f.RuleVersionFactory(rule=rule, number=n)
        make_marked(rv, judge, reviewer, tp=90, fp=5, fn=10, tn=135)
        versions.append(rv)
    barrier = threading.Barrier(len(leads))
    errors, refused = [], []

    def promote(i):
        try:
            barrier.wait()
            rule_version_promote(rule_version=versions[i], actor=leads[i], reason=f"lead {i}")
        except DomainError as e:
            refused.append(e)
        except Exception as e:  # noqa: BLE001 - surfaced below
            errors.append(e)
        finally:
            connection.close()

    threads = [threading.Thread(target=promote, args=(i,)) for i in range(len(leads))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and not refused
    gated = list(RuleVersion.objects.filter(rule=rule, status="gated"))
    assert len(gated) == 1
    decisions = list(PromotionDecision.objects.order_by("at", "pk"))
    assert len(decisions) == 4
    # The promotions ran one after another: each replaced the one gated just before it.
    assert decisions[0].replaced == old
    for before, after in itertools.pairwise(decisions):
        assert after.replaced == before.rule_version
    assert decisions[-1].rule_version == gated[0]
    assert RuleVersion.objects.filter(rule=rule, status="retired").count() == 4
