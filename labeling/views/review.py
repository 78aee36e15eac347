"""The review page and its queue: thin views over labeling.services and labeling.selectors."""

from django.contrib import messages
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_cache_control
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from core.errors import DomainError
from core.parsing import MAX_INT32, whole_number
from core.permissions import require
from evals.catalog.models import Transcript
from evals.judging.models import Verdict
from evals.rules.models import Severity
from labeling.models import Mark, SampleItem
from labeling.selectors.queue import (
    ReviewQueue,
    assignment_for_review,
    assignment_held,
    assignments_finished_today,
    progress_today,
    review_page_data,
    review_queue_choices,
    verdicts_markable,
    verdicts_unmarked_count,
)
from labeling.selectors.sampling import daily_sample_for_day, sample_item_count
from labeling.services.held import ReviewChanged
from labeling.services.issue_rows import issue_row_create
from labeling.services.marks import mark_rest_right, mark_set, mark_undo, mark_undo_many
from labeling.services.queue import assignment_finish, assignment_skip, sample_claim_next
from labeling.services.sampling import daily_sample_make, sample_item_queue_by_hand

PAGE = "labeling/review.html"
QUEUE_SESSION_KEY = "review_queue"

# Panels the review page shows under the issue panel, one template each (a <section class="panel">
# with its own id, given the page's context): a decision-point panel, an outcome rating form...
REVIEW_EXTRA_PANELS: list[str] = [
    "labeling/partials/decision_panel.html",  # decision points (labeling.views.decisions)
    "labeling/partials/outcome_panel.html",
]


def _queue(request) -> ReviewQueue:
    return ReviewQueue.parse(request.session.get(QUEUE_SESSION_KEY))


def _error_text(exc: DomainError | ValueError) -> str:
    return str(exc)


@require("review")
@require_GET
def review_home(request):
    today = timezone.localdate()
    sample = daily_sample_for_day(day=today)
    reasons = {}
    if sample is not None:
        for reason in sample.items.values_list("reason", flat=True):
            reasons[SampleItem.Reason(reason).label] = (
                reasons.get(SampleItem.Reason(reason).label, 0) + 1
            )
    return render(
        request,
        "labeling/review_home.html",
        {
            "progress": progress_today(reviewer=request.user),
            "held": assignment_held(reviewer=request.user),
            "finished": assignments_finished_today(reviewer=request.user)[:50],
            "sample": sample,
            "reasons": reasons,
            "today": today,
            "queue": _queue(request),
            "queue_choices": review_queue_choices(),
        },
    )


@require_POST
@require("review")
def review_next(request):
    if "queue" in request.POST:
        request.session[QUEUE_SESSION_KEY] = ReviewQueue.parse(request.POST["queue"]).key
    queue = _queue(request)
    assignment = sample_claim_next(reviewer=request.user, queue=queue)
    if assignment is None:
        if queue.flagged:
            messages.info(request, f"Nothing left in your queue ({queue.label}).")
        else:
            messages.info(request, "Nothing left to review today. Thank you!")
        return redirect("review")
    return redirect("review-call", external_id=assignment.item.transcript.external_id)


@require_POST
@require("manage_sample")
def review_sample_make(request):
    sample, _ = daily_sample_make(day=timezone.localdate())
    messages.success(request, f"Today's sample has {sample_item_count(sample)} calls.")
    return redirect("review")


@require_POST
@require("manage_sample")
def review_sample_queue(request):
    external_id = request.POST.get("transcript", "").strip()
    transcript = Transcript.objects.filter(external_id=external_id).first()
    if transcript is None:
        messages.error(request, f"transcript: no call with id {external_id!r}.")
    else:
        sample_item_queue_by_hand(transcript=transcript, added_by=request.user)
        messages.success(request, f"{external_id} is in today's queue.")
    target = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(target)
    return redirect("review")


