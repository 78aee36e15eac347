"""The review page's decision-point panel: its moments come from labeling.selectors.decisions."""

from django import template

from labeling.selectors.decisions import review_moments

register = template.Library()


@register.inclusion_tag("labeling/partials/decision_panel_body.html", takes_context=True)
def decision_panel(context):
    """Render the decision points of the call under review for the reviewer."""
    call = context["call"]
    moments = review_moments(transcript=call, reviewer=context["request"].user)
    return {
        "call": call,
        "moments": moments,
        "labeled": sum(1 for d in moments if d.my_label),
        "csrf_token": context.get("csrf_token"),
    }
