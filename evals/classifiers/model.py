"""The injection guard's learned part: a hashed word n-gram logistic model, pure Python.

The weights (`injection_model.bin`, signed bytes, one per hash bucket) and their scale, bias and
thresholds (`injection_model.json`) sit beside this module and load once, from the repository;
bench/injection_model_train.py rebuilds both from public data. `model_score(norm)` takes text as
`patterns.normalise` returns it and answers the model's probability that it is an injection: the
highest over the whole text and over windows of it, so an instruction planted in a long
document is scored on its own words rather than diluted by the document's. Any failure to load
answers None (the layer then runs on its patterns alone: fail open).

A second model of the same shape (`injection_sentences.{bin,json}`) scores sentences one at a
time: `sentences_score(units)` answers the highest probability that one sentence or line of a
document, a tool result or a text handed over to be worked on is a request aimed at an
assistant ("Write a script to rename all files" in an email). It was fitted on requests as
positives and the sentences of benign documents as negatives, so it sees an order to the model
where the whole-text model sees a document.
"""

import hashlib
import json
import math
import re
import zlib
from array import array
from functools import lru_cache
from itertools import accumulate
from operator import add
from pathlib import Path

HERE = Path(__file__).resolve().parent
WEIGHTS, META = HERE / "injection_model.bin", HERE / "injection_model.json"
SENTENCE_WEIGHTS = HERE / "injection_sentences.bin"
SENTENCE_META = HERE / "injection_sentences.json"
# Put before each sentence, so a sentence's first word is a bigram of its own ("^ write" is a
# request, "i will write" a report of one).
SENTENCE_START = "^ "

BITS = 20
MASK = (1 << BITS) - 1
WINDOW, STRIDE = 40, 20  # tokens
LONG_TOKEN = 20
MAX_TOKENS = 20_000  # beyond this the text is scored on its first and last halves of it
CACHE_SIZE = 1 << 16  # raw tokens whose hash and weight are kept
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[^\w\s]{1,4}")
_MIX = 0x9E3779B1


@lru_cache(maxsize=1 << 16)
def _hash(token: str) -> int:
    return zlib.crc32(token.encode())


@lru_cache(maxsize=1 << 16)
def _token_hash(raw: str) -> int:
    """The hash of a raw token as `tokens` spells it (numbers and long runs by their class)."""
    return _hash("<num>" if raw.isdigit() else "<long>" if len(raw) > LONG_TOKEN else raw)


def tokens(norm: str) -> list[str]:
    """The model's tokens: words (with an apostrophe suffix) and short punctuation runs; numbers
    and long runs (ids, base64, hashes) become one token each, since their spelling says nothing."""
    toks = [
        "<num>" if t.isdigit() else "<long>" if len(t) > LONG_TOKEN else t
        for t in _TOKEN.findall(norm)
    ]
    if len(toks) > MAX_TOKENS:
        half = MAX_TOKENS // 2
        toks = toks[:half] + toks[-half:]
    return toks


def token_features(norm: str) -> list[tuple[int, ...]]:
    """Return, per token, the hash buckets it adds: its unigram, and its bigram with the token
    before it. Training and scoring share this, so they cannot drift apart."""
    out, prev = [], None
    for t in tokens(norm):
        h = _hash(t)
        out.append((h & MASK,) if prev is None else (h & MASK, ((prev * _MIX) ^ h) & MASK))
        prev = h
    return out


def spans(n: int) -> list[tuple[int, int]]:
    """The token spans scored: the whole text, and windows over it when it is longer than one."""
    if n <= WINDOW:
        return [(0, n)]
    starts = range(0, n - WINDOW + STRIDE, STRIDE)
    return [(0, n), *((s, min(s + WINDOW, n)) for s in starts)]


