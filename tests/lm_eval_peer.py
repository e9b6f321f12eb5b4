"""lm-eval 0.4.13 itself, where it is installed: the peer that choose's length rules and read_lm_eval
are checked against. It is not a dependency of the project; scripts/bench.sh installs it beside the
project (``pip install --no-deps --target DIR lm-eval==0.4.13 ...``) into the logprob_viz cache, and
``LMEVAL_PATH`` names another folder. A test that needs it skips, saying how to install it."""

import os
import sys
from pathlib import Path

import pytest

DEFAULT = Path(os.environ.get("LOGPROB_VIZ_CACHE", Path.home() / ".cache" / "logprob_viz")) / "bench-peers" / \
    "lm-eval-0.4.13"


def lm_eval_or_skip():
    """The lm_eval package (0.4.13), or a skip that says how to install it."""
    folder = os.environ.get("LMEVAL_PATH") or str(DEFAULT)
    if Path(folder, "lm_eval").is_dir() and folder not in sys.path:
        sys.path.append(folder)  # after the venv: its own packages win over the folder's copies
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # local data and model: nothing to fetch
    try:
        import lm_eval
        from lm_eval.api.task import ConfigurableTask  # noqa: F401
    except Exception as error:  # any failure to import is the reason for the skip
        pytest.skip(f"lm-eval 0.4.13 is not importable ({type(error).__name__}: {error}); scripts/bench.sh "
                    f"installs it into {DEFAULT}, or set LMEVAL_PATH")
    from importlib.metadata import version

    assert version("lm_eval") == "0.4.13", f"the peer is lm-eval 0.4.13, found {version('lm_eval')}"
    return lm_eval


def multiple_choice_task(docs: list[dict], metrics=("acc", "acc_norm", "acc_bytes")):
    """lm-eval's own ConfigurableTask (output_type multiple_choice) over `docs` ({"question", "choices",
    "answer"}), with its default target_delimiter (a space) before each choice."""
    import datasets
    from lm_eval.api.task import ConfigurableTask

    return ConfigurableTask(config={
        "task": "logprob_viz_mc", "output_type": "multiple_choice", "test_split": "test",
        "custom_dataset": lambda **_: datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)}),
        "doc_to_text": "{{question}}", "doc_to_choice": "{{choices}}", "doc_to_target": "{{answer}}",
        "metric_list": [{"metric": m} for m in metrics],
    })
