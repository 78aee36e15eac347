"""Classifier thresholds from marks: the selector, the page, the API and the exports."""

import csv
import io

import pytest

from evals.catalog.models import Transcript
from evals.classifiers.models import VerdictCategory
from evals.classifiers.services import classifier_rules_ensure
from evals.judging.models import Judge, Verdict
from evals.rules.models import RuleVersion
from labeling.models import Mark
from labeling.selectors.classifier_thresholds import classifier_thresholds
from tests import factories as f
from tests.factories import api_key, logged_in

pytestmark = pytest.mark.django_db

# (tenant, flagged, confidence, reviewer says right, category)
SPECS = [
    ("acme", True, 95, True, "instruction_override"),
    ("acme", True, 90, True, "prompt_extraction"),
    ("acme", True, 70, False, "persona_switch"),
    ("globex", True, 85, True, "instruction_override"),
    ("globex", True, 40, False, "instruction_override"),
    ("globex", False, 80, False, ""),
    ("globex", False, 99, True, ""),
    ("globex", True, 60, None, "exfiltration"),
]


@pytest.fixture
def marked(db, reviewer):
    classifier_rules_ensure()
    rv = RuleVersion.objects.get(rule__rule_id="classifiers.injection")
    judge = Judge.objects.create(name="platform/injection", kind=Judge.Kind.CLASSIFIER)
    av = f.AgentVersionFactory()
    for i, (tenant, flagged, conf, right, category) in enumerate(SPECS):
        t = Transcript.objects.create(
            external_id=f"c-{i}", agent_version=av, checksum=f"{i:064x}", tenant=tenant
        )
        v = Verdict.objects.create(
            transcript=t,
            rule_version=rv,
            judge=judge,
            flagged=flagged,
            turn=1 if flagged else None,
            confidence=conf,
        )
        if category:
            VerdictCategory.objects.create(verdict=v, category=category)
        if right is not None:
            Mark.objects.create(verdict=v, reviewer=reviewer, correct=right)
    return judge


def test_the_figures_split_by_tenant_and_agent(marked):
    figures = classifier_thresholds(rule_id="classifiers.injection", target=0.9)
    everything = figures["all"]
    assert (everything.verdicts, everything.marked, everything.flagged) == (8, 7, 6)
    assert everything.choice.threshold == 85  # 85, 90, 95 are all right: precision 1.0
    assert [g.key for g in figures["tenants"]] == ["acme", "globex"]
    acme = figures["tenants"][0]
    assert acme.choice.threshold == 90 and acme.marked == 3
    assert len(figures["agents"]) == 1
    assert "exfiltration" in figures["categories"]
    only = classifier_thresholds(rule_id="classifiers.injection", category="instruction_override")
    assert only["all"].verdicts == 3


def test_the_page_draws_the_curve_and_the_threshold(client, lead, marked):
    client.force_login(lead)
    r = client.get("/classifiers/classifiers.injection/", {"judge": marked.pk, "target": "0.9"})
    assert r.status_code == 200
    body = r.content.decode()
    assert 'data-testid="pr-curve"' in body and 'data-testid="threshold">85<' in body
    assert 'data-testid="split-tenant-acme"' in body
    index = client.get("/classifiers/")
    assert 'data-testid="check-classifiers.injection"' in index.content.decode()
    assert client.get("/classifiers/classifiers.injection/", {"target": "2"}).status_code == 400
    assert client.get("/classifiers/opening.greet/").status_code == 404


def test_exports_as_csv_and_json(client, lead, marked):
    client.force_login(lead)
    r = client.get("/classifiers/classifiers.injection/export.csv", {"tenant": "acme"})
    rows = list(csv.DictReader(io.StringIO(r.content.decode())))
    assert {row["split"] for row in rows} == {"all", "tenant", "agent"}
    top = next(row for row in rows if row["split"] == "all" and row["threshold"] == "90")
    assert (top["tp"], top["fp"], top["precision"]) == ("2", "0", "1.0")
    data = client.get("/classifiers/classifiers.injection/export.json").json()
    assert data["all"]["choice"]["threshold"] == 85
    assert data["all"]["choice"]["precision_lower_bound"] < 0.9


