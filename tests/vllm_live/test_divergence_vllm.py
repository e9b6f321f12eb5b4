"""`lv.divergence` with the real vLLM server (conftest.py) as one side: its top-K ranges hold the exact KL.

The server serves the default model's weights in float32 (``--dtype float32``, converted by the same code
as ``lv.load()``'s), so the local stand-in for its whole distribution is the float32 model run here with
plain transformers (``reference_model``). The base is the default model in bfloat16 (``lv.load(dtype=
"bfloat16")``: mean KL ~0.005 nats, up to ~0.05) or a copy whose weights are rounded to bf16 (computed in
float32: ~1e-4), so the KL is not 0. The exact KL of each position is computed here, in float64, from both
models' logits (no project code), and the range [kld_low, kld_high] that lv.divergence gives from the
server's top-K must hold it.

Tolerance (KERNELS): vLLM's float32 kernels and transformers' give the same weights' logprobs a few 1e-5
nats apart (measured up to 8.8e-5 at the listed tokens, asserted below). If every log q moves by at most
ε, KL(p ‖ q) = Σ p (log p − log q) moves by at most ε (Σ p = 1): the server's exact KL, which its range
holds, is within ε of the stand-in's.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import logprob_viz as lv

KERNELS = 2e-4  # nats: vLLM float32 against transformers float32, per logprob (measured max 8.8e-5)
TEXTS = ["A robot may not injure a human being or, through inaction, allow a human being to come to harm.",
         "In 1905 Einstein published four papers; the third introduced special relativity, and it changed "
         "how physicists think about space and time."]


@pytest.fixture(scope="module")
def server(vllm_url):
    return lv.connect(vllm_url)


@pytest.fixture(scope="module")
def bases(runner):
    """Two local bases that differ from the served float32 model: bf16 compute, and bf16-rounded weights."""
    model = copy.deepcopy(runner.model)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(torch.bfloat16).to(torch.float32))
    return {"bfloat16": lv.load(dtype="bfloat16"), "rounded": lv.load((model, runner.tokenizer))}


def logp64(model, ids: list[int]) -> np.ndarray:
    """log p(token i | tokens before i) for i = 1..N-1, float64 over the whole vocabulary: (N-1, V)."""
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids]), use_cache=False).logits[0]
    return torch.log_softmax(logits.double(), dim=-1)[:-1].numpy()


def kl(lp: np.ndarray, lq: np.ndarray, cutoff) -> np.ndarray:
    """KL(p ‖ q) per row, over the p tokens with log p > -cutoff (llama.cpp's), or all with cutoff None."""
    keep = np.ones_like(lp, dtype=bool) if cutoff is None else lp > -cutoff
    return np.where(keep, np.exp(lp) * (lp - lq), 0.0).sum(axis=-1)


def test_the_server_scores_what_the_stand_in_computes(server, runner, reference_model):
    """The tolerance's premise, measured: the server's logprobs of the chosen tokens and of its top 20, at
    the same positions of the same ids, are the float32 model's within KERNELS."""
    for text in TEXTS:
        ids = runner.tokenizer(text)["input_ids"]
        t = server.score(prompt_ids=ids, top_logprobs=20, progress=False)
        assert t.token_ids.tolist() == ids and np.isnan(t.logprobs[0])
        lq, rows = logp64(reference_model, ids), np.arange(len(ids) - 1)
        np.testing.assert_allclose(t.logprobs[1:], lq[rows, ids[1:]], atol=KERNELS, rtol=0)
        top_ids, top_lp = np.asarray(t.top_ids)[1:], np.asarray(t.top_logprobs)[1:]
        assert (top_ids >= 0).all() and top_ids.shape[1] == 20
        np.testing.assert_allclose(top_lp, lq[rows[:, None], top_ids], atol=KERNELS, rtol=0)


@pytest.mark.parametrize("cutoff", [None, 16.0])
@pytest.mark.parametrize("name", ["bfloat16", "rounded"])
def test_a_vllm_candidate_s_ranges_hold_the_exact_kl(server, bases, reference_model, name, cutoff):
    base = bases[name]
    ds = lv.divergence(base, server, TEXTS, top_logprobs=20, cutoff=cutoff, progress=False)
    assert len(ds) == len(TEXTS) and ds.meta["candidate"]["source"] == "vllm"
    lows, exacts = [], []
    for d, text in zip(ds, TEXTS, strict=True):
        ids = base.tokenizer(text)["input_ids"]
        # the same tokens, and every one after the first scored (position i: the distributions before token i)
        assert d.token_ids.tolist() == ids and b"".join(d.token_bytes) == text.encode()
        assert np.flatnonzero(d.scored).tolist() == list(range(1, len(ids)))
        lp, lq = logp64(base.model, ids), logp64(reference_model, ids)
        exact = kl(lp, lq, cutoff)
        low, high = d.kld_low[1:], d.kld_high[1:]
        assert (low <= exact + KERNELS).all(), np.max(low - exact)
        assert (exact <= high + KERNELS).all()
        if cutoff is None:  # the full sum is a KL, never below 0 (with a cutoff the sum may be, slightly)
            assert (low > -1e-9).all()
        rows = np.arange(len(ids) - 1)
        # Δp is exact from the chosen token's logprob alone: q(y) − p(y), q within KERNELS of the stand-in's
        np.testing.assert_allclose(d.delta_p[1:], np.exp(lq[rows, ids[1:]]) - np.exp(lp[rows, ids[1:]]),
                                   atol=2 * KERNELS, rtol=0)
        # same top where the stand-in's top two are further apart than the kernels can move them
        second, first = np.sort(lq, axis=-1)[:, -2:].T
        clear = first - second > 2 * KERNELS
        assert np.array_equal(d.same_top[1:][clear] == 1.0, (lp.argmax(-1) == lq.argmax(-1))[clear])
        lows.append(low)
        exacts.append(exact)
    low, exact = np.concatenate(lows), np.concatenate(exacts)
    if name == "bfloat16":  # the KL is far above the tolerance: the containment has teeth
        assert exact.mean() > 10 * KERNELS and exact.max() > 100 * KERNELS
    if cutoff is None:  # the lower end is informative: 20 alternatives carry most of the KL (measured 0.76-0.85)
        assert low.sum() >= 0.6 * exact.sum()
    # With llama.cpp's cutoff the candidate's unlisted mass may lie on counted tokens rather than on those
    # the cutoff drops, so the lower end falls by up to the base's mass below e^-16 (measured to -6.6e-4 nats
    # where the exact is +5e-5): it still holds the value, as checked above, but says less.


@pytest.mark.parametrize("cutoff", [None, 16.0])
def test_a_vllm_base_s_ranges_are_finite_and_hold_the_exact_kl(server, bases, reference_model, cutoff):
    """The server as the base (its top-K) against a whole local candidate: a finite range, both ends checked."""
    cand = bases["bfloat16"]
    ids = cand.tokenizer(TEXTS[0])["input_ids"]
    exact = kl(logp64(reference_model, ids), logp64(cand.model, ids), cutoff)
    widths = []
    for k in (5, 20):
        d = lv.divergence(server, cand, TEXTS[0], top_logprobs=k, cutoff=cutoff, progress=False)
        assert d.token_ids.tolist() == ids and np.flatnonzero(d.scored).tolist() == list(range(1, len(ids)))
        low, high = d.kld_low[1:], d.kld_high[1:]
        assert np.isfinite(high).all()
        assert (low <= exact + KERNELS).all() and (exact <= high + KERNELS).all()
        widths.append(np.mean(high - low))
    assert widths[1] < widths[0]  # more of the base listed: a narrower range


def test_asking_more_alternatives_than_the_server_gives_says_so(server, runner):
    with pytest.raises(ValueError, match="between 0 and 20 for this server"):
        lv.divergence(runner, server, TEXTS[0], top_logprobs=25, progress=False)
