"""Outcomes: configure the questions of an agent, and record a reviewer's rating of a call."""

import logging

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from core.errors import DomainError
from evals.catalog.models import Agent, Transcript
from labeling.models import (
    BAD_AT_MOST,
    DEFAULT_QUESTION_KEY,
    DEFAULT_QUESTION_TEXT,
    RATING_MAX,
    RATING_MIN,
    OutcomeQuestion,
    OutcomeRating,
)
from labeling.services.held import assignment_own

logger = logging.getLogger(__name__)

REASON_MAX = 2000
KEY_FACTOR_MAX = OutcomeRating._meta.get_field("key_factor").max_length
TEXT_MAX = OutcomeQuestion._meta.get_field("text").max_length


def outcome_question_default(*, agent: Agent) -> OutcomeQuestion:
    """Return the agent's default question (overall), creating it the first time it is needed."""
    question, _ = OutcomeQuestion.objects.get_or_create(
        agent=agent, key=DEFAULT_QUESTION_KEY, defaults={"text": DEFAULT_QUESTION_TEXT}
    )
    return question


@transaction.atomic
def outcome_question_set(
    *, agent: Agent, key: str, text: str, position: int | None = None, active: bool = True
) -> tuple[OutcomeQuestion, bool]:
    """Create or change one outcome question of an agent (idempotent: same values, no change);
    return (the question, whether it was created)."""
    key = (key or "").strip()
    text = " ".join((text or "").split())
    errors = {}
    if not key:
        errors["key"] = "required."
    else:
        try:
            OutcomeQuestion._meta.get_field("key").run_validators(key)
        except ValidationError as exc:  # the field's own validators speak Django's idiom
            errors["key"] = " ".join(exc.messages)
    if not text:
        errors["text"] = "required."
    elif len(text) > TEXT_MAX:
        errors["text"] = f"at most {TEXT_MAX} characters, got {len(text)}."
    if errors:
        raise DomainError(errors=errors)
    defaults = {"text": text, "active": bool(active)}
    if position is not None:
        defaults["position"] = position
    question, created = OutcomeQuestion.objects.update_or_create(
        agent=agent, key=key, defaults=defaults
    )
    logger.info(
        "outcome_question_set",
        extra={"agent": agent.name, "question": key, "question_created": created},
    )
    return question, created


@transaction.atomic
def outcome_rate(
    *,
    reviewer,
    transcript: Transcript,
    rating: int,
    reason: str = "",
    key_factor: str = "",
    question: OutcomeQuestion | None = None,
) -> tuple[OutcomeRating, bool]:
    """Record the reviewer's answer to an outcome question on a call; rating again replaces it.
    Return (the rating, whether it was created).

    The question defaults to the agent's overall one. A rating of BAD_AT_MOST or less needs a
    reason. The rating is tied to the reviewer's claim on the call when there is one (its sample
    item weighs it); outside the sample it weighs 1. A call other reviewers hold is refused
    (NotHeld), by the page and the API alike.
    """
    errors: dict[str, str] = {}
    try:
        value = int(rating)
        if str(rating).strip() != str(value) or not RATING_MIN <= value <= RATING_MAX:
            raise ValueError
    except (TypeError, ValueError):
        errors["rating"] = f"pick {RATING_MIN} to {RATING_MAX}, got {rating!r}."
        value = None
    reason = (reason or "").strip()
    key_factor = " ".join((key_factor or "").split())
    if value is not None and value <= BAD_AT_MOST and not reason:
        errors["reason"] = f"say why: a rating of {value} needs a reason."
    if len(reason) > REASON_MAX:
        errors["reason"] = f"at most {REASON_MAX} characters, got {len(reason)}."
    if len(key_factor) > KEY_FACTOR_MAX:
        errors["key_factor"] = f"at most {KEY_FACTOR_MAX} characters, got {len(key_factor)}."
    agent = transcript.agent_version.agent
    if question is not None and question.agent_id != agent.pk:
        errors["question"] = (
            f"{question.key!r} is a question of {question.agent.name}, not {agent}."
        )
    if errors:
        raise DomainError(errors=errors)
    if question is None:
        question = outcome_question_default(agent=agent)
    assignment = assignment_own(reviewer=reviewer, transcript=transcript)
    try:
        with transaction.atomic():
            rating_row, created = OutcomeRating.objects.update_or_create(
                transcript=transcript,
                question=question,
                reviewer=reviewer,
                defaults={
                    "rating": value,
                    "reason": reason,
                    "key_factor": key_factor,
                    "assignment": assignment,
                },
            )
    except IntegrityError:  # the same rating sent twice at once: the other one won; replace it
        rating_row = OutcomeRating.objects.select_for_update().get(
            transcript=transcript, question=question, reviewer=reviewer
        )
        rating_row.rating, rating_row.reason, rating_row.key_factor = value, reason, key_factor
        rating_row.assignment = assignment
        rating_row.save()
        created = False
    logger.info(
        "outcome_rated",
        extra={
            "transcript_id": transcript.pk,
            "reviewer_id": reviewer.pk,
            "question": question.key,
            "rating": value,
            "rating_created": created,
        },
    )
    return rating_row, created


@transaction.atomic
def outcome_unrate(*, reviewer, transcript: Transcript, question: OutcomeQuestion) -> bool:
    """Remove the reviewer's rating of a call on a question; return whether there was one."""
    deleted, _ = OutcomeRating.objects.filter(
        reviewer=reviewer, transcript=transcript, question=question
    ).delete()
    return bool(deleted)
