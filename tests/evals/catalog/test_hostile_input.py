"""Input built to burn CPU or crash a parser: a clean error naming the line and field, on the
command line and over HTTP alike (issue 10). Timings of the same inputs: bench/hostile_input.py."""

import base64
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from core import parsing
from core.importing import ImportFailed
from evals.catalog.models import Transcript
from evals.catalog.services.importing import transcripts_import
from evals.judging.models import Verdict
from evals.judging.services.importing import verdicts_import
from evals.rules.importing import rules_import
from evals.rules.models import Rule
from tests.evals.import_helpers import ALIAS_BOMB, RULES_YAML, call

pytestmark = pytest.mark.django_db

NDJSON = "application/x-ndjson"

DEEP_JSON = "[" * 100_000 + "]" * 100_000
DEEP_YAML = "rules:\n  - id: a.b\n    detector: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n"


def first_error(excinfo) -> str:
    return str(excinfo.value).splitlines()[0]


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


def api(client, path, body, content_type=NDJSON):
    return client.post(f"/api/v1/{path}", data=body, content_type=content_type)


# --- the parsing home --------------------------------------------------------------------------


def test_alias_bomb_stops_at_the_alias_that_overflows():
    with pytest.raises(parsing.ParseProblem) as excinfo:
        parsing.yaml_document(ALIAS_BOMB)
    assert (excinfo.value.line, excinfo.value.field) == (6, "yaml")
    assert "expands to more than 200,000 values" in excinfo.value.reason


def test_benign_aliases_still_load():
    data, _ = parsing.yaml_document("base: &b {max: 3}\ngates: [{m: *b}, {m: *b}]\n")
    assert data["gates"] == [{"m": {"max": 3}}, {"m": {"max": 3}}]


@pytest.mark.parametrize(
    ("text", "line", "field", "reason"),
    [
        ('a:\n  b: 1\n  c: "x\\0y"\n', 3, "a.c", "contains a NUL character"),
        ("a: [1, .inf]\n", 1, "a[1]", "inf is not a finite number"),
        ("a:\n  - 1\n  - " + "9" * 30 + "\n", 3, "a[1]", "a whole number beyond 64 bits"),
        ("a:\n  b: " + "9" * 5000 + "\n", 2, "yaml", "not valid YAML: a whole number beyond 64"),
        ("a: [" * 70 + "]" * 70, 1, "yaml", "nested deeper than 64 levels"),
    ],
)
def test_yaml_values_that_cannot_be_stored_name_their_line_and_path(text, line, field, reason):
    with pytest.raises(parsing.ParseProblem) as excinfo:
        parsing.yaml_document(text)
    assert (excinfo.value.line, excinfo.value.field) == (line, field)
    assert excinfo.value.reason.startswith(reason)


def test_json_values_are_walked_without_recursion():
    deep = "[" * 1000 + "]" * 1000  # within orjson's limit, beyond Python's recursion limit
    with pytest.raises(parsing.ParseProblem, match="nested deeper than 64 levels"):
        parsing.json_value(deep)
    with pytest.raises(parsing.ParseProblem, match="depth limit exceeded"):
        parsing.json_value(DEEP_JSON)
    assert parsing.json_value('{"a": ' * 60 + "1" + "}" * 60)


def test_bad_utf8_names_line_and_column():
    with pytest.raises(parsing.ParseProblem) as excinfo:
        parsing.utf8(b"rules:\n  - id: a\xe9b\n")
    assert (excinfo.value.line, excinfo.value.field) == (2, "encoding")
    assert excinfo.value.reason == "not UTF-8: byte 0xe9 at column 10"


# --- rules: the command line and the API give the same error -----------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (ALIAS_BOMB, ":6: yaml: expands to more than 200,000 values"),
        (DEEP_JSON, ":1: json: not valid JSON: depth limit exceeded"),
        (DEEP_YAML, ":3: yaml: nested deeper than 64 levels"),
        ('rules:\n  - id: a.b\n    text: "x\\0"\n', ":3: rules[0].text: contains a NUL"),
        (b"rules:\n  - id: a.b\n    text: caf\xe9\n", ":3: encoding: not UTF-8: byte 0xe9"),
    ],
    ids=["alias-bomb", "deep-json", "deep-yaml", "nul", "latin-1"],
)
def test_hostile_rules_fail_cleanly_on_cli_and_api(tmp_path, client, engineer, text, expected):
    path = write(tmp_path, "rules.yaml", text)
    with pytest.raises(CommandError) as excinfo:
        call_command("import_rules", path)
    assert str(excinfo.value).splitlines()[1].startswith(path + expected)

    client.force_login(engineer)
    response = api(client, "rules/import/", text, content_type="application/yaml")
    assert response.status_code == 400, response.content
    assert response.json()["detail"].startswith("body" + expected)
    assert Rule.objects.count() == 0


