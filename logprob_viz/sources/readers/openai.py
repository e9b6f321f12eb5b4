"""Read logprobs that an OpenAI-compatible server returned (OpenAI, vLLM, llama.cpp, ...) into a `Trace`.

    t = lv.from_openai(response)        # one choice -> a Trace; several choices -> a list

`response` may be a dict, a JSON string, an ``openai`` SDK object, a list of stream chunks (or
the SDK's stream itself), raw SSE text (``data: {...}`` lines), or just a choice, a choice's
``logprobs``, or a vLLM ``prompt_logprobs`` list. The sections are read by
`openai_completions` (Completions), `openai_chat` (Chat) and `vllm_prompt` (vLLM's
``prompt_logprobs``); this module puts a choice together: where the prompt ends (``echo``,
``prompt_token_ids``, ``text_offset``), ids, and which string encoding the tokens use.

Quirks of real servers, and what the trace does with them:

- Older vLLM returned byte-level BPE strings (``"\\u0120or"``, ``"\\u010a"``) where newer returns
  decoded text: each section is checked as a whole (`logprob_viz.records.tokens.detect_encoding`) and
  decoded to the exact bytes.
- A character split across tokens arrives as ``""`` tokens (vLLM) or U+FFFD, with the whole
  character on a later token; a ``bytes`` field, where it differs from the string, wins.
- ``-9999.0`` means minus infinity. ``text_offset`` counts characters (not bytes); with ``echo``
  and ``prompt=``, it tells where the prompt ends. ``"token_id:123"`` tokens carry ids; a
  ``tokenizer=`` turns every known id into its exact bytes.

Nothing is dropped silently: the trace's ``flags`` hold, per token, the codes in `TOKEN_FLAGS`
for what the source lost or left ambiguous, and ``meta["warnings"]`` says it in words.
Malformed input raises `LogprobFormatError` naming the field; an error body raises
`ServerError` with the server's message.
"""

from __future__ import annotations

import math
import re
from itertools import accumulate
from typing import Any

from ...records.flags import TOKEN_FLAGS  # noqa: F401  (public here before flags.py existed)
from ...records.tokens import detect_encoding, token_bytes_table
from ...records.trace import Trace
from .assemble import build_trace, strings_of
from .checks import expect_dict, expect_int, expect_list, expect_str
from .columns import Columns
from .entries import entry_tokens
from .errors import LogprobFormatError, ServerError, describe
from .inputs import parse_sse, to_plain
from .numbers import vllm_mode_tag
from .openai_completions import completions_tokens
from .openai_shapes import as_response
from .openai_tools import tool_calls_of
from .position import no_gc_pauses
from .values import NEG_INF_SENTINEL
from .vllm_prompt import prompt_tokens

__all__ = ["from_openai", "ServerError", "LogprobFormatError", "parse_sse", "TOKEN_FLAGS",
           "NEG_INF_SENTINEL", "choice_trace", "source_of", "table_for"]


_INTS = {int}


def _ints(value, path: str) -> list[int] | None:
    if value is None:
        return None
    if type(value) is list and _INTS >= set(map(type, value)):
        return value
    return [expect_int(v, f"{path}[{i}]") for i, v in enumerate(expect_list(value, path))]


def _choice_text(choice: dict, chat: bool, path: str) -> tuple[str | None, str | None, list | None]:
    """(text, refusal, tool calls) of a choice: a Chat message's content, refusal and tool calls, or a
    Completions text."""
    if not chat:
        return expect_str(choice.get("text"), f"{path}.text", optional=True), None, None
    message = choice.get("message")
    if message is None:
        return None, None, None
    message = expect_dict(message, f"{path}.message")
    return (expect_str(message.get("content"), f"{path}.message.content", optional=True), message.get("refusal"),
            tool_calls_of(message, f"{path}.message"))


def _generated(lp: dict | None, chat: bool, k, source, path: str):
    """(tokens, k, text_offset, from_refusal) of the choice's own logprobs section."""
    if not lp:
        return [], k, None, False
    if chat or (isinstance(lp.get("content"), list) and "tokens" not in lp):
        # (llama.cpp's /v1/completions writes the chat shape, logprobs.content[], in a text_completion)
        # A refusal's tokens sit under logprobs.refusal (content null): those are what the model wrote.
        key = "refusal" if chat and not lp.get("content") and lp.get("refusal") else "content"
        main, k_main = entry_tokens(lp.get(key) or [], f"{path}.logprobs.{key}", k, chosen_first=source == "vllm")
        return main, k_main, None, key == "refusal"
    main, k_main = completions_tokens(lp, f"{path}.logprobs", k)
    return main, k_main, _ints(lp.get("text_offset"), f"{path}.logprobs.text_offset"), False


