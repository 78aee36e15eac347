"""rule_version_create numbers versions under a row lock: concurrent edits never collide."""

import threading

import pytest
from django.db import connection

from evals.rules.models import RuleVersion
from evals.rules.services import rule_create, rule_version_create

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_concurrent_new_versions_get_consecutive_numbers():
    rule = rule_create(
        rule_id="asking.one-question", group="asking", text="v1", severity="minor"
    ).rule
    barrier = threading.Barrier(4)
    failures = []

    def edit(n):
        try:
            barrier.wait()
            rule_version_create(rule=rule, text=f"text from editor {n}")
        except Exception as exc:  # noqa: BLE001 - the test reports any failure below
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=edit, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert sorted(RuleVersion.objects.filter(rule=rule).values_list("number", flat=True)) == [
        1,
        2,
        3,
        4,
        5,
    ]
