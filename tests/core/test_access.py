"""Who may do what: one table of roles x URLs, checked against every URL the console serves.

Every URL pattern the resolver knows must be in TABLE (a new page or endpoint fails this test
until someone decides who may use it), with every HTTP method it answers. For each method every
role is tried: allowed roles must get past the permission check; other roles get 403, and a
visitor who is not logged in is sent to the login page (pages) or gets 401 (API). Pages and API
endpoints that show the same thing sit side by side, so the table shows that they agree.
"""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import transaction
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from core.models import ImportJob
from core.tokens import api_token_create
from evals.evalruns.models import Dataset, EvalRun
from evals.gating.models import GateMetric
from evals.ingest.services import voice_hook_save
from evals.judging.models import JudgeRun
from evals.trajectories.models import AxesReport
from evals.webhooks.models import Webhook
from evals.workbench.models import RuleDraft
from labeling.models import Assignment, DailySample, SampleItem
from labeling.services.issue_rows import issue_row_create
from tests.evals.gating_helpers import World
from tests.factories import UserFactory, api_key

ANON, NOROLE, R, E, L = "anonymous", "no role", "reviewer", "engineer", "lead"
ROLES = (ANON, NOROLE, R, E, L)
EVERYONE = frozenset(ROLES)
CONSOLE = frozenset({R, E, L})  # view_console
REVIEW = frozenset({R, L})  # review
TRIAGE = frozenset({E, L})  # triage, edit_rules, import_data, run_judge, run_gate
LEAD = frozenset({L})  # view_calibration, promote, manage_sample, manage_gates, manage_webhooks,
# import_marks
LOGGED_IN = frozenset({NOROLE, R, E, L})
# No role: the caller proves it is the platform with the platform's own signature; without it,
# everyone (logged in or not) gets 401 and nothing is stored.
SIGNED = frozenset({"a voice platform's signature"})