def _review_context(request, transcript):
    assignment = assignment_for_review(reviewer=request.user, transcript=transcript)
    if assignment is None:
        return None
    page = review_page_data(reviewer=request.user, transcript=transcript, assignment=assignment)
    return {
        "call": transcript,
        "page": page,
        "assignment": assignment,
        "now": timezone.now(),
        "progress": progress_today(reviewer=request.user),
        "severities": Severity.choices,
        "issue_rows": transcript.issue_rows.filter(reporter=request.user).order_by("number"),
        "queue": _queue(request),
        "extra_panels": REVIEW_EXTRA_PANELS,
    }


# The review page never comes from a cache: Back, the back-forward cache and a second tab must
# show what the server holds (review.js also reloads a page restored from the back-forward cache).
@never_cache
@require("review")
@require_GET
def review_call(request, external_id):
    transcript = get_object_or_404(Transcript, external_id=external_id)
    context = _review_context(request, transcript)
    if context is None:
        messages.info(
            request, f"{external_id} is not yours to review: press Start reviewing to get a call."
        )
        return redirect("review")
    return render(request, PAGE, context)


def _version(request) -> int | None:
    """Read the version of the call the page saw (`version`, sent with every change)."""
    raw = request.POST.get("version") or request.GET.get("version")
    try:
        return whole_number(raw, field="version", default=None)
    except DomainError as exc:
        raise ValueError(f"{exc}.") from None


def _held(request, external_id):
    """Return the call and the reviewer's assignment on it, or a 400 answer saying it is not
    theirs (skipped, or never claimed)."""
    transcript = get_object_or_404(Transcript, external_id=external_id)
    assignment = assignment_for_review(reviewer=request.user, transcript=transcript)
    if assignment is None:
        return (
            transcript,
            None,
            HttpResponseBadRequest(
                f"{external_id} is not held by you (skipped, or never claimed): not saved."
            ),
        )
    return transcript, assignment, None


def _answer(request, transcript, verdicts, *, saved=True, error="", notice="", status=200):
    """Answer the review page's script: the verdicts that changed (this reviewer's marks on
    them) and the call's progress, which carries the version the next change must send."""
    verdicts = list(verdicts)
    marks = {
        m.verdict_id: m for m in Mark.objects.filter(verdict__in=verdicts, reviewer=request.user)
    }
    for v in verdicts:
        v.my_mark = marks.get(v.pk)
    markable = verdicts_markable(transcript=transcript).count()
    left = verdicts_unmarked_count(reviewer=request.user, transcript=transcript)
    context = {
        "verdicts": verdicts,
        "call": transcript,
        "assignment": assignment_for_review(reviewer=request.user, transcript=transcript),
        "page": {"markable": markable, "marked": markable - left},
        "now": timezone.now(),
        "progress": progress_today(reviewer=request.user),
        "queue": _queue(request),
        "saved": saved,
        "error": error,
        "notice": notice,
    }
    response = render(request, f"{PAGE}#answer", context, status=status)
    patch_cache_control(response, no_store=True)
    return response


def _call_verdicts(transcript):
    return Verdict.objects.filter(transcript=transcript).select_related(
        "rule_version__rule", "judge"
    )


def _refused(request, transcript, exc: DomainError):
    """Answer a change refused because the call changed elsewhere: 409, with every verdict and
    the progress as the server holds them, and the refusal said where the reviewer looks."""
    if not request.htmx:
        messages.error(request, exc.message)
        return redirect("review-call", external_id=transcript.external_id)
    return _answer(
        request,
        transcript,
        _call_verdicts(transcript),
        saved=False,
        notice=f"{exc.message} The page now shows what is saved.",
        status=409,
    )


def _back_to_page(request, transcript, *, anchor="", error="", success=""):
    if error:
        messages.error(request, error)
    if success:
        messages.success(request, success)
    return redirect(reverse("review-call", args=[transcript.external_id]) + anchor)