def test_rules_file_over_its_limit(settings, tmp_path, client, engineer):
    settings.DOCKET_CONFIG_MAX_BYTES = 100
    with pytest.raises(ImportFailed) as excinfo:
        rules_import(text=RULES_YAML, source="r.yaml")
    assert first_error(excinfo) == (
        f"r.yaml:1: size: {len(RULES_YAML)} bytes, more than DOCKET_CONFIG_MAX_BYTES (100 bytes)"
    )
    client.force_login(engineer)
    response = api(client, "rules/import/", RULES_YAML, content_type="application/yaml")
    assert response.status_code == 413
    assert "DOCKET_CONFIG_MAX_BYTES (100 bytes)" in response.json()["detail"]


# --- gates -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (ALIAS_BOMB.replace("rules", "gates"), ":6: yaml: expands to more than"),
        ("gates:\n  - " + "[" * 80 + "]" * 80 + "\n", ":2: yaml: nested deeper than 64 levels"),
        ('gates:\n  - name: "a\\0"\n', ":2: gates[0].name: contains a NUL"),
        (b"gates: [{name: \xff}]\n", ":1: encoding: not UTF-8"),
    ],
    ids=["alias-bomb", "deep", "nul", "not-utf8"],
)
def test_hostile_gates_files_name_the_line(tmp_path, text, expected):
    path = write(tmp_path, "gates.yaml", text)
    with pytest.raises(CommandError) as excinfo:
        call_command("import_gates", path)
    assert str(excinfo.value).startswith(path + expected)


# --- transcripts -------------------------------------------------------------------------------


def test_transcript_lines_that_cannot_be_stored_name_line_and_field(settings):
    settings.DOCKET_IMPORT_MAX_TURNS = 2
    nested = {"a": 1}
    for _ in range(80):
        nested = {"a": nested}
    lines = [
        call("call-1").encode(),
        call("call-2", metadata=nested).encode(),
        call("call-3", metadata={"n": 2**64 - 1}).encode(),
        call("call-4").encode().replace(b"Hi Dana", b"Hi \xffana"),
        b'{"id": "call-5", "turns": ' + b"[" * 2000 + b"]" * 2000 + b"}",
        call("call-6", turns=[{"speaker": "agent", "text": "x"}] * 3).encode(),
    ]
    with pytest.raises(ImportFailed) as excinfo:
        transcripts_import(lines=lines, source="calls.jsonl")
    reported = str(excinfo.value).splitlines()
    assert reported[0].startswith(
        "calls.jsonl:1: turns: 3 turns, more than DOCKET_IMPORT_MAX_TURNS"
    )
    assert reported[1].startswith("calls.jsonl:2: metadata.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a....a.a")
    assert reported[1].endswith(": nested deeper than 64 levels")
    assert reported[2] == "calls.jsonl:3: metadata.n: a whole number beyond 64 bits"
    assert reported[3].startswith("calls.jsonl:4: encoding: not UTF-8: byte 0xff")
    assert reported[4] == "calls.jsonl:5: json: not valid JSON: depth limit exceeded"
    assert Transcript.objects.count() == 0


def test_transcript_line_and_array_limits_name_their_settings(settings):
    settings.DOCKET_IMPORT_MAX_LINE_BYTES = 200
    with pytest.raises(ImportFailed) as excinfo:
        transcripts_import(lines=[call("call-1")], source="calls.jsonl")
    assert first_error(excinfo).startswith("calls.jsonl:1: line: ")
    assert first_error(excinfo).endswith("bytes, longer than DOCKET_IMPORT_MAX_LINE_BYTES (200)")

    settings.DOCKET_IMPORT_MAX_BYTES = 500
    array = json.dumps([json.loads(call("call-1")), json.loads(call("call-2"))], indent=1)
    with pytest.raises(ImportFailed) as excinfo:
        transcripts_import(lines=array.splitlines(keepends=True), source="calls.json")
    assert "calls.json:1: size: " in first_error(excinfo)
    assert first_error(excinfo).endswith("more than DOCKET_IMPORT_MAX_BYTES (500 bytes)")


def test_json_array_items_are_checked_one_by_one():
    items = [json.loads(call("call-1")), json.loads(call("call-2", metadata={"x": "a\x00b"}))]
    with pytest.raises(ImportFailed) as excinfo:
        transcripts_import(lines=[json.dumps(items)], source="calls.json")
    assert first_error(excinfo) == (
        "calls.json:item 2: metadata.x: contains a NUL character (\\u0000), which cannot be stored"
    )


# --- verdicts ----------------------------------------------------------------------------------


