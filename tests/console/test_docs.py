"""README.md and docs/ stay true (issue 23).

- Every shell command in a code block parses (shlex) and names something real: a management
  command whose parser accepts the options given (`[...]` marks an optional part, checked as if
  given), a make target, a script or module of the repository, or an endpoint the URL resolver
  knows, with a method it answers and a Content-Type its parsers take (a `curl -d` form body to a
  JSON endpoint answers 415). Other programs must be on a short list of known tools.
- Every figure marked `<!--demo:NAME-->` equals NAME measured on the demo, loaded in the test.
- Every relative link points at a file of the repository, and no file cites DESIGN.md, which is
  not in it (the public contract is docs/contract.md).
"""

import re
import shlex
import subprocess
from functools import cache
from io import StringIO
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.core.management import call_command, get_commands, load_command_class
from django.core.management.base import CommandError
from django.urls import Resolver404, resolve

ROOT = Path(settings.BASE_DIR)
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_LANGS = {"", "sh", "bash", "shell", "console"}
# Programs a command in the docs may run besides the project's own (python, manage.py, make).
TOOLS = {
    "export", "createdb", "dropdb", "psql", "openssl", "cat", "printf", "date", "cut", "celery",
    "git", "cd", "echo", "gzip", "curl", "apt-get", "sudo", "uv",
    "vllm", "llama-server", "ollama",  # local OpenAI-compatible servers (docs/judge.md)
}  # fmt: skip
DATA_FLAGS = {"-d", "--data", "--data-binary", "--data-raw", "--data-urlencode"}
WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
]
MARK = re.compile(r"<!--\s*demo:([a-z_]+)\s*-->\s*([0-9][0-9,]*|[a-z]+)")