# (url name, method): the roles that may use it. Pages first, then the API.
TABLE = {
    ("dashboard", "GET"): CONSOLE,
    ("layers", "GET"): CONSOLE,
    ("healthz", "GET"): EVERYONE,  # a load balancer's question: no login, no secrets
    ("login", "GET"): EVERYONE,
    ("login", "POST"): EVERYONE,
    ("logout", "POST"): EVERYONE,
    # calls, rules, verdicts
    ("transcript-list", "GET"): CONSOLE,
    ("transcript-detail", "GET"): CONSOLE,
    ("rule-list", "GET"): CONSOLE,
    ("rule-detail", "GET"): CONSOLE,
    ("verdict-list", "GET"): CONSOLE,
    ("agent-version-list", "GET"): CONSOLE,
    ("agent-version-detail", "GET"): CONSOLE,
    ("api-transcripts", "GET"): CONSOLE,
    ("api-transcript", "GET"): CONSOLE,
    ("api-rules", "GET"): CONSOLE,
    ("api-rule", "GET"): CONSOLE,
    ("api-verdicts", "GET"): CONSOLE,
    ("api-agent-versions", "GET"): CONSOLE,
    ("api-agent-version", "GET"): CONSOLE,
    ("api-agent-version", "PUT"): TRIAGE,
    # runtime classifiers: the agent platform's account (import_data), engineers and leads
    ("api-classify", "POST"): TRIAGE,
    ("api-classifier-logs-import", "POST"): TRIAGE,
    # imports (API only)
    ("api-rules-import", "POST"): TRIAGE,
    ("api-transcripts-import", "POST"): TRIAGE,
    ("api-verdicts-import", "POST"): TRIAGE,
    # judge runs: everyone in the console follows them, engineers and leads start them
    ("judge-run-list", "GET"): CONSOLE,
    ("judge-run-detail", "GET"): CONSOLE,
    ("judge-run-start", "POST"): TRIAGE,
    ("judge-run-resume", "POST"): TRIAGE,
    # the judge's and classifiers' model connections: those who start judge runs see them and
    # test them (one call; a judge run spends far more)
    ("judge-connection", "GET"): TRIAGE,
    ("judge-connection-test", "POST"): TRIAGE,
    ("api-judge-runs", "GET"): CONSOLE,
    ("api-judge-runs", "POST"): TRIAGE,
    ("api-judge-run", "GET"): CONSOLE,
    # eval runs and datasets: everyone in the console follows them, engineers and leads start
    # runs and import datasets
    ("eval-run-list", "GET"): CONSOLE,
    ("eval-run-detail", "GET"): CONSOLE,
    ("eval-run-start", "POST"): TRIAGE,
    ("api-eval-runs", "GET"): CONSOLE,
    ("api-eval-runs", "POST"): TRIAGE,
    ("api-eval-run", "GET"): CONSOLE,
    ("api-datasets", "GET"): CONSOLE,
    ("api-datasets-import", "POST"): TRIAGE,
    # the conversation judge: everyone in the console reads it, engineers and leads run it
    ("conversation-index", "GET"): CONSOLE,
    ("conversation-version", "GET"): CONSOLE,
    ("conversation-run-start", "POST"): TRIAGE,
    ("api-conversation-runs", "GET"): CONSOLE,
    ("api-conversation-runs", "POST"): TRIAGE,
    ("api-conversation-scores", "GET"): CONSOLE,
    ("api-conversation-versions", "GET"): CONSOLE,
    # gates: engineers and leads run and read them, leads edit them
    ("gate-index", "GET"): TRIAGE,
    ("gate-detail", "GET"): TRIAGE,
    ("gate-history", "GET"): TRIAGE,
    ("gate-run-detail", "GET"): TRIAGE,
    ("golden-set-detail", "GET"): TRIAGE,
    ("golden-set-version", "GET"): TRIAGE,
    ("gate-run-start", "POST"): TRIAGE,
    ("gate-settings", "POST"): LEAD,
    ("gate-metric-add", "POST"): LEAD,
    ("gate-metric-edit", "POST"): LEAD,
    ("gate-metric-remove", "POST"): LEAD,
    ("api-gate-runs", "GET"): TRIAGE,
    ("api-gate-runs", "POST"): TRIAGE,
    ("api-gate-run", "GET"): TRIAGE,
    # review: reviewers and leads
    ("review", "GET"): REVIEW,
    ("review-next", "POST"): REVIEW,
    ("review-call", "GET"): REVIEW,
    ("review-call-progress", "GET"): REVIEW,
    ("review-mark", "POST"): REVIEW,
    ("review-unmark", "POST"): REVIEW,
    ("review-finish", "POST"): REVIEW,
    ("review-skip", "POST"): REVIEW,
    ("review-issue", "POST"): REVIEW,
    ("review-mark-rest", "POST"): REVIEW,
    ("review-unmark-many", "POST"): REVIEW,
    ("review-outcome", "POST"): REVIEW,
    ("review-sample-make", "POST"): LEAD,
    ("review-sample-queue", "POST"): LEAD,
    ("api-queue-next", "POST"): REVIEW,
    ("api-queue-finish", "POST"): REVIEW,
    ("api-queue-skip", "POST"): REVIEW,
    ("api-queue-mark-rest", "POST"): REVIEW,
    ("api-marks", "POST"): REVIEW,
    ("api-marks-import", "POST"): LEAD,  # marks made elsewhere, in any reviewer's name
    ("api-sample", "GET"): REVIEW,
    ("api-samples", "GET"): REVIEW,
    ("api-samples", "POST"): LEAD,
    # issue rows: reviewers file them (from review), engineers and leads triage them
    ("api-issue-row-list", "POST"): REVIEW,
    ("issue-sheet", "GET"): TRIAGE,
    ("issue-sheet-export", "GET"): TRIAGE,
    ("issue-sheet-bulk", "POST"): TRIAGE,
    ("issue-trends", "GET"): TRIAGE,
    ("issue-row-detail", "GET"): TRIAGE,
    ("issue-row-assign", "POST"): TRIAGE,
    ("issue-row-status", "POST"): TRIAGE,
    ("issue-row-duplicate", "POST"): TRIAGE,
    ("issue-row-wont-fix", "POST"): TRIAGE,
    ("issue-row-comment", "POST"): TRIAGE,
    ("issue-row-write-rule", "GET"): TRIAGE,
    ("issue-row-write-rule", "POST"): TRIAGE,
    ("issue-row-add-signal", "GET"): TRIAGE,
    ("issue-row-add-signal", "POST"): TRIAGE,
    ("issue-row-fix-rule", "GET"): TRIAGE,
    ("issue-row-fix-rule", "POST"): TRIAGE,
    ("api-issue-row-list", "GET"): TRIAGE,
    ("api-issue-row-detail", "GET"): TRIAGE,
    ("api-issue-row-assign", "POST"): TRIAGE,
    ("api-issue-row-status", "POST"): TRIAGE,
    ("api-issue-row-duplicate", "POST"): TRIAGE,
    ("api-issue-row-wont-fix", "POST"): TRIAGE,
    ("api-issue-row-comment", "POST"): TRIAGE,
    ("api-issue-row-write-rule", "POST"): TRIAGE,
    ("api-issue-row-add-signal", "POST"): TRIAGE,
    ("api-issue-row-fix-rule", "POST"): TRIAGE,
    # the rule workbench: engineers and leads try a rule's new text (edit_rules) and run it
    # (run_judge); leads say whether it changes the rule's meaning (promote)
    ("workbench", "GET"): TRIAGE,
    ("workbench-rule", "GET"): TRIAGE,
    ("workbench-draft-create", "POST"): TRIAGE,
    ("workbench-draft", "GET"): TRIAGE,
    ("workbench-draft-progress", "GET"): TRIAGE,
    ("workbench-run", "POST"): TRIAGE,
    ("workbench-save", "POST"): TRIAGE,
    ("workbench-meaning", "POST"): LEAD,
    ("api-rule-drafts", "GET"): TRIAGE,
    ("api-rule-drafts", "POST"): TRIAGE,
    ("api-rule-draft", "GET"): TRIAGE,
    ("api-rule-draft-estimate", "GET"): TRIAGE,
    ("api-rule-draft-runs", "POST"): TRIAGE,
    ("api-rule-draft-save", "POST"): TRIAGE,
    ("api-rule-draft-meaning", "POST"): LEAD,
    # calibration and promotion: leads
    ("calibration", "GET"): LEAD,
    ("calibration-export", "GET"): LEAD,
    ("calibration-detail", "GET"): LEAD,
    ("calibration-cell", "GET"): LEAD,
    ("calibration-decisions", "GET"): LEAD,
    ("calibration-disagreements", "GET"): LEAD,
    ("calibration-promote", "POST"): LEAD,
    ("calibration-demote", "POST"): LEAD,
    ("calibration-settle", "POST"): LEAD,
    ("api-calibration", "GET"): LEAD,
    # classifier thresholds from marks: leads, like calibration
    ("classifier-index", "GET"): LEAD,
    ("classifier-detail", "GET"): LEAD,
    ("classifier-export", "GET"): LEAD,
    ("api-classifier-thresholds", "GET"): LEAD,
    ("api-rule-version-promote", "POST"): LEAD,
    ("api-rule-version-demote", "POST"): LEAD,
    # outcomes: leads read the figures; reviewers (and leads) file a row on a bad call
    ("outcomes", "GET"): LEAD,
    ("outcome-call-issue", "GET"): REVIEW,
    ("api-outcomes", "GET"): LEAD,
    ("api-outcome-ratings", "POST"): REVIEW,
    ("api-outcome-questions", "GET"): CONSOLE,
    ("api-outcome-questions", "POST"): TRIAGE,
    # decision points: everyone in the console reads them, engineers and leads import kinds
    ("api-decision-kinds", "GET"): CONSOLE,
    ("api-decision-kinds-import", "POST"): TRIAGE,
    ("decision-accuracy", "GET"): CONSOLE,
    ("api-decision-accuracy", "GET"): CONSOLE,
    ("decision-hard-queue", "POST"): LEAD,
    ("api-decision-hard", "POST"): LEAD,
    ("review-decision-label", "POST"): REVIEW,
    ("api-decision-labels", "POST"): REVIEW,
    # axes reports: engineers and leads make and read them, as they run gates
    ("axes-report-list", "GET"): TRIAGE,
    ("axes-report-detail", "GET"): TRIAGE,
    ("api-axes-reports", "GET"): TRIAGE,
    ("api-axes-reports", "POST"): TRIAGE,
    ("api-axes-report", "GET"): TRIAGE,
    # webhooks: leads register them and read their deliveries (manage_webhooks)
    ("webhook-list", "GET"): LEAD,
    ("webhook-list", "POST"): LEAD,
    ("webhook-detail", "GET"): LEAD,
    ("webhook-toggle", "POST"): LEAD,
    ("api-webhooks", "GET"): LEAD,
    ("api-webhooks", "POST"): LEAD,
    ("api-webhook", "GET"): LEAD,
    ("api-webhook", "PATCH"): LEAD,
    ("api-webhook", "DELETE"): LEAD,
    ("api-webhook-deliveries", "GET"): LEAD,
    # traces pushed in: voice platforms' end-of-call webhooks (their signature), OTLP traces
    # (the platform's account: import_data), and the hooks leads configure (manage_webhooks)
    ("api-hook-vapi", "POST"): SIGNED,
    ("api-hook-retell", "POST"): SIGNED,
    ("api-hook-elevenlabs", "POST"): SIGNED,
    ("api-otel-traces", "POST"): TRIAGE,
    ("voice-hook-list", "GET"): LEAD,
    ("voice-hook-list", "POST"): LEAD,
    ("voice-hook-toggle", "POST"): LEAD,
    ("api-voice-hooks", "GET"): LEAD,
    ("api-voice-hooks", "POST"): LEAD,
    ("api-voice-hook", "GET"): LEAD,
    ("api-voice-hook", "PATCH"): LEAD,
    ("api-voice-hook", "DELETE"): LEAD,
    # the import page: whoever may import (engineers, leads); a job is seen by its uploader only
    ("import-list", "GET"): TRIAGE,
    ("import-list", "POST"): TRIAGE,
    ("import-detail", "GET"): TRIAGE,
    ("import-start", "POST"): TRIAGE,
    ("import-discard", "POST"): TRIAGE,
    # API tokens: everyone in the console makes and revokes their own (a token of another user
    # is not found); leads make them for service accounts
    ("token-list", "GET"): CONSOLE,
    ("token-list", "POST"): CONSOLE,
    ("token-revoke", "POST"): CONSOLE,
    ("service-token-create", "POST"): LEAD,
    # the schema and its docs: any login (DOCKET_API_DOCS_PUBLIC opens them)
    ("api-schema", "GET"): LOGGED_IN,
    ("api-docs", "GET"): LOGGED_IN,
}
# Django's admin checks is_staff itself (no role is staff); its own tests cover it.
EXEMPT_NAMESPACES = {"admin"}
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def url_patterns(patterns=None, namespace=None):
    """Yield (name, pattern) for every URL the resolver knows, outside the exempt namespaces."""
    for p in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(p, URLResolver):
            ns = p.namespace or namespace
            if ns not in EXEMPT_NAMESPACES:
                yield from url_patterns(p.url_patterns, ns)
        elif isinstance(p, URLPattern):
            yield p.name, p


