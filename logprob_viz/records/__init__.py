"""Records: the trace and what is computed from traces alone (no model, no widget, no torch).

    trace.py        `Trace`, the one record every part reads and writes (trace_json.py its JSON form)
    fields.py       the numeric fields: dtype, shape, "unknown" value; the top_logprobs rule
    tokens.py       token bytes <-> the text a person reads (the only place that decodes bytes)
    flags.py        the per-token flag vocabulary: what a source lost
    vocab_rows.py   compact per-token rows backed by a shared vocabulary
    tree.py         `lv.Tree`: branches from alternatives (branching.py: one fork, also for JSON fields)
    comparison.py   `lv.compare`: traces aligned by bytes
    corpus.py       `lv.Corpus`: many traces (corpus_index.py the surprise index, corpus_compare.py two models)
                    corpus_columns.py, corpus_parquet.py, corpus_arrow.py: column-backed traces and Parquet
    lens.py         `Lens`: per-layer predictions of one text (computed by sources/local/lens.py)
    attribution.py  `Attribution`: why a token (computed by sources/local/attribution.py)
    sampling.py     the distribution sampled from (temperature, top-k, top-p, min-p): the rules the local
                    runner applies and the explorer's exact numbers and bands; sampling_bounds.py from a top K
    json_fields.py  `lv.Fields`: a row per JSON leaf of a trace (`Trace.fields`); json_spans.py its byte scanner
    viewable.py     how a record finds its view (views/shows.py registers them): records import no view
"""
