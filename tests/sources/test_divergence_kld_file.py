"""`lv.read_kld` reads a base-logits file written here in llama-perplexity's layout from the default model's
own logits. The encoder below follows tools/perplexity/perplexity.cpp (``log_softmax`` with a ``uint16_t *
log_prob``: float32 arithmetic, codes by nearest_int, a record of nv = 2*((n_vocab+1)/2) + 4 uint16) and is
written independently of the reader. The divergence against a bf16-rounded copy then equals llama.cpp's
per-token sum applied here to the decoded base and the candidate's float64 log-probabilities."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import logprob_viz as lv

N_CTX = 16
TEXT = ("A robot may not injure a human being or, through inaction, allow a human being to come to harm. "
        "A robot must obey the orders given it by human beings except where such orders would conflict "
        "with the First Law. A robot must protect its own existence.")


def _encode_row(logits: np.ndarray) -> np.ndarray:
    """One position's record, as llama.cpp's log_softmax(n_vocab, logits, log_prob, tok) writes it."""
    x = logits.astype(np.float32)
    max_logit, min_logit = np.float32(x.max()), np.float32(x.min())
    min_logit = max(min_logit, np.float32(max_logit - np.float32(16)))
    sum_exp = float(np.exp((x - max_logit).astype(np.float32)).astype(np.float64).sum())  # double sum of expf
    log_sum_exp = np.float32(np.log(sum_exp))
    min_log_prob = np.float32(np.float32(min_logit - max_logit) - log_sum_exp)
    scale = np.float32(np.float32(max_logit - min_logit) / np.float32(65535))
    inv_scale = np.float32(1) / scale
    codes = np.where(x > min_logit, np.rint(inv_scale * (x - min_logit)), 0).astype(np.uint16)  # nearest, even ties
    n_vocab = len(x)
    record = np.zeros(2 * ((n_vocab + 1) // 2) + 4, dtype=np.uint16)
    record[:4] = np.array([scale, min_log_prob], dtype=np.float32).view(np.uint16)
    record[4 : 4 + n_vocab] = codes
    return record


def _chunk_logits(model, ids) -> np.ndarray:
    with torch.no_grad():  # llama.cpp clears its KV cache per chunk: each chunk is evaluated alone
        return model(input_ids=torch.tensor([ids]), use_cache=False).logits[0].numpy()


def _write(path, model, tokens: list[int], n_ctx: int, n_vocab: int) -> None:
    n_chunk = len(tokens) // n_ctx
    first = n_ctx // 2
    with open(path, "wb") as f:
        f.write(b"_logits_")
        f.write(np.array([n_ctx, n_vocab, n_chunk], dtype="<i4").tobytes())
        f.write(np.array(tokens[: n_chunk * n_ctx], dtype="<i4").tobytes())
        for c in range(n_chunk):
            logits = _chunk_logits(model, tokens[c * n_ctx : (c + 1) * n_ctx])
            for j in range(first, n_ctx - 1):  # the logits at j predict token j + 1
                f.write(_encode_row(logits[j]).tobytes())


@pytest.fixture(scope="module")
def base_file(tmp_path_factory, runner, reference_model):
    tokens = runner.tokenizer(TEXT)["input_ids"]
    assert len(tokens) >= 3 * N_CTX
    path = tmp_path_factory.mktemp("kld") / "base.kld"
    _write(path, reference_model, tokens, N_CTX, runner.engine.vocab_size)
    return path, tokens


def _decoded(record: np.ndarray, n_vocab: int) -> np.ndarray:
    scale, min_log_prob = record[:4].view(np.float32)
    return (scale * record[4 : 4 + n_vocab].astype(np.float32) + min_log_prob).astype(np.float64)


def test_the_file_reads_as_llama_cpp_wrote_it(base_file, runner, reference_model):
    path, tokens = base_file
    kf = lv.read_kld(path)
    n_chunk = len(tokens) // N_CTX
    assert (kf.n_ctx, kf.n_vocab, kf.n_chunk) == (N_CTX, runner.engine.vocab_size, n_chunk)
    assert kf.tokens.tolist() == tokens[: n_chunk * N_CTX]
    assert kf.records.shape == (n_chunk, N_CTX - 1 - N_CTX // 2, 2 * ((kf.n_vocab + 1) // 2) + 4)
    # the decoded log-probabilities are the model's own, within half a code, above llama.cpp's floor
    logits = _chunk_logits(reference_model, tokens[N_CTX : 2 * N_CTX]).astype(np.float64)
    true = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) \
        - logits.max(-1, keepdims=True)
    decoded = kf.decode(1, np.arange(N_CTX // 2 + 1, N_CTX))
    kept = true[N_CTX // 2 : N_CTX - 1] > true[N_CTX // 2 : N_CTX - 1].max(-1, keepdims=True) - 15.9
    assert np.abs(decoded - true[N_CTX // 2 : N_CTX - 1])[kept].max() < 16 / 65535


def test_a_divergence_from_the_file_is_llama_cpp_s_sum_over_the_second_half_of_each_chunk(base_file, rounded):
    path, tokens = base_file
    ds = lv.divergence(lv.read_kld(path), rounded)
    assert len(ds) == len(tokens) // N_CTX
    records = np.memmap(path, dtype="<u2", mode="r", offset=20 + 4 * len(ds) * N_CTX,
                        shape=(len(ds), N_CTX - 1 - N_CTX // 2, 2 * ((rounded.engine.vocab_size + 1) // 2) + 4))
    for c, d in enumerate(ds):
        ids = tokens[c * N_CTX : (c + 1) * N_CTX]
        scored = np.arange(N_CTX // 2 + 1, N_CTX)
        assert list(np.flatnonzero(d.scored)) == list(scored)  # llama.cpp's positions, and only those
        logits = _chunk_logits(rounded.model, ids).astype(np.float64)
        lq = logits - logits.max(-1, keepdims=True)
        lq = lq - np.log(np.exp(lq).sum(-1, keepdims=True))
        for j, pos in enumerate(scored):
            lp = _decoded(np.asarray(records[c, j]), rounded.engine.vocab_size)
            q = lq[pos - 1]
            keep = lp > -16.0
            assert d.kld[pos] == pytest.approx(float((np.exp(lp[keep]) * (lp[keep] - q[keep])).sum()), abs=1e-5)
            assert d.delta_p[pos] == pytest.approx(np.exp(q[ids[pos]]) - np.exp(lp[ids[pos]]), abs=1e-5)
            assert d.same_top[pos] == float(lp.argmax() == q.argmax())
        assert d.tokens[scored[0]] == rounded.engine.text_of(ids[scored[0]])
    assert ds.summary()["tokens"] == len(ds) * (N_CTX - 1 - N_CTX // 2)


def test_the_file_agrees_with_the_base_model_itself_within_its_16_bit_codes(base_file, runner, rounded):
    path, tokens = base_file
    from_file = lv.divergence(lv.read_kld(path), rounded).summary()
    chunks = [runner.tokenizer.decode(tokens[c * N_CTX : (c + 1) * N_CTX]) for c in range(len(tokens) // N_CTX)]
    live = [lv.divergence(runner, rounded, text) for text in chunks]
    # the test's fixed text re-tokenizes chunk by chunk to the ids the file holds (else the comparison is void)
    assert all(list(d.token_ids) == tokens[c * N_CTX : (c + 1) * N_CTX] for c, d in enumerate(live))
    kld = np.concatenate([d.kld[N_CTX // 2 + 1 :] for d in live])
    # The codes alone: the file against the very model that wrote it gives a few 1e-7 nats (16 nats over
    # 65535 steps: at most 1.2e-4 nats per log-probability). The bf16 copy parts by ~1e-4 nats, 20x the
    # tolerance, and the file and the base model agree on it within it.
    assert lv.divergence(lv.read_kld(path), runner).summary()["mean_kld"] < 5e-6
    assert kld.mean() > 2e-5
    assert from_file["mean_kld"] == pytest.approx(kld.mean(), abs=5e-6)


def test_bad_files_say_what_is_wrong(tmp_path, base_file, runner):
    path, _ = base_file
    raw = path.read_bytes()
    bad = tmp_path / "bad.kld"
    bad.write_bytes(b"_logitz_" + raw[8:])
    with pytest.raises(ValueError, match="does not start with b'_logits_'"):
        lv.read_kld(bad)
    bad.write_bytes(raw[:-100])
    with pytest.raises(ValueError, match=r"truncated: .* holds the records of \d+ whole chunks"):
        lv.read_kld(bad)
    bad.write_bytes(raw + b"\0\0")
    with pytest.raises(ValueError, match="2 bytes more"):
        lv.read_kld(bad)
    small = tmp_path / "small.kld"  # a valid file for a vocabulary of 10 tokens
    with open(small, "wb") as f:
        f.write(b"_logits_" + np.array([4, 10, 1], dtype="<i4").tobytes() + np.arange(4, dtype="<i4").tobytes())
        f.write(_encode_row(np.linspace(0, 1, 10)).tobytes())
    kf = lv.read_kld(small)
    assert kf.records.shape == (1, 1, 14)
    with pytest.raises(ValueError, match="vocabulary of 10 tokens, but the candidate"):
        lv.divergence(kf, runner)
