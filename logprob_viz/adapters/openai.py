"""Read logprobs that an OpenAI-compatible server returned (OpenAI, vLLM, ...) into a `Trace`.

    t = lv.from_openai(response)        # one choice -> a Trace; several choices -> a list

`response` may be a dict, a JSON string, an ``openai`` SDK object, a list of stream chunks (or
the SDK's stream itself), raw SSE text (``data: {...}`` lines), or just a choice, a choice's
``logprobs``, or a vLLM ``prompt_logprobs`` list. Formats read:

- Completions ``choices[i].logprobs``: ``tokens``, ``token_logprobs``, ``top_logprobs`` (one
  dict per token, keyed by the token's *string*), ``text_offset``; with ``echo`` the prompt's
  tokens come first and the first has a null logprob.
- vLLM ``prompt_logprobs``: per prompt position ``None`` or a dict keyed by token *id* with
  ``logprob``, ``rank`` and ``decoded_token``; the first key is the prompt's own token.
- Chat Completions ``choices[i].logprobs.content[]``: ``token``, ``logprob``, ``bytes``,
  ``top_logprobs[]``.
- Stream chunks of either, merged per choice in order.

Quirks of real servers, and what the trace does with them:

- Older vLLM returned byte-level BPE strings (``"\\u0120or"``, ``"\\u010a"``,
  ``"\\u00e2\\u0122\\u013b"`` for ’) where newer returns decoded text: each section of a response
  is checked as a whole (no real whitespace anywhere, byte-level marker characters present, or
  the decoded tokens add up to the response's text) and decoded to the exact bytes.
- A character split across tokens arrives as ``""`` tokens (vLLM) or U+FFFD, with the whole
  character on a later token; a ``bytes`` field, where it differs from the string, wins (OpenAI
  gives the real bytes of each piece). Where the source has no bytes, the token is flagged.
- ``-9999.0`` means minus infinity. Completions ``top_logprobs`` hold K+1 entries when the chosen
  token is outside the top K (the trace keeps the top K and rank 0, flagged ``outside_top_k``);
  vLLM lists the chosen token first, so entries are sorted by logprob here. vLLM's chat lists the
  chosen token first and cuts the list at K, so the K-th most likely can be missing.
- String keys collide (two ``""`` pieces of split characters): a duplicate key in JSON text is
  kept, a collision the server already collapsed is detected (the chosen token's key holds
  another value, or fewer than K entries), and the position is flagged ``collided``.
- ``text_offset`` counts characters (not bytes); with ``echo`` and ``prompt=``, it tells where the
  prompt ends. ``"token_id:123"`` tokens (vLLM's ``return_tokens_as_token_ids``) carry ids; a
  ``tokenizer=`` turns every known id into its exact bytes.

Nothing is dropped silently: the trace's ``flags`` hold, per token, the codes in
`TOKEN_FLAGS` for what the source lost or left ambiguous, and ``meta["warnings"]`` says it in words.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..flags import TOKEN_FLAGS, flag_warnings, order_flags  # noqa: F401  (TOKEN_FLAGS: public here before)
from ..tokens import byte_level_bytes, detect_encoding, display_token, legacy_bytes, sentencepiece_bytes, token_id_of
from ..trace import Trace

__all__ = ["from_openai", "OpenAIResponseError", "parse_sse", "TOKEN_FLAGS", "NEG_INF_SENTINEL"]

# OpenAI and vLLM write -inf as this number ("the token is very unlikely").
NEG_INF_SENTINEL = -9999.0

_LN_HALF = math.log(0.5)


class OpenAIResponseError(RuntimeError):
    """The server answered with an error (an ``{"error": {...}}`` body); the message is the server's."""

    def __init__(self, message: str, *, status: int | None = None, type: str | None = None,
                 code: Any = None, param: str | None = None, server: str | None = None):
        super().__init__(message)
        self.status, self.type, self.code, self.param, self.server = status, type, code, param, server


