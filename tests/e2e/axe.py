"""One accessibility check for every browser test: axe-core (vendored from npm, never a CDN).

    from tests.e2e.axe import assert_no_serious_axe
    assert_no_serious_axe(page)                       # the whole page as it is now
    assert_no_serious_axe(page, include="#results")   # or one part of it

axe-core 4.14.1 comes from the npm package `axe-core` (tests/e2e/vendor/axe-core/, MPL-2.0; to
update: `npm pack axe-core@VERSION`, copy axe.min.js and LICENSE there). It is evaluated through
the DevTools protocol, so the page's Content Security Policy stays as it is in production.
"""

from functools import cache
from pathlib import Path

AXE_JS = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


@cache
def _axe_source() -> str:
    return AXE_JS.read_text(encoding="utf-8")


def axe_violations(page, *, include: str | None = None, impacts=SERIOUS) -> list[dict]:
    """Return axe's violations of the given impacts on the page (or the part `include` selects),
    each with its rule id, impact, help text and the first few offending elements."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(_axe_source())
    found = page.evaluate(
        """async (include) => {
            const context = include ? { include: [include] } : document;
            const result = await axe.run(context, { resultTypes: ["violations"] });
            return result.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ")), count: v.nodes.length,
            }));
        }""",
        include,
    )
    return [v for v in found if v["impact"] in impacts]


def assert_no_serious_axe(page, *, include: str | None = None) -> None:
    """Fail, naming the rule and the elements, if axe finds a serious or critical issue."""
    found = axe_violations(page, include=include)
    assert not found, f"axe on {page.url}: " + "; ".join(
        f"{v['id']} ({v['impact']}, {v['count']}x: {v['help']}) at {', '.join(v['nodes'])}"
        for v in found
    )
