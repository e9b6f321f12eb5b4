"""Records: the trace and what is computed from traces alone (no model, no widget, no torch).

    trace.py            `Trace`, the one record every part reads and writes
    trace_json.py       its JSON form (`Trace.to_dict`, `Trace.from_dict`): exact, NaN and -inf included
    trace_fields.py     the trace's numeric fields: dtype, shape, "unknown" value; the top_logprobs rule
    tokens.py           token bytes <-> the text a person reads (the only place that decodes bytes)
    flags.py            the per-token flag vocabulary: what a source lost
    vocab_rows.py       compact per-token rows backed by a shared vocabulary
    tree.py             `lv.Tree`: branches from alternatives
    fork.py             one fork of a trace (a prefix, a chosen token, what a runner adds): the tree's
                        branches and the JSON fields' alternatives
    comparison/         `lv.compare`: traces aligned by bytes (record.py; scored.py its numbers, checks.py
                        its input)
    corpus/             `lv.Corpus`: many traces (record.py the façade; index.py the surprise index, compare.py
                        two models, stats.py, labels.py, and columns.py, parquet.py, scan.py, arrow.py:
                        column-backed traces and Parquet)
    run_stats.py        per-trace reductions over a flat token array: what Parquet stores and the corpus shows
    lens.py             `Lens`: per-layer predictions of one text (computed by sources/local/lens.py)
    attribution.py      `Attribution`: why a token (computed by sources/local/attribution.py)
    choices.py          `Choices`: the probability of given answers (`runner.choose`), a row per prompt
    calibration.py      `lv.calibration`: a reliability table of confidences against right answers
    sampling.py         the distribution sampled from (temperature, top-k, top-p, min-p): the rules the local
                        runner applies and the explorer's exact numbers and bands
    samplers.py         `lv.sampled_from`: the distribution each serving engine (transformers, vLLM, llama.cpp,
                        SGLang, Ollama) samples from, in its own order, from their sources
    audit.py            `lv.Audit`: whether a server's numbers are raw, scaled or processed (and by which engines'
                        orders), given the reference distribution; the positions that fit none
    sampling_bounds.py  the same under other settings when only a top K is known (a server): a range per token
    divergence/         `lv.Divergence`: two engines over the same token ids, per token (positions.py the
                        KL / Δp / same-top math, stats.py llama-perplexity's statistics, record.py)
    json/               `lv.Fields`: a row per JSON leaf of a trace (`Trace.fields`; fields.py, spans.py its
                        byte scanner, alternatives.py what else the model would have put in a field)
    viewable.py         how a record finds its view (views/shows.py registers them): records import no view
    readable.py         how a record reads server responses (sources/readers/corpus.py registers the readers):
                        records import no reader
"""
