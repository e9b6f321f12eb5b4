"""`read`: one entry point for every server's logprobs; it recognises the format and reads it.

    t = lv.read(response)      # a Trace (a list of traces for several choices / candidates)

Formats (``meta["format"]``, ``meta["server"]``):

- OpenAI-compatible Completions / Chat (OpenAI, vLLM, llama.cpp's and Ollama's ``/v1`` routes,
  vLLM's ``prompt_logprobs``), with stream chunks: `openai.from_openai`;
- llama.cpp native ``/completion`` (``completion_probabilities``; ``post_sampling_probs``;
  streamed; the older ``probs`` shape): `llamacpp`;
- TGI ``/generate`` details and ``/generate_stream`` events: `tgi`;
- SGLang ``/generate`` ``meta_info``: `sglang`;
- Ollama ``/api/generate`` and ``/api/chat`` (and their NDJSON streams): `ollama`;
- OpenAI Responses API (and its stream events): `openai_responses`;
- Gemini ``generateContent`` ``logprobsResult`` (and stream chunks): `gemini`;
- OpenAI transcriptions (``logprobs`` at the top level; the stream's events): `openai_audio`.

Input may be a dict, a list, JSON text, SSE or NDJSON text, bytes, or an SDK object.
"""

from __future__ import annotations

from .errors import LogprobFormatError, describe
from .gemini import gemini_traces, is_gemini
from .inputs import to_plain
from .llamacpp import is_llamacpp, llamacpp_trace
from .ollama import is_ollama, ollama_trace
from .openai import check_top_logprobs, read_openai, table_for
from .openai_audio import is_transcription, is_transcription_stream, transcription_trace
from .openai_responses import is_response, is_response_stream, responses_trace
from .openai_shapes import is_prompt_logprobs, raise_error
from .position import no_gc_pauses
from .sglang import is_sglang, sglang_trace
from .tgi import is_tgi, is_tgi_stream, tgi_trace

__all__ = ["read", "detect_format", "KNOWN_FORMATS"]

KNOWN_FORMATS = {
    "openai": "OpenAI-compatible Completions / Chat Completions (OpenAI, vLLM, llama.cpp /v1, Ollama /v1): "
              "a response with 'choices', its stream chunks, or vLLM 'prompt_logprobs'",
    "llamacpp": "llama.cpp /completion with n_probs: 'completion_probabilities' (also streamed)",
    "tgi": "TGI /generate with details ('generated_text' + 'details'), or /generate_stream events",
    "sglang": "SGLang /generate with return_logprob: 'text' + 'meta_info' (a list for a batch)",
    "ollama": "Ollama /api/generate or /api/chat with logprobs ('created_at', 'done', 'logprobs'; NDJSON stream)",
    "openai_responses": "OpenAI Responses API ('object': 'response', 'output'), or its stream events",
    "gemini": "Gemini generateContent ('candidates' with 'logprobsResult'), or its stream chunks",
    "openai_transcription": "OpenAI /v1/audio/transcriptions with include=['logprobs'] ('text' + 'logprobs'), "
                            "or its stream events",
}


def _is_openai(data) -> bool:
    if isinstance(data, list):
        return bool(data) and (is_prompt_logprobs(data) or all(
            isinstance(c, dict) and ("choices" in c or ("error" in c and "object" not in c)) for c in data))
    return isinstance(data, dict) and ("choices" in data or ("tokens" in data and "token_logprobs" in data)
                                       or isinstance(data.get("content"), list) or "prompt_logprobs" in data)