@require_POST
@require("review")
def review_mark(request, external_id, verdict_id):
    transcript, _assignment, refusal = _held(request, external_id)
    if refusal:
        return refusal
    verdict = get_object_or_404(
        Verdict.objects.select_related("transcript", "rule_version__rule", "judge"),
        pk=verdict_id,
        transcript=transcript,
    )
    correct = request.POST.get("correct")
    if correct not in ("1", "0", "true", "false"):
        return HttpResponseBadRequest("correct: must be 1 or 0.")
    error = ""
    try:
        mark_set(
            reviewer=request.user,
            verdict=verdict,
            correct=correct in ("1", "true"),
            note=request.POST.get("note", "") if correct in ("0", "false") else "",
            version=_version(request),
        )
    except ReviewChanged as exc:
        return _refused(request, transcript, exc)
    except (ValueError, DomainError) as exc:
        error = _error_text(exc)
    if not request.htmx:
        return _back_to_page(request, transcript, anchor=f"#verdict-{verdict.pk}", error=error)
    response = _answer(request, transcript, [verdict], saved=not error, error=error)
    return trigger_client_event(response, "marks-changed", {"verdict": verdict.pk})


@require_POST
@require("review")
def review_unmark(request, external_id, verdict_id):
    transcript, _assignment, refusal = _held(request, external_id)
    if refusal:
        return refusal
    verdict = get_object_or_404(
        Verdict.objects.select_related("rule_version__rule", "judge"),
        pk=verdict_id,
        transcript=transcript,
    )
    try:
        mark_undo(reviewer=request.user, verdict=verdict, version=_version(request))
    except ReviewChanged as exc:
        return _refused(request, transcript, exc)
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc))
    if not request.htmx:
        return _back_to_page(request, transcript, anchor=f"#verdict-{verdict.pk}")
    response = _answer(request, transcript, [verdict])
    return trigger_client_event(response, "marks-changed", {"verdict": verdict.pk})


def _bulk_answer(request, transcript, ids, *, flash: str, undo: list[int] | None = None):
    """Answer a bulk action: the changed verdicts and the progress, and an event that carries
    what the page needs to undo it and to say what happened."""
    if not request.htmx:
        return _back_to_page(request, transcript, success=flash)
    response = _answer(request, transcript, _call_verdicts(transcript).filter(pk__in=ids))
    return trigger_client_event(
        response, "marks-changed", {"verdicts": ids, "undo": undo or [], "flash": flash}
    )


@require_POST
@require("review")
def review_mark_rest(request, external_id):
    transcript, _assignment, refusal = _held(request, external_id)
    if refusal:
        return refusal
    try:
        ids = mark_rest_right(
            reviewer=request.user, transcript=transcript, version=_version(request)
        )
    except ReviewChanged as exc:
        return _refused(request, transcript, exc)
    except (ValueError, DomainError) as exc:
        text = _error_text(exc)
        if not request.htmx:
            return _back_to_page(request, transcript, error=text)
        return HttpResponseBadRequest(text)
    n = len(ids)
    return _bulk_answer(
        request,
        transcript,
        ids,
        flash=f"Judge right on {n} unflagged verdict{'s' if n != 1 else ''}. u undoes it.",
        undo=ids,
    )


@require_POST
@require("review")
def review_unmark_many(request, external_id):
    transcript, _assignment, refusal = _held(request, external_id)
    if refusal:
        return refusal
    try:
        ids = [whole_number(x, field="verdict", low=1) for x in request.POST.getlist("verdict")]
    except DomainError:
        return HttpResponseBadRequest("verdict: must be verdict ids.")
    try:
        n = mark_undo_many(
            reviewer=request.user, transcript=transcript, verdict_ids=ids, version=_version(request)
        )
    except ReviewChanged as exc:
        return _refused(request, transcript, exc)
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc))
    return _bulk_answer(
        request, transcript, ids, flash=f"Undone: {n} mark{'s' if n != 1 else ''} removed."
    )


