"""The injection guard's static pattern layer: regex heuristics and a high-entropy detector.

Pure and fast: no Django, no network. `pattern_check(text)` returns a `PatternResult` whose score
(0-100) says how much the input looks like a prompt injection; it is flagged at `FLAG_AT` and
above. Its confidence is that of its verdict (the score when flagged, 100 - score when not), the
same meaning as the LLM judge's confidence. Hits name a category and a heuristic, never the text.

Categories: instruction_override, prompt_extraction, persona_switch, exfiltration, safety_bypass,
encoded_payload (instructions smuggled in base64 or hex, or a random-looking blob).
"""

import base64
import binascii
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

CATEGORIES = (
    "instruction_override",
    "prompt_extraction",
    "persona_switch",
    "exfiltration",
    "safety_bypass",
    "encoded_payload",
)
FLAG_AT = 50
STRONG, MEDIUM, WEAK = 90, 70, 35

_INSTR = (
    r"(?:instructions?|prompts?|rules|directions?|directives?|guidelines|guardrails|programming"
    r"|constraints|system message)"
)
_PRIOR = (
    r"(?:previous|prior|above|earlier|preceding|initial|original|system|all|any|your|the|these"
    r"|those|my)"
)

# (category, heuristic name, weight, pattern); patterns see lower-cased, NFKC-normalised text.
_HEURISTICS: list[tuple[str, str, int, str]] = [
    # instruction override
    (
        "instruction_override",
        "ignore_previous",
        STRONG,
        (
            rf"\b(?:ignore|disregard|forget|override|bypass|skip|drop|abandon|discard)\b"
            rf"(?:\s+(?:about|all|of|everything|every|any|and|following|other|{_PRIOR})){{0,5}}\s+{_INSTR}"
        ),
    ),
    (
        "instruction_override",
        "ignore_the_above",
        STRONG,
        (
            r"\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)?(?:the\s+|that\s+)?"
            r"(?:above|before|previous(?:ly)?|prior)\b(?!\s+(?:message|email|mail|note|question|"
            r"order|request|comment|reply|answer|one|address|number|card|text))"
        ),
    ),
    (
        "instruction_override",
        "new_instructions",
        MEDIUM,
        (
            r"\b(?:new|updated|real|actual|true|revised)\s+(?:system\s+)?(?:instructions|rules|"
            r"directives|task)\s*(?::|are\b|follow\b)"
        ),
    ),
    (
        "instruction_override",
        "from_now_on",
        MEDIUM,
        r"\bfrom\s+now\s+on,?\s+(?:you|your|always|never|only|respond|answer|reply|act)\b",
    ),
    (
        "instruction_override",
        "stop_following",
        STRONG,
        rf"\b(?:stop|quit|cease)\s+(?:following|obeying|using)\s+(?:{_PRIOR}\s+)*{_INSTR}",
    ),
    (
        "instruction_override",
        "fake_system_tag",
        STRONG,
        (
            r"(?:^|\n|\s)(?:\[/?(?:system|inst|sys)\]|<\|?/?(?:system|im_start|im_end)\|?>|<<sys>>"
            r"|###\s*(?:system|instruction)s?\s*:|system\s*(?:override|prompt)\s*:)"
        ),
    ),
    (
        "instruction_override",
        "instead_say",
        MEDIUM,
        (
            r"\b(?:instead|rather)\s*,?\s+(?:say|write|print|output|respond|reply)\b.{0,40}"
            r"(?:pwned|hacked|haha|i have been)"
        ),
    ),
    ("instruction_override", "pwned", MEDIUM, r"\b(?:haha\s+)?pwned\b|i have been pwned"),
    # system-prompt extraction
    (
        "prompt_extraction",
        "reveal_prompt",
        STRONG,
        (
            r"\b(?:reveal|show|print|repeat|output|display|leak|dump|spell out|recite|reproduce|"
            r"tell me|give me|share|paste|write out|what (?:is|are|was|were))\b.{0,30}"
            r"\b(?:your|the)\s+(?:full\s+|exact\s+|entire\s+|complete\s+|original\s+|hidden\s+|"
            r"secret\s+|initial\s+|internal\s+)*(?:system\s+(?:prompt|message|instructions)|"
            r"(?:initial|original|hidden|secret|internal)\s+(?:prompt|instructions|rules)|prompt\b|"
            r"instructions you (?:were|have been) given)"
        ),
    ),
    (
        "prompt_extraction",
        "words_above",
        STRONG,
        (
            r"\b(?:repeat|print|output|write|summari[sz]e|translate|what was written)\b.{0,40}"
            r"\b(?:words|text|everything|lines?|document)\s+(?:above|before this|at the beginning)"
            r"|\b(?:print|repeat|output|show|spell.?check)\s+(?:the\s+)?(?:above|previous|earlier)\s+"
            r"(?:prompt|instructions)"
        ),
    ),
    (
        "prompt_extraction",
        "instructions_verbatim",
        STRONG,
        (
            r"\b(?:your|the|my|system)\s+(?:instructions|rules|prompt)\s+(?:verbatim|word for word|"
            r"exactly as (?:written|given))"
        ),
    ),
    (
        "prompt_extraction",
        "starting_with_you_are",
        STRONG,
        r"(?:starting|beginning|that (?:starts|begins))\s+with\s+[\"'“]?you are",
    ),
    (
        "prompt_extraction",
        "what_were_you_told",
        MEDIUM,
        (
            r"\bwhat (?:were|have) you (?:been )?(?:told|instructed|programmed)\b|"
            r"\b(?:your|the) (?:password|secret (?:word|key|code))\b"
        ),
    ),
    # persona switch
    (
        "persona_switch",
        "dan",
        STRONG,
        (
            r"\bdan\b.{0,40}\bdo anything now\b|\bdo anything now\b|\bjailbroken\b|"
            r"\b(?:developer|dev|god|debug|sudo|admin) mode\b.{0,30}\b(?:enabled|on|activated)\b|"
            r"\benable (?:developer|dev|god|debug|sudo|admin) mode\b"
        ),
    ),
    (
        "persona_switch",
        "you_are_now",
        MEDIUM,
        (
            r"\byou are (?:now|no longer)\b(?!\s+(?:connected|speaking|talking|through|on hold|"
            r"transferred|the (?:first|second|third|fourth|fifth|\w+th|next|last|only)\b"
            r"|number\b|#?\d))"
        ),
    ),
    (
        "persona_switch",
        "act_as_unrestricted",
        STRONG,
        (
            r"\b(?:act|behave|respond|answer|pretend|roleplay|role-play)\s+"
            r"(?:as|like|to be|that you are)"
            r"\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|evil|rogue|jailbroken|"
            r"different|amoral|unaligned|malicious)\b"
        ),
    ),
    (
        "persona_switch",
        "pretend_to_be",
        MEDIUM,
        (
            r"\b(?<!\bi )(?<!\bwe )(?:pretend|imagine|roleplay|role-play)\s+(?:that\s+)?"
            r"(?:you are|you're|to be|as)\b|"
            r"\blet'?s play a game\b|\bstay in character\b"
        ),
    ),
    (
        "persona_switch",
        "grandma",
        MEDIUM,
        (
            r"\b(?:act|pretend|roleplay|play|be)\b.{0,20}\b(?:deceased|late|dead)?\s*"
            r"(?:grandma|grandmother|granny)\b"
        ),
    ),
    # exfiltration of data or tool output
    (
        "exfiltration",
        "send_data_to",
        STRONG,
        (
            r"\b(?:send|forward|email|post|upload|transmit|exfiltrate|leak|copy)\b.{0,40}"
            r"\b(?:all|every|the|this|these|those|your|customer|user|conversation|chat|"
            r"previous)\b.{0,30}\b(?:data|records|conversations?|history|emails?|messages|"
            r"details|results?|outputs?|credentials|keys|tokens|passwords|files|database)\b.{0,40}"
            r"\b(?:to|at)\s+(?:https?://|www\.|[\w.+-]+@[\w-]+\.|this (?:url|address|server|email))"
        ),
    ),
    (
        "exfiltration",
        "send_it_to",
        STRONG,
        (
            r"\b(?:send|post|forward|upload|email|transmit)\s+(?:it|them|this|that|everything|those)"
            r"\s+to\s+(?:https?://|www\.|[\w.+-]+@[\w-]+\.)"
        ),
    ),
    (
        "exfiltration",
        "markdown_image_exfil",
        STRONG,
        r"!\[[^\]]{0,80}\]\(\s*https?://[^)\s]+\?[^)\s]*=",
    ),
    (
        "exfiltration",
        "dump_secrets",
        STRONG,
        (
            r"\b(?:list|dump|export|print|show|give me|reveal|output)\b.{0,25}"
            r"\b(?:all|every|other)\s+(?:the\s+)?(?:users?|customers?|accounts?|records|"
            r"api keys?|passwords?|credentials|secrets|tokens|environment variables|"
            r"credit cards?|card numbers)\b"
        ),
    ),
    (
        "exfiltration",
        "tool_output",
        MEDIUM,
        (
            r"\b(?:raw|full|exact|complete|unredacted)\s+(?:tool|function|api)\s+(?:output|"
            r"response|result)s?\b|\bwhat did the (?:tool|function|api|database) (?:return|say)\b|"
            r"\b(?:call|invoke|run|use) the [\w-]+ (?:tool|function) (?:with|on|for) "
            r"(?:every|all)\b"
        ),
    ),
    # safety bypass
    (
        "safety_bypass",
        "no_restrictions",
        STRONG,
        (
            r"\bwithout\s+(?:any\s+)?(?:restrictions|filters?|censorship|limitations|"
            r"safety (?:rules|guidelines|filters?)|ethical (?:guidelines|constraints))\b|"
            r"\b(?:no|free of)\s+(?:ethical|moral|safety|content)\s+(?:guidelines|constraints|"
            r"restrictions|filters?|policy|policies)\b"
        ),
    ),
    (
        "safety_bypass",
        "bypass_safety",
        STRONG,
        (
            r"\b(?:bypass|disable|turn off|switch off|circumvent|evade|get around|remove)\s+"
            r"(?:your\s+|the\s+|all\s+|any\s+)*(?:safety|content|moderation|guard|"
            r"filter|censorship)\w*\b|\bjailbreak\w*\b"
        ),
    ),
    (
        "safety_bypass",
        "hypothetical_harm",
        MEDIUM,
        (
            r"\b(?:hypothetically|for a (?:novel|story|movie)|purely fictional|for educational "
            r"purposes)\b.{0,80}\b(?:bomb|explosive|meth|malware|ransomware|weapon|poison|napalm)\b"
        ),
    ),
    (
        "safety_bypass",
        "compliance_demand",
        WEAK,
        r"\byou (?:must|will|have to) (?:comply|answer everything|obey)\b|\bnever refuse\b",
    ),
]

