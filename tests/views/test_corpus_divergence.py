"""A list of texts compared by two engines, and RL rollouts, opened in the corpus view (issue 44): one row
per text or rollout, its divergence figures as sortable columns, through the corpus's own Parquet.

The divergences are the real default model against a copy whose weights are rounded to bf16 (as
tests/sources/test_divergence.py, which checks each position against the models' logits); the rollouts
are the default model's samples rescored by that copy. Every column is computed here again, in plain
Python loops over the per-token values, and the view's sorted order by each column is an independent
stable sort of those.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

import logprob_viz as lv
from logprob_viz.views.codec import DTYPES

TEXTS = ["A robot may not injure a human being or, through inaction, allow a human being to come to harm.",
         "The quick brown fox jumps over the lazy dog.",
         "In 1905 Einstein published four papers; the third introduced special relativity.",
         "Colourless green ideas sleep furiously."]
PROMPTS = ["The capital of France is", "Once upon a time", "def fibonacci(n):"]


@pytest.fixture(scope="module")
def rounded(runner):
    model = copy.deepcopy(runner.model)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(torch.bfloat16).to(torch.float32))
    return lv.load((model, runner.tokenizer))


@pytest.fixture(scope="module")
def divergences(runner, rounded):
    return lv.divergence(runner, rounded, TEXTS, cutoff=None)


def by_loop(d) -> dict:
    """One text's columns from its per-token values, position by position (the first is not scored)."""
    kld, same, dp, lp, lq = ([float(x) for x in d.arrays[name]] for name in
                             ("kld_low", "same_top", "delta_p", "base_logprob", "cand_logprob"))
    scored = [i for i in range(len(kld)) if not math.isnan(dp[i])]
    return {"mean_kld": sum(kld[i] for i in scored) / len(scored), "max_kld": max(kld[i] for i in scored),
            "flips": sum(1 for i in scored if same[i] == 0.0), "same_top": sum(same[i] for i in scored) / len(scored),
            "max_abs_delta_p": max(abs(dp[i]) for i in scored),
            "mean_ln_ppl_ratio": sum(lp[i] - lq[i] for i in scored) / len(scored)}


def column(table, name: str) -> np.ndarray:
    field = table._payload["extra"][name]
    return np.frombuffer(field["buffer"], dtype=DTYPES[field["dtype"]])


def stable_order(values, descending: bool) -> list[int]:
    """Items sorted by `values` (float32, as the table holds them), NaN last, equal values in corpus order."""
    v = [float(np.float32(x)) for x in values]
    known = sorted((i for i in range(len(v)) if not math.isnan(v[i])), key=lambda i: (-v[i] if descending else v[i], i))
    return known + [i for i in range(len(v)) if math.isnan(v[i])]


def test_a_list_of_texts_opens_with_mean_and_max_kld_flips_and_delta_p_per_text(divergences):
    expected = [by_loop(d) for d in divergences]
    view = lv.CorpusView(divergences)  # (a Divergences: its to_corpus)
    assert len(view.corpus) == len(TEXTS) and view.corpus[1].text == TEXTS[1]
    titles = dict(view.table._payload["extra"]["columns"])
    assert titles == {"mean_kld": "mean KLD", "max_kld": "max KLD", "flips": "flips", "same_top": "same top",
                      "max_abs_delta_p": "max |Δp|", "mean_ln_ppl_ratio": "ln PPL ratio"}
    for name in titles:
        want = [row[name] for row in expected]
        np.testing.assert_allclose([m[name] for m in view.corpus.metadata], want, rtol=1e-12, atol=1e-15,
                                   err_msg=name)
        np.testing.assert_array_equal(column(view.table, name), np.asarray(want, dtype=np.float32), err_msg=name)
    assert sum(row["flips"] for row in expected) == divergences.summary()["tokens"] - round(
        divergences.summary()["same_top"] * divergences.summary()["tokens"])
    # the trace of a row is the candidate's: its logprob of each token, its model named as a trace names one
    np.testing.assert_array_equal(view.corpus[0].logprobs, divergences[0].arrays["cand_logprob"].astype(np.float32))
    assert view.corpus[0].meta["model"] == divergences.meta["candidate"]["model"]
    assert 'class="lvx-standalone"' in view.fallback_html()  # (nbconvert's HTML: a dict as the model's name broke it)


