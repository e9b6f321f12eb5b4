"""The logit lens on the real default model, checked against independent computations.

- The last row is the model's own output: equal to `runner.score` of the same text.
- A middle row equals a float64 read-out written here from the reference model's
  ``output_hidden_states`` (hidden_states[l + 1] is the output of block l), an RMSNorm written
  out by hand, the output embedding's weights and ``log_softmax``.
- The lens keeps O(layers x tokens x K), never a vocabulary-sized array per layer.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import wire
from logprob_viz.records.lens import Lens
from logprob_viz.sources.local.lens import lens

TEXT = "The capital of France is Paris, and the capital of Germany is Berlin. Water boils at 100 degrees."
TOL = 1e-4


@pytest.fixture(scope="module")
def full(runner):
    return lens(runner, TEXT, top_logprobs=5)


def not_near_tied(top_logprobs: np.ndarray, gap: float = 1e-3) -> np.ndarray:
    """[..., K] mask: alternatives whose logprob is at least `gap` away from their neighbours (their order is sure)."""
    lp = np.asarray(top_logprobs, dtype=np.float64)
    diff = np.abs(np.diff(lp, axis=-1))
    left = np.concatenate([np.full(lp.shape[:-1] + (1,), np.inf), diff], axis=-1)
    right = np.concatenate([diff, np.full(lp.shape[:-1] + (1,), np.inf)], axis=-1)
    return (left > gap) & (right > gap)


def reference_row(reference_model, ids: list[int], block: int) -> dict:
    """Block `block`'s read-out, independently: hidden state -> RMSNorm -> output embedding, in float64."""
    with torch.no_grad():
        return _reference_row(reference_model, ids, block)


def _reference_row(reference_model, ids: list[int], block: int) -> dict:
    out = reference_model(input_ids=torch.tensor([ids]), output_hidden_states=True)
    n_blocks = reference_model.config.num_hidden_layers
    assert len(out.hidden_states) == n_blocks + 1, "expected the embeddings plus one hidden state per block"
    # hidden_states[l + 1] is block l's output, except the last, which HF llama returns after the
    # final norm; the test only reads blocks before the last one.
    assert block < n_blocks - 1
    h = out.hidden_states[block + 1][0, :-1].double()  # (N-1, d): each position predicts the next token
    eps = reference_model.config.rms_norm_eps
    w_norm = reference_model.model.norm.weight.double()
    normed = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps) * w_norm
    logits = normed @ reference_model.lm_head.weight.double().T  # (N-1, V)
    logp = torch.log_softmax(logits, dim=-1)
    chosen = torch.tensor(ids[1:])
    chosen_lp = logp[torch.arange(len(chosen)), chosen]
    return {
        "logprobs": chosen_lp.numpy(),
        "ranks": ((logp > chosen_lp[:, None]).sum(-1) + 1).numpy(),
        "entropy": (-(logp.exp() * logp).sum(-1)).numpy(),
        "top_logprobs": torch.topk(logp, 5, dim=-1).values.numpy(),
        "top_ids": torch.topk(logp, 5, dim=-1).indices.numpy(),
    }


def test_last_row_is_the_models_own_output_as_score_gives_it(runner, full):
    scored = runner.score(TEXT, top_logprobs=5)
    assert full.shape == (30, len(scored)) and full.layers.tolist() == list(range(30))
    assert full.token_ids.tolist() == scored.token_ids.tolist() and full.tokens == scored.tokens
    last = -1
    np.testing.assert_allclose(full.logprobs[last, 1:], scored.logprobs[1:], atol=TOL, rtol=0)
    np.testing.assert_allclose(full.entropy[last, 1:], scored.entropy[1:], atol=TOL, rtol=0)
    np.testing.assert_allclose(full.top_logprobs[last, 1:], scored.top_logprobs[1:], atol=TOL, rtol=0)
    assert np.array_equal(full.ranks[last], scored.ranks)
    sure = not_near_tied(scored.top_logprobs[1:])
    assert np.array_equal(full.top_ids[last, 1:][sure], scored.top_ids[1:][sure])
    # Aligned like a trace: column 0 has nothing before it.
    assert np.isnan(full.logprobs[:, 0]).all() and (full.ranks[:, 0] == 0).all() and (full.top_ids[:, 0] == -1).all()
    # lens.trace is that row as an ordinary Trace.
    trace = full.trace
    assert len(trace) == len(scored) and trace.top_tokens[1:] == scored.top_tokens[1:]
    np.testing.assert_allclose(trace.logprobs[1:], scored.logprobs[1:], atol=TOL, rtol=0)
    assert math.isclose(trace.perplexity(), scored.perplexity(), rel_tol=1e-4)


