"""llama.cpp's llama-server behind `lv.connect`: generations through its native ``/completion``.

Why the native route rather than ``/v1/completions``: it takes token ids as the prompt, returns
every generated token's id and exact bytes (``n_probs`` + ``return_tokens``), and accepts
``top_k``. The prompt's tokens come from ``/tokenize`` (``with_pieces``: ids and exact pieces),
so a trace holds prompt + completion with ids throughout, and a branch can continue from them.

llama.cpp returns no logprobs for prompt tokens (no ``echo``, no ``prompt_logprobs``): prompt
rows are unscored (NaN), and `score` is refused. One exception makes branching exact: when the
prompt is given as ids (a branch, the explorer's manual steps), its last token is scored by a
one-token request on the prefix that forces it with ``logit_bias``. ``n_probs`` reports the
model's distribution before the samplers (logit biases included), so the forced token gets the
same logprob it has as an alternative in the parent trace.

Messages go to ``/v1/chat/completions`` as on any OpenAI-compatible server (the chat template
is the server's).
"""

from __future__ import annotations

import time

from ...records.trace import Trace
from ..base import INTERRUPTS, Request, Step, note_interrupt
from ..readers import LogprobFormatError
from ..readers.assemble import build_trace
from ..readers.llamacpp import llamacpp_trace
from ..readers.position import Token
from .http import ServerError, request_sse

__all__ = ["is_llamacpp_listing", "run", "tokenize", "NO_PROMPT_LOGPROBS"]

NO_PROMPT_LOGPROBS = ("llama.cpp's server returns no logprobs for prompt tokens; score with lv.load(...) "
                      "locally or a vLLM server")
# A bias no logit overcomes: the forced token is the greedy choice (n_probs ignores biases).
FORCE_BIAS = 1.0e4


def is_llamacpp_listing(listed: list) -> bool:
    """Whether ``/v1/models`` was answered by llama-server (it writes ``owned_by: "llamacpp"``)."""
    return any(isinstance(m, dict) and m.get("owned_by") == "llamacpp" for m in listed)


def sampling_body(req: Request) -> dict:
    """llama.cpp's sampler settings for `req`, with its own defaults (top_k 40, top_p 0.95,
    min_p 0.05) turned off: the distribution sampled from is the one the settings say."""
    s = req.sampling
    if s is None:
        return {"temperature": 0.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0}
    body = {"temperature": s.temperature, "top_k": s.top_k, "top_p": s.top_p, "min_p": 0.0}
    if s.seed is not None:
        body["seed"] = s.seed
    return body


def tokenize(runner, content, add_special: bool) -> list[Token]:
    """``content`` (text or ids) as unscored prompt tokens with ids and exact bytes (``/tokenize``)."""
    out = runner._request("POST", "/tokenize", {"content": content, "add_special": add_special,
                                                "with_pieces": True}, root=True).get("tokens")
    if not isinstance(out, list):
        raise ServerError(f"the server at {runner.base_url} answered /tokenize without a token list",
                          server=runner.base_url)
    tokens = []
    for n, entry in enumerate(out):
        piece = entry.get("piece") if isinstance(entry, dict) else None
        tid = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(tid, int) or not isinstance(piece, (str, list)):
            raise ServerError(f"the server at {runner.base_url} answered /tokenize with an unexpected entry "
                              f"tokens[{n}] = {entry!r}", server=runner.base_url)
        data = piece.encode("utf-8") if isinstance(piece, str) else bytes(piece)  # a list: bytes of split UTF-8
        tokens.append(Token(data.decode("utf-8", "replace"), given=data, id=tid))
    return tokens


def _unscored(tokens: list[Token], k: int) -> Trace:
    meta = {"server": "llama.cpp", "source": "llama.cpp"}
    trace = build_trace([(tokens, "decoded")], prompt_len=len(tokens), meta=meta)
    if trace.k < k:  # no alternatives: K columns of nothing, so it joins the completion's K
        from .openai import join

        return join(trace, llamacpp_trace({"completion_probabilities": []}, top_logprobs=k))
    return trace


