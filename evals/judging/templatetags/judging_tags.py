"""Template tags of the judge: whether one is configured, for the buttons that need a model."""

from django import template

from evals.judging.client import judge_configured

register = template.Library()


@register.simple_tag
def judge_connected() -> bool:
    """Whether a judge server is configured (a base URL or a key): `{% judge_connected as ok %}`."""
    return judge_configured()
