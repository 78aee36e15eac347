"""Decision cells (the decision accuracy figures) stay equal to a recount of the decisions after
every kind of write, and `decision_cells_rebuild --check` catches a cell that drifted."""

import threading
from bisect import bisect_right
from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from evals.catalog.models import Transcript
from evals.catalog.services.importing import transcripts_import
from evals.decisions.models import Decision, DecisionCell
from evals.decisions.services.cells import (
    DECISION_CELLS,
    GAP_EDGES,
    decision_cells_compact,
    decision_cells_differences,
)
from evals.decisions.services.kinds import decision_kinds_import
from labeling.services.decisions import (
    decision_label_set,
    decision_label_undo,
    decision_labels_bulk,
)
from tests.evals.decision_helpers import KINDS_YAML
from tests.labeling.test_decisions import TAKE, WAIT, timed_call

pytestmark = pytest.mark.django_db


def recount() -> Counter:
    """Each decision counted one by one in Python: the reference the cells must equal."""
    out: Counter = Counter()
    for d in Decision.objects.select_related("transcript"):
        b = -1 if d.gap_ms is None else bisect_right(GAP_EDGES, d.gap_ms)
        out[(d.kind_version_id, d.transcript.agent_version_id, d.choice, d.truth, b)] += 1
    return out


def cells() -> Counter:
    """The cells' counts: each cell the sum of its delta rows."""
    out: Counter = Counter()
    for c in DecisionCell.objects.all():
        out[(c.kind_version_id, c.agent_version_id, c.choice, c.truth, c.gap_bin)] += c.n
    return +out  # cells that sum to 0 hold no decision


def assert_exact():
    want = recount()
    assert cells() == want
    assert decision_cells_differences() == 0


@pytest.fixture
def imported(db):
    decision_kinds_import(text=KINDS_YAML)
    transcripts_import(
        lines=[
            timed_call(
                "c-1",
                "v1",
                [300, -50, 1200, 1999, 2000],
                [{"kind": "handoff", "turn": 1, "choice": "keep helping", "confidence": 0.35}],
            ),
            timed_call("c-2", "v2", [-200, 650, 9000]),
        ]
    )
    return {(d.transcript.external_id, d.key, d.kind.kind_id): d for d in _all()}


def _all():
    return Decision.objects.select_related("transcript", "kind", "kind_version")


def test_an_import_counts_every_decision(imported):
    assert len(imported) == 9
    assert_exact()


def test_labels_move_decisions_between_truths(imported, make_user):
    a, b = make_user("reviewer", username="a"), make_user("reviewer", username="b")
    d = imported[("c-1", "turn:1", "turn-taking")]
    decision_label_set(reviewer=a, decision=d, answer=WAIT)
    assert_exact()
    decision_label_set(reviewer=b, decision=d, answer=TAKE)  # a tie: no truth again
    assert_exact()
    decision_label_undo(reviewer=b, decision=d)
    assert_exact()
    turn_taking = [d for k, d in imported.items() if k[2] == "turn-taking"]
    assert decision_labels_bulk([(b, d, TAKE) for d in turn_taking]) == len(turn_taking)
    assert_exact()
    assert DecisionCell.objects.filter(truth=TAKE).exists()


def test_a_replace_import_rewrites_moves_and_deletes(imported):
    # Other gaps on c-2: its derived decisions are forgotten and written again.
    transcripts_import(lines=[timed_call("c-2", "v2", [100, 3000])], replace=True)
    assert_exact()
    # c-1 now belongs to another agent version: its decisions' cells move with it.
    Transcript.objects.filter(external_id="c-1").update(
        agent_version=Transcript.objects.get(external_id="c-2").agent_version
    )
    assert_exact()
    Decision.objects.filter(kind__kind_id="turn-taking", gap_ms__lt=1000).update(gap_ms=2500)
    assert_exact()
    Transcript.objects.filter(external_id="c-2").delete()
    assert_exact()
    Decision.objects.all().delete()
    assert cells() == Counter() and decision_cells_differences() == 0


def test_check_catches_a_tampered_cell_and_rebuild_mends_it(imported):
    out = StringIO()
    call_command("decision_cells_rebuild", "--check", stdout=out)
    assert "0 cells differ" in out.getvalue()
    cell = DecisionCell.objects.filter(n__gt=0).order_by("pk").first()
    DecisionCell.objects.filter(pk=cell.pk).update(n=cell.n + 1)
    with pytest.raises(SystemExit):
        call_command("decision_cells_rebuild", "--check", stdout=(out := StringIO()))
    assert "1 cells differ" in out.getvalue()
    call_command("decision_cells_rebuild", stdout=StringIO())
    assert_exact()
    DecisionCell.objects.filter(pk=DecisionCell.objects.order_by("pk").first().pk).delete()
    assert decision_cells_differences() == 1


def test_writers_fold_the_deltas_after_commit_and_the_figures_stay(
    db, make_user, django_capture_on_commit_callbacks
):
    a = make_user("reviewer", username="a")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        decision_kinds_import(text=KINDS_YAML)
        transcripts_import(lines=[timed_call("c-1", "v1", [300, -50, 1200])])
        transcripts_import(lines=[timed_call("c-3", "v2", [100, 5000])])
        turn_taking = list(Decision.objects.filter(kind__kind_id="turn-taking"))
        decision_label_set(reviewer=a, decision=turn_taking[0], answer=WAIT)
        decision_labels_bulk([(a, d, TAKE) for d in turn_taking[1:]])
    folds = [f for f in callbacks if f is DECISION_CELLS.fold_default]
    assert len(folds) == 1  # once however many writes asked for it
    assert_exact()
    keys = list(
        DecisionCell.objects.values_list(
            "kind_version", "agent_version", "choice", "truth", "gap_bin"
        )
    )
    assert len(keys) == len(set(keys)) == len(recount())
    before = len(keys)
    Decision.objects.filter(pk=turn_taking[0].pk).update(truth=TAKE)  # not a folding writer
    assert DecisionCell.objects.count() == before + 2
    assert decision_cells_compact() <= before
    assert DecisionCell.objects.count() <= before
    assert_exact()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_label_does_not_wait_for_an_import_of_the_same_version_and_both_count(make_user):
    """An import is one transaction; while it runs, a reviewer labels a decision in a cell the
    import is adding to. The label commits at once (no lock on a shared row) and, once the
    import commits, the cells equal the recount."""
    decision_kinds_import(text=KINDS_YAML)
    transcripts_import(lines=[timed_call("c-1", "v1", [300, 320])])
    reviewer = make_user("reviewer", username="a")
    d = Decision.objects.filter(kind__kind_id="turn-taking").first()
    imported, release, errors = threading.Event(), threading.Event(), []

    def importer():
        try:
            with transaction.atomic():
                transcripts_import(lines=[timed_call("c-2", "v1", [310, 330])])
                imported.set()
                release.wait(30)
        except Exception as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)
        finally:
            imported.set()
            connection.close()

    worker = threading.Thread(target=importer)
    worker.start()
    try:
        assert imported.wait(30)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '2s'")
            decision_label_set(reviewer=reviewer, decision=d, answer=WAIT)
    finally:
        release.set()
        worker.join()
    assert not errors, errors
    assert Decision.objects.count() == 4 and Decision.objects.filter(truth=WAIT).count() == 1
    assert_exact()