# A heuristic can only match text holding one of its needles: a substring test is far cheaper
# than a regex without a literal prefix (tests check the needles never change an answer).
_URLISH = ("http", "www.", "@", "this url", "this address", "this server", "this email")
NEEDLES: dict[str, tuple[str, ...]] = {
    "ignore_previous": (
        "ignor",
        "disregard",
        "forget",
        "overrid",
        "bypass",
        "skip",
        "drop",
        "abandon",
        "discard",
    ),
    "ignore_the_above": ("ignor", "disregard", "forget"),
    "new_instructions": ("instructions", "rules", "directives", "task"),
    "from_now_on": ("from now on",),
    "stop_following": ("stop", "quit", "cease"),
    "fake_system_tag": ("[", "<", "###", "system"),
    "instead_say": ("instead", "rather"),
    "pwned": ("pwned",),
    "reveal_prompt": ("prompt", "instructions", "system message"),
    "words_above": ("above", "before this", "beginning", "previous", "earlier"),
    "instructions_verbatim": ("verbatim", "word for word", "exactly as"),
    "starting_with_you_are": ("you are",),
    "what_were_you_told": ("told", "instructed", "programmed", "password", "secret"),
    "dan": ("do anything now", "jailbroken", "mode"),
    "you_are_now": ("you are now", "you are no longer"),
    "act_as_unrestricted": (
        "unrestricted",
        "unfiltered",
        "uncensored",
        "evil",
        "rogue",
        "jailbroken",
        "different",
        "amoral",
        "unaligned",
        "malicious",
    ),
    "pretend_to_be": ("pretend", "imagine", "roleplay", "role-play", "play a game", "in character"),
    "grandma": ("grand",),
    "send_data_to": _URLISH,
    "send_it_to": _URLISH,
    "markdown_image_exfil": ("![",),
    "dump_secrets": ("all", "every", "other"),
    "tool_output": ("tool", "function", "api", "database"),
    "no_restrictions": ("without", "no ", "free of"),
    "bypass_safety": ("jailbreak", "safety", "content", "moderation", "guard", "filter", "censor"),
    "hypothetical_harm": (
        "bomb",
        "explosive",
        "meth",
        "malware",
        "ransomware",
        "weapon",
        "poison",
        "napalm",
    ),
    "compliance_demand": ("comply", "answer everything", "obey", "never refuse"),
}
_COMPILED = [
    (c, n, w, re.compile(p, re.IGNORECASE | re.DOTALL), NEEDLES[n]) for c, n, w, p in _HEURISTICS
]

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
_B64_TOKEN = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")
_HEX_TOKEN = re.compile(r"\b(?:0x)?[0-9a-fA-F]{32,}\b")
_RANDOM_TOKEN = re.compile(r"\S{40,}")

