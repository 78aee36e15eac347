"""Display filters for the browsing pages: timestamps, durations, rates."""

from django import template
from django.utils.html import format_html, format_html_join

from core.textdiff import word_diff

register = template.Library()


@register.filter
def mmss(ms) -> str:
    """Return milliseconds as m:ss (h:mm:ss past an hour); empty for None."""
    if ms is None or ms == "":
        return ""
    seconds = int(ms) // 1000
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


@register.filter
def percent(value, digits: int = 1) -> str:
    """Return a 0-1 rate as a percentage; an en dash when undefined."""
    if value is None:
        return "–"
    return f"{value * 100:.{int(digits)}f}%"


@register.filter
def ratio(part, whole) -> float | None:
    """Return part / whole, None when whole is 0."""
    return (part / whole) if whole else None


@register.filter
def get_field_label(form, name: str) -> str:
    """Return the label of a form's field, or the name for form-wide errors."""
    field = form.fields.get(name)
    return str(field.label or name.replace("_", " ").capitalize()) if field else "Filters"


@register.simple_tag
def text_diff(old, new):
    """Return the word changes from `old` to `new`: deletions struck through, insertions marked."""
    tags = {"same": "span", "del": "del", "ins": "ins"}
    return format_html(
        '<span class="text-diff">{}</span>',
        format_html_join("", "<{0}>{1}</{0}>", ((tags[op], t) for op, t in word_diff(old, new))),
    )


def _triple(figure) -> str:
    if not figure:
        return "–"
    return f"{figure[0]:.2f} [{figure[1]:.2f}, {figure[2]:.2f}]"


@register.filter
def estimate_line(estimate) -> str:
    """Return one line for a rule version's workbench estimate (RuleVersion.estimate): its figures
    estimated from an earlier version's marks, or why that version's truth was not carried."""
    if not estimate:
        return ""
    source = f"version {estimate.get('from_version')}'s marks"
    if not estimate.get("carried"):
        return f"Not estimated from {source}: a lead said the text changes the rule's meaning."
    figures = estimate.get("figures") or {}
    return (
        f"Estimated from {source} on {estimate.get('calls', 0)} calls: "
        f"precision {_triple(figures.get('precision'))}, recall {_triple(figures.get('recall'))}, "
        f"agreement {_triple(figures.get('agreement'))}."
    )


@register.filter
def estimate_short(estimate) -> str:
    """Return a few words for a table cell: a workbench estimate's precision and recall."""
    if not estimate:
        return ""
    version = estimate.get("from_version")
    if not estimate.get("carried"):
        return f"v{version}'s truth not carried"
    figures = estimate.get("figures") or {}
    p, r = figures.get("precision"), figures.get("recall")
    return (
        f"estimated from v{version}'s marks: precision {p[0]:.2f} · recall {r[0]:.2f}"
        if p and r
        else f"estimated from v{version}'s marks"
    )
