"""The apps import only downward, no module imports itself back through others, the pure gate
decision loads no framework, and no app holds more than 30% of the code.

The order (docs/code.md): core < webhooks, catalog < ingest, rules < judging < gating <
{conversation, classifiers, decisions, evalruns, trajectories, workbench} < labeling < console.
Apps of one rank do not import each other. Every import counts: at the top of a module or inside
a function, absolute or relative.
"""

import ast
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RANKS = {
    "core": 0,
    "evals": 1,  # the migration history of the tables the apps below took over
    "webhooks": 1,
    "catalog": 1,
    # traces pushed in (voice hooks, OTLP): reads the catalog's importer and formats, and
    # nothing above it needs it
    "ingest": 2,
    "rules": 2,
    "judging": 3,
    "gating": 4,
    "conversation": 5,
    "classifiers": 5,
    "decisions": 5,
    "evalruns": 5,
    "trajectories": 5,
    "workbench": 5,
    "labeling": 6,
    "console": 7,
}
TOP = ("core", "evals", "labeling", "console")


def app_of(module: str) -> str | None:
    """The app a dotted module belongs to (`evals.judging.services` -> judging), or None."""
    parts = module.split(".")
    if parts[0] not in TOP:
        return None
    if parts[0] == "evals" and len(parts) > 1 and parts[1] in RANKS:
        return parts[1]
    return parts[0]


def modules(root: Path) -> dict[str, Path]:
    found = {}
    for top in TOP:
        for path in sorted((root / top).rglob("*.py")):
            name = ".".join(path.relative_to(root).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def imports(root: Path) -> dict[str, set[str]]:
    """module -> the project modules it imports (the deepest module each import names)."""
    mods = modules(root)
    out: dict[str, set[str]] = {}
    for name, path in mods.items():
        found = set()
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = name.split(".")
                    keep = len(parts) - node.level + (1 if is_pkg else 0)
                    base = ".".join(parts[:keep] + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != name and not name.startswith(t + "."):
                    found.add(t)
        out[name] = found
    return out


def upward_imports(root: Path = ROOT) -> list[str]:
    """`module: imported` for every import of an app of a higher rank, or of the same rank."""
    bad = []
    for module, targets in sorted(imports(root).items()):
        a = app_of(module)
        for target in sorted(targets):
            b = app_of(target)
            if a and b and a != b and RANKS[b] >= RANKS[a]:
                bad.append(f"{module}: {target}")
    return bad


def cycles(root: Path = ROOT) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    edges = imports(root)
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    sys.setrecursionlimit(10_000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_app_imports_a_higher_or_sibling_app():
    assert upward_imports() == []


def test_no_module_imports_itself_back_through_others():
    assert cycles() == []


def test_the_walk_sees_imports_at_every_depth_and_every_spelling(tmp_path):
    for pkg in ("core", "console", "labeling", "evals", "evals/rules", "evals/gating"):
        (tmp_path / pkg).mkdir(parents=True)
        (tmp_path / pkg / "__init__.py").write_text("")
    # A lazy import inside a function counts as much as one at the top of the module...
    (tmp_path / "evals/rules/bad.py").write_text("def f():\n    from labeling.models import Mark\n")
    (tmp_path / "core/worse.py").write_text("import console.settings\n")
    # ... and a relative one as much as an absolute one.
    (tmp_path / "evals/rules/up.py").write_text("from ..gating import decision\n")
    (tmp_path / "evals/gating/decision.py").write_text("from . import back\n")
    (tmp_path / "evals/gating/back.py").write_text("from evals.gating import decision\n")
    (tmp_path / "labeling/models.py").write_text("")
    (tmp_path / "console/settings.py").write_text("")
    assert upward_imports(tmp_path) == [
        "core.worse: console.settings",
        "evals.rules.bad: labeling.models",
        "evals.rules.up: evals.gating",  # the package's __init__ runs too
        "evals.rules.up: evals.gating.decision",
    ]
    assert cycles(tmp_path) == [["evals.gating.back", "evals.gating.decision"]]


PURE = [
    "evals.gating.decision",
    "evals.conversation.gate_metrics",
    "evals.decisions.gate_metrics",
    "evals.evalruns.gate_metrics",
    "evals.rules.detectors",
    "core.stats",
]
FRAMEWORKS = ("django", "rest_framework", "celery", "openai", "httpx", "requests", "psycopg")


def test_the_gate_decision_and_its_kinds_load_no_framework_or_http_client():
    code = (
        "import importlib, json, sys\n"
        f"for m in {PURE!r}: importlib.import_module(m)\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({FRAMEWORKS!r}))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def app_lines(root: Path = ROOT) -> Counter:
    """Lines of application code per app (migrations left out)."""
    lines: Counter = Counter()
    for name, path in modules(root).items():
        if ".migrations" not in name:
            lines[app_of(name)] += len(path.read_text(encoding="utf-8").splitlines())
    return lines


def test_no_app_holds_more_than_30_percent_of_the_code():
    lines = app_lines()
    total = sum(lines.values())
    shares = {app: round(n / total, 3) for app, n in lines.most_common()}
    assert max(shares.values()) <= 0.30, shares