@pytest.mark.parametrize("block", [0, 14, 28])
def test_middle_rows_equal_an_independent_float64_readout(reference_model, full, block):
    ref = reference_row(reference_model, full.token_ids.tolist(), block)
    np.testing.assert_allclose(full.logprobs[block, 1:], ref["logprobs"], atol=TOL, rtol=0)
    np.testing.assert_allclose(full.entropy[block, 1:], ref["entropy"], atol=TOL, rtol=0)
    np.testing.assert_allclose(full.top_logprobs[block, 1:], ref["top_logprobs"], atol=TOL, rtol=0)
    sure = not_near_tied(ref["top_logprobs"])
    assert np.array_equal(full.top_ids[block, 1:][sure], ref["top_ids"][sure])
    # Ranks: equal, except where a competitor lies within float32 noise of the actual token.
    differ = full.ranks[block, 1:] != ref["ranks"]
    assert differ.sum() <= 1, f"ranks differ at {np.flatnonzero(differ)}"
    # The middle of the network is not the output: the lens shows something the last row does not.
    if block < 28:
        assert np.abs(full.logprobs[block, 1:] - full.logprobs[-1, 1:]).max() > 1.0


def test_texts_of_the_alternatives_are_the_tokens_of_their_ids(runner, full):
    for block in (0, 29):
        for i in (1, 7, len(full) - 1):
            ids = full.top_ids[block, i].tolist()
            want = [runner.tokenizer.decode([t], clean_up_tokenization_spaces=False) for t in ids]
            got = full.top_tokens[block][i]
            # decode() shows a piece of a split character as U+FFFD; the lens shows its bytes instead
            whole = ["\ufffd" not in w for w in want]
            pairs = [(g, w) for g, w, ok in zip(got, want, whole, strict=True) if ok]
            assert [g for g, _ in pairs] == [w for _, w in pairs]


def test_picked_layers_are_the_same_rows(runner, full):
    part = lens(runner, TEXT, top_logprobs=3, layers=[14, 3, -1])
    assert part.layers.tolist() == [3, 14, 29] and part.shape == (3, len(full))
    for row, block in enumerate([3, 14, 29]):
        np.testing.assert_allclose(part.logprobs[row, 1:], full.logprobs[block, 1:], atol=1e-5, rtol=0)
        assert np.array_equal(part.ranks[row], full.ranks[block])
        np.testing.assert_allclose(part.top_logprobs[row], full.top_logprobs[block, :, :3], atol=1e-5, rtol=0)
    only_early = lens(runner, TEXT, top_logprobs=2, layers=slice(0, 2))
    assert only_early.layers.tolist() == [0, 1]
    # The trace is still the model's own output, whichever rows were asked for.
    np.testing.assert_allclose(only_early.trace.logprobs[1:], full.logprobs[-1, 1:], atol=1e-5, rtol=0)


def test_detail_reads_the_kept_arrays_or_recomputes_more_alternatives(runner, full):
    d = full.detail(9)
    assert d["token"] == full.tokens[9] and d["layers"].tolist() == list(range(30))
    assert np.array_equal(d["ranks"], full.ranks[:, 9]) and np.array_equal(d["top_ids"], full.top_ids[:, 9])
    assert d["top_tokens"] == [full.top_tokens[r][9] for r in range(30)]
    # More alternatives than the lens kept: the model runs again over the tokens before position 9.
    wider = lens(runner, TEXT, top_logprobs=12, layers=[0, 14, 29])
    small = lens(runner, TEXT, top_logprobs=2, layers=[0, 14, 29])
    d12 = small.detail(9, top_logprobs=12)
    np.testing.assert_allclose(d12["top_logprobs"], wider.top_logprobs[:, 9], atol=TOL, rtol=0)
    np.testing.assert_allclose(d12["logprobs"], wider.logprobs[:, 9], atol=TOL, rtol=0)
    assert np.array_equal(d12["ranks"], wider.ranks[:, 9])
    sure = not_near_tied(wider.top_logprobs[:, 9])
    assert np.array_equal(d12["top_ids"][sure], wider.top_ids[:, 9][sure])
    with pytest.raises(ValueError, match="position must be a token index between 0 and"):
        full.detail(len(full))


def test_a_generated_trace_is_followed_token_for_token(runner):
    t = runner.generate("A robot may not injure a human being", max_new_tokens=6, top_logprobs=3)
    seen = lens(runner, t, top_logprobs=3, layers=[-1])
    assert seen.token_ids.tolist() == t.token_ids.tolist()
    np.testing.assert_allclose(seen.logprobs[0, 1:], t.logprobs[1:], atol=TOL, rtol=0)
    assert np.array_equal(seen.ranks[0], t.ranks)
    # its completion stays a completion: the lens's trace splits where the generation did (issue 49)
    assert seen.trace.prompt_len == t.prompt_len < len(t)
    assert len(seen.trace.completion) == len(t.completion) == 6