class _Cache(dict):
    """A dict that computes a missing raw token's value once (read through `map(c.__getitem__)`,
    which costs a C lookup a token); it starts afresh past CACHE_SIZE tokens."""

    def __init__(self, f):
        self.f = f

    def __missing__(self, raw: str):
        if len(self) >= CACHE_SIZE:
            self.clear()
        v = self[raw] = self.f(raw)
        return v


class Model:
    def __init__(self, weights: array, meta: dict):
        self.w = weights
        self.scale = float(meta["scale"])
        self.bias = float(meta["bias"])
        self.meta = meta
        # Per raw token: its unigram's weight, and its hash times the bigram mixer.
        self._unigram = _Cache(lambda raw: weights[_token_hash(raw) & MASK])
        self._hash = _Cache(_token_hash)
        self._mixed = _Cache(lambda raw: _token_hash(raw) * _MIX)

    def probability(self, norm: str) -> float:
        w, mask = self.w, MASK
        raw = _TOKEN.findall(norm)
        if len(raw) > MAX_TOKENS:
            half = MAX_TOKENS // 2
            raw = raw[:half] + raw[-half:]
        if not raw:
            return 0.0
        # Token i adds its unigram, and (after the first) its bigram with the token before it.
        unigrams = list(map(self._unigram.__getitem__, raw))
        mixed, hs = map(self._mixed.__getitem__, raw), map(self._hash.__getitem__, raw[1:])
        bigrams = [w[(p ^ h) & mask] for p, h in zip(mixed, hs)]
        prefix = [0, *accumulate(map(add, unigrams, [0, *bigrams]))]
        n = len(prefix) - 1
        if not n:
            return 0.0
        # Token i adds one feature when it is the first, two after (its unigram and bigram).
        best = -math.inf
        for a, b in spans(n):
            k = 2 * (b - a) - (a == 0)
            best = max(best, (prefix[b] - prefix[a]) / math.sqrt(k))
        z = best * self.scale + self.bias
        return 1.0 / (1.0 + math.exp(-z)) if z > -50 else 0.0


@lru_cache(maxsize=2)
def _load(weights_path: Path, meta_path: Path) -> Model | None:
    try:
        meta = json.loads(meta_path.read_text())
        weights = array("b")
        weights.frombytes(weights_path.read_bytes())
        if meta.get("bits") != BITS or len(weights) != 1 << BITS:
            return None
        if hashlib.sha256(weights.tobytes()).hexdigest() != meta.get("weights_sha256"):
            return None
        return Model(weights, meta)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def load() -> Model | None:
    """Return the committed model, or None when it is missing or does not match its metadata."""
    return _load(WEIGHTS, META)


def load_sentences() -> Model | None:
    """Return the committed sentence model, or None (as `load`)."""
    return _load(SENTENCE_WEIGHTS, SENTENCE_META)


def model_score(norm: str) -> float | None:
    """Return the model's probability that normalised text is an injection, or None when the
    model is unavailable or fails (fail open)."""
    try:
        m = load()
        return None if m is None else m.probability(norm)
    except Exception:  # noqa: BLE001  (a broken model never breaks the guard)
        return None


def sentences_score(units: list[str]) -> float | None:
    """Return the sentence model's highest probability over normalised sentences or lines, or
    None when it is unavailable or fails (fail open)."""
    try:
        m = load_sentences()
        if m is None:
            return None
        return max((m.probability(SENTENCE_START + u) for u in units), default=0.0)
    except Exception:  # noqa: BLE001
        return None


def _threshold(m: Model | None, source: str, default: str) -> float:
    if m is None:
        return 1.01
    th = m.meta.get("thresholds", {})
    return float(th.get(source, th.get(default, 0.9)))


def threshold(source: str) -> float:
    """The probability at and above which the model flags an input from this source."""
    return _threshold(load(), source, "user")


def sentence_threshold(source: str) -> float:
    """The probability at and above which the sentence model flags a sentence from this source:
    `document`, `tool`, or `embedded` (a text a user hands over to be translated, summarised)."""
    return _threshold(load_sentences(), source, "document")