NAMES = sorted({name or "" for name, _ in url_patterns()})


def test_every_url_is_in_the_table_once():
    names = [name for name, _ in url_patterns()]
    assert "" not in names and None not in names, "every URL needs a name to be in the table"
    assert len(names) == len(set(names)), "two URLs share a name: reverse() finds only one"
    assert set(names) == {name for name, _ in TABLE}


@pytest.fixture
def world(db):
    KEYS.clear()
    w = World()
    w.users = {role: UserFactory(username=f"u-{role}", roles=[role]) for role in (R, E, L)}
    w.users[NOROLE] = UserFactory(username="u-none")
    w.users[ANON] = AnonymousUser()
    w.admin = UserFactory(username="u-admin", is_superuser=True, is_staff=True)
    call = w.calls["2026-11-21.1-0"]
    av = call.agent_version
    w.verdict_id = call.verdicts.first().pk
    w.gate_run = w.run("2026-11-21.1")
    w.judge_run = JudgeRun.objects.create(judge=w.judge, started_by="test")
    dataset = Dataset.objects.create(name="access", checksum="0" * 64)
    w.eval_run = EvalRun.objects.create(
        dataset=dataset, agent_version=call.agent_version, rubric="safety"
    )
    w.row = issue_row_create(
        reporter=w.users[R], transcript=call, turn=0, what="Talked over.", severity="minor"
    )
    sample = DailySample.objects.create(day=timezone.localdate(), size=1)
    item = SampleItem.objects.create(
        sample=sample, transcript=call, reason="uniform", inclusion_probability=0.5
    )
    w.axes = AxesReport.objects.create(agent_version=call.agent_version, results={})
    w.draft = RuleDraft.objects.create(rule=w.one_q.rule, base=w.one_q, text="Ask one thing.")
    w.webhook = Webhook.objects.create(url="http://127.0.0.1:9/hook", events=["gate_run.finished"])
    w.voice_hook = voice_hook_save(
        platform="vapi", agent=av.agent.name, agent_version=av.version, secret="s" * 16
    )
    w.import_job = ImportJob.objects.create(
        kind="rules", file_name="rules.yaml", size=1, created_by=w.users[L]
    )
    now = timezone.now()
    Assignment.objects.create(item=item, reviewer=w.users[R], claimed_at=now, lease_expires_at=now)
    w.kwargs = {
        "transcript-detail": {"external_id": call.external_id},
        "rule-detail": {"rule_id": w.one_q.rule.rule_id},
        "api-transcript": {"id": call.external_id},
        "api-rule": {"id": w.one_q.rule.rule_id},
        "agent-version-detail": {"agent": av.agent.name, "version": av.version},
        "api-agent-version": {"agent": av.agent.name, "version": av.version},
        "api-classify": {"name": "injection"},
        "judge-run-detail": {"pk": w.judge_run.pk},
        "judge-run-resume": {"pk": w.judge_run.pk},
        "judge-connection-test": {"which": "judge"},
        "api-judge-run": {"pk": w.judge_run.pk},
        "eval-run-detail": {"pk": w.eval_run.pk},
        "api-eval-run": {"pk": w.eval_run.pk},
        "gate-run-detail": {"pk": w.gate_run.pk},
        "conversation-version": {"pk": call.agent_version_id},
        "api-gate-run": {"pk": w.gate_run.pk},
        "golden-set-detail": {"name": w.golden.name},
        "golden-set-version": {"name": w.golden.name, "version": w.golden.version},
        "gate-metric-edit": {
            "name": w.gate.name,
            "pk": GateMetric.objects.filter(gate=w.gate).first().pk,
        },
        "gate-metric-remove": {
            "name": w.gate.name,
            "pk": GateMetric.objects.filter(gate=w.gate).first().pk,
        },
        "review-mark": {"external_id": call.external_id, "verdict_id": w.verdict_id},
        "review-unmark": {"external_id": call.external_id, "verdict_id": w.verdict_id},
        "review-decision-label": {"external_id": call.external_id, "decision_id": 1},
        "calibration-export": {"fmt": "csv"},
        "classifier-detail": {"rule_id": "classifiers.injection"},
        "classifier-export": {"rule_id": "classifiers.injection", "fmt": "csv"},
        "api-classifier-thresholds": {"rule_id": "classifiers.injection"},
        "calibration-detail": {"pk": w.one_q.pk},
        "calibration-cell": {"pk": w.one_q.pk, "cell": "tp"},
        "calibration-promote": {"pk": w.one_q.pk},
        "calibration-demote": {"pk": w.one_q.pk},
        "calibration-settle": {"pk": w.verdict_id},
        "api-rule-version-promote": {"pk": w.one_q.pk},
        "api-rule-version-demote": {"pk": w.one_q.pk},
        "workbench-rule": {"rule_id": w.one_q.rule.rule_id},
        "workbench-draft-create": {"rule_id": w.one_q.rule.rule_id},
        **{
            name: {"pk": w.draft.pk}
            for name in (
                "workbench-draft",
                "workbench-draft-progress",
                "workbench-run",
                "workbench-save",
                "workbench-meaning",
                "api-rule-draft",
                "api-rule-draft-estimate",
                "api-rule-draft-runs",
                "api-rule-draft-save",
                "api-rule-draft-meaning",
            )
        },
        "axes-report-detail": {"pk": w.axes.pk},
        "api-axes-report": {"pk": w.axes.pk},
        "webhook-detail": {"pk": w.webhook.pk},
        "webhook-toggle": {"pk": w.webhook.pk},
        "api-webhook": {"pk": w.webhook.pk},
        "api-voice-hook": {"pk": w.voice_hook.pk},
        "voice-hook-toggle": {"pk": w.voice_hook.pk},
        "import-detail": {"pk": w.import_job.pk},
        "import-start": {"pk": w.import_job.pk},
        "import-discard": {"pk": w.import_job.pk},
        "token-revoke": {"pk": api_token_create(user=w.users[R], name="access")[0].pk},
    }
    return w