def _split_prompt(main, offsets, prompt_lps, prompt_ids, echo, k, prompt, resp, n_choices, warnings, where):
    """(prompt tokens, generated tokens, prompt_len, offsets, k of the prompt section)."""
    if prompt_lps is not None:
        prompt_part, k_prompt = prompt_tokens(prompt_lps, prompt_ids, where, k, columns=not echo)
        if echo:
            n_prompt = len(prompt_part)
            for p_tok, e_tok in zip(prompt_part, main[:n_prompt], strict=False):
                if p_tok.raw is None:
                    p_tok.raw = e_tok.raw  # the echoed string is the only text of the first token
                if p_tok.id < 0:
                    p_tok.id = e_tok.id
            main = main[n_prompt:]
            offsets = offsets[n_prompt:] if offsets else offsets
        return prompt_part, main, len(prompt_part), offsets, k_prompt
    if echo:
        prompt_len = _echo_prompt_len(main, offsets, prompt, prompt_ids, resp, n_choices, warnings)
        return main[:prompt_len], main[prompt_len:], prompt_len, offsets, k
    return [], main, 0, offsets, k


def _attach_ids(prompt_part, main, prompt_ids, gen_ids) -> None:
    if prompt_ids is not None and len(prompt_ids) == len(prompt_part):
        _set_ids(prompt_part, prompt_ids)
    if gen_ids is not None:
        if len(gen_ids) == len(main):
            _set_ids(main, gen_ids)
        elif len(gen_ids) == len(prompt_part) + len(main):
            _set_ids(prompt_part, gen_ids[:len(prompt_part)])
            _set_ids(main, gen_ids[len(prompt_part):])


def _first_prompt_text(prompt_part, prompt: str | None) -> None:
    """The first prompt token, when only its id is known: the prompt text minus the rest."""
    prompt_raws = prompt_part.raw if isinstance(prompt_part, Columns) else None
    if not prompt_part or prompt is None or (prompt_part[0].raw if prompt_raws is None else prompt_raws[0]) is not None:
        return
    rest = "".join(r or "" for r in (prompt_raws or [t.raw for t in prompt_part])[1:])
    if prompt.endswith(rest) and len(prompt) > len(rest):
        if prompt_raws is None:
            prompt_part[0].raw = prompt[: len(prompt) - len(rest)]
        else:
            prompt_raws[0] = prompt[: len(prompt) - len(rest)]


def choice_trace(resp: dict, choice: dict, *, k: int | None, prompt: str | None, table: list | None,
                 source: str | None, n_choices: int, path: str = "choices[0]") -> Trace:
    """One choice of a Completions or Chat response as a trace."""
    choice = expect_dict(choice, path, "a choice")
    chat = str(resp.get("object", "")).startswith("chat") or "message" in choice or "delta" in choice
    lp = choice.get("logprobs")
    if lp is not None:
        lp = expect_dict(lp, f"{path}.logprobs")
    on_choice = choice.get("prompt_logprobs") is not None
    prompt_lps = choice.get("prompt_logprobs") if on_choice else resp.get("prompt_logprobs")
    ids_on_choice = choice.get("prompt_token_ids") is not None
    prompt_ids = _ints(choice.get("prompt_token_ids") if ids_on_choice else resp.get("prompt_token_ids"),
                       f"{path}.prompt_token_ids" if ids_on_choice else "prompt_token_ids")
    gen_ids = _ints(choice.get("token_ids"), f"{path}.token_ids")
    text, refusal, tool_calls = _choice_text(choice, chat, path)
    source = source or source_of(resp, choice)
    warnings: list[str] = []

    main, k_main, offsets, is_refusal = _generated(lp, chat, k, source, path)
    if is_refusal:
        text = expect_str(refusal, f"{path}.message.refusal", optional=True)
    if not main and prompt_lps is None:
        raise _no_logprobs(path, bool(tool_calls))
    # (Columns hold only bodies whose every logprob is a number: never an echo's unscored first token)
    echo = bool(main) and not chat and not isinstance(main, Columns) and math.isnan(main[0].logprob) \
        and not main[0].alternatives
    prompt_part, main, prompt_len, offsets, k_prompt = _split_prompt(
        main, offsets, prompt_lps, prompt_ids, echo, k, prompt, resp, n_choices, warnings,
        f"{path}.prompt_logprobs" if on_choice else "prompt_logprobs")
    _attach_ids(prompt_part, main, prompt_ids, gen_ids)
    _first_prompt_text(prompt_part, prompt)

    raws = main.raw if isinstance(main, Columns) else [t.raw or "" for t in main]
    main_encoding = detect_encoding(strings_of(main), text if not echo else None, raws)
    prompt_encoding = detect_encoding(strings_of(prompt_part), None) if prompt_lps is not None else main_encoding
    if offsets and main and len(offsets) == len(main) and text is not None and main_encoding == "decoded":
        _check_offsets(raws, offsets, warnings)

    meta: dict[str, Any] = {
        "source": source,
        "model": resp.get("model"),
        "format": "chat" if chat else ("prompt_logprobs" if not lp else "completions"),
        "id": resp.get("id"),
        "created": resp.get("created"),
        "choice": choice.get("index", 0),
        "finish_reason": choice.get("finish_reason"),
        "text": text,
        "top_logprobs": max(k_main or 0, k_prompt or 0) if k is None else k,
        "tokens_encoding": main_encoding,
        "echo": True if echo else None,
        "refusal": True if is_refusal else None,  # the model refused: the tokens are its refusal's
        "tool_calls": tool_calls,  # [{index, id, name, arguments}]: Trace.fields reads their arguments
        "stream_chunks": resp.get("stream_chunks") or None,
        "usage": resp.get("usage") or None,
        **vllm_mode_tag(resp),  # what the numbers are, where the body names vLLM's logprobs_mode
    }
    return build_trace([(prompt_part, prompt_encoding), (main, main_encoding)], prompt_len=prompt_len,
                       meta=meta, table=table, warnings=warnings)


