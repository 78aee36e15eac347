"""Server-drawn SVG geometry for the calibration and outcome trend charts (no chart library, no
JavaScript)."""

import datetime as dt
from dataclasses import dataclass, field

WIDTH, HEIGHT = 720, 240
LEFT, RIGHT, TOP, BOTTOM = 44, 36, 14, 34
# Where a chart's plot area sits in its viewBox (the templates draw axes and labels from these).
FRAME = {
    "width": WIDTH,
    "height": HEIGHT,
    "left": LEFT,
    "right": WIDTH - RIGHT,
    "top": TOP,
    "bottom": HEIGHT - BOTTOM,
    "label_y": HEIGHT - BOTTOM + 18,
}


@dataclass
class Series:
    name: str
    css: str
    line: str = ""  # polyline points
    band: str = ""  # polygon points of the 95% interval (two points or more)
    points: list = field(default_factory=list)  # (x, y, label)
    whiskers: list = field(default_factory=list)  # (x, y_high, y_low): each point's interval


def _x(i: int, n: int) -> float:
    inner = WIDTH - LEFT - RIGHT
    return LEFT + (inner / 2 if n == 1 else inner * i / (n - 1))


def _y(v: float) -> float:
    return TOP + (HEIGHT - TOP - BOTTOM) * (1 - v)


def trend_chart(trend, floors: dict[str, float], period: str = "week") -> dict:
    """Return the geometry of a precision/recall-by-week (or by-day) chart from
    calibration_trend() output. Every point carries its 95% interval as a whisker (precision a
    little left of its date, recall a little right, so both stay readable); with two points or
    more the intervals are also shaded as a band."""
    n = len(trend)
    series = []
    for name, attr, css, nudge in (
        ("precision", "precision", "s-precision", -4),
        ("recall", "recall", "s-recall", 4),
    ):
        s = Series(name, css)
        upper, lower, line = [], [], []
        for i, (start, figs) in enumerate(trend):
            est = getattr(figs, attr)
            if est.value is None:
                continue
            x = round(_x(i, n) + nudge, 1)
            line.append(f"{x},{round(_y(est.value), 1)}")
            upper.append(f"{x},{round(_y(est.ci[1]), 1)}")
            lower.append(f"{x},{round(_y(est.ci[0]), 1)}")
            s.whiskers.append((x, round(_y(est.ci[1]), 1), round(_y(est.ci[0]), 1)))
            when = f"week of {start:%d %b %Y}" if period == "week" else f"{start:%d %b %Y}"
            s.points.append(
                (
                    x,
                    round(_y(est.value), 1),
                    (
                        f"{name} {when}: {est.value:.2f} "
                        f"[{est.ci[0]:.2f}, {est.ci[1]:.2f}], n={int(est.n)}"
                    ),
                )
            )
        s.line = " ".join(line) if len(line) > 1 else ""
        s.band = " ".join(upper + lower[::-1]) if len(upper) > 1 else ""
        series.append(s)
    step = max(1, n // 8)
    xlabels = [
        (round(_x(i, n), 1), f"{week:%d %b}") for i, (week, _) in enumerate(trend) if i % step == 0
    ]
    yticks = [(round(_y(v), 1), f"{v:.2f}") for v in (0, 0.25, 0.5, 0.75, 1.0)]
    floor_lines = [(name, round(_y(v), 1), f"{name} floor {v:.2f}") for name, v in floors.items()]
    return {
        **FRAME,
        "series": series,
        "xlabels": xlabels,
        "yticks": yticks,
        "floors": floor_lines,
        "weeks": n,
        "period": period,
    }


def _y_rating(v: float, low: float, high: float) -> float:
    return TOP + (HEIGHT - TOP - BOTTOM) * (1 - (v - low) / (high - low))


def outcome_chart(trend: list[dict], *, scale=(1, 5), period: str = "week") -> dict | None:
    """Return the geometry of the outcome-by-week (or day) chart from outcome_figures()' trend
    rows: one series per agent version, each point its weighted mean rating with the 95% interval
    as a whisker (a band with two points or more); None without a rated call."""
    if not trend:
        return None
    low, high = scale
    starts = sorted({r["period"] for r in trend})
    n = len(starts)
    index = {s: i for i, s in enumerate(starts)}
    versions = sorted({r["version"] for r in trend})
    series = []
    for k, version in enumerate(versions):
        s = Series(version, f"s-v{k % 4}")
        nudge = (k - (len(versions) - 1) / 2) * 6
        upper, lower, line = [], [], []
        for r in (r for r in trend if r["version"] == version):
            if r["mean"] is None:
                continue
            x = round(_x(index[r["period"]], n) + nudge, 1)
            y = round(_y_rating(r["mean"], low, high), 1)
            line.append(f"{x},{y}")
            ci = r["mean_ci"] or [r["mean"], r["mean"]]
            hi, lo = round(_y_rating(ci[1], low, high), 1), round(_y_rating(ci[0], low, high), 1)
            upper.append(f"{x},{hi}")
            lower.append(f"{x},{lo}")
            s.whiskers.append((x, hi, lo))
            when = f"week of {r['period']}" if period == "week" else r["period"]
            interval = f" [{ci[0]:.2f}, {ci[1]:.2f}]" if r["mean_ci"] else ""
            s.points.append(
                (x, y, f"{version}, {when}: {r['mean']:.2f}{interval}, {r['calls']} rated calls")
            )
        s.line = " ".join(line) if len(line) > 1 else ""
        s.band = " ".join(upper + lower[::-1]) if len(upper) > 1 else ""
        series.append(s)
    step = max(1, n // 8)
    xlabels = [
        (round(_x(i, n), 1), f"{dt.date.fromisoformat(start):%d %b}")
        for i, start in enumerate(starts)
        if i % step == 0
    ]
    yticks = [(round(_y_rating(v, low, high), 1), str(v)) for v in range(low, high + 1)]
    return {
        **FRAME,
        "series": series,
        "xlabels": xlabels,
        "yticks": yticks,
        "periods": n,
        "period": period,
    }
