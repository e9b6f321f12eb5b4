"""The wire codec of every view: what crosses from the kernel to the browser, self-describing.

One place writes it; ``js/toolkit/codec.js`` reads it. Every array travels as
``{"dtype", "shape", "buffer"}`` (as jupyter-scatter sends numpy arrays): ``dtype`` one of
``float32 int32 uint8 uint16 uint32``, little-endian; ``shape`` its dimensions; ``buffer`` its
bytes (a memoryview, which the widget layer sends as a binary buffer). Nothing is typed by field
name: a reader needs only ``DTYPES``. A list of texts travels as ``{"blob", "offsets"}``
(`texts`): two such arrays, text ``e`` being ``blob[offsets[e]:offsets[e + 1]]`` (UTF-8). A custom
message with arrays (`message`) is ``{..., "buffer_paths", "payload"}``: the payload's buffers are
the message's binary parts, each put back at its path. The compare view's and the lens view's
payloads are written with these by ``compare/view.py`` and ``lens/view.py``; the LogprobView's
trace, here.

The LogprobView's trace (`encode_trace`)::

    {"version": 2, "id": str, "n": N, "k": K, "prompt_len": int,
     "summary": {"perplexity", "mean_logprob", "mean_entropy"},   # None where unknown
     "meta": {...}, "flag_notes": {"i": [str, ...]},              # JSON-safe
     "arrays": {name: {"dtype", "shape", "buffer"} or None}}

An append (`encode_append`) is the same shape for tokens ``[start, N)`` of a longer trace, plus
``"start"``: the browser keeps its first ``start`` tokens and appends the rest, so a stream sends
each token once. ``start`` is the old length, or earlier when the old trace ended inside a
character split across tokens (those tokens are shown differently once the character completes).

The arrays (texts are sent once each): ``text`` (uint8, a UTF-8 blob) holds a table of the
distinct (token id, text) pairs, entry ``e`` being ``text[text_offsets[e]:text_offsets[e + 1]]``,
with ids in ``text_ids`` as id + 1 (0: no id). Tokens and alternatives are references into the
table, ``token_text`` [N] and ``top_text`` [N, K]: reference ``r`` is entry ``r - 1``, 0 is none
(the padding after a token's alternatives). ``logprobs``, ``entropy`` [N] and ``top_logprobs``
[N, K] are float32, ``ranks`` int32; ``entropy`` and the ``processed_*`` arrays are None when the
trace has none. A character split across tokens (`tokens.split_groups`): ``split_starts`` /
``split_ends`` (int32 [G]) are the runs; for each of their tokens in order, ``split_text`` is
the text it completes (a reference) and ``split_bytes`` / ``split_byte_offsets`` its raw bytes.
"""

from __future__ import annotations

import math

import numpy as np

from ..records.flags import SHOWN_BY_THE_CHART, TOKEN_FLAGS
from ..records.tokens import split_groups
from ..records.trace import Trace

__all__ = [
    "VERSION",
    "DTYPES",
    "array",
    "read_array",
    "texts",
    "message",
    "encode_trace",
    "encode_append",
    "append_start",
    "extends",
    "split_buffers",
    "join_buffers",
    "json_safe",
]

VERSION = 2
DTYPES = {"float32": "<f4", "int32": "<i4", "uint8": "u1", "uint16": "<u2", "uint32": "<u4"}
_BINARY = (bytes, bytearray, memoryview)


def array(name: str, values, dtype: str) -> dict:
    """``{"dtype", "shape", "buffer"}`` of `values` as `dtype` (a DTYPES name), checked to fit."""
    arr = np.asarray(values)
    target = np.dtype(DTYPES[dtype])
    if target.kind in "iu" and arr.size and arr.dtype.kind in "iu":
        info = np.iinfo(target)
        lo, hi = int(arr.min()), int(arr.max())
        if lo < info.min or hi > info.max:
            raise ValueError(f"{name} has values from {lo} to {hi}, which do not fit the view's {dtype}")
    arr = np.ascontiguousarray(arr, dtype=target)
    # The buffer is flat bytes (a zero-sized dimension cannot be cast: reshape first); shape says the rest.
    return {"dtype": dtype, "shape": list(arr.shape), "buffer": memoryview(arr.reshape(-1)).cast("B")}


