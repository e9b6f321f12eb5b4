"""Bytes per token of a corpus on disk (issue 48): Parquet against JSONL, and against Parquet as it
was written before (the tokenizer's whole vocabulary table in every file, snappy, dictionary pages).

    python -m benchmarks.corpus_size [--texts 10,300,1000]

The largest count of short texts (10-60 tokens, `benchmarks.corpus.short_texts`) is scored once by
the default model at K=5; each smaller count is its first texts. For each: the file sizes, bytes per
token, the stored vocabulary table (the ids the rows use), and the fixed cost (a file of no texts).
Every file is read back and compared with the corpus (tokens, bytes, logprob bits, alternatives'
texts) before its size counts. The "before" file is this code's table written with the old options
and the whole table, as `tests/records/test_corpus_parquet.py` writes its old-layout file.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import machine, table

K = 5
GOAL = 60  # bytes per token at K=5


def old_layout(path: Path, out: Path, whole: list[bytes]) -> int:
    """The bytes of `path` written as before issue 48: the whole table, snappy, dictionaries, statistics."""
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    meta = dict(file.metadata.metadata)
    meta[b"logprob_viz.vocabs"] = json.dumps([{"bytes_hex": [b.hex() for b in whole]}])
    pq.write_table(file.read().replace_schema_metadata(meta), out, write_page_checksum=True)
    return out.stat().st_size


def same(back, corpus) -> bool:
    """The corpus read back equals the one written, exactly (the floats by their bits)."""
    for got, want in zip(back.traces, corpus.traces, strict=True):
        if got.tokens != want.tokens or got.token_bytes != want.token_bytes:
            return False
        for name in ("logprobs", "entropy", "top_logprobs"):
            if not np.array_equal(getattr(got, name).view(np.uint32), getattr(want, name).view(np.uint32)):
                return False
        if [list(r) for r in got.top_tokens] != [list(r) for r in want.top_tokens]:
            return False
    return True


def measure(corpus, n: int, folder: Path, whole: list[bytes]) -> list:
    import pyarrow.parquet as pq

    import logprob_viz as lv

    part = corpus[:n]
    tokens = sum(len(t) for t in part.traces)
    parquet = part.to_parquet(folder / f"c{n}.parquet")
    jsonl = part.save(folder / f"c{n}.jsonl")
    if not same(lv.Corpus.read_parquet(parquet), part) or not same(lv.Corpus.load(jsonl), part):
        raise AssertionError(f"{n} texts: a file read back differs from the corpus written")
    vocab = len(pq.ParquetFile(parquet).metadata.metadata[b"logprob_viz.vocabs"])
    size, lines = parquet.stat().st_size, jsonl.stat().st_size
    before = old_layout(parquet, folder / f"old{n}.parquet", whole)
    per = size / tokens
    return [n, f"{tokens:,}", f"{size:,}", f"{per:.1f}", f"{vocab:,} ({vocab / tokens:.1f})", f"{lines / tokens:.0f}",
            f"{before / tokens:.0f}", "met" if per <= GOAL else "MISSED"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", default="10,300,1000", help="comma-separated counts of texts")
    args = parser.parse_args()
    counts = sorted(int(x) for x in args.texts.split(","))

    import logprob_viz as lv
    from benchmarks.corpus import load, short_texts

    runner = load()
    texts = short_texts(runner.tokenizer, counts[-1])
    start = time.perf_counter()
    corpus = runner.score(texts, top_logprobs=K, progress=False)
    scored = time.perf_counter() - start
    whole = corpus[0].vocab.byte_table()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = [measure(corpus, n, folder, whole) for n in counts]
        empty = lv.Corpus([]).to_parquet(folder / "empty.parquet").stat().st_size
    print(f"## Corpus size on disk: Parquet vs JSONL, K={K} (goal ≤ {GOAL} B/token)\n")
    print(f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average before the run: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}. {counts[-1]} texts of 10-60 tokens scored once by the "
          f"default model in {scored:.0f} s; each row is the first N of them.\n")
    print(machine() + "\n")
    print(table(["texts", "tokens", "Parquet bytes", "Parquet B/token", "its vocabulary table bytes (B/token)",
                 "JSONL B/token", "Parquet before (whole table) B/token", f"≤ {GOAL} B/token"], rows))
    print(f"\nFixed cost: a corpus of no texts is {empty:,} bytes of Parquet (the footer's schema and metadata); "
          f"the whole {len(whole):,}-token table alone was {sum(2 * len(b) + 4 for b in whole):,} bytes of JSON.")


if __name__ == "__main__":
    main()