def url_for(world, name: str, pattern: URLPattern) -> str:
    if name in world.kwargs:
        return reverse(name, kwargs=world.kwargs[name])
    params = set(pattern.pattern.converters) | set(pattern.pattern.regex.groupindex)
    if params == {"name"}:
        return reverse(name, kwargs={"name": world.gate.name})
    if params == {"external_id"}:
        return reverse(name, kwargs={"external_id": world.calls["2026-11-21.1-0"].external_id})
    if params == {"number"}:
        return reverse(name, kwargs={"number": world.row.number})
    assert not params, f"{name}: say in world.kwargs which object its {params} name"
    return reverse(name)


KEYS: dict[int, str] = {}  # user pk -> an API key made for this test's user (cleared per test)


def request_as(client, user, method: str, url: str):
    """Make the request as `user` (API: token; pages: session), undoing whatever it wrote."""
    client.logout()
    headers = {}
    if user.is_authenticated:
        if url.startswith(("/api/v1/", "/api/otel/")):
            if user.pk not in KEYS:
                KEYS[user.pk] = api_key(user)
            headers["HTTP_AUTHORIZATION"] = f"Token {KEYS[user.pk]}"
        else:
            client.force_login(user)
    with transaction.atomic():
        response = getattr(client, method.lower())(url, **headers)
        transaction.set_rollback(True)
    return response