def _no_logprobs(path: str, tool_call: bool) -> LogprobFormatError:
    """The error for a choice without logprobs: how to request them (and why a tool call may have none)."""
    return LogprobFormatError(
        path, "the provider returned no logprobs: request them (Completions: logprobs=5; Chat: logprobs=True, "
        "top_logprobs=5; vLLM prompt tokens: prompt_logprobs=5; some reasoning models return none)" + (
            "; its message is a tool call, and some servers give no logprobs for one (OpenAI does not; "
            "vLLM and llama.cpp do, and llama.cpp refuses logprobs with tools in a stream)" if tool_call else "")
    )


def _echo_prompt_len(main, offsets, prompt, prompt_ids, resp, n_choices, warnings) -> int:
    """Where the prompt ends in an echoed Completions response."""
    if prompt_ids is not None and len(prompt_ids) <= len(main):
        return len(prompt_ids)
    if prompt is not None and offsets and len(offsets) == len(main):
        # text_offset counts characters, so it is compared with the prompt's length in characters.
        n_chars = len(prompt)
        return next((i for i, off in enumerate(offsets) if off >= n_chars), len(main))
    usage = resp.get("usage") if isinstance(resp.get("usage"), dict) else {}
    prompt_tokens_used = usage.get("prompt_tokens")
    if n_choices == 1 and type(prompt_tokens_used) is int and 0 <= prompt_tokens_used <= len(main):
        return prompt_tokens_used
    warnings.append("echo: the prompt's length is unknown (pass prompt=); only the first token is marked as prompt")
    return 1


def _set_ids(section, ids: list[int]) -> None:
    if isinstance(section, Columns):
        section.ids = list(ids)
        section.checked = False  # (the response's own token ids: any ints, checked by the assembler)
        return
    for tok, i in zip(section, ids, strict=True):
        tok.id = i


def _check_offsets(raws: list, offsets, warnings) -> None:
    # text_offset counts characters of the decoded text: each token's offset is the previous
    # offset plus the previous token's length in characters (not bytes).
    expected = list(accumulate(map(len, raws[:-1]), initial=offsets[0]))  # (raws are strings here)
    if expected == offsets:  # (one comparison in C; the loop below finds where it breaks)
        return
    for off, pos in zip(offsets, expected, strict=True):
        if off != pos:
            warnings.append(f"text_offset does not follow the tokens' lengths in characters (at offset {off}, "
                            f"expected {pos})")
            return


_VLLM_ID = re.compile(r"(chat)?cmpl-([0-9a-f]{16}|[0-9a-f]{32})")
_VLLM_KEYS = ("prompt_logprobs", "prompt_token_ids", "kv_transfer_params", "stop_reason", "token_ids")


def source_of(resp: dict, choice: dict) -> str:
    """Which server wrote an OpenAI-compatible response: "vllm", "llama.cpp", "ollama" or "openai"."""
    fingerprint = str(resp.get("system_fingerprint") or "")
    if _VLLM_ID.fullmatch(str(resp.get("id") or "")):
        return "vllm"  # vLLM's ids are lowercase hex; OpenAI's are mixed-case base62
    if fingerprint.startswith("vllm") or any(key in resp or key in choice for key in _VLLM_KEYS):
        return "vllm"
    if fingerprint.startswith("b") and fingerprint[1:].split("-")[0].isdigit() or "timings" in resp:
        return "llama.cpp"  # llama.cpp's fingerprint is its build ("b6548-..."); it adds "timings"
    if fingerprint == "fp_ollama":
        return "ollama"
    return "openai"


