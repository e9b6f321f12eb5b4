"""Rows of a ``ray.data.llm`` vLLM processor as corpus rows (`lv.ray.from_vllm_rows`).

A processor built with ``sampling_params={"max_tokens": 1, "prompt_logprobs": k}`` returns per
row ``prompt`` (the text), ``prompt_token_ids`` and ``prompt_logprobs``: per position None (the
first: nothing predicts it) or ``{token_id: {"logprob", "rank", "decoded_token"}}`` holding the
prompt's own token and the top K. Each row is read as the vLLM ``prompt_logprobs`` response it
is (`lv.read`'s OpenAI reader: the token boundaries from ``prompt_token_ids``, the alternatives
by rank), so a row gives the same trace as vLLM's server would; the one generated token is not
part of it (its logprobs were not asked for).
"""

from __future__ import annotations

from ...records.corpus import Corpus
from ...records.corpus.parquet import trace_table
from ..ray_data import import_ray
from .openai import from_openai

__all__ = ["from_vllm_rows", "vllm_rows_table", "row_trace"]

ROW_FIELDS = ("prompt_token_ids", "prompt_logprobs")


def _plain(value):
    """Arrow/numpy values of a Ray row as plain Python (lists, dicts, ints)."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if v is not None or k == "decoded_token"}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _entries(position):
    """One prompt_logprobs position as ``{id: {...}}``: a dict as vLLM gives it, or Arrow's list of
    (key, value) pairs when Ray stored the dict as a map column."""
    if position is None or isinstance(position, dict):
        return position
    return {str(k): v for k, v in position}


def row_trace(row: dict, *, top_logprobs: int | None = None, tokenizer=None, where: str = "row"):
    """The trace of one vLLM row (see the module docstring)."""
    missing = [name for name in ROW_FIELDS if row.get(name) is None]
    if missing:
        raise ValueError(f"{where} has no {', '.join(missing)}: build the vLLM processor with sampling_params="
                         "{'max_tokens': 1, 'prompt_logprobs': k} (and engine_kwargs max_logprobs >= k)")
    positions = [_entries(p) for p in _plain(list(row["prompt_logprobs"]))]
    response = {
        "object": "text_completion", "model": row.get("model"),
        "choices": [{"index": 0, "text": "", "prompt_logprobs": positions,
                     "prompt_token_ids": [int(i) for i in _plain(row["prompt_token_ids"])]}],
    }
    try:
        trace = from_openai(response, top_logprobs=top_logprobs, prompt=row.get("prompt"), tokenizer=tokenizer,
                            source="vllm")
    except ValueError as error:
        raise type(error)(f"{where}: {error}") from None
    trace.meta["format"] = "ray.data.llm"
    return trace


def vllm_rows_table(rows, *, top_logprobs: int | None = None, tokenizer=None, label_column: str | None = None):
    """A pyarrow Table in the corpus schema of vLLM rows (dicts)."""
    rows = list(rows)
    traces = [row_trace(r, top_logprobs=top_logprobs, tokenizer=tokenizer, where=f"row {i}")
              for i, r in enumerate(rows)]
    labels = [str(r.get(label_column, "")) if label_column else "" for r in rows]
    keep = ("prompt", "generated_text", "num_input_tokens", "id", "index")
    metadata = [{k: _plain(r[k]) for k in keep if r.get(k) is not None} for r in rows]
    return trace_table(traces, labels, metadata)


def _batch_table(batch, **options):
    return vllm_rows_table(batch.to_pylist(), **options)


def from_vllm_rows(data, *, top_logprobs: int | None = None, tokenizer=None, label_column: str | None = None,
                   batch_size: int = 256):
    """Corpus rows from a ``ray.data.llm`` vLLM processor's output.

    Parameters
    ----------
    data : ray.data.Dataset or list of dict
        The processor's rows (``prompt_token_ids``, ``prompt_logprobs``; ``prompt`` when kept).
    top_logprobs : int, optional
        The ``prompt_logprobs`` k that was asked for (inferred from the ranks when not given).
    tokenizer : transformers tokenizer, optional
        The served model's: every token then gets its exact bytes from its id.
    label_column : str, optional
        A column to use as each trace's label.

    Returns
    -------
    ray.data.Dataset of corpus rows (for a Dataset: ``.write_parquet(folder)``), or an `lv.Corpus`
    (for a list of rows).
    """
    if isinstance(data, (list, tuple)):
        traces = [row_trace(r, top_logprobs=top_logprobs, tokenizer=tokenizer, where=f"row {i}")
                  for i, r in enumerate(data)]
        labels = [str(r.get(label_column, i)) if label_column else str(i) for i, r in enumerate(data)]
        return Corpus(traces, labels)
    ray = import_ray()
    if not isinstance(data, ray.data.Dataset):
        raise TypeError(f"give a ray.data.Dataset of the processor's rows or a list of row dicts, "
                        f"got {type(data).__name__}")
    return data.map_batches(_batch_table, fn_kwargs={"top_logprobs": top_logprobs, "tokenizer": tokenizer,
                                                     "label_column": label_column},
                            batch_size=batch_size, batch_format="pyarrow")