def read_array(field: dict | None) -> np.ndarray | None:
    """The numpy array of an `array` field (from its own dtype and shape); None stays None."""
    if field is None:
        return None
    return np.frombuffer(bytes(field["buffer"]), dtype=DTYPES[field["dtype"]]).reshape(field["shape"])


def texts(name: str, strings) -> dict:
    """``{"blob", "offsets"}`` of `strings`: one UTF-8 blob (uint8) and its offsets (uint32, len + 1)."""
    blob, offsets = _utf8_by_arrow(strings) or _utf8_by_python(strings)
    return {"blob": array(f"{name}.blob", blob, "uint8"), "offsets": array(f"{name}.offsets", offsets, "uint32")}


def _utf8_by_python(strings) -> tuple[np.ndarray, np.ndarray]:
    encoded = [s.encode("utf-8", errors="surrogatepass") for s in strings]
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in encoded], dtype=np.int64)])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


def arrow_strings(strings):
    """`strings` as one Arrow string array (a TextColumn's own, else made in C), or None: without
    pyarrow, or for what Arrow cannot hold (a lone surrogate: Arrow holds only UTF-8; a non-string)."""
    try:
        import pyarrow as pa
    except ImportError:
        return None
    values = strings if isinstance(strings, (pa.Array, pa.ChunkedArray)) else getattr(strings, "values", None)
    # (a TextColumn of a Parquet-backed corpus holds Arrow already)
    try:
        column = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(list(strings), pa.string())
    except (pa.ArrowException, UnicodeError, TypeError):
        return None
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _utf8_by_arrow(strings) -> tuple[np.ndarray, np.ndarray] | None:
    """(blob, offsets) through pyarrow, which encodes in C (1M texts: ~0.3 s, against ~3 s for the
    loop); None where `arrow_strings` is (the loop's surrogatepass keeps a lone surrogate)."""
    import pyarrow as pa

    column = arrow_strings(strings)
    if column is None:
        return None
    column = column.cast(pa.large_string())
    _, offsets_buffer, data_buffer = column.buffers()
    offsets = np.frombuffer(offsets_buffer, np.int64)[column.offset : column.offset + len(column) + 1]
    data = np.frombuffer(data_buffer, np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    return data[offsets[0] : offsets[-1]], offsets - offsets[0]


def message(kind: str, payload: dict, **fields) -> tuple[dict, list]:
    """(content, buffers) of a custom message ``{"type": kind, **fields, "buffer_paths", "payload"}``:
    `payload`'s binary buffers taken out (`split_buffers`) to travel as the message's binary parts."""
    content, paths, buffers = split_buffers(payload)
    return {"type": kind, **fields, "buffer_paths": paths, "payload": content}, buffers


def _narrowest(largest: int) -> str:
    return "uint16" if 0 <= largest <= 0xFFFF else "uint32"


def json_safe(value, depth: int = 0):
    """`value` with what JSON cannot hold replaced: non-finite floats by None, the rest by str."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, np.generic):
        return json_safe(value.item(), depth)
    if depth < 4 and isinstance(value, dict):
        return {str(k): json_safe(v, depth + 1) for k, v in value.items()}
    if depth < 4 and isinstance(value, (list, tuple)):
        return [json_safe(v, depth + 1) for v in value]
    return str(value)


def _mean_known(values) -> float:
    arr = np.asarray(values, dtype=np.float64)
    known = arr[~np.isnan(arr)]
    return float(known.mean()) if known.size else math.nan


def summary(trace: Trace) -> dict:
    """The header's numbers (None where the source gave nothing to compute them from)."""
    return json_safe(
        {
            "perplexity": trace.perplexity(),
            "mean_logprob": trace.mean_logprob(),
            "mean_entropy": _mean_known(trace.entropy),
        }
    )


def flag_notes(trace: Trace, start: int = 0) -> dict[str, list[str]]:
    """{token index: what the source lost there, in words} for tokens from `start` on (sparse)."""
    notes = {}
    for i, codes in sorted(trace.flagged().items()):  # only flagged tokens: no flags list per token is made
        lost = [f"{c}: {TOKEN_FLAGS.get(c, c)}" for c in codes if c not in SHOWN_BY_THE_CHART]
        if i >= start and lost:
            notes[str(i)] = lost
    return notes


def _arrays(trace: Trace) -> dict:
    """The per-token arrays of `trace` (see the module docstring)."""
    n, k = len(trace), trace.k
    groups = split_groups(trace.token_bytes)
    members = [i for start, end, _ in groups for i in range(start, end)]
    split_raw = [trace.token_bytes[i] for i in members]
    counts = np.array([len(row) for row in trace.top_tokens], dtype=np.int64)
    has_alt = np.arange(k) < counts[:, None]  # (N, K): row by row, padding after each row's alternatives
    # Every text to send: the tokens, the alternatives (row by row), the split pieces' texts.
    all_texts = list(trace.tokens)
    for row in trace.top_tokens:
        all_texts.extend(row)
    all_texts.extend(shown for _, _, run in groups for shown in run)
    all_ids = np.concatenate([trace.token_ids, trace.top_ids[has_alt], np.full(len(members), -1)]).astype(np.int64)
    # Distinct (id, text) pairs: texts numbered by a dict (str hashes are cached), then the pairs
    # as one int64 each, made unique by numpy; 2.1M texts at N=100k, K=20.
    numbers: dict[str, int] = {}
    put = numbers.setdefault
    text_no = np.fromiter((put(t, len(numbers)) for t in all_texts), dtype=np.int64, count=len(all_texts))
    id_plus_one = np.maximum(all_ids + 1, 0)  # 0: no id (-1, or any negative)
    if id_plus_one.size and int(id_plus_one.max()) > 0xFFFFFFFE:
        raise ValueError(f"token ids go up to {int(all_ids.max())}, which do not fit the view's uint32")
    pairs, inverse = np.unique((text_no << 32) | id_plus_one, return_inverse=True)
    refs = inverse.reshape(-1) + 1  # (N + alternatives + split pieces,)
    distinct = list(numbers)
    texts = [distinct[j] for j in (pairs >> 32).tolist()]
    ids_plus_one = pairs & 0xFFFFFFFF  # (U,)
    top_refs = np.zeros((n, k), dtype=np.int64)
    top_refs[has_alt] = refs[n : len(refs) - len(members)]

    encoded = [s.encode("utf-8", errors="surrogatepass") for s in texts]
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in encoded], dtype=np.int64)])  # (U + 1,)
    byte_offsets = np.concatenate([[0], np.cumsum([len(b) for b in split_raw], dtype=np.int64)])  # (M + 1,)
    ref = _narrowest(len(texts))
    processed = trace.processed_logprobs is not None
    return {
        "text": array("text", np.frombuffer(b"".join(encoded), dtype=np.uint8), "uint8"),
        "text_offsets": array("text_offsets", offsets, _narrowest(int(offsets[-1]))),  # 4 GiB of text at most
        "text_ids": array("text_ids", ids_plus_one, _narrowest(int(ids_plus_one.max(initial=0)))),
        "token_text": array("token_text", refs[:n], ref),
        "top_text": array("top_text", top_refs, ref),
        "logprobs": array("logprobs", trace.logprobs, "float32"),
        "ranks": array("ranks", trace.ranks, "int32"),
        "entropy": None if np.isnan(trace.entropy).all() else array("entropy", trace.entropy, "float32"),
        "top_logprobs": array("top_logprobs", trace.top_logprobs, "float32"),
        "processed_logprobs": array("processed_logprobs", trace.processed_logprobs, "float32") if processed else None,
        "processed_top_logprobs": (
            array("processed_top_logprobs", trace.processed_top_logprobs, "float32") if processed else None
        ),
        "split_starts": array("split_starts", [g[0] for g in groups], "int32"),
        "split_ends": array("split_ends", [g[1] for g in groups], "int32"),
        "split_text": array("split_text", refs[len(refs) - len(members) :], ref),
        "split_bytes": array("split_bytes", np.frombuffer(b"".join(split_raw), dtype=np.uint8), "uint8"),
        "split_byte_offsets": array("split_byte_offsets", byte_offsets, "uint32"),
    }


