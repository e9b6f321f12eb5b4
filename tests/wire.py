"""An independent reader of the views' wire format, for every suite (``import wire``).

Written from the format as ``logprob_viz/views/codec.py`` describes it, not by importing it: an
array is ``{"dtype", "shape", "buffer"}`` (little-endian ``float32 int32 uint8 uint16 uint32``),
a list of texts ``{"blob", "offsets"}`` (UTF-8, text e = blob[offsets[e]:offsets[e + 1]]), and a
message or saved state carries its binary parts separately with the path of each. On top of
those, the three views' payloads: the LogprobView's trace (`trace`), the compare view's
(`comparison`) and the lens view's (`lens`), each as plain Python lists and numpy arrays.
"""

from __future__ import annotations

import base64

import numpy as np

__all__ = ["array", "texts", "put_back", "from_saved_state", "trace", "comparison", "lens"]

_LITTLE_ENDIAN = {"float32": "<f4", "int32": "<i4", "uint8": "u1", "uint16": "<u2", "uint32": "<u4"}


def array(field, dtype: str | None = None) -> np.ndarray | None:
    """The array a field holds, from its own dtype and shape (checked to be `dtype` when given)."""
    if field is None:
        return None
    assert dtype is None or field["dtype"] == dtype, f"dtype {field['dtype']}, expected {dtype}"
    assert field["dtype"] in _LITTLE_ENDIAN, f"{field['dtype']} is not a wire dtype"
    values = np.frombuffer(bytes(field["buffer"]), dtype=_LITTLE_ENDIAN[field["dtype"]])
    return values.reshape(field["shape"])


def texts(field) -> list[str]:
    """The strings of a ``{"blob", "offsets"}`` field."""
    blob, offsets = array(field["blob"], "uint8").tobytes(), array(field["offsets"], "uint32")
    return [blob[offsets[e] : offsets[e + 1]].decode("utf-8") for e in range(len(offsets) - 1)]


def put_back(obj, paths, buffers):
    """`obj` with each buffer at its path (as the browser's widget layer does); changed in place."""
    for path, buf in zip(paths, buffers, strict=True):
        target = obj
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = bytes(buf)
    return obj


def from_saved_state(entry: dict) -> dict:
    """A widget's state as a notebook saves it (``metadata.widgets``), its base64 buffers back in place."""
    buffers = entry.get("buffers", [])
    return put_back(entry["state"], [b["path"] for b in buffers], [base64.b64decode(b["data"]) for b in buffers])


def _column(arrays, name, dtype=None, count=None):
    out = array(arrays[name], dtype).reshape(-1)
    assert count is None or out.shape == (count,), f"{name}: {out.shape} values, expected {count}"
    return out


def _table(arrays, n, k):
    """The LogprobView's table of distinct (id, text) entries and the tokens' and alternatives' references."""
    blob, offsets = _column(arrays, "text", "uint8").tobytes(), _column(arrays, "text_offsets")
    u = len(offsets) - 1
    table = [blob[offsets[e] : offsets[e + 1]].decode("utf-8") for e in range(u)]
    table_ids = _column(arrays, "text_ids", None, u).astype(np.int64) - 1  # stored as id + 1
    assert len(set(zip(table_ids.tolist(), table, strict=False))) == u, "the table holds each (id, text) once"
    token_refs = _column(arrays, "token_text", None, n).astype(np.int64) - 1  # -1: none
    top_refs = _column(arrays, "top_text", None, n * k).astype(np.int64).reshape(n, k) - 1
    assert (token_refs >= 0).all() and (token_refs < u).all() and (top_refs < u).all()
    return table, table_ids, token_refs, top_refs