@pytest.mark.parametrize("name", ["mean_kld", "max_kld", "flips", "max_abs_delta_p"])
def test_the_kernel_sorts_a_large_view_by_each_figure(divergences, name):
    view = lv.CorpusView(divergences, windowed=True)  # (the kernel's order: what a corpus over 100,000 rows uses)
    values = [row[name] for row in map(by_loop, divergences)]
    for descending in (True, False):
        view.table.sort = {"column": name, "descending": descending}
        rows = view.table._rows["rows"]["items"]
        got = np.frombuffer(rows["buffer"], dtype=DTYPES[rows["dtype"]]).tolist()
        assert got == stable_order(values, descending), (name, descending)


def test_the_figures_travel_through_the_corpus_s_own_parquet(divergences, tmp_path):
    corpus = divergences.to_corpus(labels=[f"text {i}" for i in range(len(TEXTS))])
    back = lv.Corpus.read_parquet(corpus.to_parquet(tmp_path / "divergences.parquet"))
    assert back.meta["table_columns"] == corpus.meta["table_columns"] and list(back.labels) == list(corpus.labels)
    view = lv.CorpusView(back)
    for name in corpus.meta["table_columns"]:
        np.testing.assert_array_equal(column(view.table, name), np.asarray(
            [m[name] for m in corpus.metadata], dtype=np.float32), err_msg=name)


def test_rollouts_open_with_mean_and_max_delta_share_outside_k3_and_reward(runner, rounded):
    ids, lp_a, lp_b = [], [], []
    for i, prompt in enumerate(PROMPTS):
        t = runner.generate(prompt, max_new_tokens=8, do_sample=True, temperature=1.0, seed=i)
        rescored = rounded.score(prompt_ids=list(t.token_ids))
        ids.append(list(t.token_ids[t.prompt_len :]))
        lp_a.append([float(x) for x in t.logprobs[t.prompt_len :]])
        lp_b.append([float(x) for x in rescored.logprobs[t.prompt_len :]])
    rewards = [1.0, -0.5, 0.25]
    rollouts = lv.Divergence.from_logprobs(ids, lp_a, lp_b, rewards=rewards)
    vocab = runner.tokenizer.convert_ids_to_tokens(list(range(len(runner.tokenizer))))
    view = lv.CorpusView(rollouts.to_corpus(vocab=vocab))
    assert list(dict(view.table._payload["extra"]["columns"])) == ["mean_abs_delta", "max_abs_delta",
                                                                   "share_outside", "mean_k3", "reward"]
    for r, (a, b) in enumerate(zip(lp_a, lp_b, strict=True)):
        deltas = [y - x for x, y in zip(a, b, strict=True)]
        want = {"mean_abs_delta": sum(map(abs, deltas)) / len(deltas), "max_abs_delta": max(map(abs, deltas)),
                "share_outside": sum(not (0.5 <= math.exp(d) <= 2.0) for d in deltas) / len(deltas),
                "mean_k3": sum(math.exp(d) - 1 - d for d in deltas) / len(deltas), "reward": rewards[r]}
        for name, value in want.items():
            assert view.corpus.metadata[r][name] == pytest.approx(value, rel=1e-9, abs=1e-12), (r, name)
            assert column(view.table, name)[r] == np.float32(view.corpus.metadata[r][name]), (r, name)
        assert view.corpus[r].tokens == [vocab[i] for i in ids[r]]
        np.testing.assert_array_equal(view.corpus[r].logprobs, np.asarray(a, dtype=np.float32))
    view.table.sort = {"column": "reward", "descending": True}  # a sort by a figure is a valid sort
    with pytest.raises(Exception, match="sort column must be one of"):
        view.table.sort = {"column": "mean_kld", "descending": True}


def test_no_text_and_bad_column_specs_say_what_is_wrong():
    with pytest.raises(ValueError, match="hold no text"):
        lv.Divergences([]).to_corpus()
    corpus = lv.Corpus([lv.Trace(tokens=["a", "b"], logprobs=[float("nan"), -1.0])], meta={"table_columns": ["x"]})
    with pytest.raises(TypeError, match=r"table_columns'\] must be a dict"):
        lv.CorpusView(corpus)
    clash = lv.Corpus([lv.Trace(tokens=["a", "b"], logprobs=[float("nan"), -1.0])],
                      meta={"table_columns": {"perplexity": "mine"}})
    with pytest.raises(ValueError, match=r"names \['perplexity'\], which the table shows already"):
        lv.CorpusView(clash)
