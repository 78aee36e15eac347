"""Tags that draw a classifier's precision-recall curve: its table rows and chart marks, one per
threshold, formatted here in a few string operations. In template nodes a threshold cost some 30
lookups and 8 floatformat filters, most of the page once a window's marks fill in the thresholds
(issue 26); the text is the same."""

from decimal import ROUND_HALF_UP, Decimal

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

register = template.Library()


def _fixed(value: float, places: int) -> str:
    """Return the number as the floatformat filter prints it (half up, from its repr)."""
    return str(Decimal(repr(value)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def _figure(value: float | None, ci) -> str:
    text = "–" if value is None else _fixed(value, 3)
    return f"{text} [{_fixed(ci[0], 2)}, {_fixed(ci[1], 2)}]" if ci else f"{text} "


@register.simple_tag
def curve_rows(curve):
    """Return the curve table's rows: threshold, TP, FP, FN, precision and recall with their 95%
    intervals."""
    # Numbers only (integers and _fixed's digits): nothing to escape.
    return mark_safe(
        "".join(
            f'<tr><td class="num">{p.threshold:d}</td><td class="num">{p.tp:d}</td>'
            f'<td class="num">{p.fp:d}</td><td class="num">{p.fn:d}</td>'
            f'<td class="num">{_figure(p.precision, p.precision_ci)}</td>'
            f'<td class="num">{_figure(p.recall, p.recall_ci)}</td></tr>'
            for p in curve
        )
    )


@register.simple_tag
def curve_marks(series: dict):
    """Return one chart series' interval whiskers, then its points with their titles."""
    css = escape(series["css"])
    whiskers = (
        f'<line class="whisker {css}" x1="{x}" x2="{x}" y1="{hi}" y2="{lo}"/>'
        for x, hi, lo in series["whiskers"]
    )
    points = (
        f'<circle class="pt {css}" cx="{x}" cy="{y}" r="3.5"><title>{escape(label)}</title>'
        "</circle>"
        for x, y, label in series["points"]
    )
    # Coordinates are floats (curve_chart rounds them), the rest escaped.
    return mark_safe("".join(whiskers) + "".join(points))