def _header(trace: Trace, trace_id: str) -> dict:
    return {
        "version": VERSION,
        "id": trace_id,
        "n": len(trace),
        "k": trace.k,
        "prompt_len": trace.prompt_len,
        "summary": summary(trace),
        "meta": json_safe(trace.meta),
    }


def encode_trace(trace: Trace, trace_id: str = "") -> dict:
    """The whole of `trace` as one payload; `trace_id` names it for later appends."""
    if not isinstance(trace, Trace):
        raise TypeError(
            f"the view shows a logprob_viz.Trace, got {type(trace).__name__}; "
            "make one with lv.generate(...), lv.score(...) or lv.from_openai(...)"
        )
    return {**_header(trace, trace_id), "flag_notes": flag_notes(trace), "arrays": _arrays(trace)}


def extends(longer: Trace, shorter: Trace) -> bool:
    """Whether `longer` is `shorter` followed by more tokens (same prompt, same K, same columns)."""
    n = len(shorter)
    if len(longer) < n or longer.k != shorter.k or longer.prompt_len != shorter.prompt_len:
        return False
    if (longer.processed_logprobs is None) != (shorter.processed_logprobs is None):
        return False
    # Arrays compare in C; the bytes list by identity first (a stream's snapshots share the objects).
    # The alternatives' texts are compared through their ids and logprobs, and on the last token:
    # comparing N x K strings on every snapshot of a long stream would cost more than the send.
    same = (
        np.array_equal(longer.token_ids[:n], shorter.token_ids)
        and np.array_equal(longer.logprobs[:n], shorter.logprobs, equal_nan=True)
        and np.array_equal(longer.top_ids[:n], shorter.top_ids)
        and np.array_equal(longer.top_logprobs[:n], shorter.top_logprobs, equal_nan=True)
        and longer.token_bytes[:n] == shorter.token_bytes
    )
    return bool(same and (n == 0 or longer.top_tokens[n - 1] == shorter.top_tokens[n - 1]))