def test_memory_is_layers_by_tokens_by_k_never_by_vocabulary(runner, full):
    n_layers, n = full.shape
    vocab = runner.model.get_output_embeddings().weight.shape[0]
    arrays, tensors = [], []
    for name, value in vars(full).items():
        if isinstance(value, np.ndarray):
            arrays.append((name, value))
        if isinstance(value, torch.Tensor):
            tensors.append(name)
    assert not tensors, f"the lens keeps torch tensors: {tensors}"
    for name, arr in arrays:
        assert arr.size <= n_layers * n * full.k, f"{name} has {arr.size} values, more than L*N*K"
    per_cell = 4 + 4 + 4 + 4 + full.k * (4 + 4)  # logprob, rank, entropy, KL to final, K x (logprob, id)
    assert full.nbytes() == n_layers * n * per_cell + 4 * n
    assert full.nbytes() * 100 < n_layers * n * vocab * 4
    assert len(full.top_tokens) == n_layers and all(len(row) == n for row in full.top_tokens)


def test_bad_input_gives_clear_errors(runner):
    for k in (21, -1, 2.5, True, "5"):
        with pytest.raises(ValueError, match="top_logprobs must be an int between 0 and 20"):
            lens(runner, "Hello there", top_logprobs=k)
    with pytest.raises(ValueError, match="layers must be block indices between 0 and 29"):
        lens(runner, "Hello there", layers=[30])
    with pytest.raises(ValueError, match="layers is empty"):
        lens(runner, "Hello there", layers=[])
    with pytest.raises(TypeError, match="layers must be None, an int, a slice or a list of ints"):
        lens(runner, "Hello there", layers=3.5)
    with pytest.raises(TypeError, match=r"the logit lens needs a local runner holding the model \(lv.load"):
        lens("not a runner", "Hello there")
    with pytest.raises(TypeError, match="the lens reads a str or a logprob_viz.Trace, got bytes"):
        lens(runner, b"Hello")
    with pytest.raises(ValueError, match="the text is empty"):
        lens(runner, "")
    limit = runner.model.config.max_position_embeddings
    long_text = " hello" * (limit + 10)
    with pytest.raises(ValueError, match=f"more than .*'s context of {limit}; shorten it"):
        lens(runner, long_text)
    from logprob_viz import Trace

    server_trace = Trace(tokens=["Hi", " there"], logprobs=[np.nan, -1.0])
    with pytest.raises(ValueError, match="has no token ids for every token"):
        lens(runner, server_trace)


