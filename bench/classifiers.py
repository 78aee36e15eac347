"""Benchmark: the runtime classifiers.

Part 1 (no database, no server): the injection guard's pattern layer over the committed corpus
(bench/corpus/injection.jsonl, sources in injection_sources.json). Prints turns per second, and
the detection and false-positive rates on the development split (the lines the heuristics were
written against) and on the held-out split (written after the heuristics were frozen, never
tuned on).

Part 2 (`--endpoint`): POST /api/v1/classify/{name}/ in-process against a throwaway SQLite
database, with the LLM pass off and on (a local fake chat-completions server answering at once,
then one that hangs past the budget). Prints p50/p95/max latency per case.

    .venv/bin/python bench/classifiers.py              # part 1
    .venv/bin/python bench/classifiers.py --endpoint   # parts 1 and 2
Options: BENCH_SECONDS (default 3) for part 1, BENCH_REQUESTS (default 200) for part 2.
"""

import json
import os
import sys
import time

import support

from evals.classifiers.patterns import pattern_check

CORPUS = support.ROOT / "bench" / "corpus" / "injection.jsonl"


def rates(rows: list[dict]) -> str:
    inj = [r for r in rows if r["label"] == "injection"]
    ben = [r for r in rows if r["label"] == "benign"]
    caught = sum(1 for r in inj if pattern_check(r["text"]).flagged)
    alarms = sum(1 for r in ben if pattern_check(r["text"]).flagged)
    right_cat = sum(
        1
        for r in inj
        if (res := pattern_check(r["text"])).flagged and res.category == r["category"]
    )
    return (
        f"detection {caught}/{len(inj)} = {caught / len(inj):.1%} "
        f"(category right on {right_cat}), "
        f"false positives {alarms}/{len(ben)} = {alarms / len(ben):.1%}"
    )


def patterns() -> None:
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    dev = [r for r in rows if r.get("split", "dev") == "dev"]
    hold = [r for r in rows if r.get("split") == "holdout"]
    print(f"corpus: {len(rows)} inputs ({len(dev)} development, {len(hold)} held out)")
    print(f"  development: {rates(dev)}")
    print(f"  held out:    {rates(hold)}")
    texts = [r["text"] for r in rows]
    short = [t for t in texts if len(t) < 300]
    seconds = float(os.environ.get("BENCH_SECONDS", "3"))
    for label, batch in (("all inputs", texts), ("short inputs (<300 chars)", short)):
        n, chars, start = 0, 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for t in batch:
                pattern_check(t)
            n += len(batch)
            chars += sum(map(len, batch))
        elapsed = time.perf_counter() - start
        print(
            f"  throughput, {label}: {n / elapsed:,.0f} turns/s "
            f"({chars / elapsed / 1e6:.1f} M chars/s, mean {chars / n:.0f} chars a turn)"
        )


if __name__ == "__main__":
    print("== pattern layer")
    patterns()
    if "--endpoint" in sys.argv:
        from classifiers_endpoint import endpoint

        print("== endpoint")
        endpoint()