def test_the_api_gives_the_same_figures(client, lead, reviewer, marked):
    def get(user, **params):
        token = api_key(user)
        return client.get(
            "/api/v1/classifier-thresholds/classifiers.injection/",
            params,
            HTTP_AUTHORIZATION=f"Token {token}",
        )

    r = get(lead, tenant="globex", target="0.5")
    assert r.status_code == 200
    assert r.json()["all"]["marked"] == 4 and r.json()["all"]["choice"]["threshold"] == 0
    assert get(lead, target="x").json()["errors"][0]["field"] == "target"
    assert get(reviewer).status_code == 403


def test_the_figures_counted_in_sql_are_those_of_every_verdict_one_by_one(marked, reviewer):
    """Alike verdicts are counted together in the database: the figures must be those of the
    verdicts taken one at a time (the pure functions over one Item per verdict)."""
    from evals.classifiers.thresholds import Item, histogram, pr_curve, threshold_choose

    rv = RuleVersion.objects.get(rule__rule_id="classifiers.injection")
    av = f.AgentVersionFactory()
    for i in range(30):  # many verdicts alike in (tenant, flagged, confidence, truth)
        t = Transcript.objects.create(
            external_id=f"twin-{i}", agent_version=av, checksum=f"{i + 100:064x}", tenant="acme"
        )
        v = Verdict.objects.create(
            transcript=t, rule_version=rv, judge=marked, flagged=i % 3 > 0, confidence=80 + i % 2
        )
        if i % 4:
            Mark.objects.create(verdict=v, reviewer=reviewer, correct=i % 5 > 0)
    figures = classifier_thresholds(rule_id="classifiers.injection", target=0.8)

    def truth(v):
        return bool(v.tally.truth) if hasattr(v, "tally") and v.tally.truth is not None else None

    one_by_one = [
        (Item(v.flagged, v.confidence, truth(v)), v.transcript.tenant)
        for v in Verdict.objects.filter(rule_version=rv, error="").select_related(
            "transcript", "tally"
        )
    ]
    for group, key in [(figures["all"], None), *((g, g.key) for g in figures["tenants"])]:
        items = [it for it, tenant in one_by_one if key is None or tenant == key]
        assert (group.verdicts, group.flagged) == (len(items), sum(it.flagged for it in items))
        assert group.marked == sum(it.positive is not None for it in items)
        assert group.histogram == histogram(items) and group.curve == pr_curve(items)
        assert group.choice == threshold_choose(pr_curve(items), 0.8)


def test_the_figures_read_a_window_of_days_the_page_shows_and_changes(client, lead, marked):
    """By default the last 90 days of calls (a call without a start counts on its import day);
    from and to move the window, on the page as in the API, and a bad date names its field."""
    import datetime as dt

    from django.utils import timezone

    old = timezone.now() - dt.timedelta(days=200)
    Transcript.objects.filter(external_id__in=["c-0", "c-1"]).update(started_at=old)
    logged_in(client, lead)
    page = client.get("/classifiers/classifiers.injection/")
    today = timezone.localdate()
    assert page.context["all"].verdicts == len(SPECS) - 2
    assert f'name="to" type="date" value="{today:%Y-%m-%d}"' in page.content.decode()
    since = (today - dt.timedelta(days=89)).isoformat()
    assert f'name="from" type="date" value="{since}"' in page.content.decode()
    back = (old - dt.timedelta(days=1)).date().isoformat()
    wide = client.get("/classifiers/classifiers.injection/", {"from": back})
    assert wide.context["all"].verdicts == len(SPECS)
    only_old = client.get(
        "/api/v1/classifier-thresholds/classifiers.injection/",
        {"from": back, "to": old.date().isoformat()},
        HTTP_AUTHORIZATION=f"Token {api_key(lead)}",
    ).json()
    assert only_old["all"]["verdicts"] == 2 and only_old["filters"]["to"] == old.date().isoformat()
    bad = client.get(
        "/api/v1/classifier-thresholds/classifiers.injection/",
        {"from": "yesterday"},
        HTTP_AUTHORIZATION=f"Token {api_key(lead)}",
    )
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "from"
