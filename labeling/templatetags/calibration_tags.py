"""Filters that print calibration figures: unknown is a dash, never 0."""

from django import template

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
