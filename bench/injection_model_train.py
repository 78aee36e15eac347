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

`--sentences` fits the sentence model instead (evals/classifiers/injection_sentences.{bin,json}):
the same features and regression, one example a sentence, each after model.SENTENCE_START.
Positives are requests aimed at an assistant: the first line of the instructions planted in
the training documents, and of the training sources' requests (self-instruct, MT-bench,
CLINC150, GPTeacher's role-play and tool tasks, HarmBench's behaviours, Docket's written
attacks and trigger-word messages); negatives are the sentences and lines of the benign
training documents and tool results (`sentences` in patterns.py splits both alike) and
Docket's lines that speak to a document's reader. Its thresholds are cross-validated by source
too: for documents and tool results, the lowest at which it adds at most TARGET_FP["document"]
to the benign documents the rest of the layer already flags, averaged over sources; for the
text a user turn hands over to be worked on (`embedded`), the lowest at which it flags at most
TARGET_FP["document"] of the benign user turns that hand one over (pooled), among them
Docket's cues (TEXT_TASK_CUES) around sentences of Docket's documents and lines, scored by a
model fitted without those.
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
from injection_templates import BENIGN_DOCUMENT_LINES, BENIGN_READER_LINES, TEXT_TASK_CUES
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


def fold_models(xs: list[dict], ys: list[int], fold_of_example: list[int]):
    """Yield each fold and the quantised model fitted on the other folds' examples."""
    x, y, fold = matrix(xs), np.array(ys), np.array(fold_of_example)
    for k in range(FOLDS):
        w, scale, bias = quantise(fit(x[fold != k], y[fold != k]))
        yield k, M.Model(M.array("b", w.tobytes()), {"scale": scale, "bias": bias})


def out_of_source(rows: list[dict]) -> list[tuple[dict, float]]:
    """Score every row with a model fitted without its source (the quantised, windowed scorer).
    The features are computed once; each fold fits on the rows of the other folds' sources."""
    xs, ys, groups, _ = examples(rows)
    fold_of = folds(groups)
    scored = []
    for k, m in fold_models(xs, ys, [fold_of[g] for g in groups]):
        scored += [
            (r, m.probability(normalise(r["text"]))) for r in rows if fold_of[r["source"]] == k
        ]
    return scored


def rule_flags(rows: list[dict], keep_model: bool = False) -> list[bool]:
    """Whether the heuristics alone (the models switched off; the whole-text model kept when
    asked) flag each row, on its channel."""
    real, real_sentences = P.model.model_score, P.model.sentences_score
    if not keep_model:
        P.model.model_score = lambda norm: None
    P.model.sentences_score = lambda units: None
    try:
        return [P.pattern_check(r["text"], source=r["channel"]).flagged for r in rows]
    finally:
        P.model.model_score, P.model.sentences_score = real, real_sentences


# ---- the sentence model -------------------------------------------------------------------

REQUEST_SOURCES = {
    "gpteacher-codegen",
    "self-instruct",
    "mt-bench",
    "clinc150",
    "gpteacher-roleplay",
    "gpteacher-toolformer",
    "harmbench",
    "docket-written",
}
MAX_SENTENCES_A_DOC = 40


def sentence_examples(rows: list[dict]) -> tuple[list[dict], list[int], list[str]]:
    """The sentence model's examples: (features, label, source group)."""
    rng = np.random.default_rng(28)
    xs, ys, groups = [], [], []

    def add(unit: str, y: int, source: str) -> None:
        v = vector(M.SENTENCE_START + unit)
        if v:
            xs.append(v)
            ys.append(y)
            groups.append(source)

    def first_line(text: str) -> str:
        return normalise(next((x for x in text.splitlines() if x.strip()), ""))

    for r in rows:
        if r.get("planted"):
            add(first_line(r["planted"]), 1, r["source"])
        elif r["channel"] == "user" and r["source"] in REQUEST_SOURCES:
            add(first_line(r["text"]), 1, r["source"])
        elif r["channel"] != "user" and r["label"] == "benign":
            units = P.sentences(r["text"])
            if len(units) > MAX_SENTENCES_A_DOC:
                units = [units[i] for i in rng.choice(len(units), MAX_SENTENCES_A_DOC, False)]
            for u in units:
                add(u, 0, r["source"])
    for line in BENIGN_READER_LINES:
        add(normalise(line), 0, "docket-reader-lines")
    return xs, ys, groups


def sentence_units(r: dict) -> list[str]:
    if r["channel"] == "user":
        return P.embedded_text(r["text"])
    norm = normalise(r["text"])
    values = P._json_strings(r["text"], norm, r["channel"])
    return P.sentences(r["text"] if values is None else values)


def embedded_rows(rows: list[dict]) -> list[dict]:
    """User turns that hand over a text to be worked on (Docket's cues): with a sentence of a
    benign training document or a line a person is told (benign), or with a HarmBench behaviour
    (an injection). They are scored, never fitted on: what the embedded threshold is set on."""
    rng = np.random.default_rng(28)
    texts = [
        u
        for r in rows
        if r["source"] == "docket-documents" and r["label"] == "benign"
        for u in P.sentences(r["text"])[:2]
    ]
    texts = [texts[i] for i in rng.choice(len(texts), 400, False)]
    texts += BENIGN_DOCUMENT_LINES + BENIGN_READER_LINES
    goals = [r["text"] for r in rows if r["source"] == "harmbench"]
    return [
        {
            "text": TEXT_TASK_CUES[i % len(TEXT_TASK_CUES)].format(text=t),
            "label": label,
            "source": "docket-embedded",
            "channel": "user",
        }
        for label, texts_of in (("benign", texts), ("injection", goals))
        for i, t in enumerate(texts_of)
    ]


