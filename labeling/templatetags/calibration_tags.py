"""Filters that print calibration figures: unknown is a dash, never 0."""

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

register = template.Library()


@register.filter
def fig(value, places: int = 2) -> str:
    """Return a number with `places` decimals, or an en dash when it is unknown."""
    if value is None:
        return "–"
    return f"{value:.{int(places)}f}"


@register.filter
def ci(interval) -> str:
    """Return "[low, high]" or an empty string when the interval is unknown."""
    if not interval:
        return ""
    return f"[{interval[0]:.2f}, {interval[1]:.2f}]"


@register.simple_tag
def interval_bar(figure, floor=None, label: str = ""):
    """Return an inline SVG bar for a 0-1 figure: the 95% interval shaded (green when its lower
    end clears the floor, amber when not), the value as a dot, the floor as a tick. The bars of
    a column share one scale, so rows compare at a glance; the numbers are in its label."""
    value, interval = getattr(figure, "value", None), getattr(figure, "ci", None)
    if value is None or not interval:
        return ""  # the figure beside it already reads "–"
    low, high = interval
    clears = floor is None or low >= floor
    parts = [
        '<rect class="ibar-track" x="0" y="5" width="100" height="2"></rect>',
        format_html(
            '<rect class="ibar-ci {}" x="{}" y="1" width="{}" height="10" rx="2"></rect>',
            "ok" if clears else "low",
            f"{low * 100:.1f}",
            f"{max((high - low) * 100, 1):.1f}",
        ),
    ]
    if floor is not None:
        parts.append(
            format_html(
                '<line class="ibar-floor" x1="{0}" x2="{0}" y1="0" y2="12"></line>',
                f"{floor * 100:.1f}",
            )
        )
    parts.append(
        format_html('<circle class="ibar-v" cx="{}" cy="6" r="2.6"></circle>', f"{value * 100:.1f}")
    )
    floor_text = f"; floor {floor:.2f}" if floor is not None else ""
    name = f"{label} {value:.2f}, 95% interval {low:.2f} to {high:.2f}{floor_text}".strip()
    return format_html(
        '<svg class="ibar" viewBox="0 0 100 12" preserveAspectRatio="none" role="img" '
        'aria-label="{}"><title>{}</title>{}</svg>',
        name,
        name,
        mark_safe("".join(parts)),  # every part is a literal or went through format_html
    )
