"""Ollama's native ``/api/generate`` and ``/api/chat`` with ``logprobs: true`` (and ``top_logprobs: K``).

Each answer (or each NDJSON line of a stream) carries ``logprobs``: a list of ``{token, logprob,
bytes, top_logprobs: [{token, logprob, bytes}]}``, the entry shape of OpenAI's chat logprobs.
Sources: ollama/ollama ``docs/api.md`` and ollama/ollama-python PR #601 (``ollama/_types.py``
``Logprob``/``TokenLogprob``, ``examples/generate-logprobs.py``). Ollama's OpenAI-compatible
routes (``/v1/...``) are read by `openai.from_openai`.
"""

from __future__ import annotations

from ...records.trace import Trace
from .assemble import server_meta, str_or_none
from .checks import expect_dict, expect_list
from .entries import entries_trace
from .numbers import numbers_tag

__all__ = ["ollama_trace", "is_ollama"]

# where an answer without logprobs is refused, and how to ask for them
NO_LOGPROBS = (
    "logprobs",
    "the provider returned no logprobs:"
    " request them with \"logprobs\": true (and \"top_logprobs\": K for alternatives)",
)



def is_ollama(data) -> bool:
    """An /api/generate or /api/chat answer: a stream line has ``created_at`` and ``done``; a body
    may have neither (ollama-python's own test fixtures: ``{model, message, logprobs}`` and
    ``{model, response, logprobs}``), and then its ``logprobs`` list says what it is."""
    if not isinstance(data, dict) or not ("response" in data or isinstance(data.get("message"), dict)):
        return False
    return ("done" in data and "created_at" in data) or ("model" in data and isinstance(data.get("logprobs"), list))


def ollama_trace(data, *, top_logprobs: int | None = None, table=None) -> Trace:
    """A trace from one answer (a dict) or the NDJSON stream's lines (a list of dicts)."""
    chunks = data if isinstance(data, list) else [data]
    entries: list = []
    text, chat, last = "", False, {}
    for n, chunk in enumerate(chunks):
        where = f"line {n}" if isinstance(data, list) else ""
        chunk = expect_dict(chunk, where, "an /api/generate or /api/chat answer")
        prefix = f"{where}." if where else ""
        if isinstance(chunk.get("message"), dict):
            chat = True
            content = chunk["message"].get("content")
        else:
            content = chunk.get("response")
        text += content if isinstance(content, str) else ""
        entries += expect_list(chunk.get("logprobs") or [], f"{prefix}logprobs")
        last = chunk
    meta = server_meta(
        "ollama", "ollama.chat" if chat else "ollama.generate",
        model=str_or_none(last.get("model")),
        text=text,
        finish_reason=last.get("done_reason"),
        stream_chunks=len(chunks) if isinstance(data, list) else None,
        **numbers_tag("raw", "Ollama: the logits' logprobs before temperature and the samplers (ollama#16196)"),
    )
    return entries_trace(entries, top_logprobs, meta, table=table, none=NO_LOGPROBS)
