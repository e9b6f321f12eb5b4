"""A trace as JSON-safe data and back, exactly (`Trace.to_dict` / `Trace.from_dict`).

Floats are written with ``repr`` precision, so float32 values survive the round trip; NaN and
infinities are written as the strings "nan", "inf", "-inf" (JSON has none).
"""

from __future__ import annotations

import math

import numpy as np

from .flags import flag_warnings

__all__ = ["trace_to_dict", "trace_from_dict"]


def trace_to_dict(trace) -> dict:
    """A JSON-safe dict from which `trace_from_dict` rebuilds `trace` exactly."""
    d = {
        "tokens": list(trace.tokens),
        "token_bytes": [b.hex() for b in trace.token_bytes],
        "token_ids": trace.token_ids.tolist(),
        "logprobs": _floats_out(trace.logprobs),
        "ranks": trace.ranks.tolist(),
        "entropy": _floats_out(trace.entropy),
        "top_tokens": [list(row) for row in trace.top_tokens],
        "top_logprobs": [_floats_out(row) for row in trace.top_logprobs],
        "top_ids": trace.top_ids.tolist(),
        "k": trace.k,
        "flags": [[] for _ in range(len(trace))] if (flags := trace.flags_if_any) is None else [list(r) for r in flags],
        "prompt_len": trace.prompt_len,
        # for whoever reads the JSON without logprob_viz: the flags' words too
        "meta": {**trace.meta, "warnings": trace.warnings} if trace.warnings else trace.meta,
    }
    if trace.processed_logprobs is not None:
        d["processed_logprobs"] = _floats_out(trace.processed_logprobs)
        d["processed_top_logprobs"] = [_floats_out(row) for row in trace.processed_top_logprobs]
    return d

def trace_from_dict(cls, d: dict):
    """Rebuild a trace (of class `cls`) written by `trace_to_dict`."""
    n, k = len(d["tokens"]), d.get("k", 0)
    processed = d.get("processed_logprobs")
    return cls(
        tokens=d["tokens"],
        token_bytes=[bytes.fromhex(h) for h in d["token_bytes"]],
        token_ids=d["token_ids"],
        logprobs=_floats_in(d["logprobs"]),
        ranks=d["ranks"],
        entropy=_floats_in(d["entropy"]),
        top_tokens=d["top_tokens"],
        top_logprobs=np.array([_floats_in(r) for r in d["top_logprobs"]], dtype=np.float32).reshape(n, k),
        top_ids=np.array(d["top_ids"], dtype=np.int32).reshape(n, k),
        processed_logprobs=None if processed is None else _floats_in(processed),
        processed_top_logprobs=None
        if processed is None
        else np.array([_floats_in(r) for r in d["processed_top_logprobs"]], dtype=np.float32).reshape(n, k),
        flags=d.get("flags"),
        prompt_len=d["prompt_len"],
        meta=_source_notes(d.get("meta", {}), d.get("flags")),
    )


def _source_notes(meta: dict, flags) -> dict:
    """`meta` without the warnings that `to_dict` derived from the flags (the trace derives them again)."""
    derived = set(flag_warnings(flags or []))
    notes = [w for w in meta.get("warnings", ()) if w not in derived]
    meta = {key: value for key, value in meta.items() if key != "warnings"}
    return {**meta, "warnings": notes} if notes else meta


def _floats_out(arr: np.ndarray) -> list:
    # float(np.float32) is exact in float64, and JSON keeps float64 exactly through repr.
    return [float(x) if math.isfinite(x) else str(float(x)) for x in arr.tolist()]


def _floats_in(values) -> np.ndarray:
    return np.array([float(x) for x in values], dtype=np.float32)
