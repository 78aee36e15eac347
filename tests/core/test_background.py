"""Services queue Celery tasks by name: every name they use is a task the apps registered."""

import ast
from pathlib import Path

from core.background import task_named

ROOT = Path(__file__).resolve().parents[2]


def queued_task_names() -> dict[str, str]:
    """`NAME_TASK = "..."` constants in the apps' services: name -> where."""
    found = {}
    for path in sorted((ROOT / "evals").rglob("*.py")) + sorted((ROOT / "labeling").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.endswith("_TASK")
                and isinstance(node.value, ast.Constant)
            ):
                found[node.value.value] = str(path.relative_to(ROOT))
    return found


def test_every_task_a_service_queues_by_name_is_registered():
    names = queued_task_names()
    assert len(names) >= 4  # judge items, gate runs, eval runs, webhook deliveries
    for name in names:
        assert task_named(name).name == name