# Magic numbers of files people attach: a base64 blob that decodes to one is an attachment.
_FILE_MAGIC = (
    b"\x89PNG",
    b"\xff\xd8\xff",
    b"GIF87a",
    b"GIF89a",
    b"%PDF",
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"RIFF",
    b"ID3",
    b"OggS",
    b"\x00\x00\x00",  # ISO media (mp4, heic): a box size then "ftyp"
    b"<?xml",
    b"<svg",
    b"BM",
    b"II*\x00",
    b"MM\x00*",
)
HASH_HEX_LENGTHS = (32, 40, 56, 64, 96, 128)  # md5, sha1, sha224, sha256, sha384, sha512
ENCODED_TEXT_SCORE = 40  # decodes to readable text that holds no instruction: noted, not flagged
RANDOM_BLOB_SCORE = 60  # a long random-looking blob that is no known file: flagged
RANDOM_BLOB_MIN = 64
MAX_SCAN_CHARS = 100_000  # longer inputs are scanned on their first and last 50,000 characters


@dataclass(frozen=True)
class PatternResult:
    flagged: bool
    score: int
    category: str = ""
    hits: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (category, heuristic)

    @property
    def confidence(self) -> int:
        """How sure the layer is of its verdict, 0-100."""
        return self.score if self.flagged else 100 - self.score


