"""Keys checked once per statement (core.bulk_keys): a verdict's call, rule version and judge are
as strictly kept as by declared foreign keys, whoever writes (a COPY, raw SQL, the ORM)."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import ProtectedError

from core.bulk_keys import KEYS
from evals.catalog.models import Transcript
from evals.judging.models import Judge, Verdict
from evals.judging.services.importing import VERDICT_COLUMNS, verdict_rows_write
from evals.rules.models import RuleVersion
from tests.factories import JudgeFactory, RuleVersionFactory, TranscriptFactory, VerdictFactory

pytestmark = pytest.mark.django_db

MISSING = 2**31 - 7


def row(transcript: int, rule_version: int, judge: int) -> tuple:
    values = dict.fromkeys(VERDICT_COLUMNS)
    values.update(
        transcript_id=transcript,
        rule_version_id=rule_version,
        judge_id=judge,
        flagged=False,
        turns="[]",
        severity="",
        rationale="",
        error="",
        created_at="2026-12-01T00:00:00Z",
    )
    return tuple(values[c] for c in VERDICT_COLUMNS)


def raw_insert(transcript: int, rule_version: int, judge: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO evals_verdict (transcript_id, rule_version_id, judge_id, flagged, turns,"
            " severity, rationale, error, created_at) VALUES (%s, %s, %s, false, '[]', '', '',"
            " '', CURRENT_TIMESTAMP)",
            [transcript, rule_version, judge],
        )


def test_the_verdict_keys_are_registered_and_declared_without_a_database_constraint():
    registered = {(k.table, k.column, k.parent) for k in KEYS}
    for name in ("transcript", "rule_version", "judge"):
        field = Verdict._meta.get_field(name)
        assert field.db_constraint is False
        assert (
            "evals_verdict",
            field.column,
            field.target_field.model._meta.db_table,
        ) in registered
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, "evals_verdict")
    assert not [
        c for c in constraints.values() if c["foreign_key"] and c["columns"] != ["judge_run_id"]
    ]


@pytest.mark.parametrize("missing", ["transcript", "rule_version", "judge"])
def test_a_verdict_naming_a_missing_parent_is_refused_and_nothing_is_written(missing):
    ids = {
        "transcript": TranscriptFactory().pk,
        "rule_version": RuleVersionFactory().pk,
        "judge": JudgeFactory().pk,
    }
    ids[missing] = MISSING
    with pytest.raises(IntegrityError) as raised, transaction.atomic():
        raw_insert(ids["transcript"], ids["rule_version"], ids["judge"])
    assert f"{missing}_id" in str(raised.value)
    if connection.vendor == "postgresql":  # the message names the value, as a declared key's does
        assert str(MISSING) in str(raised.value)
    assert not Verdict.objects.exists()


def test_a_copy_with_one_bad_row_among_good_ones_writes_none():
    call, version, judge = TranscriptFactory(), RuleVersionFactory(), JudgeFactory()
    good = [row(call.pk, version.pk, judge.pk)]
    good += [row(TranscriptFactory().pk, version.pk, judge.pk) for _ in range(5)]
    with pytest.raises(IntegrityError), transaction.atomic():
        verdict_rows_write([*good, row(call.pk, MISSING, judge.pk)])
    assert not Verdict.objects.exists()
    with transaction.atomic():
        assert verdict_rows_write(good) == 6
    assert Verdict.objects.count() == 6


def test_an_update_pointing_a_verdict_at_a_missing_parent_is_refused():
    verdict = VerdictFactory(flagged=False)
    with pytest.raises(IntegrityError), transaction.atomic():
        Verdict.objects.filter(pk=verdict.pk).update(judge_id=MISSING)
    verdict.refresh_from_db()
    assert Judge.objects.filter(pk=verdict.judge_id).exists()


def test_the_orm_still_protects_and_cascades():
    verdict = VerdictFactory(flagged=False)
    with pytest.raises(ProtectedError):
        verdict.judge.delete()
    with pytest.raises(ProtectedError):
        verdict.rule_version.delete()
    verdict.transcript.delete()  # the call's verdicts go with it
    assert not Verdict.objects.exists()
    verdict.judge.delete()  # no verdict names it any more
    assert not Judge.objects.filter(pk=verdict.judge_id).exists()


@pytest.mark.postgres
@pytest.mark.parametrize(
    "parent", [(Transcript, "transcript"), (RuleVersion, "rule_version"), (Judge, "judge")]
)
def test_raw_sql_cannot_delete_or_rekey_a_parent_that_a_verdict_names(parent):
    model, name = parent
    verdict = VerdictFactory(flagged=False)
    kept = getattr(verdict, f"{name}_id")
    other = model.objects.exclude(pk=kept).first()  # a parent no verdict names
    table = model._meta.db_table
    with connection.cursor() as cursor:
        with pytest.raises(IntegrityError) as raised, transaction.atomic():
            cursor.execute(f"DELETE FROM {table} WHERE id = %s", [kept])
        assert "still referenced" in str(raised.value) and str(kept) in str(raised.value)
        with pytest.raises(IntegrityError), transaction.atomic():
            cursor.execute(f"UPDATE {table} SET id = %s WHERE id = %s", [MISSING, kept])
    assert model.objects.filter(pk=kept).exists()
    assert Verdict.objects.filter(pk=verdict.pk).exists()
    if other is not None:  # parents no verdict names go freely
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {table} WHERE id = %s", [other.pk])
        assert not model.objects.filter(pk=other.pk).exists()


@pytest.mark.postgres
def test_a_verdict_insert_locks_its_parents_like_a_declared_key():
    """The insert takes FOR KEY SHARE on the parents it names, so a concurrent delete of one waits
    for it (and then finds the verdict) instead of leaving it orphaned."""
    call, version, judge = TranscriptFactory(), RuleVersionFactory(), JudgeFactory()
    with transaction.atomic():
        raw_insert(call.pk, version.pk, judge.pk)
        with connection.cursor() as cursor:
            # A locked row carries the locker in xmax; an unlocked one has 0.
            for table, pk in (
                ("evals_transcript", call.pk),
                ("evals_ruleversion", version.pk),
                ("evals_judge", judge.pk),
            ):
                cursor.execute(f"SELECT xmax::text FROM {table} WHERE id = %s", [pk])
                assert cursor.fetchone()[0] != "0", table
