"""Rebuild the injection guard's model (evals/classifiers/injection_model.{bin,json}).

    .venv/bin/python bench/injection_corpus.py        # the training rows, into var/injection/
    .venv/bin/python bench/injection_model_train.py [--dev PATH] [--train PATH] [--check]

Fits an L2 logistic regression (scikit-learn, a dev dependency) on the hashed word unigrams and
bigrams of evals/classifiers/model.py, over the development corpus, the development split of
bench/corpus/injection.jsonl and the training rows bench/injection_corpus.py draws (never the
held-out corpus). Long benign texts add their windows as negatives, since the guard scores
windows; an instruction planted in a document adds itself as a positive. C (regularisation)
and the width (BITS in model.py) were chosen by the same cross-validation. The thresholds are
picked by cross-validation grouped by source: the sources are dealt into FOLDS folds and every
source is scored by a model fitted on the other folds only; per channel, the threshold is the
lowest probability at which the model adds at most TARGET_FP to the benign inputs the
heuristics already flag, averaged over sources. Weights are quantised to one signed byte a
bucket.
`--check` prints the cross-validated rates by source and writes nothing.
"""

import argparse
import hashlib
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import support
from injection_guard import DEV, HANDWRITTEN, load
from scipy.sparse import csr_matrix
from sklearn.linear_model import LogisticRegression

from evals.classifiers import model as M
from evals.classifiers import patterns as P
from evals.classifiers.patterns import normalise

TRAIN = support.ROOT / "var" / "injection" / "train.jsonl"
C = float(os.environ.get("INJECTION_C", "1.0"))
M.BITS = int(os.environ.get("INJECTION_BITS", M.BITS))  # to try a width; the runtime reads meta
M.MASK = (1 << M.BITS) - 1
TARGET_FP = {"user": 0.01, "document": 0.02}  # added by the model, mean over sources
MIN_T, MAX_T = 0.5, 0.999
MAX_WINDOWS = 12
FOLDS = 6


def vector(norm: str, a: int = 0, b: int | None = None) -> dict[int, float]:
    feats = M.token_features(norm)[a:b]
    k = sum(len(fs) for fs in feats)
    out: dict[int, float] = defaultdict(float)
    for fs in feats:
        for f in fs:
            out[f] += 1 / np.sqrt(k)
    return out


def examples(rows: list[dict]) -> tuple[list[dict], list[int], list[str], list[str]]:
    """Return the feature rows, labels, source groups and channels the model is fitted on."""
    xs, ys, groups, channels = [], [], [], []

    def add(v, y, r):
        if v:
            xs.append(v)
            ys.append(y)
            groups.append(r["source"])
            channels.append("user" if r["channel"] == "user" else "document")

    for r in rows:
        y = int(r["label"] == "injection")
        norm = normalise(r["text"])
        add(vector(norm), y, r)
        n = len(M.token_features(norm))
        if not y and n > M.WINDOW:
            for a, b in M.spans(n)[1 : MAX_WINDOWS + 1]:
                add(vector(norm, a, b), 0, r)
        if r.get("planted"):
            add(vector(normalise(r["planted"])), 1, r)
    return xs, ys, groups, channels


def matrix(xs: list[dict]) -> csr_matrix:
    indptr, indices, data = [0], [], []
    for v in xs:
        indices += v.keys()
        data += v.values()
        indptr.append(len(indices))
    return csr_matrix((data, indices, indptr), shape=(len(xs), 1 << M.BITS), dtype=np.float64)


def fit(x, y) -> LogisticRegression:
    clf = LogisticRegression(C=C, class_weight="balanced", max_iter=2000, solver="liblinear")
    return clf.fit(x, y)


def quantise(clf: LogisticRegression) -> tuple[np.ndarray, float, float]:
    w = clf.coef_[0]
    scale = float(np.abs(w).max() / 127)
    return np.round(w / scale).astype(np.int8), scale, float(clf.intercept_[0])


def folds(groups: list[str]) -> dict[str, int]:
    """Sources dealt into FOLDS folds, largest first, each to the fold with fewest rows so far:
    every source is scored by a model fitted on the other folds' sources only."""
    sizes: dict[str, int] = defaultdict(int)
    for g in groups:
        sizes[g] += 1
    load, out = [0] * FOLDS, {}
    for g in sorted(sizes, key=lambda g: (-sizes[g], g)):
        k = load.index(min(load))
        out[g] = k
        load[k] += sizes[g]
    return out