def _tiny_gpt2(runner, seed=0):
    """A real transformers GPT-2 (another architecture: transformer.h, transformer.ln_f), tiny and random."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=len(runner.tokenizer), n_positions=128, n_embd=32, n_layer=3, n_head=2)
    return GPT2LMHeadModel(config).eval()


def test_another_architecture_is_found_generically(runner):
    import logprob_viz as lv

    gpt2 = lv.load((_tiny_gpt2(runner), runner.tokenizer))
    seen = lens(gpt2, "Hello there, general Kenobi", top_logprobs=4)
    scored = gpt2.score("Hello there, general Kenobi", top_logprobs=4)
    assert seen.shape == (3, len(scored))
    np.testing.assert_allclose(seen.logprobs[-1, 1:], scored.logprobs[1:], atol=TOL, rtol=0)
    assert np.array_equal(seen.ranks[-1], scored.ranks)
    with pytest.raises(ValueError, match=r"more than .*context of 128"):
        lens(gpt2, " hello" * 200)


def test_a_model_without_a_recognisable_final_norm_is_refused_by_name(runner):
    import logprob_viz as lv

    model = _tiny_gpt2(runner)
    model.transformer.renamed_norm = model.transformer.ln_f
    del model.transformer.ln_f
    refused = r"cannot read GPT2LMHeadModel: could not find the final norm \(looked for GPT2Model\."
    with pytest.raises(ValueError, match=refused):
        lens(lv.load((model, runner.tokenizer)), "Hello")


def test_one_token_text_has_nothing_to_predict(runner):
    one = lens(runner, "Hello", top_logprobs=3)
    assert one.shape == (30, 1) and np.isnan(one.logprobs).all() and one.top_ids.shape == (30, 1, 3)


def test_view_payload_carries_the_lens_texts_by_reference(full):
    from logprob_viz.views.lens.view import LensView, encode_lens

    got = wire.lens(encode_lens(full, inline=True))  # the suite's own reader of the wire format
    assert got["top_tokens"][14][9] == full.top_tokens[14][9]
    assert got["tokens"] == full.tokens
    assert np.array_equal(got["ranks"], full.ranks)
    short = LensView(full)
    assert short._payload["inline"] is True
    assert LensView(full, detail="request")._payload["top_text"] is None
    with pytest.raises(ValueError, match="detail must be 'auto', 'inline' or 'request'"):
        LensView(full, detail="sometimes")
    with pytest.raises(TypeError, match="LensView shows a logprob_viz Lens"):
        LensView("text")
    data, _metadata = full._repr_mimebundle_()  # the last expression of a cell shows the view
    assert isinstance(full, Lens) and "application/vnd.jupyter.widget-view+json" in data


def commitment_by_loop(ranks: np.ndarray, layers: np.ndarray, top: int) -> list[int]:
    """For each token: the first layer from which its rank stays <= top through the last layer."""
    n_rows, n_tokens = ranks.shape
    out = []
    for n in range(n_tokens):
        found = -1
        for r in range(n_rows):
            if all(1 <= ranks[later, n] <= top for later in range(r, n_rows)):
                found = int(layers[r])
                break
        out.append(found)
    return out


@pytest.mark.parametrize("top", [1, 5])
def test_commitment_is_the_first_layer_from_which_the_token_stays_in_the_top(full, top):
    got = full.commitment(top=top)
    assert got.dtype == np.int32 and got.shape == (len(full),)
    assert got.tolist() == commitment_by_loop(full.ranks, full.layers, top)
    assert got[0] == -1  # nothing predicts the first token
    assert (got >= 0).any() and (got == -1).sum() >= 1
    if top == 5:
        assert (got[full.commitment(top=1) >= 0] <= full.commitment(top=1)[full.commitment(top=1) >= 0]).all()


def test_commitment_by_probability(full):
    got = full.commitment(p=0.5)
    expected = []
    for n in range(len(full)):
        keeps = [bool(np.exp(full.logprobs[r, n]) >= 0.5) for r in range(len(full.layers))]
        first = next((r for r in range(len(keeps)) if all(keeps[r:])), None)
        expected.append(-1 if n == 0 or first is None else int(full.layers[first]))
    assert got.tolist() == expected
    with pytest.raises(ValueError, match=r"p must be a probability in \(0, 1\]"):
        full.commitment(p=1.5)
    with pytest.raises(ValueError, match="top must be a positive int"):
        full.commitment(top=0)


def test_commitment_of_picked_layers_also_holds_at_the_final_block(runner, full):
    picked = lens(runner, TEXT, top_logprobs=5, layers=[10, 20])
    # the picked rows, then the final block (29), which must agree too; decided only at 29,
    # a block the lens did not keep, counts as never within the lens's layers
    ranks = np.vstack([full.ranks[[10, 20]], full.ranks[-1]])
    expected = [e if e in (10, 20) else -1 for e in commitment_by_loop(ranks, np.array([10, 20, 29]), 1)]
    assert picked.commitment(top=1).tolist() == expected
    assert 10 in expected or 20 in expected


def test_kl_to_final_equals_an_independent_float64_computation(reference_model, full):
    ids = full.token_ids.tolist()
    with torch.no_grad():
        out = reference_model(input_ids=torch.tensor([ids]), output_hidden_states=True)
        final = torch.log_softmax(out.logits[0, :-1].double(), dim=-1)  # (N-1, V) the model's own output
        eps = reference_model.config.rms_norm_eps
        w_norm = reference_model.model.norm.weight.double()
        for block in (0, 14, 28):
            h = out.hidden_states[block + 1][0, :-1].double()
            normed = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps) * w_norm
            layer = torch.log_softmax(normed @ reference_model.lm_head.weight.double().T, dim=-1)
            kl = (final.exp() * (final - layer)).sum(-1).numpy()
            np.testing.assert_allclose(full.kl_to_final[block, 1:], kl, atol=2e-3, rtol=1e-4)
    assert np.isnan(full.kl_to_final[:, 0]).all()
    np.testing.assert_allclose(full.kl_to_final[-1, 1:], 0, atol=1e-6)
    assert full.kl_to_final.shape == full.shape and full.kl_to_final.dtype == np.float32
    # early layers are far from the final distribution, late ones close
    assert np.nanmean(full.kl_to_final[0]) > np.nanmean(full.kl_to_final[28]) > 0


def test_the_lens_leaves_the_threads_denormal_setting_as_it_was(runner):
    # The read-outs flush denormals to zero for speed; the caller's setting is theirs.
    tiny = torch.tensor([1e-39], dtype=torch.float32)
    for flush in (False, True):
        torch.set_flush_denormal(flush)
        try:
            lens(runner, "Water boils", top_logprobs=2)
            assert (float(tiny[0] * 2) == 0.0) == flush
        finally:
            torch.set_flush_denormal(False)
