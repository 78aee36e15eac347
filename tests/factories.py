"""factory_boy factories for every model the tests build."""

import datetime
import hashlib

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import RequestFactory
from django.utils import timezone

from core.roles import roles_sync
from evals.catalog.models import Agent, AgentVersion, Transcript, Turn
from evals.judging.models import Judge, Verdict
from evals.rules.models import Rule, RuleVersion
from labeling import models as lm

PASSWORD = "docket-test-pw"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password(PASSWORD)

    @factory.post_generation
    def roles(self, create, extracted, **kwargs):
        if extracted and Group.objects.filter(name__in=extracted).count() != len(set(extracted)):
            roles_sync()  # transactional tests flush the groups the migration made
        for role in extracted or ():
            self.groups.add(Group.objects.get(name=role))


class AgentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Agent
        django_get_or_create = ("name",)

    name = "phone-screen"


class AgentVersionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = AgentVersion
        django_get_or_create = ("agent", "version")

    agent = factory.SubFactory(AgentFactory)
    version = "2026-11-28.1"


class TranscriptFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Transcript

    external_id = factory.Sequence(lambda n: f"call-{n:06d}")
    agent_version = factory.SubFactory(AgentVersionFactory)
    checksum = factory.LazyAttribute(lambda o: hashlib.sha256(o.external_id.encode()).hexdigest())
    language = "en"


class TurnFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Turn

    transcript = factory.SubFactory(TranscriptFactory)
    index = factory.Sequence(lambda n: n)
    speaker = "agent"
    text = "Hello."


class RuleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Rule

    rule_id = factory.Sequence(lambda n: f"asking.rule-{n}")
    group = "asking"
    severity = "minor"


class RuleVersionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = RuleVersion

    rule = factory.SubFactory(RuleFactory)
    number = 1
    text = "Ask one question per turn."


class JudgeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Judge
        django_get_or_create = ("name",)

    name = "gpt-4o-mini/conduct-v3"
    kind = "llm"


class VerdictFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Verdict

    transcript = factory.SubFactory(TranscriptFactory)
    rule_version = factory.SubFactory(RuleVersionFactory)
    judge = factory.SubFactory(JudgeFactory)
    flagged = False
    rationale = "Fine."
    confidence = 80


class DailySampleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = lm.DailySample
        django_get_or_create = ("day",)

    day = factory.Faker("date_object")
    size = 10


class SampleItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = lm.SampleItem

    sample = factory.SubFactory(DailySampleFactory)
    transcript = factory.SubFactory(TranscriptFactory)
    reason = "uniform"
    inclusion_probability = 0.5


def logged_in(client, user):
    """Log `user` into the Django test client through the password backend; return the client."""
    # django-axes counts logins per address, so the backend needs a request to read it from.
    request = RequestFactory().post("/login/")
    assert client.login(request=request, username=user.username, password=PASSWORD)
    return client


def api_key(user, name: str = "tests") -> str:
    """Return the key of a new API token of `user` (core.tokens: the key is not stored)."""
    from core.tokens import api_token_create

    return api_token_create(user=user, name=name)[1]


def token_client(user):
    """Return a DRF test client that authenticates as `user` with a new API token."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key(user)}")
    return client


def error_fields(response) -> set[str]:
    """The fields an API error names (`errors[].field`), after checking the one error shape."""
    body = response.json()
    assert isinstance(body["detail"], str) and body["code"], body
    return {e["field"] for e in body["errors"] if "field" in e}


def held_by(transcript, reviewer) -> lm.Assignment:
    """Put the call in today's sample and give it to `reviewer`."""
    sample = DailySampleFactory(day=timezone.localdate())
    item = lm.SampleItem.objects.filter(sample=sample, transcript=transcript).first()
    item = item or SampleItemFactory(sample=sample, transcript=transcript)
    now = timezone.now()
    return lm.Assignment.objects.create(
        item=item,
        reviewer=reviewer,
        claimed_at=now,
        lease_expires_at=now + datetime.timedelta(hours=1),
    )