def sent_to_login(response) -> bool:
    return response.status_code == 302 and response["Location"].startswith("/login/?next=")


def allowed(response) -> bool:
    """Whether the request got past the permission check."""
    return response.status_code not in (401, 403, 405) and not sent_to_login(response)


def refused_as_expected(response, role: str, url: str) -> bool:
    if role != ANON:
        return response.status_code == 403
    if url.startswith(("/api/v1/", "/api/schema/", "/api/otel/")):
        return response.status_code == 401
    return sent_to_login(response)


@pytest.mark.parametrize("name", NAMES)
def test_each_role_gets_exactly_what_the_table_says(client, world, name):
    pattern = dict(url_patterns())[name]
    url = url_for(world, name, pattern)
    wrong = []
    for method in METHODS:
        who = TABLE.get((name, method))
        if who is None:
            # A method the table leaves out is not served at all, even to a superuser.
            response = request_as(client, world.admin, method, url)
            if response.status_code != 405:
                wrong.append(f"{method} {url}: {response.status_code}; add it to TABLE")
            continue
        for role in ROLES:
            response = request_as(client, world.users[role], method, url)
            if who is SIGNED:
                if response.status_code != 401:
                    wrong.append(f"{method} {url} as {role}: {response.status_code}, expected 401")
                continue
            if role in who and not allowed(response):
                wrong.append(f"{method} {url} as {role}: {response.status_code}, expected access")
            if role not in who and not refused_as_expected(response, role, url):
                wrong.append(f"{method} {url} as {role}: {response.status_code}, expected refusal")
    assert not wrong, "\n".join(wrong)
