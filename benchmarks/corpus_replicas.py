"""A large corpus Parquet file made from one real model trace, replicated and perturbed.

Scoring a million texts with a model takes hours on this CPU, so the corpus is built from a real
trace: the completion of mpt-7b served by vLLM in /work/shared/fixtures (16 tokens, its logprobs as
the server gave them; `--fixture` names another OpenAI completion response). Trace i is that trace's
tokens rotated by i % 16 (so texts differ and sort), its logprobs plus Gaussian noise (sd 0.5 nats,
kept <= 0, the first token unscored as in every trace), labelled "doc i". Written through the
writers' own schema (`corpus_table`), so the file is what `lv.Corpus.write_parquet` writes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

FIXTURE = Path("/work/shared/fixtures/seed_vllm_completion_mpt7b.json")
NOISE = 0.5  # nats: the perturbation's standard deviation


def base_tokens(fixture: Path = FIXTURE) -> tuple[list[str], np.ndarray]:
    """(tokens, logprobs float64) of the fixture's completion, as the server gave them."""
    choice = json.loads(Path(fixture).read_text())["choices"][0]["logprobs"]
    logprobs = np.array([np.nan if v is None else v for v in choice["token_logprobs"]], dtype=np.float64)
    # the server gave byte-level BPE pieces ("Ġ" a space, "Ċ" a newline): shown as the text they are
    tokens = [t.replace("\u0120", " ").replace("\u010a", "\n") for t in choice["tokens"]]
    return tokens, logprobs


def write_replicas(path: Path, traces: int, *, seed: int = 0, fixture: Path = FIXTURE, per_group: int = 100_000,
                   label: str = "doc {}"):
    """Write `traces` replicas of the fixture's trace to one Parquet file at `path` (trace i labelled
    ``label.format(i)``); returns `path`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from logprob_viz.records.corpus.parquet import corpus_table

    tokens, base = base_tokens(fixture)
    k = len(tokens)
    rng = np.random.default_rng(seed)
    words = pa.array(tokens, pa.string())
    writer = None
    try:
        for start in range(0, traces, per_group):
            n = min(per_group, traces - start)
            shift = (np.arange(start, start + n) % k)[:, None]
            idx = ((np.arange(k)[None, :] + shift) % k).reshape(-1).astype(np.int32)
            lp = np.minimum(base[idx] + rng.normal(0, NOISE, n * k), 0.0).astype(np.float32)
            lp[::k] = np.nan  # nothing predicts a trace's first token
            offsets = pa.array(np.arange(0, n * k + 1, k, dtype=np.int32))
            token_text = words.take(pa.array(idx))

            def lists(values, offsets=offsets):
                return pa.ListArray.from_arrays(offsets, values)

            rows = np.asarray(tokens, dtype=object)[idx.reshape(n, k)]
            table = corpus_table({
                "label": pa.array([label.format(start + i) for i in range(n)], pa.string()),
                "text": pa.array(["".join(r) for r in rows], pa.string()),
                "prompt_len": pa.array(np.zeros(n, np.int32)),
                "tokens": lists(token_text),
                "token_bytes": lists(token_text.cast(pa.binary())),
                "token_ids": lists(pa.array(idx)),
                "logprobs": lists(pa.array(lp)),
                "ranks": lists(pa.array(np.where(np.isnan(lp), 0, 1).astype(np.int32))),
                "entropy": lists(pa.array(np.full(n * k, np.nan, np.float32))),
                "meta": pa.array(['{"model": "mpt-7b (vLLM fixture, replicated)"}'] * n, pa.string()),
            })
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(table, row_group_size=16_384)
    finally:
        if writer is not None:
            writer.close()
    return Path(path)
