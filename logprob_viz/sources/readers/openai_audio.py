"""OpenAI's transcription logprobs: ``/v1/audio/transcriptions`` with ``include: ["logprobs"]``.

A transcription is ``{text, logprobs: [{token, logprob, bytes}], usage}``: the logprobs list
sits at the top level, one entry per token and no alternatives. Streamed (``stream: true``),
``transcript.text.delta`` events carry each delta's logprobs, and the closing
``transcript.text.done`` event repeats every logprob of the transcript: it is read alone when
present (reading both would count every token twice). Schema: the openai SDK's
``openai/types/audio/transcription.py``, ``transcription_text_delta_event.py`` and
``transcription_text_done_event.py`` (openai-python, generated from OpenAI's OpenAPI spec).
"""

from __future__ import annotations

from ...records.trace import Trace
from .assemble import server_meta, str_or_none
from .checks import expect_dict, expect_list
from .entries import delta_entries, entries_trace

__all__ = ["transcription_trace", "is_transcription", "is_transcription_stream"]

_KEYS_OF_OTHER_FORMATS = ("choices", "candidates", "meta_info", "output", "message", "response", "details")

# where an answer without logprobs is refused, and how to ask for them
NO_LOGPROBS = (
    "logprobs",
    "this transcription has no logprobs:"
    " request them with include=[\"logprobs\"] (gpt-4o-transcribe, gpt-4o-mini-transcribe)",
)



def is_transcription(data) -> bool:
    return isinstance(data, dict) and isinstance(data.get("text"), str) and isinstance(data.get("logprobs"), list) \
        and not any(key in data for key in _KEYS_OF_OTHER_FORMATS)


def is_transcription_stream(data) -> bool:
    return isinstance(data, list) and bool(data) and all(
        isinstance(e, dict) and str(e.get("type", "")).startswith("transcript.text.") for e in data)


def transcription_trace(data, *, top_logprobs: int | None = None, table=None) -> Trace:
    """A trace from a transcription (a dict) or its stream events (a list)."""
    events = data if isinstance(data, list) else None
    if events is not None:
        done = [e for e in events if isinstance(e, dict) and e.get("type") == "transcript.text.done"]
        if done and done[-1].get("logprobs") is not None:
            data = done[-1]  # every logprob again, with the whole text
            where = f"event {events.index(data)}."
            entries, text = expect_list(data.get("logprobs"), f"{where}logprobs"), data.get("text")
        else:  # no done event (a cut stream): the deltas' logprobs, in order
            entries, text = delta_entries(events, "transcript.text.delta", "a transcription stream event")
    else:
        data = expect_dict(data, "", "a transcription")
        entries, text = expect_list(data.get("logprobs"), "logprobs"), data.get("text")
    meta = server_meta("openai", "openai.transcription", text=str_or_none(text),
                       stream_chunks=len(events) if events is not None else None)
    return entries_trace(entries, top_logprobs, meta, table=table, none=NO_LOGPROBS)
