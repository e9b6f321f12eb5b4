"""A corpus past one machine (issue 28): Parquet parts of synthetic traces, measured.

    python -m benchmarks.scale [--parts index,view,vllm] [--index-tokens 100000000] [--view-traces 1000000]
                               [--vllm-texts 400] [--quick]

Prints Markdown tables, each with its goals (issue 28):

- the surprise index over ``--index-tokens`` tokens (100M), streamed from the Parquet parts
  (`Corpus.surprise_index_parquet`), in a fresh process: seconds and peak memory (ru_maxrss),
  goals <= 30 s and < 4 GB; its counts and mean surprisals checked against the generator's own
  per-token-text sums (numpy bincounts made while writing, not read back);
- the corpus view over ``--view-traces`` traces (1M) read from Parquet: `read_parquet`, the table
  payload (`encode_corpus`), then in headless chromium the open, sorts and filters
  (benchmarks/scale_view.py, with benchmarks/corpus_view.py's harness), goals: open <= 2 s
  (read + payload + render), sort and filter <= 200 ms;
- ``lv.connect(vllm_url).score(texts)`` tokens/s at the default (the runner's choice of how many in
  flight) and at 8 and 32, against vLLM offline ``LLM.generate`` with ``prompt_logprobs`` on the
  same texts (benchmarks/scale_vllm.py), goal >= 0.95x at the default.

The traces are synthetic (a 2,000-word vocabulary, Zipf-distributed; random logprobs and ranks;
K=0), written straight as Arrow columns through the writers' own `corpus.parquet.corpus_table` (which
adds the stored per-trace summaries, as `to_parquet` and `lv.ray` do), since Trace objects for 100M
tokens would be the very thing the Parquet path avoids.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import parse_args, table

QUICK = {"index_tokens": 2_000_000, "view_traces": 20_000, "vllm_texts": 60, "vllm_repeats": 1}
INDEX_GOALS = {"seconds": 30.0, "memory_gb": 4.0}
VIEW_GOALS = {"open_ms": 2000.0, "sort_ms": 200.0, "filter_ms": 200.0}
VOCAB = 2000


def vocabulary() -> np.ndarray:
    words = np.array([f" w{i}" for i in range(VOCAB)], dtype=object)
    words[:10] = [" the", " of", ".", ",", "\n", " 42", " Paris", " and", " a", " robot"]
    return words


def write_parts(folder: Path, traces: int, tokens: int, per_part: int, seed: int = 0) -> dict:
    """Parquet parts of `traces` synthetic traces of `tokens` tokens; returns the generator's own sums
    per word (count, surprisal) over the known logprobs, for the check."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from logprob_viz.records.corpus.parquet import corpus_table

    rng = np.random.default_rng(seed)
    vocab = vocabulary()
    words = pa.array(vocab.tolist(), pa.string())
    count, surprisal = np.zeros(VOCAB, np.int64), np.zeros(VOCAB)
    folder.mkdir(parents=True, exist_ok=True)
    for part, start in enumerate(range(0, traces, per_part)):
        n = min(per_part, traces - start)
        total = n * tokens
        ids = (rng.zipf(1.3, total) % VOCAB).astype(np.int32)
        lp = np.log(rng.uniform(1e-4, 1, total)).astype(np.float32)
        lp[::tokens] = np.nan  # each trace's first token: nothing predicts it
        known = ~np.isnan(lp)
        count += np.bincount(ids[known], minlength=VOCAB)
        surprisal += np.bincount(ids[known], weights=-lp[known].astype(np.float64), minlength=VOCAB)
        offsets = pa.array(np.arange(0, total + 1, tokens, dtype=np.int32))
        token_text = words.take(pa.array(ids))

        def lists(values, offsets=offsets):
            return pa.ListArray.from_arrays(offsets, values)

        texts = pa.array(["".join(vocab[ids[i * tokens:(i + 1) * tokens]]) for i in range(n)], pa.string())
        table = corpus_table({  # the writers' own schema function: the parts are what lv writes (summaries too)
            "label": pa.array([f"doc {start + i}" for i in range(n)], pa.string()),
            "text": texts,
            "prompt_len": pa.array(np.zeros(n, np.int32)),
            "tokens": lists(token_text),
            "token_bytes": lists(token_text.cast(pa.binary())),
            "token_ids": lists(pa.array(ids)),
            "logprobs": lists(pa.array(lp)),
            "ranks": lists(pa.array(np.where(known, rng.integers(1, 100, total), 0).astype(np.int32))),
            "entropy": lists(pa.array(rng.uniform(0, 6, total).astype(np.float32))),
            "meta": pa.array(['{"model": "synthetic"}'] * n, pa.string()),
        })
        pq.write_table(table, folder / f"part-{part:05d}.parquet", row_group_size=16_384)
    return {"count": count, "surprisal": surprisal}