# -- input: whatever the user has, as plain dicts/lists ---------------------------------------


class _DupKeys(dict):
    """A JSON object whose text repeated a key; ``pairs`` keeps every (key, value) in order."""

    pairs: list


def _pairs_hook(pairs):
    d = dict(pairs)
    if len(d) < len(pairs):
        d = _DupKeys(d)
        d.pairs = list(pairs)
    return d


def _loads(text: str):
    return json.loads(text, object_pairs_hook=_pairs_hook)


def parse_sse(text: str) -> list:
    """The JSON payloads of server-sent events (``data: {...}`` lines), without ``[DONE]``."""
    events, data = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line.strip():
            if data:
                payload = "\n".join(data).strip()
                data = []
                if payload and payload != "[DONE]":
                    try:
                        events.append(_loads(payload))
                    except json.JSONDecodeError as e:
                        raise ValueError(f"a server-sent event is not JSON ({e}): {payload[:200]!r}") from None
        # "event:", "id:", "retry:" and ":" comment lines carry nothing we need
    return events


def _plain(obj):
    """dicts/lists/scalars from SDK objects (pydantic), iterators (streams), JSON text or SSE text."""
    if isinstance(obj, (bytes, bytearray)):
        obj = bytes(obj).decode("utf-8")
    if isinstance(obj, str):
        text = obj.strip()
        if text.startswith("data:") or "\ndata:" in text:
            return parse_sse(text)
        try:
            return _loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"from_openai got a string that is neither JSON nor server-sent events ({e}): {text[:200]!r}") from None
    return _tree(obj)


