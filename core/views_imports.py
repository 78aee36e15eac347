"""The import page (engineers and leads: import_data): upload a file of transcripts, rules,
verdicts, marks or a dataset, see its first lines, give what the file does not say (the agent
and version of calls that name none), and import it in the background through the same importer
as its command and its API endpoint; the page polls the progress and shows each error beside
the line it is on."""

from django.conf import settings
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect, HttpResponseStopPolling

from core.errors import DomainError, NotFound
from core.import_jobs import (
    import_job_discard,
    import_job_get,
    import_job_preview,
    import_job_progress,
    import_job_stale,
    import_job_start,
    import_job_upload,
    import_jobs_of,
)
from core.import_kinds import IMPORT_KINDS, import_kinds
from core.permissions import require


@require("import_data")
@require_http_methods(["GET", "POST"])
def import_list(request):
    """Your latest imports and the upload form (POST stores the file and shows its preview)."""
    error, status = None, 200
    if request.method == "POST":
        try:
            job = import_job_upload(
                kind=request.POST.get("kind", ""),
                upload=request.FILES.get("file"),
                actor=request.user,
            )
        except DomainError as exc:
            error, status = exc, exc.status
        else:
            url = reverse("import-detail", args=[job.pk])
            return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    kinds = import_kinds(request.user)
    labels = [k.label.split(" (")[0].lower() for k in kinds]
    return render(
        request,
        "core/imports.html",
        {
            "kinds": kinds,
            "what": ", ".join(labels[:-1]) + " or " + labels[-1] if len(labels) > 1 else labels,
            "max_bytes": settings.DOCKET_IMPORT_MAX_BYTES,
            "config_max_bytes": settings.DOCKET_CONFIG_MAX_BYTES,
            "jobs": import_jobs_of(request.user),
            "error": error,
            "chosen": request.POST.get("kind") or request.GET.get("kind") or "",
        },
        status=status,
    )


def _job(request, pk: int):
    try:
        return import_job_get(job_id=pk, actor=request.user)
    except NotFound as exc:
        raise Http404(exc.message) from None


def _context(job, *, error=None, values=None) -> dict:
    kind = IMPORT_KINDS.get(job.kind)
    preview = import_job_preview(job) if job.file else None
    missing = preview.missing if preview else set()
    unknown = bool(preview and kind and kind.missing and not preview.records_seen)
    options = []
    for option in kind.options if kind else ():
        value = (values or job.options or {}).get(option.name, "")
        options.append(
            {
                "option": option,
                "value": value,
                "required": option.required or option.name in missing,
                "missing": option.name in missing,
                "asked": option.required or option.flag or option.name in missing or unknown,
            }
        )
    return {
        "job": job,
        "kind": kind,
        "preview": preview,
        "options": options,
        "tucked": [o for o in options if not o["asked"]],
        "progress": import_job_progress(job) if not job.finished else None,
        "stale": import_job_stale(job),
        "error": error,
        "bad_lines": {int(e["line"]) for e in job.errors if str(e.get("line", "")).isdigit()},
    }


@require("import_data")
@require_GET
def import_detail(request, pk: int):
    """One import: the file's first lines, its options, then its progress, result or errors."""
    job = _job(request, pk)
    context = _context(job)
    if request.htmx:
        html = render_to_string("core/import_job.html#import-state", context, request=request)
        if job.finished or context["stale"] or job.status == job.Status.UPLOADED:
            return HttpResponseStopPolling(html)
        return render(request, "core/import_job.html#import-state", context)
    return render(request, "core/import_job.html", context)


@require("import_data")
@require_POST
def import_start(request, pk: int):
    """Start (or start again, with other options) the import of an uploaded file."""
    try:
        import_job_start(job_id=pk, actor=request.user, values=request.POST)
    except NotFound as exc:
        raise Http404(exc.message) from None
    except DomainError as exc:
        job = _job(request, pk)
        context = _context(job, error=exc, values=request.POST)
        return render(request, "core/import_job.html", context, status=exc.status)
    return redirect("import-detail", pk=pk)


@require("import_data")
@require_POST
def import_discard(request, pk: int):
    """Remove an import that is not running, with its file."""
    try:
        import_job_discard(job_id=pk, actor=request.user)
    except NotFound as exc:
        raise Http404(exc.message) from None
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("import-detail", pk=pk)
    messages.info(request, "Removed.")
    return redirect("import-list")
