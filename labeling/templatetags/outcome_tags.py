"""The review page's outcome panel reads its questions and the reviewer's ratings here, so the
page's own view needs no change to show it (see REVIEW_EXTRA_PANELS)."""

from django import template

from labeling.selectors.outcomes import outcome_panel_data

register = template.Library()


@register.simple_tag
def outcome_panel(call, user) -> dict:
    """Return the outcome panel's questions with this reviewer's own ratings on the call."""
    return outcome_panel_data(reviewer=user, transcript=call)