def _body(runner, req: Request, prompt: list[int], n: int) -> dict:
    k = req.top_logprobs
    return {"prompt": prompt, "n_predict": n, "n_probs": max(k, 1), "return_tokens": True,
            "cache_prompt": True, **sampling_body(req)}


def _read(runner, resp, req: Request) -> Trace:
    try:
        return llamacpp_trace(resp, top_logprobs=req.top_logprobs)
    except LogprobFormatError as e:
        raise ServerError(f"the server at {runner.base_url} returned an unexpected /completion answer: {e}",
                          server=runner.base_url) from e


def _forced_last(runner, req: Request, ids: list[int]) -> Trace:
    """The last prompt token scored as a one-token generation on the rest, forced by logit_bias."""
    body = {**_body(runner, req, ids[:-1], 1), **sampling_body(Request()), "logit_bias": [[ids[-1], FORCE_BIAS]]}
    body.pop("seed", None)
    row = _read(runner, runner._request("POST", "/completion", body, root=True), req)
    if len(row) != 1 or int(row.token_ids[0]) != ids[-1]:
        raise ServerError(f"the server at {runner.base_url} did not score the forced token {ids[-1]} "
                          f"(it gave {row.token_ids.tolist()})", server=runner.base_url)
    return row


def _prompt(runner, req: Request) -> tuple[list[int], Trace]:
    """The prompt's ids and its trace (unscored, but for a prompt given as ids its last token)."""
    from .openai import join

    k = req.top_logprobs
    if req.prompt_ids is None:
        tokens = tokenize(runner, req.text, add_special=True)  # as /completion would tokenize the text
        if not tokens:
            raise ValueError("the prompt makes no tokens on this server: give some text to continue")
        return [t.id for t in tokens], _unscored(tokens, k)
    ids = list(req.prompt_ids)
    tokens = tokenize(runner, ids, add_special=False)
    if [t.id for t in tokens] != ids:
        raise ValueError(f"the server at {runner.base_url} does not know some of the token ids {ids[:8]}...")
    if len(ids) < 2:
        return ids, _unscored(tokens, k)
    head = join(_unscored(tokens[:-1], k), _forced_last(runner, req, ids))
    return ids, head


def _whole(runner, prompt: Trace, completion: Trace, req: Request) -> Trace:
    from .openai import join

    trace = join(prompt, completion)
    trace.meta.update({"server": "llama.cpp", "model": runner.model})
    return runner._finish(trace, req)


def run(runner, req: Request, snapshots: bool):
    """`Runner._run` for a text or ids prompt on llama-server (a generator, as base.Runner drives it)."""
    from .openai import STREAM_SNAPSHOT_S

    ids, prompt = _prompt(runner, req)
    body = _body(runner, req, ids, req.max_new_tokens)
    if not snapshots:
        resp = runner._request("POST", "/completion", body, root=True)
        return _whole(runner, prompt, _read(runner, resp, req), req)
    yield Step(0, lambda: _whole(runner, prompt, _read(runner, [], req), req))
    root = runner.base_url.removesuffix("/v1")
    events = request_sse(root + "/completion", {**body, "stream": True}, api_key=runner.api_key,
                         timeout=runner.timeout, server=runner.base_url, path="/completion")
    chunks: list[dict] = []
    n_new, shown_at, since, interrupted = 0, time.perf_counter(), 0, False
    try:
        for event in events:
            chunks.append(event)
            got = event.get("completion_probabilities")
            n_new += len(got) if isinstance(got, list) else 0
            since += 1
            now = time.perf_counter()
            due = since >= req.stream_every if req.stream_every else now - shown_at >= STREAM_SNAPSHOT_S
            if due and n_new:
                since, shown_at = 0, now
                seen = list(chunks)
                yield Step(n_new, lambda seen=seen: _whole(runner, prompt, _read(runner, seen, req), req))
    except INTERRUPTS as error:
        if not chunks:
            raise
        interrupted = True
        note_interrupt(error)
    finally:
        events.close()  # closes the connection: the server stops generating
    trace = _whole(runner, prompt, _read(runner, chunks, req), req)
    if interrupted:
        trace.meta["finish_reason"] = "interrupted"
    return trace