@never_cache
@require_GET
@require("review")
def review_call_progress(request, external_id):
    """The call's progress; with `version` (the page's), every verdict too when the call changed
    since: what a page shows when it comes back (a reconnect, a tab shown again)."""
    transcript, assignment, refusal = _held(request, external_id)
    if refusal:
        return refusal
    try:
        seen = _version(request)
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc))
    if seen is None or seen == assignment.version:
        return _answer(request, transcript, [])
    how = (
        f" (finished at {timezone.localtime(assignment.finished_at):%H:%M})"
        if assignment.finished_at
        else ""
    )
    return _answer(
        request,
        transcript,
        _call_verdicts(transcript),
        saved=False,
        notice=f"{external_id} changed in another tab or window{how}. "
        "The page now shows what is saved.",
    )


def _assignment_end(request, external_id, service, level, text: str):
    """Finish or skip the reviewer's claim on a call, say
    so, and go to the next call (or back, on error)."""
    transcript = get_object_or_404(Transcript, external_id=external_id)
    try:
        service(reviewer=request.user, transcript=transcript, version=_version(request))
    except ReviewChanged as exc:
        messages.error(request, exc.message)
        return redirect("review-call", external_id=external_id)
    except (ValueError, DomainError) as exc:
        messages.error(request, _error_text(exc))
        return redirect("review-call", external_id=external_id)
    level(request, text)
    return review_next(request)


@require_POST
@require("review")
def review_finish(request, external_id):
    return _assignment_end(
        request, external_id, assignment_finish, messages.success, f"Finished {external_id}."
    )


@require_POST
@require("review")
def review_skip(request, external_id):
    return _assignment_end(
        request,
        external_id,
        assignment_skip,
        messages.info,
        f"Skipped {external_id}; it goes back to the queue for someone else.",
    )


def _clock_ms(field: str, text: str) -> int | None:
    """Read a time in the recording typed as m:ss, h:mm:ss or seconds (decimals allowed)."""
    if not text:
        return None
    try:
        parts = [float(p) for p in text.split(":")]
        if len(parts) > 3 or any(p < 0 for p in parts) or any(p >= 60 for p in parts[1:]):
            raise ValueError
    except ValueError:
        raise ValueError(f"{field}: {text!r} is not a time like 1:05 or 65.") from None
    seconds = 0.0
    for p in parts:
        seconds = seconds * 60 + p
    return round(seconds * 1000)


@require_POST
@require("review")
def review_issue(request, external_id):
    transcript = get_object_or_404(Transcript, external_id=external_id)
    form = {
        "turn": request.POST.get("turn", "").strip(),
        "what": request.POST.get("what", "").strip(),
        "severity": request.POST.get("severity", ""),
        "audio_only": request.POST.get("audio_only") in ("on", "1", "true"),
        "from": request.POST.get("from", "").strip(),
        "to": request.POST.get("to", "").strip(),
    }
    error, row = "", None
    try:
        row = issue_row_create(
            reporter=request.user,
            transcript=transcript,
            turn=whole_number(form["turn"], field="turn", high=MAX_INT32, default=None),
            what=form["what"],
            severity=form["severity"],
            audio_only=form["audio_only"],
            start_ms=_clock_ms("from", form["from"]),
            end_ms=_clock_ms("to", form["to"]),
        )
    except ValueError as exc:
        error = str(exc)
    except DomainError as exc:
        error = _error_text(exc).replace("start_ms:", "from:").replace("end_ms:", "to:")
    if not request.htmx:
        if error:
            messages.error(request, error)
        else:
            messages.success(request, f"Filed row {row.number}.")
        target = request.POST.get("next", "")
        if target and url_has_allowed_host_and_scheme(
            target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        ):
            return redirect(target)
        return redirect("review-call", external_id=external_id)
    context = {
        "call": transcript,
        "severities": Severity.choices,
        "issue_rows": transcript.issue_rows.filter(reporter=request.user).order_by("number"),
        "issue_error": error,
        "issue_form": form if error else {},
        "issue_filed": row,
        "issue_next": request.POST.get("next", ""),
    }
    response = render(request, f"{PAGE}#issue-panel", context)
    if row is not None:
        trigger_client_event(response, "issue-filed", {"number": row.number})
    return response
