"""Print the map of the code: lines per Django app, the imports between apps, the largest files
and the most complex functions (McCabe, as `ruff check --select C901` counts it).

    .venv/bin/python bench/code_map.py            # this tree
    git archive 7b8020a | tar -x -C /tmp/before && .venv/bin/python bench/code_map.py /tmp/before

Application code only: every `.py` file under a folder holding an `apps.py`, less migrations,
tests, `bench/` and `demo/`; lines are non-blank lines. An import counts wherever it is written
(inside functions too), absolute or relative.
"""

import ast
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

SKIP = {".venv", ".git", "tests", "bench", "demo", "static", "templates", "migrations", "var"}


def app_dirs(root: Path) -> list[str]:
    """Dotted names of the Django apps under root, longest first (so a nested app wins)."""
    found = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP]
        if "apps.py" in files:
            found.append(".".join(Path(d).relative_to(root).parts))
    return sorted(found, key=len, reverse=True)


def app_of(module: str, apps: list[str]) -> str | None:
    return next((a for a in apps if module == a or module.startswith(a + ".")), None)


def imported(tree: ast.AST, module: str) -> list[str]:
    """Every module an import statement names, relative ones resolved against `module`."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = module.split(".")[: -node.level] if node.level else []
            names.append(".".join(base + ([node.module] if node.module else [])))
    return names


def complexity(root: Path, files: list[Path]) -> list[tuple[int, str]]:
    ruff = Path(sys.executable).with_name("ruff")
    done = subprocess.run(
        [
            str(ruff),
            "check",
            "--isolated",
            "--no-cache",
            "--select",
            "C901",
            "--output-format",
            "json",
            "--config",
            "lint.mccabe.max-complexity=1",
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        cwd=root,
        check=False,
    )
    out = []
    for item in json.loads(done.stdout or "[]"):
        msg = item["message"]  # `name` is too complex (N > 1)
        n = int(msg.rsplit("(", 1)[1].split(" ")[0])
        where = Path(item["filename"]).relative_to(root)
        out.append((n, f"{where}:{item['location']['row']} {msg.split('`')[1]}"))
    return sorted(out, reverse=True)


def main(root: Path) -> None:
    apps = app_dirs(root)
    lines, files, edges = Counter(), [], Counter()
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP]
        for f in names:
            if not f.endswith(".py"):
                continue
            path = Path(d) / f
            rel = path.relative_to(root)
            module = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
            app = app_of(module, apps)
            if app is None:
                continue
            src = path.read_text()
            n = sum(1 for line in src.splitlines() if line.strip())
            lines[app] += n
            files.append((n, path))
            pkg = module if f == "__init__.py" else module.rsplit(".", 1)[0]
            for name in imported(ast.parse(src), pkg + ".x"):
                other = app_of(name, apps)
                if other and other != app:
                    edges[app, other] += 1
    total = sum(lines.values())
    print(f"application code: {total:,} non-blank lines in {len(lines)} apps")
    for app, n in lines.most_common():
        print(f"  {app:22} {n:7,}  {100 * n / total:5.1f}%")
    print("imports between apps (importer -> imported: statements)")
    for (a, b), n in sorted(edges.items()):
        print(f"  {a} -> {b}: {n}")
    print("largest files (non-blank lines)")
    for n, path in sorted(files, reverse=True)[:10]:
        print(f"  {n:6,}  {path.relative_to(root)}")
    print("most complex functions (McCabe)")
    for n, where in complexity(root, [p for _, p in files])[:10]:
        print(f"  {n:4}  {where}")


if __name__ == "__main__":
    main(
        Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent).resolve()
    )
