"""Apps import only downward: console -> labeling -> evals -> core."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# An app may import the apps at or below its own rank.
LAYERS = {"core": 0, "evals": 1, "labeling": 2, "console": 3}


def upward_imports() -> list[str]:
    """Return `module: imported` for every import of a higher layer, lazy ones included."""
    found = []
    for app, rank in LAYERS.items():
        for path in sorted((ROOT / app).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue  # relative imports stay inside the app
                for name in names:
                    top = name.split(".")[0]
                    if LAYERS.get(top, -1) > rank:
                        found.append(f"{module}: {name}")
    return found


def test_no_app_imports_a_higher_layer():
    assert upward_imports() == []


def test_the_walk_sees_imports_at_every_depth(tmp_path, monkeypatch):
    # A lazy import inside a function counts as much as one at the top of the module.
    app = tmp_path / "evals"
    app.mkdir()
    (app / "bad.py").write_text("def f():\n    from labeling.models import Mark\n")
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "worse.py").write_text("import console.settings\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    for name in ("labeling", "console"):
        (tmp_path / name).mkdir()
    assert upward_imports() == ["core.worse: console.settings", "evals.bad: labeling.models"]