def detect_format(data) -> str | None:
    """The name (a key of `KNOWN_FORMATS`) of the format plain data is in, or None."""
    if _is_openai(data):
        return "openai"
    if isinstance(data, list):
        if not data or not all(isinstance(e, dict) for e in data):
            return None
        if any(is_llamacpp(e) for e in data) and all("content" in e and "stop" in e for e in data):
            return "llamacpp"  # stream events: the last one ("stop": true) has no probabilities
        if is_tgi_stream(data):
            return "tgi"
        if all(is_sglang(e) for e in data):
            return "sglang"
        if all(is_ollama(e) for e in data):
            return "ollama"
        if is_response_stream(data):
            return "openai_responses"
        if is_transcription_stream(data):
            return "openai_transcription"
        if all(is_gemini(e) for e in data):
            return "gemini"
        return None
    for name, test in (("llamacpp", is_llamacpp), ("tgi", is_tgi), ("sglang", is_sglang), ("ollama", is_ollama),
                       ("openai_responses", is_response), ("gemini", is_gemini),
                       ("openai_transcription", is_transcription)):
        if test(data):
            return name
    return None


def _looked_like(data) -> str:
    if isinstance(data, list):
        kinds = sorted({describe(e) for e in data[:5]})
        return f"a list of {len(data)} (first entries: {'; '.join(kinds)})"
    return describe(data)


def read(response, *, top_logprobs: int | None = None, tokenizer=None, prompt: str | None = None):
    """A trace (or a list of traces) from any supported server's logprobs response.

    Parameters
    ----------
    response : dict, list, str, bytes or SDK object
        A response, its stream (chunks, SSE or NDJSON text), in any format of `KNOWN_FORMATS`.
    top_logprobs : int, optional
        The K that was requested (otherwise inferred from the response).
    tokenizer : transformers tokenizer, optional
        The server model's tokenizer: tokens known only by id get their exact bytes.
    prompt : str, optional
        OpenAI-compatible responses only: see `from_openai`.

    Returns
    -------
    Trace or list of Trace
        ``meta["format"]`` names the format, ``meta["server"]`` the server that wrote it.

    Raises
    ------
    LogprobFormatError
        Nothing matched (the message lists the known formats and what the input looked like),
        or a field of the recognised format is malformed (the message names it).
    ServerError
        The input is a server's error body.
    """
    check_top_logprobs(top_logprobs)
    table = table_for(tokenizer)
    with no_gc_pauses():
        return _read(response, top_logprobs, table, prompt)


def _read(response, top_logprobs, table, prompt):
    text = isinstance(response, (str, bytes, bytearray))
    data = to_plain(response, "read", keep_duplicate_keys=not text)
    if isinstance(data, dict) and "error" in data and not any(
            key in data for key in ("choices", "completion_probabilities", "candidates", "output", "meta_info")):
        raise_error(data)  # OpenAI, vLLM, llama.cpp and TGI error bodies all have "error"
    kind = detect_format(data)
    if kind == "openai":
        result = read_openai(response, data, top_logprobs=top_logprobs, prompt=prompt, table=table, source=None,
                             who="read")
        for t in result if isinstance(result, list) else [result]:
            t.meta.setdefault("server", t.meta.get("source"))
        return result
    if kind == "llamacpp":
        return llamacpp_trace(data, top_logprobs=top_logprobs, table=table)
    if kind == "tgi":
        return tgi_trace(data, top_logprobs=top_logprobs, table=table)
    if kind == "sglang":
        if isinstance(data, list):
            return [sglang_trace(d, top_logprobs=top_logprobs, table=table, index=i) for i, d in enumerate(data)]
        return sglang_trace(data, top_logprobs=top_logprobs, table=table)
    if kind == "ollama":
        return ollama_trace(data, top_logprobs=top_logprobs, table=table)
    if kind == "openai_responses":
        return responses_trace(data, top_logprobs=top_logprobs, table=table)
    if kind == "openai_transcription":
        return transcription_trace(data, top_logprobs=top_logprobs, table=table)
    if kind == "gemini":
        traces = gemini_traces(data, top_logprobs=top_logprobs, table=table)
        return traces[0] if len(traces) == 1 else traces
    known = "\n".join(f"- {name}: {what}" for name, what in KNOWN_FORMATS.items())
    raise LogprobFormatError("", f"read does not recognise this input: {_looked_like(data)}.\nKnown formats:\n{known}")