def append_start(longer: Trace, old_n: int, window: int = 32) -> int:
    """Where an append of `longer` over its first `old_n` tokens starts: `old_n`, or the start of
    a character split across tokens that begins before `old_n` and ends after it."""
    lo = max(0, old_n - window)
    start = old_n
    for g_start, g_end, _ in split_groups(longer.token_bytes[lo:]):
        if lo + g_start < old_n < lo + g_end:
            start = min(start, lo + g_start)
    # Trailing bytes that never completed were shown escaped: resend them too (they may now be a run).
    return start


def encode_append(longer: Trace, start: int, trace_id: str) -> dict:
    """Tokens ``[start, N)`` of `longer`, with the header of the whole of it (see the module docstring)."""
    return {
        **_header(longer, trace_id),
        "start": start,
        "flag_notes": flag_notes(longer, start),
        "arrays": _arrays(longer[start:]),
    }


def split_buffers(obj, _path=()):
    """(JSON part, buffer paths, buffers): every bytes/memoryview in `obj` taken out, as a widget
    message carries them (a dict loses the key, a list keeps None in its place)."""
    paths, buffers = [], []

    def walk(value, path):
        if isinstance(value, dict):
            out = {}
            for key, v in value.items():
                if isinstance(v, _BINARY):
                    paths.append([*path, key])
                    buffers.append(v)
                else:
                    out[key] = walk(v, [*path, key])
            return out
        if isinstance(value, (list, tuple)):
            out = []
            for i, v in enumerate(value):
                if isinstance(v, _BINARY):
                    paths.append([*path, i])
                    buffers.append(v)
                    out.append(None)
                else:
                    out.append(walk(v, [*path, i]))
            return out
        return value

    return walk(obj, list(_path)), paths, buffers


def join_buffers(obj, paths, buffers):
    """The inverse of `split_buffers`: each buffer put back at its path in `obj` (changed in place)."""
    for path, buf in zip(paths, buffers, strict=False):
        target = obj
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = buf
    return obj