def test_verdict_numbers_beyond_their_columns_are_errors_not_database_errors():
    rules_import(text=RULES_YAML)
    transcripts_import(lines=[call("call-1")])
    base = {"transcript": "call-1", "rule": "opening.greet-by-name", "judge": "gpt-4o/v1"}
    lines = [
        json.dumps({**base, "rule_version": 1e300, "flagged": False}),
        json.dumps({**base, "rule_version": 1, "flagged": True, "turn": 2**40}),
        json.dumps({**base, "rule_version": 1, "flagged": True, "turns": [0, 2**31]}),
        json.dumps({**base, "rule_version": 1, "flagged": False, "rationale": "a\x00"}),
        '{"transcript": "call-1", "rule": "caf\xe9"}'.encode("latin-1"),
    ]
    with pytest.raises(ImportFailed) as excinfo:
        verdicts_import(lines=lines, source="v.jsonl")
    reported = str(excinfo.value).splitlines()
    assert reported[0].startswith("v.jsonl:1: rule_version: must be a version number")
    assert reported[1].startswith("v.jsonl:2: turn: must be a turn index")
    assert reported[2].startswith("v.jsonl:3: turns[1]: must be a turn index")
    assert reported[3].startswith("v.jsonl:4: rationale: contains a NUL character")
    assert reported[4] == "v.jsonl:5: encoding: not UTF-8: byte 0xe9 at column 38"
    assert Verdict.objects.count() == 0


# --- bodies over HTTP --------------------------------------------------------------------------


def test_import_bodies_over_their_limit_answer_413_naming_it(settings, client, engineer):
    settings.DOCKET_IMPORT_MAX_BYTES = 1000
    client.force_login(engineer)
    body = "\n".join([call("call-1"), call("call-2"), call("call-3")])
    for path in ("transcripts/import/", "verdicts/import/"):
        response = api(client, path, body)
        assert response.status_code == 413, response.content
        assert response.json()["detail"] == (
            "The request body is larger than DOCKET_IMPORT_MAX_BYTES (1,000 bytes)."
        )
    assert Transcript.objects.count() == 0


def test_json_bodies_are_bounded_in_size_and_depth(settings, client, reviewer):
    client.force_login(reviewer)
    deep = api(client, "marks/", '{"verdict": ' + "[" * 5000 + "]" * 5000 + "}", "application/json")
    assert deep.status_code == 400
    assert "depth limit exceeded" in deep.json()["detail"]
    nested = '{"verdict": 1, "note": ' + "[" * 70 + "]" * 70 + "}"
    assert (
        "nested deeper than 64 levels"
        in api(client, "marks/", nested, "application/json").json()["detail"]
    )
    nul = api(client, "marks/", '{"verdict": 1, "note": "a\\u0000"}', "application/json")
    assert nul.status_code == 400 and "note: contains a NUL" in nul.json()["detail"]

    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    big = api(client, "marks/", json.dumps({"verdict": 1, "note": "x" * 200}), "application/json")
    assert big.status_code == 413
    assert "DATA_UPLOAD_MAX_MEMORY_SIZE (100 bytes)" in big.json()["detail"]


# --- stored text and tokens that are parsed again later ----------------------------------------


def test_a_tool_turn_holding_deep_json_still_shows_its_call_page(client, reviewer):
    deep = "[" * 5000 + "]" * 5000
    turns = [
        {"speaker": "agent", "text": "Looking it up."},
        {"speaker": "tool", "text": deep, "tool_call_id": "c1"},
    ]
    transcripts_import(lines=[call("call-1", turns=turns)])
    client.force_login(reviewer)
    response = client.get(reverse("transcript-detail", args=["call-1"]))
    assert response.status_code == 200
    assert "[[[[[[[[" in response.content.decode()  # shown as it is, not pretty-printed


def test_a_forged_deep_or_huge_issue_sheet_cursor_is_a_clear_error():
    from labeling.selectors import issue_rows as sel

    for forged in (b"[" * 3000 + b"]" * 3000, b"[18446744073709551615, 1]"):
        cursor = base64.urlsafe_b64encode(forged).decode().rstrip("=")
        with pytest.raises(sel.IssueRowFilterError) as excinfo:
            sel.issue_sheet_page(filters=sel.SheetFilters(), after=cursor)
        assert excinfo.value.field == "after"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"r": ' * 100 + "1" + "}" * 100, "answer is not usable JSON (r.r.r."),
        ('{"r": {"reason": "a\\u0000b"}}', "answer is not usable JSON (r.reason: contains a NUL"),
    ],
    ids=["deep", "nul"],
)
def test_a_judge_answer_too_deep_or_holding_nul_is_an_invalid_answer(content, reason):
    from evals.judging.prompt import AnswerInvalid, answer_schema, answer_validate

    with pytest.raises(AnswerInvalid) as excinfo:
        answer_validate(content, answer_schema(["r"], [0]))
    assert str(excinfo.value).startswith(reason)