def _tree(obj):
    if obj is None or isinstance(obj, (str, int, float, bool, _DupKeys)):
        return obj  # a _DupKeys comes from our own JSON parsing: plain already, and its pairs must survive
    if isinstance(obj, dict):
        return {k: _tree(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_tree(x) for x in obj]
    if hasattr(obj, "model_dump"):  # openai SDK objects (pydantic v2); vLLM's extra fields are kept
        return _tree(obj.model_dump())
    if hasattr(obj, "to_dict_recursive"):  # openai < 1.0
        return _tree(obj.to_dict_recursive())
    if hasattr(obj, "__iter__") and not isinstance(obj, bytes):  # a stream of chunks
        return [_plain(x) for x in obj]
    return obj


def _raise_error(body: dict, server: str | None = None):
    err = body.get("error")
    if isinstance(err, dict):
        msg = err.get("message") or json.dumps(err)
        status = err.get("code") if isinstance(err.get("code"), int) else body.get("code")
        raise OpenAIResponseError(
            f"the server {'at ' + server + ' ' if server else ''}returned an error: {msg}",
            status=status, type=err.get("type"), code=err.get("code"), param=err.get("param"), server=server,
        )
    raise OpenAIResponseError(f"the server {'at ' + server + ' ' if server else ''}returned an error: {err}", server=server)


def _is_prompt_logprobs(x) -> bool:
    return (
        isinstance(x, list)
        and len(x) > 0
        and all(e is None or isinstance(e, dict) for e in x)
        and any(isinstance(e, dict) for e in x)
        and all(
            all(str(key).lstrip("-").isdigit() and isinstance(v, dict) and "logprob" in v for key, v in e.items())
            for e in x if isinstance(e, dict)
        )
    )


def _as_response(data) -> dict:
    """Whatever was given, as one response dict with "choices"."""
    if isinstance(data, list):
        if not data:
            raise ValueError("from_openai got an empty list: expected a response, stream chunks or prompt_logprobs")
        if _is_prompt_logprobs(data):
            return {"object": "text_completion", "choices": [{"index": 0, "prompt_logprobs": data}]}
        if all(isinstance(c, dict) and ("choices" in c or "error" in c) for c in data):
            return _merge_chunks(data)
        raise ValueError("from_openai got a list that is neither stream chunks (dicts with 'choices') nor vLLM prompt_logprobs")
    if not isinstance(data, dict):
        raise TypeError(f"from_openai cannot read a {type(data).__name__}: give a response (dict, JSON, SDK object), stream chunks or SSE text")
    if "error" in data and not data.get("choices"):
        _raise_error(data)
    if "choices" in data:
        if data.get("object", "").endswith(".chunk"):
            return _merge_chunks([data])
        return data
    if "tokens" in data and "token_logprobs" in data:  # a Completions choice's logprobs
        return {"object": "text_completion", "choices": [{"index": 0, "logprobs": data}]}
    if isinstance(data.get("content"), list):  # a Chat choice's logprobs
        return {"object": "chat.completion", "choices": [{"index": 0, "logprobs": data}]}
    if "logprobs" in data or "prompt_logprobs" in data:  # one choice
        obj = "chat.completion" if ("message" in data or "delta" in data) else "text_completion"
        return {"object": obj, "choices": [data]}
    raise ValueError(
        "from_openai found no choices or logprobs in this object (keys: " + ", ".join(map(str, list(data)[:12])) + "); "
        "was the request made with logprobs (Completions: logprobs=5; Chat: logprobs=True, top_logprobs=5)?"
    )


def _merge_chunks(chunks: list) -> dict:
    """Stream chunks (Completions or Chat) merged into one response, choice by choice, in order."""
    head: dict = {}
    choices: dict[int, dict] = {}
    chat = False
    for chunk in chunks:
        if "error" in chunk and not chunk.get("choices"):
            _raise_error(chunk)
        if not head:
            head = {k: v for k, v in chunk.items() if k != "choices"}
        for key in ("usage", "system_fingerprint", "prompt_logprobs", "prompt_token_ids"):
            if chunk.get(key) is not None:
                head[key] = chunk[key]
        chat = chat or str(chunk.get("object", "")).startswith("chat.")
        for c in chunk.get("choices") or []:
            i = c.get("index", 0)
            m = choices.setdefault(i, {"index": i, "text": "", "logprobs": None, "finish_reason": None})
            delta = c.get("delta")
            if delta is not None:
                chat = True
                m["text"] += delta.get("content") or ""
            else:
                m["text"] += c.get("text") or ""
            lp = c.get("logprobs")
            if lp:
                merged = m["logprobs"] = m["logprobs"] or {}
                if "content" in lp:
                    merged.setdefault("content", []).extend(lp.get("content") or [])
                for key in ("tokens", "token_logprobs", "top_logprobs", "text_offset"):
                    if lp.get(key) is not None:
                        merged.setdefault(key, []).extend(lp[key])
            if c.get("token_ids") is not None:
                m.setdefault("token_ids", []).extend(c["token_ids"])
            for key in ("prompt_token_ids", "prompt_logprobs"):
                if c.get(key) is not None:
                    m[key] = c[key]
            if c.get("finish_reason") is not None:
                m["finish_reason"] = c["finish_reason"]
    head["object"] = "chat.completion" if chat else "text_completion"
    head["stream_chunks"] = len(chunks)
    out = []
    for i in sorted(choices):
        m = choices[i]
        if chat:
            m["message"] = {"role": "assistant", "content": m.pop("text")}
        out.append(m)
    head["choices"] = out
    return head


# -- one position of the trace, before it becomes arrays ---------------------------------------


@dataclass
class _Tok:
    raw: str | None  # the token's string as the source gave it (None: not given)
    given: bytes | None = None  # a `bytes` field, where the source gave one
    id: int = -1
    logprob: float = math.nan
    rank: int = 0
    alts: list = field(default_factory=list)
    flags: list = field(default_factory=list)
    data: bytes | None = None  # resolved exact bytes (None: unknown)
    text: str = ""  # resolved display text


def _lp(value) -> float:
    if value is None:
        return math.nan
    v = float(value)
    return -math.inf if v <= NEG_INF_SENTINEL else v


def _same_lp(a: float, b: float) -> bool:
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= 1e-6 * max(1.0, abs(a))


# -- string encodings: byte-level BPE, SentencePiece, decoded text ----------------------------


def _resolve(tok: _Tok, encoding: str, table: list | None) -> None:
    """Set tok.data (exact bytes or None) and tok.text (what a person reads); add flags."""
    raw = tok.raw
    tid = token_id_of(raw)
    if tid >= 0 and tok.id < 0:
        tok.id = tid
    if table is not None and 0 <= tok.id < len(table):
        tok.data = table[tok.id]
    elif tid >= 0:
        # vLLM's chat gives the chosen token's real bytes next to its placeholder; alternatives
        # carry the placeholder's own bytes, which say nothing.
        if tok.given is not None and tok.given != raw.encode("utf-8"):
            tok.data = tok.given
        else:
            tok.data = None
            tok.flags.append("no_text")
    elif raw is None:
        tok.data = tok.given
    elif tok.given is not None and tok.given != raw.encode("utf-8"):
        tok.data = tok.given  # real bytes beside a lossy string (OpenAI's split characters)
    elif (legacy := legacy_bytes(raw)) is not None:
        tok.data = legacy  # OpenAI legacy "bytes:\xe2\x80"
    elif encoding == "byte_level":
        tok.data = byte_level_bytes(raw)
        if tok.data is None:
            tok.data = raw.encode("utf-8")
    elif encoding == "sentencepiece":
        tok.data = sentencepiece_bytes(raw)
    else:
        tok.data = raw.encode("utf-8")
    if tok.data is not None and tok.data == b"" and raw is not None:
        tok.flags.append("no_bytes")
    if raw and "\ufffd" in raw and tok.data is not None and b"\xef\xbf\xbd" in tok.data:
        tok.flags.append("replacement_char")
    if tok.data is not None:
        tok.text = display_token(tok.data)
    elif raw is not None:
        tok.text = raw
    else:
        tok.text = ""
        tok.flags.append("first_token_unknown")


# -- sections: the three shapes of per-position alternatives ----------------------------------


def _completion_section(lp: dict, k: int | None) -> tuple[list[_Tok], int]:
    """Completions logprobs: string-keyed dicts holding the chosen token and the top K."""
    tokens = list(lp.get("tokens") or [])
    lps = list(lp.get("token_logprobs") or [None] * len(tokens))
    tops = list(lp.get("top_logprobs") or [None] * len(tokens))
    if not (len(tokens) == len(lps) == len(tops)):
        raise ValueError(f"logprobs has {len(tokens)} tokens, {len(lps)} token_logprobs and {len(tops)} top_logprobs; they must match")
    out, rows = [], []
    for raw, lpv, top in zip(tokens, lps, tops):
        tok = _Tok(raw=raw, logprob=_lp(lpv))
        pairs = None
        if top is not None:
            pairs = [(key, _lp(v)) for key, v in (top.pairs if isinstance(top, _DupKeys) else top.items())]
            if isinstance(top, _DupKeys):
                tok.flags.append("collided")
        out.append(tok)
        rows.append(pairs)
    if k is None:
        k = _infer_k_union([(t, r) for t, r in zip(out, rows) if r is not None])
    for tok, pairs in zip(out, rows):
        if pairs is not None:
            _union_alts(tok, pairs, k)
    return out, k


def _matches(tok: _Tok, key, value: float) -> bool:
    return key == tok.raw and _same_lp(value, tok.logprob)


def _infer_k_union(rows) -> int:
    """K from dicts that hold top-K plus the chosen token (K+1 entries when it is outside)."""
    inside, sizes = [], []
    for tok, pairs in rows:
        sizes.append(len(pairs))
        chosen = [v for key, v in pairs if _matches(tok, key, v)]
        others = [v for key, v in pairs if not _matches(tok, key, v)]
        if chosen and (not others or any(v < chosen[0] for v in others) or len(pairs) == 1):
            inside.append(len(pairs))  # the chosen is not strictly last: it is inside the top K
    if inside:
        return max(inside)
    if not sizes:
        return 0
    return max(sizes) - 1 if max(sizes) > 1 else max(sizes)


def _union_alts(tok: _Tok, pairs: list, k: int) -> None:
    seen, entries = set(), []
    for key, v in pairs:
        if (key, v) not in seen:
            seen.add((key, v))
            entries.append((key, v))
    order = sorted(range(len(entries)), key=lambda j: -entries[j][1] if not math.isnan(entries[j][1]) else math.inf)
    ranked = [entries[j] for j in order]
    where = [j for j, (key, v) in enumerate(ranked) if _matches(tok, key, v)]
    collided = "collided" in tok.flags
    if not where and any(key == tok.raw for key, _ in ranked) and not math.isnan(tok.logprob):
        collided = True  # the chosen token's key holds another token's logprob
    if len(entries) < k:
        collided = True  # fewer than K distinct entries: keys collided on the server
    if collided and "collided" not in tok.flags:
        tok.flags.append("collided")
    outside = False
    if where:
        i = where[0]
        outside = i >= k or (len(ranked) > k and i == len(ranked) - 1)
        if not outside and not collided:
            tok.rank = i + 1
        if outside:
            ranked = ranked[:i] + ranked[i + 1 :]
    else:
        outside = not collided and len(ranked) >= k
    if outside:
        tok.flags.append("outside_top_k")
    tok.alts = [_Tok(raw=key, logprob=v, id=token_id_of(key)) for key, v in ranked[:k]]


def _chat_section(content: list, k: int | None, vllm: bool) -> tuple[list[_Tok], int]:
    """Chat logprobs: each token with a list of alternatives.

    OpenAI lists the top K, most likely first; the chosen token may be absent. vLLM lists the
    chosen token first, then the most likely others, and cuts the list at K: when the chosen
    token is the least likely listed, it is either the K-th or outside the top K, and then the
    K-th most likely is missing.
    """
    out = []
    for entry in content:
        tok = _Tok(raw=entry.get("token"), given=_bytes(entry.get("bytes")), logprob=_lp(entry.get("logprob")))
        tok.alts = [
            _Tok(raw=a.get("token"), given=_bytes(a.get("bytes")), logprob=_lp(a.get("logprob")))
            for a in (entry.get("top_logprobs") or [])
        ]
        out.append(tok)
    if k is None:
        k = max((len(t.alts) for t in out), default=0)
    for tok in out:
        given = tok.alts
        chosen_first = vllm or any(given[j].logprob < given[j + 1].logprob for j in range(len(given) - 1))
        ranked = sorted(given, key=lambda a: -a.logprob if not math.isnan(a.logprob) else math.inf)
        where = [j for j, a in enumerate(ranked) if _same_entry(a, tok)]
        if not where:
            if ranked and len(ranked) >= k:
                tok.flags.append("outside_top_k")
        elif len(given) > k:
            # more entries than K (the runner asks vLLM for K+1): the top K are all there
            i = where[0]
            if i < k:
                tok.rank = i + 1
            else:
                tok.flags.append("outside_top_k")
                ranked = ranked[:i] + ranked[i + 1 :]
        elif not chosen_first or where[0] < len(ranked) - 1:
            tok.rank = where[0] + 1  # every more likely token is listed
        else:
            tok.flags.append("alternatives_incomplete")
        tok.alts = ranked[:k]
    return out, k


def _same_entry(a: _Tok, tok: _Tok) -> bool:
    """Whether a listed alternative is the chosen token itself (same string, logprob and bytes)."""
    if a.raw != tok.raw or not _same_lp(a.logprob, tok.logprob):
        return False
    # vLLM gives a "token_id:N" chosen token its real bytes but the alternative the placeholder's
    return a.given is None or tok.given is None or a.given == tok.given or token_id_of(a.raw) >= 0


def _bytes(value) -> bytes | None:
    if value is None:
        return None
    return bytes(int(b) & 0xFF for b in value)


def _prompt_section(prompt_logprobs: list, prompt_ids: list | None, k: int | None) -> tuple[list[_Tok], int]:
    """vLLM prompt_logprobs: id-keyed dicts with ranks; the prompt's own token is the first key."""
    out = []
    rows = []
    for pos, entry in enumerate(prompt_logprobs):
        pid = int(prompt_ids[pos]) if prompt_ids is not None and pos < len(prompt_ids) else -1
        if entry is None:
            out.append(_Tok(raw=None, id=pid))
            rows.append(None)
            continue
        items = [(int(key), v) for key, v in entry.items()]
        chosen_id = pid if pid >= 0 else items[0][0]
        chosen = next((v for key, v in items if key == chosen_id), None)
        tok = _Tok(raw=None, id=chosen_id)
        if chosen is not None:
            tok.raw = chosen.get("decoded_token")
            tok.logprob = _lp(chosen.get("logprob"))
            tok.rank = int(chosen.get("rank") or 0)
        out.append(tok)
        rows.append(items)
    if k is None:  # alternatives have ranks 1..K; the chosen one has its own rank
        k = max((int(v.get("rank") or 0) for tok, items in zip(out, rows) if items for key, v in items if key != tok.id), default=0)
        if k == 0 and any(rows):
            k = 1 if any(tok.rank == 1 for tok in out) else 0
    for tok, items in zip(out, rows):
        if items is None:
            continue
        alts = [
            _Tok(raw=v.get("decoded_token"), id=key, logprob=_lp(v.get("logprob")), rank=int(v.get("rank") or 0))
            for key, v in items
            if 0 < int(v.get("rank") or 0) <= k
        ]
        alts.sort(key=lambda a: (a.rank, -a.logprob))
        tok.alts = alts[:k]
        if tok.rank > k:
            tok.flags.append("outside_top_k")
    return out, k


# -- putting a choice together -----------------------------------------------------------------


def _strings(toks: list[_Tok]) -> list[str]:
    return [s for t in toks for s in [t.raw, *(a.raw for a in t.alts)] if s is not None]


def _choice_trace(resp: dict, choice: dict, *, k: int | None, prompt: str | None, table: list | None,
                  source: str | None, n_choices: int) -> Trace:
    chat = str(resp.get("object", "")).startswith("chat") or "message" in choice or "delta" in choice
    lp = choice.get("logprobs")
    prompt_lps = choice.get("prompt_logprobs") if choice.get("prompt_logprobs") is not None else resp.get("prompt_logprobs")
    prompt_ids = choice.get("prompt_token_ids") if choice.get("prompt_token_ids") is not None else resp.get("prompt_token_ids")
    gen_ids = choice.get("token_ids")
    text = (choice.get("message") or {}).get("content") if chat else choice.get("text")
    warnings: list[str] = []

    main: list[_Tok] = []
    offsets = None
    k_main = k
    if lp:
        if chat:
            vllm = (source or _source_of(resp, choice)) == "vllm"
            main, k_main = _chat_section(lp.get("content") or [], k, vllm)
        else:
            main, k_main = _completion_section(lp, k)
            offsets = lp.get("text_offset")
    if not main and prompt_lps is None:
        raise ValueError(
            "this response has no logprobs: request them (Completions: logprobs=5; Chat: logprobs=True, "
            "top_logprobs=5; vLLM prompt tokens: prompt_logprobs=5)"
        )
    echo = bool(main) and not chat and math.isnan(main[0].logprob) and not main[0].alts

    prompt_part: list[_Tok] = []
    k_prompt = k
    if prompt_lps is not None:
        prompt_part, k_prompt = _prompt_section(prompt_lps, prompt_ids, k)
        if echo:
            n_p = len(prompt_part)
            for p_tok, e_tok in zip(prompt_part, main[:n_p]):
                if p_tok.raw is None:
                    p_tok.raw = e_tok.raw  # the echoed string is the only text of the first token
                if p_tok.id < 0:
                    p_tok.id = e_tok.id
            main = main[n_p:]
            offsets = offsets[n_p:] if offsets else offsets
        prompt_len = len(prompt_part)
    elif echo:
        prompt_len = _echo_prompt_len(main, offsets, prompt, prompt_ids, resp, n_choices, warnings)
        prompt_part, main = main[:prompt_len], main[prompt_len:]
    else:
        prompt_len = 0
    if prompt_ids is not None and len(prompt_ids) == len(prompt_part):
        for tok, i in zip(prompt_part, prompt_ids):
            tok.id = int(i)
    if gen_ids is not None:
        if len(gen_ids) == len(main):
            for tok, i in zip(main, gen_ids):
                tok.id = int(i)
        elif len(gen_ids) == len(prompt_part) + len(main):
            for tok, i in zip(prompt_part + main, gen_ids):
                tok.id = int(i)

    # The first prompt token, when only its id is known: the prompt text minus the rest.
    if prompt_part and prompt_part[0].raw is None and prompt is not None:
        rest = "".join(t.raw or "" for t in prompt_part[1:])
        if prompt.endswith(rest) and len(prompt) > len(rest):
            prompt_part[0].raw = prompt[: len(prompt) - len(rest)]

    enc_main = detect_encoding(_strings(main), text if not echo else None, [t.raw or "" for t in main])
    enc_prompt = detect_encoding(_strings(prompt_part), None) if prompt_lps is not None else enc_main
    for toks, enc in ((prompt_part, enc_prompt), (main, enc_main)):
        for tok in toks:
            _resolve(tok, enc, table)
            for a in tok.alts:
                _resolve(a, enc, table)
                a.flags = [f for f in a.flags if f != "first_token_unknown"]
            if tok.rank == 0 and tok.logprob > _LN_HALF:
                tok.rank = 1  # p > 1/2: nothing can be more likely

    toks = prompt_part + main
    if offsets and main and len(offsets) == len(main) and text is not None and enc_main == "decoded":
        _check_offsets(main, offsets, warnings)
    kk = max([len(t.alts) for t in toks] + [0])
    n = len(toks)
    top_lp = np.full((n, kk), -np.inf, np.float32)
    top_ids = np.full((n, kk), -1, np.int64)
    for i, t in enumerate(toks):
        for j, a in enumerate(t.alts):
            top_lp[i, j] = a.logprob
            top_ids[i, j] = a.id
    flags = [order_flags(t.flags) for t in toks]
    warnings.extend(flag_warnings(flags))

    meta: dict[str, Any] = {
        "source": source or _source_of(resp, choice),
        "model": resp.get("model"),
        "format": "chat" if chat else ("prompt_logprobs" if not lp else "completions"),
        "id": resp.get("id"),
        "created": resp.get("created"),
        "choice": choice.get("index", 0),
        "finish_reason": choice.get("finish_reason"),
        "text": text,
        "top_logprobs": max(k_main or 0, k_prompt or 0) if k is None else k,
        "tokens_encoding": enc_main,
    }
    if echo:
        meta["echo"] = True
    if resp.get("stream_chunks"):
        meta["stream_chunks"] = resp["stream_chunks"]
    if resp.get("usage"):
        meta["usage"] = resp["usage"]
    if warnings:
        meta["warnings"] = warnings
    return Trace(
        tokens=[t.text for t in toks],
        token_bytes=[t.data if t.data is not None else b"" for t in toks],
        token_ids=[t.id for t in toks],
        logprobs=[t.logprob for t in toks],
        ranks=[t.rank for t in toks],
        top_tokens=[[a.text for a in t.alts] for t in toks],
        top_logprobs=top_lp,
        top_ids=top_ids,
        flags=flags,
        prompt_len=prompt_len,
        meta={k_: v for k_, v in meta.items() if v is not None},
    )


def _echo_prompt_len(main, offsets, prompt, prompt_ids, resp, n_choices, warnings) -> int:
    """Where the prompt ends in an echoed Completions response."""
    if prompt_ids is not None and len(prompt_ids) <= len(main):
        return len(prompt_ids)
    if prompt is not None and offsets and len(offsets) == len(main):
        # text_offset counts characters, so it is compared with the prompt's length in characters.
        n_chars = len(prompt)
        return next((i for i, off in enumerate(offsets) if off >= n_chars), len(main))
    usage = resp.get("usage") or {}
    if n_choices == 1 and isinstance(usage.get("prompt_tokens"), int) and usage["prompt_tokens"] <= len(main):
        return usage["prompt_tokens"]
    warnings.append("echo: the prompt's length is unknown (pass prompt=); only the first token is marked as prompt")
    return 1


def _check_offsets(main, offsets, warnings) -> None:
    # text_offset counts characters of the decoded text: each token's offset is the previous
    # offset plus the previous token's length in characters (not bytes).
    start = offsets[0]
    pos = start
    for tok, off in zip(main, offsets):
        if off != pos:
            warnings.append(f"text_offset does not follow the tokens' lengths in characters (at offset {off}, expected {pos})")
            return
        pos += len(tok.raw or "")


def _source_of(resp: dict, choice: dict) -> str:
    fp = str(resp.get("system_fingerprint") or "")
    if re.fullmatch(r"(chat)?cmpl-([0-9a-f]{16}|[0-9a-f]{32})", str(resp.get("id") or "")):
        return "vllm"  # vLLM's ids are lowercase hex; OpenAI's are mixed-case base62
    vllm_keys = ("prompt_logprobs", "prompt_token_ids", "kv_transfer_params", "stop_reason", "token_ids")
    if fp.startswith("vllm") or any(key in resp or key in choice for key in vllm_keys):
        return "vllm"
    return "openai"


# -- public ------------------------------------------------------------------------------------

_TABLES: dict[int, list] = {}


def _table_for(tokenizer) -> list | None:
    if tokenizer is None:
        return None
    key = id(tokenizer)
    if key not in _TABLES:
        from ..tokens import token_bytes_table

        _TABLES.clear()
        _TABLES[key] = token_bytes_table(tokenizer)
    return _TABLES[key]


def from_openai(response, *, top_logprobs: int | None = None, prompt: str | None = None, tokenizer=None,
                source: str | None = None):
    """A trace (a list of traces for several choices) from an OpenAI-compatible response.

    Parameters
    ----------
    response : dict, str, bytes, openai SDK object, list of stream chunks, stream, or SSE text
        A Completions or Chat Completions response with logprobs (or stream chunks of one), a
        choice, a choice's ``logprobs``, or a vLLM ``prompt_logprobs`` list. An error body
        (``{"error": {...}}``) raises `OpenAIResponseError` with the server's message.
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
    """
    if top_logprobs is not None and (not isinstance(top_logprobs, int) or isinstance(top_logprobs, bool) or top_logprobs < 0):
        raise ValueError(f"top_logprobs must be an int >= 0, got {top_logprobs!r}")
    resp = _as_response(_plain(response))
    choices = resp.get("choices") or []
    if not choices:
        raise ValueError("the response has no choices")
    table = _table_for(tokenizer)
    traces = [
        _choice_trace(resp, c, k=top_logprobs, prompt=prompt, table=table, source=source, n_choices=len(choices))
        for c in sorted(choices, key=lambda c: c.get("index", 0))
    ]
    return traces[0] if len(traces) == 1 else traces