_TABLES: dict[int, list] = {}


def table_for(tokenizer) -> list | None:
    """The tokenizer's byte table, cached for the last tokenizer used."""
    if tokenizer is None:
        return None
    key = id(tokenizer)
    if key not in _TABLES:
        _TABLES.clear()
        _TABLES[key] = token_bytes_table(tokenizer)
    return _TABLES[key]


def check_top_logprobs(top_logprobs) -> None:
    if top_logprobs is not None and (type(top_logprobs) is not int or top_logprobs < 0):
        raise ValueError(f"top_logprobs must be an int >= 0, got {top_logprobs!r}")


def from_openai(response, *, top_logprobs: int | None = None, prompt: str | None = None, tokenizer=None,
                source: str | None = None):
    """A trace (a list of traces for several choices) from an OpenAI-compatible response.

    Parameters
    ----------
    response : dict, str, bytes, openai SDK object, list of stream chunks, stream, or SSE text
        A Completions or Chat Completions response with logprobs (or stream chunks of one), a
        choice, a choice's ``logprobs``, or a vLLM ``prompt_logprobs`` list. An error body
        (``{"error": {...}}``) raises `ServerError` with the server's message.
    top_logprobs : int, optional
        The K that was requested. Without it, K is inferred from the response (Completions
        dicts hold K+1 entries where the chosen token is outside the top K).
    prompt : str, optional
        The prompt that was sent: tells where the prompt ends in an ``echo`` response without
        token ids, and the first prompt token's text in a vLLM ``prompt_logprobs`` response.
    tokenizer : transformers tokenizer, optional
        The server model's tokenizer: every token whose id is known (``token_ids``,
        ``prompt_token_ids``, ``prompt_logprobs``, ``"token_id:N"`` tokens) gets its exact bytes.
    source : str, optional
        ``meta["source"]``; default "vllm" when the response shows vLLM's fields, else "openai".

    Returns
    -------
    Trace or list of Trace

    Raises
    ------
    LogprobFormatError
        The input is not such a response; the message names the field and what was wrong.
    ServerError
        The input is the server's error body.
    """
    check_top_logprobs(top_logprobs)
    table = table_for(tokenizer)
    text = isinstance(response, (str, bytes, bytearray))
    with no_gc_pauses():  # (the parsed response is freed before the collector runs again: _parsed_and_read)
        return _parsed_and_read(response, text, top_logprobs, prompt, table, source)


def _parsed_and_read(response, text: bool, top_logprobs, prompt, table, source):
    data = to_plain(response, "from_openai", keep_duplicate_keys=not text)
    return read_openai(response, data, top_logprobs=top_logprobs, prompt=prompt, table=table, source=source)


def read_openai(response, data, *, top_logprobs, prompt, table, source, who: str = "from_openai"):
    """`from_openai` on already parsed data (``response``: what was given, parsed again if keys collided)."""
    result = read_choices(as_response(data, who), top_logprobs=top_logprobs, prompt=prompt, table=table, source=source)
    text = isinstance(response, (str, bytes, bytearray))
    traces = result if isinstance(result, list) else [result]
    if text and any("collided" in row for t in traces for row in t.flagged().values()):
        # keys collided: parse the text again keeping every repeated key (json.loads keeps the last)
        data = to_plain(response, who, keep_duplicate_keys=True)
        result = read_choices(as_response(data, who), top_logprobs=top_logprobs, prompt=prompt, table=table,
                              source=source)
    return result


def read_choices(resp: dict, *, top_logprobs, prompt, table, source):
    choices = expect_list(resp.get("choices") or [], "choices")
    if not choices:
        raise LogprobFormatError("choices", "the response has no choices")
    for i, c in enumerate(choices):
        expect_dict(c, f"choices[{i}]", "a choice")
        if type(c.get("index", 0)) is not int:
            raise LogprobFormatError(f"choices[{i}].index", f"expected an integer, got {describe(c.get('index'))}")
    order = sorted(range(len(choices)), key=lambda i: choices[i].get("index", 0))
    traces = [
        choice_trace(resp, choices[i], k=top_logprobs, prompt=prompt, table=table, source=source,
                     n_choices=len(choices), path=f"choices[{i}]")
        for i in order
    ]
    return traces[0] if len(traces) == 1 else traces
