"""The shipped notebooks run top to bottom, headless, on the real default model."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).parent.parent / "notebooks"
# Run elsewhere: vllm_openai needs the live server (tests/vllm_live), explore is run by tests/test_explore.py.
ELSEWHERE = {"vllm_openai.ipynb", "explore.ipynb"}
LESSONS = sorted(p.name for p in NOTEBOOKS.glob("0*.ipynb"))


def run_notebook(name: str, timeout: int = 600) -> nbformat.NotebookNode:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    resources = {"metadata": {"path": str(NOTEBOOKS)}}
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources=resources).execute()
    return nb


def outputs_of(nb) -> list:
    return [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]


def widgets_in(outputs) -> list:
    return [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]


def printed(outputs) -> str:
    return "".join(o.get("text", "") for o in outputs if o.output_type == "stream")


def test_every_notebook_is_run_by_some_test():
    shipped = {p.name for p in NOTEBOOKS.glob("*.ipynb")}
    assert shipped == {"quickstart.ipynb", "compare.ipynb", "corpus.ipynb", "answers.ipynb", "divergence.ipynb",
                       *LESSONS, *ELSEWHERE}
    assert len(LESSONS) == 8


def test_quickstart_runs():
    outputs = outputs_of(run_notebook("quickstart.ipynb"))
    assert not [o for o in outputs if o.output_type == "error"]
    assert len(widgets_in(outputs)) >= 4, "each trace (and the view) shows as a widget"
    assert "perplexity" in printed(outputs)


# What a lesson's prose claims about its own outputs, held to it.
CLAIMS = {
    "01_next_token.ipynb": ["chosen: ' Paris'", "greedy : perplexity"],
    "02_sampling.ipynb": ["T=0.5:", "chosen", "min_p=0.05: p >=", "min_p=0.2: p >=",
                          "top_p=0.8, min_p=0.1: transformers", "differs from transformers: vllm\n",
                          "temperature=1.5, min_p=0.1: transformers", "differs from transformers: llama.cpp\n",
                          "top_k=10, top_p=0.7: transformers", "differs from transformers: sglang\n"],
    "03_what_it_almost_said.ipynb": ["' Neptune'", "' Jupiter'", "is Jupiter."],
    "04_inside_the_model.ipynb": ["token: ' Paris'", "layer 29"],
    "05_comparing.ipynb": ["own continuation: {'tired': ", "shared part: {'tired': "],
    "07_why.ipynb": ["p(' Neptune')", "pushed towards Neptune", "rank agreement", "' Neptune' decided at layer"],
    "08_guess.ipynb": ["token 8: 'She' is not it (guess 1)", "token 8: right, ' It' in 2 guesses", "score over the",
                       "(its ranks as guesses)", "too few tokens for a bound"],
}


@pytest.mark.parametrize("name", [*LESSONS, "compare.ipynb"])
def test_lesson_runs_and_shows_its_views(name):
    nb = run_notebook(name)
    outputs = outputs_of(nb)
    assert not [o for o in outputs if o.output_type == "error"]
    assert widgets_in(outputs), f"{name} shows at least one view"
    first = nb.cells[0]
    assert first.cell_type == "markdown" and ("You will learn" in first.source or name == "compare.ipynb")
    text = printed(outputs)
    assert [c for c in CLAIMS.get(name, []) if c not in text] == []


def test_corpus_notebook_runs():
    outputs = outputs_of(run_notebook("corpus.ipynb"))
    assert not [o for o in outputs if o.output_type == "error"]
    text = printed(outputs)
    assert "<Corpus of 40 traces" in text and "occurrences" in text and "the same logprobs: True" in text
    # the two-model report, or (without the optional second model) the line that says how to install it
    assert "<CorpusComparison of 20 items: smollm2" in text or "the second model is not installed" in text
    assert widgets_in(outputs), "an occurrence opens its trace in the view"
    tables = [o for o in outputs if "text/html" in o.get("data", {}) and "mean_surprisal" in o["data"]["text/html"]]
    assert tables, "the surprise index is shown"


def test_answers_notebook_runs():
    outputs = outputs_of(run_notebook("answers.ipynb"))
    assert not [o for o in outputs if o.output_type == "error"]
    text = printed(outputs)
    assert "<Choices of 50 prompts x 2 options, length=sum, accuracy=" in text
    assert "probs sum to 1.0" in text
    assert "<Calibration of 50 items in 10 bins: ECE=" in text and "the same ECE: True" in text
    assert "fields: ['name', 'age', 'city'] | broke: None" in text
    assert len(widgets_in(outputs)) >= 5, "the choices views, the corpus, the diagram and the fields view"


def test_divergence_notebook_runs():
    """bf16 and a requantized GGUF against the default model, and a rollout file (issue 44)."""
    outputs = outputs_of(run_notebook("divergence.ipynb"))
    assert not [o for o in outputs if o.output_type == "error"]
    text = printed(outputs)
    assert "mean KLD" in text and "flip at token" in text and "Q2_K: mean KLD" in text
    assert "nan" not in text.lower()
    assert len(widgets_in(outputs)) >= 3, "each divergence shows as its view, and one rollout as its own"
    assert "rollout " in text and "max |Δ|" in text