def out_of_source_sentences(rows: list[dict]) -> list[tuple[dict, float]]:
    """Every row's highest sentence score from a sentence model fitted without its source."""
    xs, ys, groups = sentence_examples(rows)
    fold_of = folds(groups + [r["source"] for r in rows])
    # Docket's embedded turns are made of Docket's document sentences and lines: scored by a
    # model fitted without any of them.
    for g in ("docket-embedded", "docket-reader-lines"):
        fold_of[g] = fold_of["docket-documents"]
    scored = []
    for k, m in fold_models(xs, ys, [fold_of[g] for g in groups]):
        for r in rows:
            if fold_of[r["source"]] == k:
                units = [M.SENTENCE_START + u for u in sentence_units(r)]
                scored.append((r, max(map(m.probability, units), default=0.0)))
    return scored


def pick_sentence_thresholds(
    scored: list[tuple[dict, float]], flagged: list[bool]
) -> dict[str, float]:
    out = {}
    for channel, target in (
        ("document", TARGET_FP["document"]),
        ("embedded", TARGET_FP["document"]),
    ):
        pairs = [  # for embedded: the benign user turns that hand over a text, pooled
            ("cued" if channel == "embedded" else r["source"], p, f)
            for (r, p), f in zip(scored, flagged, strict=True)
            if r["label"] != "injection"
            and _channel(r) == ("user" if channel == "embedded" else channel)
            and (channel != "embedded" or P.embedded_text(r["text"]))
        ]
        by_source: dict[str, list[tuple[float, bool]]] = defaultdict(list)
        for source, p, f in pairs:
            by_source[source].append((p, f))
        candidates = sorted({round(p, 4) + 1e-4 for _, p, _ in pairs if MIN_T <= p <= MAX_T})
        candidates.append(MAX_T)
        for t in candidates:
            fp = np.mean([np.mean([p >= t and not f for p, f in v]) for v in by_source.values()])
            if fp <= target:
                out[channel] = round(t, 4)
                break
    out["tool"] = out["document"]
    return out


def train_sentences(rows: list[dict], check: bool) -> None:
    scored = out_of_source_sentences(rows + embedded_rows(rows))
    flagged = rule_flags([r for r, _ in scored], keep_model=True)
    thresholds = pick_sentence_thresholds(scored, flagged)
    print(f"sentence thresholds (cross-validated by source): {thresholds}")
    rates(scored, flagged, thresholds, ("sent.", "rest"), sentences=True)
    if check:
        return
    xs, ys, groups = sentence_examples(rows)
    trained_on = {g: groups.count(g) for g in set(groups)}
    write(M.SENTENCE_WEIGHTS, M.SENTENCE_META, xs, ys, thresholds, trained_on, positives=sum(ys))


def write(weights, meta_path, xs, ys, thresholds, trained_on, **more) -> None:
    """Fit on every example, quantise, and write the weights and their metadata."""
    w, scale, bias = quantise(fit(matrix(xs), ys))
    weights.write_bytes(w.tobytes())
    meta = {
        "bits": M.BITS,
        "scale": scale,
        "bias": bias,
        "thresholds": thresholds,
        **more,
        "c": C,
        "trained_on": dict(sorted(trained_on.items())),
        "examples": len(xs),
        "weights_sha256": hashlib.sha256(w.tobytes()).hexdigest(),
    }
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {weights.name} ({weights.stat().st_size:,} bytes) and {meta_path.name}")


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
    scored: list[tuple[dict, float]],
    rules: list[bool],
    thresholds: dict[str, float],
    names: tuple[str, str] = ("model", "rules"),
    sentences: bool = False,
) -> None:
    """The rates by label, source and channel: the model's, the rest of the layer's, both. For
    the sentence model a user turn is judged as embedded text, and shown when it flags any."""
    by: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for (r, p), rule in zip(scored, rules, strict=True):
        key = (r["label"], r["source"], r["channel"])
        where = "embedded" if sentences and r["channel"] == "user" else r["channel"]
        model_hit = p >= thresholds[where]
        by[key][0] += model_hit
        by[key][1] += rule
        by[key][2] += rule or model_hit
        by[key][3] += 1
    a, b = names
    print(f"  {'':10} {'source':34} {'channel':9} {a:>6} {b:>6} {'layer':>6}      n")
    for (label, source, channel), (km, kr, kl, n) in sorted(by.items()):
        if sentences and channel == "user" and not km:
            continue
        print(
            f"  {label:10} {source:34} {channel:9} {km / n:6.1%} {kr / n:6.1%} {kl / n:6.1%} {n:6}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dev", type=Path, default=DEV)
    ap.add_argument("--train", type=Path, default=TRAIN)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--sentences", action="store_true", help="fit the sentence model")
    args = ap.parse_args()
    hand = [r for r in load(HANDWRITTEN) if r.get("split", "dev") == "dev"]
    for r in hand:
        r["source"] = "handwritten"
    rows = load(args.dev) + hand + load(args.train)
    print(f"{len(rows)} training inputs from {len({r['source'] for r in rows})} sources")
    if args.sentences:
        return train_sentences(rows, args.check)
    rows = [r for r in rows if r.get("only") != "sentences"]
    scored = out_of_source(rows)
    rules = rule_flags([r for r, _ in scored])
    thresholds = pick_thresholds(scored, rules)
    print(f"thresholds (cross-validated by source): {thresholds}")
    rates(scored, rules, thresholds)
    if args.check:
        return
    xs, ys, _, _ = examples(rows)
    trained_on = {r["source"]: 0 for r in rows}
    for r in rows:
        trained_on[r["source"]] += 1
    write(M.WEIGHTS, M.META, xs, ys, thresholds, trained_on, window=[M.WINDOW, M.STRIDE])


if __name__ == "__main__":
    sys.exit(main())
