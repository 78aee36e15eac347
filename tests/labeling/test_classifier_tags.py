"""The classifier curve's rows and chart marks, formatted in Python, read as the template nodes
they replace did (the floatformat filter's rounding included)."""

from django.template import Context, Template
from django.template.defaultfilters import floatformat
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.classifiers.thresholds import Item, pr_curve
from labeling.templatetags.classifier_tags import _fixed, curve_marks, curve_rows
from labeling.views.classifiers import curve_chart
from tests.evals.classifiers.test_classifier_thresholds import items_st

ROWS = Template(
    '{% for p in curve %}<tr><td class="num">{{ p.threshold }}</td><td class="num">{{ p.tp }}'
    '</td><td class="num">{{ p.fp }}</td><td class="num">{{ p.fn }}</td><td class="num">'
    '{{ p.precision|floatformat:3|default:"–" }} {% if p.precision_ci %}['
    "{{ p.precision_ci.0|floatformat:2 }}, {{ p.precision_ci.1|floatformat:2 }}]{% endif %}"
    '</td><td class="num">{{ p.recall|floatformat:3|default:"–" }} {% if p.recall_ci %}['
    "{{ p.recall_ci.0|floatformat:2 }}, {{ p.recall_ci.1|floatformat:2 }}]{% endif %}"
    "</td></tr>{% endfor %}"
)
MARKS = Template(
    '{% for x, hi, lo in s.whiskers %}<line class="whisker {{ s.css }}" x1="{{ x }}" '
    'x2="{{ x }}" y1="{{ hi }}" y2="{{ lo }}"/>{% endfor %}{% for x, y, label in s.points %}'
    '<circle class="pt {{ s.css }}" cx="{{ x }}" cy="{{ y }}" r="3.5"><title>{{ label }}'
    "</title></circle>{% endfor %}"
)

# Verdicts alike counted together: n of each, as the figures receive them.
counted_st = items_st.map(
    lambda items: [Item(i.flagged, i.confidence, i.right, n % 40 + 1) for n, i in enumerate(items)]
)


@given(st.integers(0, 10**6), st.integers(1, 10**6), st.sampled_from([2, 3]))
def test_proportions_round_as_floatformat_does(a, b, places):
    # The figures are proportions of counts (floatformat gives a number below 1e-199 back as it
    # is, a case no count reaches).
    x = min(a, b) / b
    assert _fixed(x, places) == floatformat(x, places)


@settings(max_examples=40)
@given(counted_st)
def test_the_rows_and_marks_read_as_the_template_did(items):
    curve = pr_curve(items)
    assert str(curve_rows(curve)) == ROWS.render(Context({"curve": curve}))
    chart = curve_chart(curve, None)
    for series in chart["series"] if chart else []:
        assert str(curve_marks(series)) == MARKS.render(Context({"s": series}))