def code_blocks(text: str) -> list[tuple[int, str, str]]:
    """Return (first line number, language, body) for each fenced or indented code block."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        fence = re.match(r"^(\s*)(```+|~~~+)\s*([\w-]*)", line)
        if fence:
            end = i + 1
            while end < len(lines) and not lines[end].strip().startswith(fence.group(2)):
                end += 1
            body = "\n".join(lines[i + 1 : end])
            blocks.append((i + 2, fence.group(3).lower(), body))
            i = end + 1
            continue
        after_blank = i == 0 or not lines[i - 1].strip()
        if line.startswith("    ") and line.strip() and after_blank and not _in_list(lines, i):
            end = i
            while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            body = "\n".join(x[4:] for x in lines[i:end])
            blocks.append((i + 1, "", body.rstrip()))
            i = end
            continue
        i += 1
    return blocks


def _in_list(lines: list[str], i: int) -> bool:
    """Whether an indented line continues a list item (not a code block)."""
    j = i - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    return j >= 0 and bool(re.match(r"^\s*([-*+]|\d+\.)\s", lines[j]))


def commands(body: str) -> list[str]:
    """Return the shell commands of a block: continuation lines joined, comments dropped."""
    out, pending = [], ""
    for raw in body.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        if line.strip() and not line.lstrip().startswith("#"):
            out.append(line.strip())
    return out


def substitutions(command: str) -> tuple[str, list[str]]:
    """Take out each `$( ... )`, returning the command with a placeholder and what was inside."""
    inner, out, i = [], [], 0
    while i < len(command):
        if command.startswith("$(", i):
            depth, j = 1, i + 2
            while j < len(command) and depth:
                depth += {"(": 1, ")": -1}.get(command[j], 0)
                j += 1
            inner.append(command[i + 2 : j - 1])
            out.append("SUBSTITUTED")
            i = j
            continue
        out.append(command[i])
        i += 1
    return "".join(out), inner


def simple_commands(command: str) -> list[list[str]]:
    """Split a command line into simple commands (at |, ;, &&, ||, &), redirections dropped."""
    command, inner = substitutions(command)
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    tokens = list(lexer)
    parts, current, skip = [], [], False
    for token in tokens:
        if skip:
            skip = False
            continue
        if token in {"|", "||", "&&", ";", "&", "(", ")"}:
            parts.append(current)
            current = []
        elif token in {">", ">>", "<", "2>", "&>"}:
            skip = True
        else:
            current.append(token)
    parts.append(current)
    for sub in inner:
        parts.extend(simple_commands(sub))
    return [p for p in parts if p]


@cache
def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([a-z][\w-]*):", text, flags=re.MULTILINE))


def unbracket(args: list[str]) -> list[str]:
    """`[--agent A --agent-version V]` (an optional part): the part as if given; `ID ...` (more
    of the same): one."""
    return [a.lstrip("[").rstrip("]") for a in args if a.strip("[]") not in ("", "...")]


def check_manage(args: list[str]) -> str | None:
    if not args:
        return "manage.py without a command"
    name, rest = args[0], unbracket(args[1:])
    app = get_commands().get(name)
    if app is None:
        return f"no management command {name!r}"
    parser = load_command_class(app, name).create_parser("manage.py", name)
    try:
        parser.parse_args(rest)
    except (CommandError, SystemExit) as exc:
        return f"manage.py {name} {' '.join(rest)}: {exc}"
    return None


def check_python(args: list[str]) -> str | None:
    if not args:
        return None
    first = args[0]
    if first in ("manage.py", "./manage.py"):
        return check_manage(args[1:])
    if first == "-m":
        import importlib.util

        return None if importlib.util.find_spec(args[1]) else f"no module {args[1]!r}"
    if first == "-c":
        return None
    if first.endswith(".py"):
        return None if (ROOT / first).is_file() else f"no script {first!r} in the repository"
    return f"python {first}: say what it runs"


def check_curl(args: list[str]) -> str | None:
    method, content_type, has_data, url = None, None, False, None
    i = 0
    while i < len(args):
        arg = args[i]
        value = args[i + 1] if i + 1 < len(args) else ""
        if arg == "-X":
            method, i = value.upper(), i + 2
            continue
        if arg in ("-H", "--header"):
            name, _, header = value.partition(":")
            if name.strip().lower() == "content-type":
                content_type = header.strip()
            i += 2
            continue
        if arg in DATA_FLAGS or arg == "-F":
            has_data = True
            content_type = content_type or (
                "multipart/form-data" if arg == "-F" else "application/x-www-form-urlencoded"
            )
            i += 2
            continue
        if arg.startswith(("http://", "https://", "/api/")):
            url = arg
        i += 1
    if url is None:
        return "curl without a URL"
    path = urlsplit(url).path
    path = re.sub(r"\{[^}]+\}", "1", path)
    try:
        match = resolve(path)
    except Resolver404:
        return f"{url}: no such URL"
    method = method or ("POST" if has_data else "GET")
    func = match.func
    cls = getattr(func, "cls", None)
    if cls is None:
        return None  # a page: its methods are checked by tests/core/test_access.py
    actions = getattr(func, "actions", None)
    if actions is not None and method.lower() not in actions:
        return f"{method} {path}: not answered (only {sorted(actions)})"
    if actions is None and not hasattr(cls, method.lower()):
        return f"{method} {path}: not answered"
    if has_data:
        parsers = getattr(func, "initkwargs", {}).get("parser_classes") or cls.parser_classes
        types = [p.media_type for p in parsers]
        if not any(_media_matches(t, content_type) for t in types):
            return f"{method} {path} with {content_type}: a 415 (it takes {', '.join(types)})"
    return None


def _media_matches(accepted: str, given: str) -> bool:
    given = given.split(";")[0].strip().lower()
    accepted = accepted.split(";")[0].strip().lower()
    return (
        accepted == given
        or accepted == "*/*"
        or accepted.endswith("/*")
        and given.startswith(accepted[:-1])
    )


def check_command(words: list[str]) -> str | None:
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words = words[1:]  # VAR=value before the program
    if not words:
        return None
    program, args = words[0], words[1:]
    if program in ("python", "python3", ".venv/bin/python", "$(BIN)/python"):
        return check_python(args)
    if program in ("manage.py", "./manage.py"):
        return check_manage(args)
    if program == "make":
        targets = [a for a in args if "=" not in a and not a.startswith("-")]
        missing = [t for t in targets if t not in make_targets()]
        return f"no make target {missing}" if missing else None
    if program == "curl":
        return check_curl(args)
    if program in TOOLS or program == "SUBSTITUTED":
        return None
    if program.endswith(".py"):
        return None if (ROOT / program).is_file() else f"no script {program!r}"
    return f"{program!r}: not a command the docs may name (add it to TOOLS if it is real)"


def shell_commands():
    for doc in DOCS:
        for line, lang, body in code_blocks(doc.read_text(encoding="utf-8")):
            if lang in SHELL_LANGS:
                for command in commands(body):
                    yield doc, line, command


def test_the_walk_finds_commands_in_every_kind_of_block():
    text = (
        "x\n\n    python manage.py gate --gate a \\\n        --candidate b\n\n"
        "```yaml\nrules: []\n```\n```sh\nmake run  # serve\n```\n- a list\n\n    continued item\n"
    )
    found = [(lang, commands(body)) for _, lang, body in code_blocks(text)]
    assert found == [
        ("", ["python manage.py gate --gate a      --candidate b"]),
        ("yaml", ["rules: []"]),
        ("sh", ["make run  # serve"]),
    ]
    assert simple_commands('T=$(date +%s); curl -d "$(cat f)" /api/v1/x/ | cut -d" " -f2') == [
        ["T=SUBSTITUTED"],
        ["curl", "-d", "SUBSTITUTED", "/api/v1/x/"],
        ["cut", "-d ", "-f2"],
        ["date", "+%s"],
        ["cat", "f"],
    ]


@pytest.mark.django_db
def test_the_checks_catch_what_drifted():
    promote = "http://127.0.0.1:8000/api/v1/rule-versions/17/promote/"
    assert "a 415" in check_command(["curl", "-X", "POST", "-d", "reason=x", promote])
    assert (
        check_command(
            ["curl", "-H", "Content-Type: application/json", "-d", '{"reason": "x"}', promote]
        )
        is None
    )
    assert "no such URL" in check_command(["curl", "http://127.0.0.1:8000/api/v1/nope/"])
    assert "not answered" in check_command(["curl", "-X", "DELETE", promote])
    assert "no management command" in check_command(["python", "manage.py", "import_everything"])
    assert "unrecognized arguments" in check_command(
        ["python", "manage.py", "gate", "--gate", "g", "--candidate", "c", "--colour", "red"]
    )
    assert check_command(["python", "manage.py", "calibration", "[--judge", "NAME]"]) is None
    assert "no make target" in check_command(["make", "deploy"])
    assert "no script" in check_command(["python", "bench/nothing.py"])
    assert "not a command" in check_command(["frobnicate", "--now"])


@pytest.mark.django_db
def test_every_command_in_the_readme_and_docs_is_real():
    wrong, seen = [], 0
    for doc, line, command in shell_commands():
        try:
            parts = simple_commands(command)
        except ValueError as exc:
            wrong.append(f"{doc.name}:{line}: does not parse ({exc}): {command}")
            continue
        for words in parts:
            seen += 1
            problem = check_command(words)
            if problem:
                wrong.append(f"{doc.relative_to(ROOT)} (block at line {line}): {problem}")
    assert seen > 50  # the walk found the docs' commands
    assert not wrong, "\n".join(wrong)


def test_every_relative_link_points_at_a_file_of_the_repository():
    wrong = []
    for doc in DOCS:
        for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            if not (doc.parent / target.split("#")[0]).exists():
                wrong.append(f"{doc.relative_to(ROOT)}: {target}")
    assert not wrong, wrong


def test_nothing_cites_a_design_file_outside_the_repository():
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    citing = []
    for name in tracked:
        path = ROOT / name
        if path.suffix in {".py", ".md", ".html", ".yaml", ".yml", ".txt", ".toml"} and (
            path.is_file() and "DESIGN.md" in path.read_text(encoding="utf-8", errors="ignore")
        ):
            citing.append(name)
    assert citing == [str(Path(__file__).relative_to(ROOT))], citing  # this file looks for it


def demo_figures() -> dict[str, int]:
    """The figures the docs may quote about the demo, measured on the loaded demo."""
    from django.utils import timezone

    from console.demo import demo_counts
    from console.demo_data import DEMO_AGENT, DEMO_DIR, demo_truth
    from evals.catalog.models import AgentVersion, Transcript
    from evals.gating.models import GoldenSet
    from evals.judging.models import Verdict
    from evals.rules.models import Rule
    from labeling.models import DailySample, IssueRow

    counts = demo_counts()
    truth = demo_truth(DEMO_DIR)
    archive = Transcript.objects.filter(
        agent_version__agent__name=DEMO_AGENT, external_id__in=truth["archive"]["calls"]
    ).count()
    golden = GoldenSet.objects.order_by("name", "-version").first()
    return {
        "calls": counts["calls"],
        "recorded_calls": counts["calls_with_audio"],
        "rules": counts["rules"],
        "safety_rules": counts["safety_rules"],
        "signal_rules": sum(1 for r in Rule.objects.filter(group="signals") if r.detector),
        "classifier_rules": sum(1 for r in Rule.objects.filter(group="classifiers") if r.detector),
        "week_calls": counts["calls"] - archive,
        "archive_calls": archive,
        "agent_versions": AgentVersion.objects.filter(agent__name=DEMO_AGENT).count(),
        "judge_verdicts": Verdict.objects.filter(
            transcript__agent_version__agent__name=DEMO_AGENT, judge__name=truth["judge"]
        ).count(),
        "golden_scenarios": golden.members.count() if golden else 0,
        "sample_size": DailySample.objects.get(day=timezone.localdate()).size,
        "issue_rows": IssueRow.objects.count(),
        "new_issue_rows": IssueRow.objects.filter(status=IssueRow.Status.NEW).count(),
    }


def marked_figures() -> list[tuple[str, str, int]]:
    """(doc, name, value) for every `<!--demo:NAME-->` figure in README.md and docs/."""
    found = []
    for doc in DOCS:
        for name, shown in MARK.findall(doc.read_text(encoding="utf-8")):
            value = WORDS.index(shown) if shown in WORDS else int(shown.replace(",", ""))
            found.append((str(doc.relative_to(ROOT)), name, value))
    return found


@pytest.mark.django_db
def test_the_demo_figures_the_docs_quote_come_from_the_demo():
    marked = marked_figures()
    assert len({name for _, name, _ in marked}) >= 6  # the docs mark their figures
    call_command("load_demo", stdout=StringIO())
    measured = demo_figures()
    wrong = [
        f"{doc}: {name} is {value}, the demo has {measured.get(name, 'no such figure')}"
        for doc, name, value in marked
        if measured.get(name) != value
    ]
    assert not wrong, "\n".join(wrong)