def trace(payload: dict) -> dict:
    """A LogprobView payload (``encode_trace``) read as the browser does: tokens, ids, numbers, splits."""
    n, k, arrays = payload["n"], payload["k"], payload["arrays"]
    table, table_ids, token_refs, top_refs = _table(arrays, n, k)
    counts = (top_refs >= 0).sum(axis=1)
    assert all((top_refs[i, counts[i] :] == -1).all() for i in range(n)), "padding only after a token's alternatives"
    u = len(table)
    out = {
        "tokens": [table[r] for r in token_refs],
        "token_ids": table_ids[token_refs] if n else np.zeros(0, np.int32),
        "top_tokens": [[table[r] for r in top_refs[i, : counts[i]]] for i in range(n)],
        "top_ids": np.where(top_refs >= 0, table_ids[np.maximum(top_refs, 0)] if u else -1, -1),
        "logprobs": _column(arrays, "logprobs", "float32", n),
        "ranks": _column(arrays, "ranks", "int32", n),
        "entropy": _column(arrays, "entropy", "float32", n) if arrays["entropy"] is not None else np.full(n, np.nan),
        "top_logprobs": _column(arrays, "top_logprobs", "float32", n * k).reshape(n, k),
    }
    starts, ends = _column(arrays, "split_starts", "int32"), _column(arrays, "split_ends", "int32")
    members = [i for s, e in zip(starts, ends, strict=True) for i in range(s, e)]
    split_refs = _column(arrays, "split_text", None, len(members)).astype(np.int64) - 1
    byte_offsets = _column(arrays, "split_byte_offsets", "uint32", len(members) + 1)
    raw = _column(arrays, "split_bytes", "uint8").tobytes()
    out["shown"], out["split_bytes"] = list(out["tokens"]), {}
    for m, i in enumerate(members):
        out["shown"][i] = table[split_refs[m]]
        out["split_bytes"][i] = raw[byte_offsets[m] : byte_offsets[m + 1]]
    out["split_runs"] = list(zip(starts.tolist(), ends.tolist(), strict=True))
    if arrays["processed_logprobs"] is not None:
        out["processed_logprobs"] = _column(arrays, "processed_logprobs", "float32", n)
        out["processed_top_logprobs"] = _column(arrays, "processed_top_logprobs", "float32", n * k).reshape(n, k)
    return out


def comparison(payload: dict) -> dict:
    """A compare view payload: spans (starts, ends, texts, logprobs [R, S]) and per row its tokens."""
    s = payload["n_spans"]
    rows = []
    for row in payload["rows"]:
        n = row["n"]
        alt_start = array(row["alt_start"], "uint32")
        alt_texts, alt_logprobs = texts(row["alt_texts"]), array(row["alt_logprobs"], "float32")
        assert alt_start.shape == (n + 1,) and len(alt_texts) == alt_logprobs.shape[0] == alt_start[-1]
        rows.append({
            "tokens": texts(row["tokens"]),
            "logprobs": array(row["logprobs"], "float32"),
            "ranks": array(row["ranks"], "int32"),
            "span_of": array(row["span_of"], "int32"),
            "alternatives": [
                list(zip(alt_texts[alt_start[i] : alt_start[i + 1]], alt_logprobs[alt_start[i] : alt_start[i + 1]],
                         strict=True))
                for i in range(n)
            ],
            "split": dict(zip(array(row["split_tokens"], "int32").tolist(), texts(row["split_texts"]), strict=True)),
        })
    return {
        "span_starts": array(payload["span_starts"], "uint32"),
        "span_ends": array(payload["span_ends"], "uint32"),
        "span_texts": texts(payload["span_texts"]),
        "span_logprobs": array(payload["span_logprobs"], "float32").reshape(payload["n_rows"], s),
        "rows": rows,
    }


def lens(payload: dict) -> dict:
    """A lens view payload: [L, N] arrays, the tokens' and each layer's top guess's texts."""
    table = texts(payload["texts"])
    shape = (payload["n_layers"], payload["n"])
    out = {
        "tokens": [table[r] for r in array(payload["token_text"], "uint32")],
        "top1": [[table[r] for r in row] for row in array(payload["top1_text"], "uint32").reshape(shape)],
        **{name: array(payload[name]).reshape(shape) for name in ("logprobs", "ranks", "entropy", "top1_logprobs")},
    }
    if payload["inline"]:
        refs = array(payload["top_text"], "uint32").reshape(*shape, payload["k"])
        out["top_tokens"] = [[[table[r] for r in cell] for cell in row] for row in refs]
        out["top_logprobs"] = array(payload["top_logprobs"], "float32").reshape(*shape, payload["k"])
    return out
