"""Write llmbar.json from a checkout of princeton-nlp/LLMBar (the released judge outputs).

    python tests/labeling/published/llmbar/make_sample.py PATH/TO/LLMBar [COMMIT]

Reads Dataset/LLMBar/{Natural, Adversarial/*}/dataset.json (the gold labels) and, for the GPT-4
and PaLM2 evaluators of the paper's Tables 2 and 8, evaluators/<model>/<strategy>/result.json (the
winner the evaluator chose with the outputs in their order, `swap = False`, and swapped back, `swap
= True`; null when its answer did not parse). Only the labels and the winners are kept, one
character each, so the sample is small: no instruction or output text.
"""

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
SUBSETS = {
    "Natural": "Dataset/LLMBar/Natural",
    "Neighbor": "Dataset/LLMBar/Adversarial/Neighbor",
    "GPTInst": "Dataset/LLMBar/Adversarial/GPTInst",
    "GPTOut": "Dataset/LLMBar/Adversarial/GPTOut",
    "Manual": "Dataset/LLMBar/Adversarial/Manual",
}
# The paper's name of each prompting strategy (* : with Rules) and its folder in the release.
STRATEGIES = {
    "Vanilla": "Vanilla_NoRules",
    "Vanilla*": "Vanilla",
    "CoT*": "CoT",
    "Swap*": "Swap",
    "Swap+CoT*": "Swap_CoT",
    "Metrics*": "Metrics",
    "Reference*": "Reference",
    "Metrics+Reference*": "Metrics_Reference",
}
MODELS = ("GPT-4", "PaLM2")


def _winner(value) -> str:
    return {"1": "1", "2": "2", None: "-"}[value]


def main(repo: str, commit: str = "HEAD") -> None:
    def show(path: str):
        out = subprocess.run(
            ["git", "-C", repo, "show", f"{commit}:{path}"], capture_output=True, check=True
        )
        return json.loads(out.stdout)

    sample = {"labels": {}, "judgments": {}}
    for subset, folder in SUBSETS.items():
        sample["labels"][subset] = "".join(str(x["label"]) for x in show(f"{folder}/dataset.json"))
    for model in MODELS:
        for paper_name, strategy in STRATEGIES.items():
            per_subset = {}
            for subset, folder in SUBSETS.items():
                result = show(f"{folder}/evaluators/{model}/{strategy}/result.json")
                labels = "".join(str(x["label"]) for x in result)
                assert labels == sample["labels"][subset], (model, strategy, subset)
                per_subset[subset] = "".join(
                    _winner(x["results"][-1]["swap = False"]["winner"])
                    + _winner(x["results"][-1]["swap = True"]["winner"])
                    for x in result
                )
            sample["judgments"][f"{model}/{paper_name}"] = per_subset
    (HERE / "llmbar.json").write_text(json.dumps(sample, indent=1, sort_keys=False) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