def out_of_source(rows: list[dict]) -> list[tuple[dict, float]]:
    """Score every row with a model fitted without its source (the quantised, windowed scorer).
    The features are computed once; each fold fits on the rows of the other folds' sources."""
    xs, ys, groups, _ = examples(rows)
    fold_of = folds(groups)
    x, y = matrix(xs), np.array(ys)
    fold = np.array([fold_of[g] for g in groups])
    scored = []
    for k in range(FOLDS):
        w, scale, bias = quantise(fit(x[fold != k], y[fold != k]))
        m = M.Model(M.array("b", w.tobytes()), {"scale": scale, "bias": bias})
        scored += [
            (r, m.probability(normalise(r["text"]))) for r in rows if fold_of[r["source"]] == k
        ]
    return scored


def rule_flags(rows: list[dict]) -> list[bool]:
    """Whether the heuristics alone (the model switched off) flag each row, on its channel."""
    real = P.model.model_score
    P.model.model_score = lambda norm: None
    try:
        return [P.pattern_check(r["text"], source=r["channel"]).flagged for r in rows]
    finally:
        P.model.model_score = real


def _channel(r: dict) -> str:
    return "user" if r["channel"] == "user" else "document"


def pick_thresholds(scored: list[tuple[dict, float]], rules: list[bool]) -> dict[str, float]:
    """Per channel, the lowest model threshold at which the model adds at most TARGET_FP to the
    share of out-of-source benign inputs the heuristics already flag, averaged over sources (so
    a large easy source cannot hide a small hard one)."""
    out = {}
    for channel, target in TARGET_FP.items():
        by_source: dict[str, list[tuple[float, bool]]] = defaultdict(list)
        for (r, p), rule in zip(scored, rules, strict=True):
            if r["label"] != "injection" and _channel(r) == channel:
                by_source[r["source"]].append((p, rule))

        def macro_fp(t: float, by_source=by_source) -> float:
            return float(
                np.mean(
                    [np.mean([p >= t and not rule for p, rule in v]) for v in by_source.values()]
                )
            )

        candidates = sorted({round(p, 4) + 1e-4 for v in by_source.values() for p, _ in v})
        candidates = [t for t in candidates if MIN_T <= t <= MAX_T] + [MAX_T]
        lo, hi = 0, len(candidates) - 1  # macro_fp falls as t rises: the first t that fits
        while lo < hi:
            mid = (lo + hi) // 2
            if macro_fp(candidates[mid]) <= target:
                hi = mid
            else:
                lo = mid + 1
        out[channel] = round(candidates[lo], 4)
    out["tool"] = out["document"]
    return out


def rates(
    scored: list[tuple[dict, float]], rules: list[bool], thresholds: dict[str, float]
) -> None:
    by: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for (r, p), rule in zip(scored, rules, strict=True):
        key = (r["label"], r["source"], r["channel"])
        model_hit = p >= thresholds[r["channel"]]
        by[key][0] += model_hit
        by[key][1] += rule
        by[key][2] += rule or model_hit
        by[key][3] += 1
    print(f"  {'':10} {'source':34} {'channel':9} {'model':>6} {'rules':>6} {'layer':>6}      n")
    for (label, source, channel), (km, kr, kl, n) in sorted(by.items()):
        print(
            f"  {label:10} {source:34} {channel:9} {km / n:6.1%} {kr / n:6.1%} {kl / n:6.1%} {n:6}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dev", type=Path, default=DEV)
    ap.add_argument("--train", type=Path, default=TRAIN)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    hand = [r for r in load(HANDWRITTEN) if r.get("split", "dev") == "dev"]
    for r in hand:
        r["source"] = "handwritten"
    rows = load(args.dev) + hand + load(args.train)
    print(f"{len(rows)} training inputs from {len({r['source'] for r in rows})} sources")
    scored = out_of_source(rows)
    rules = rule_flags([r for r, _ in scored])
    thresholds = pick_thresholds(scored, rules)
    print(f"thresholds (cross-validated by source): {thresholds}")
    rates(scored, rules, thresholds)
    if args.check:
        return
    xs, ys, _, _ = examples(rows)
    w, scale, bias = quantise(fit(matrix(xs), ys))
    M.WEIGHTS.write_bytes(w.tobytes())
    meta = {
        "bits": M.BITS,
        "scale": scale,
        "bias": bias,
        "thresholds": thresholds,
        "window": [M.WINDOW, M.STRIDE],
        "c": C,
        "trained_on": dict(sorted({r["source"]: 0 for r in rows}.items())),
        "examples": len(xs),
        "weights_sha256": hashlib.sha256(w.tobytes()).hexdigest(),
    }
    for r in rows:
        meta["trained_on"][r["source"]] += 1
    M.META.write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {M.WEIGHTS.name} ({M.WEIGHTS.stat().st_size:,} bytes) and {M.META.name}")


if __name__ == "__main__":
    sys.exit(main())