SCAN = """
import json, resource, sys, time
import logprob_viz as lv
start = time.perf_counter()
index = lv.Corpus.surprise_index_parquet(sys.argv[1], by="token")
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": seconds, "peak": peak, "groups": index["group"].tolist(),
                  "count": index["count"].tolist(), "mean": index["mean_surprisal"].tolist()}))
"""


def measure_index(folder: Path, expected: dict) -> tuple[dict, str]:
    """The streamed index in a fresh process (its peak memory is the index's alone), checked."""
    done = subprocess.run([sys.executable, "-c", SCAN, str(folder)], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    got = json.loads(done.stdout.strip().splitlines()[-1])
    at = {w: i for i, w in enumerate(vocabulary().tolist())}
    order = [at[g] for g in got["groups"]]
    want_count = expected["count"][order]
    want_mean = expected["surprisal"][order] / want_count
    ok = np.array_equal(np.array(got["count"]), want_count) and np.allclose(got["mean"], want_mean, rtol=1e-9)
    return got, "equal" if ok else "DIFFERENT"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index-tokens", type=int, default=100_000_000)
    parser.add_argument("--view-traces", type=int, default=1_000_000)
    parser.add_argument("--view-tokens", type=int, default=16, help="tokens per trace in the view's corpus")
    parser.add_argument("--view-repeats", type=int, default=1, help="fresh pages over the 1M-trace view")
    parser.add_argument("--vllm-texts", type=int, default=400)
    parser.add_argument("--vllm-repeats", type=int, default=2, help="alternating rounds of the four routes")
    parser.add_argument("--parts", default="index,view,vllm")
    args = parse_args(parser, QUICK)
    parts = args.parts.split(",")
    sections = []
    if "index" in parts:
        sections.append(index_section(args))
    if "view" in parts:
        from benchmarks.scale_view import view_section

        sections.append(view_section(args, write_parts))
    if "vllm" in parts:
        from benchmarks.scale_vllm import vllm_section

        sections.append(vllm_section(args))
    print("\n\n".join(sections))


def index_section(args) -> str:
    with tempfile.TemporaryDirectory(prefix="lv-scale-bench-") as tmp:
        folder = Path(tmp) / "index"
        start = time.perf_counter()
        expected = write_parts(folder, args.index_tokens // 100, 100, per_part=50_000)
        written = time.perf_counter() - start
        size = sum(p.stat().st_size for p in folder.glob("*.parquet"))
        got, check = measure_index(folder, expected)
        return index_report(args, got, check, written, size, len(list(folder.glob("*.parquet"))))


def index_report(args, got, check, written, size, parts) -> str:
    gb = got["peak"] / 2**30
    rows = [["surprise index, by token (streamed)", f"{got['seconds']:.1f} s", f"<= {INDEX_GOALS['seconds']:.0f} s",
             "met" if got["seconds"] <= INDEX_GOALS["seconds"] else "MISSED"],
            ["peak memory of that process", f"{gb:.2f} GB", f"< {INDEX_GOALS['memory_gb']:.0f} GB",
             "met" if gb < INDEX_GOALS["memory_gb"] else "MISSED"],
            ["counts and mean surprisals vs the generator's own sums", check, "equal", ""]]
    head = (f"Surprise index over {args.index_tokens:,} tokens in {parts} Parquet parts ({size / 1e9:.2f} GB on disk, "
            f"written in {written:.0f} s), {len(got['groups']):,} groups; load average {os.getloadavg()[0]:.1f} on "
            f"{os.cpu_count()} cores.\n\n")
    return head + table(["what", "measured", "goal", "status"], rows)


if __name__ == "__main__":
    main()