def normalise(text: str) -> str:
    """Return the text as the heuristics see it: NFKC, no zero-width characters, lower case,
    single spaces (so fullwidth letters, soft hyphens and odd spacing do not hide a phrase)."""
    text = unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH)
    return " ".join(text.lower().split())


def regex_hits(norm: str, *, prefilter: bool = True) -> list[tuple[str, str, int]]:
    """Return (category, heuristic, weight) of every heuristic matching normalised text."""
    return [
        (c, n, w)
        for c, n, w, rx, needles in _COMPILED
        if (not prefilter or any(x in norm for x in needles)) and rx.search(norm)
    ]


def shannon_entropy(s: str) -> float:
    """Bits per character of the string's own character distribution."""
    if not s:
        return 0.0
    n = len(s)
    return -sum(k / n * math.log2(k / n) for k in Counter(s).values())


def _printable_text(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text:
        return None
    ok = sum(1 for ch in text if ch.isprintable() or ch in "\n\r\t")
    return text if ok / len(text) >= 0.9 else None


def _b64decode(token: str) -> bytes | None:
    core = token.rstrip("=")
    if len(core) % 4 == 1:
        return None
    padded = core + "=" * (-len(core) % 4)
    try:
        if "-" in core or "_" in core:
            return base64.urlsafe_b64decode(padded)
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None


def _decoded_score(data: bytes, *, depth: int) -> tuple[int, tuple[str, str] | None]:
    """Score a decoded blob: (score, hit) where a hit means smuggled instructions or a blob."""
    if data.startswith(_FILE_MAGIC):
        return 0, None
    text = _printable_text(data)
    if text is not None:
        inner = pattern_check(text, _depth=depth + 1)
        if inner.flagged:
            return min(99, inner.score + 5), ("encoded_payload", f"decoded_{inner.category}")
        return ENCODED_TEXT_SCORE, None
    return -1, None  # binary, no known file: the caller decides on length


def _encoded_hits(raw: str, *, depth: int) -> tuple[int, list[tuple[str, str]]]:
    """Score the base64, hex and random-looking tokens of the raw (not lower-cased) text."""
    best, hits = 0, []
    seen = set()
    for m in _HEX_TOKEN.finditer(raw):
        token = m.group(0).removeprefix("0x")
        seen.add(m.start())
        if len(token) % 2:
            continue
        score, hit = _decoded_score(bytes.fromhex(token), depth=depth)
        if score < 0:  # binary: a digest of a known length is a hash someone pasted
            if len(token) in HASH_HEX_LENGTHS or len(token) < RANDOM_BLOB_MIN:
                continue
            score, hit = RANDOM_BLOB_SCORE, ("encoded_payload", "random_hex")
        best = max(best, score)
        if hit:
            hits.append(hit)
    for m in _B64_TOKEN.finditer(raw):
        token = m.group(0)
        if m.start() in seen or token.isdigit() or not re.search(r"[A-Z]", token):
            continue  # hex, a number, or a lower-case word run: not base64 worth decoding
        data = _b64decode(token)
        if data is None:
            continue
        score, hit = _decoded_score(data, depth=depth)
        if score < 0:
            if len(token) < RANDOM_BLOB_MIN or shannon_entropy(token) < 4.5:
                continue
            score, hit = RANDOM_BLOB_SCORE, ("encoded_payload", "random_base64")
        best = max(best, score)
        if hit:
            hits.append(hit)
    return best, hits


def pattern_check(text: str, *, _depth: int = 0) -> PatternResult:
    """Return the pattern layer's verdict on one input turn."""
    if not text or not text.strip():
        return PatternResult(False, 0)
    if len(text) > MAX_SCAN_CHARS:
        half = MAX_SCAN_CHARS // 2
        text = text[:half] + "\n" + text[-half:]
    norm = normalise(text)
    scored = regex_hits(norm)
    hits = [(c, n) for c, n, _ in scored]
    score = max((w for *_, w in scored), default=0)
    if _depth < 2:
        enc_score, enc_hits = _encoded_hits(text, depth=_depth)
        hits += enc_hits
        score = max(score, enc_score)
    if len({n for _, n in hits}) > 1 and score >= FLAG_AT:
        score = min(99, score + 5 * (len({n for _, n in hits}) - 1))
    category = ""
    if hits:
        weights = {n: w for _, n, w in scored}
        # The heaviest hit names the verdict; an encoded hit outranks the rest, and on a tie the
        # goal (extraction, exfiltration, ...) outranks the override that carries it.
        enc = [h for h in hits if h[0] == "encoded_payload"]
        ranked = sorted(hits, key=lambda h: (-weights.get(h[1], 0), h[0] == "instruction_override"))
        category = (enc or ranked)[0][0]
    return PatternResult(score >= FLAG_AT, int(score), category, tuple(dict.fromkeys(hits)))
