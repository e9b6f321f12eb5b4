"""``score`` and ``choose`` on llama.cpp's llama-server, which returns no logprobs for the tokens it is given.

llama-server has no ``echo`` and no ``prompt_logprobs`` (llama.cpp issue #27174, open; PRs #15189
and #27537, which would add them, are not merged). What it does document, and what the vendored
server's source does (``tools/server/server-context.cpp``, ``populate_token_probs``): for each token
it *generates*, ``n_probs`` reports the model's distribution before the samplers (with
``post_sampling_probs: false``, the default, the numbers come from the raw logits), and the sampled
token's own probability out of the whole vocabulary, not only when it is among the top ``n_probs``.
A logit bias or a grammar changes which token is sampled, never those numbers. So each given token
is generated, forced, with ``cache_prompt: true`` so that only the new token is computed (a choose's
options reuse the prompt's KV cache). Two ways to force it (`ROUTES`):

- ``"requests"`` (the default): one ``/completion`` per given token, its prefix as the prompt (ids),
  ``n_predict`` 1 and ``logit_bias`` +1e4 on the token (as a branch's last token is scored,
  `llamacpp`). Every llama-server takes it, an end-of-generation token included.
- ``"grammar"``: one streamed ``/completion`` per text, ``n_predict`` its length and a grammar of
  token ids (``root ::= <[id1]> <[id2]> ...``, the "Token ID" syntax of llama.cpp's
  ``grammars/README.md``) that allows exactly the given tokens; a request that stops early (an
  end-of-generation token among them, which llama.cpp's grammars cannot force, is scored by a
  one-token request) is followed by one from where it stopped. One round trip per text instead of
  per token: for a server far away (``runner.engine.score_route = "grammar"``).

Why requests by default, measured on the project's llama-server (CPU, one thread, 26 and 81 given
tokens, medians of 5 alternating runs): 44 and 37 ms per token by requests, 66 and 64 ms by the
grammar, 48 and 38 ms for a free greedy generation of the same length (the floor: one decode step
per token either way, since llama-server returns the logits of the last prompt token only). The
grammar costs its checks of the whole vocabulary wherever the given token is not the greedy one;
a local request costs less than that. The two give the same numbers (tested within 1e-5). ``n_probs``
over the whole vocabulary, for exact ranks and entropy, would mean 49k JSON entries per token.

A refusal (a text longer than the server's context, a server whose grammars take no token ids)
raises a ServerError that says what was asked and the server's words. The first token of a
scored text has no context: its logprob is NaN, as the local runner's.
"""

from __future__ import annotations

from collections.abc import Callable

from ...records.trace import Trace
from ...records.trace_fields import empty
from ..readers import LogprobFormatError
from ..readers.assemble import build_trace
from ..readers.llamacpp import llamacpp_trace
from ..readers.position import Token
from .http import ServerError, request_json, request_sse

__all__ = ["FORCED", "ROUTES", "FORCE_BIAS", "token_grammar", "unscored", "force", "score_tokens", "score_rows"]

ROUTES = ("requests", "grammar")
# A bias no logit overcomes: the forced token is the greedy choice (n_probs ignores biases).
FORCE_BIAS = 1.0e4
# What a trace's meta["scored_by"] says of how its numbers were obtained, per route.
FORCED = {
    "requests": ("llama.cpp /completion: each given token forced by logit_bias in a one-token request on its prefix "
                 "(cached); its logprob and top-K are n_probs before the samplers (post_sampling_probs false), out "
                 "of the whole vocabulary"),
    "grammar": ("llama.cpp /completion: the given tokens forced by a grammar of token ids (<[id]>), greedy; each "
                "logprob and top-K is n_probs before the samplers (post_sampling_probs false), out of the whole "
                "vocabulary"),
}
GREEDY = {"temperature": 0.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0}  # every sampler off: the forcing alone picks


def token_grammar(ids: list[int]) -> str:
    """A GBNF grammar that allows exactly `ids`, in order (llama.cpp's ``<[id]>`` token syntax)."""
    return "root ::= " + " ".join(f"<[{int(i)}]>" for i in ids)


def unscored(tokens: list[Token], k: int) -> Trace:
    """Prompt tokens as llama.cpp gives them: ids and exact bytes, no logprobs (NaN), K empty columns."""
    trace = build_trace([(tokens, "decoded")], prompt_len=len(tokens), meta={"server": "llama.cpp",
                                                                             "source": "llama.cpp"})
    # no alternatives: K columns of nothing, so a stream's first snapshot has the K asked for
    return Trace.concat(trace, Trace(tokens=[], top_logprobs=empty("top_logprobs", 0, k)))


def _body(prompt: list[int], k: int, **forcing) -> dict:
    return {"prompt": prompt, "n_probs": max(k, 1), "post_sampling_probs": False, "return_tokens": True,
            "cache_prompt": True, **GREEDY, **forcing}


def _refused(engine, error: ServerError, n_context: int, n_given: int) -> ServerError:
    hint = ""
    if "grammar" in str(error).lower():
        hint = (" (scoring on llama.cpp forces the given tokens with a grammar of token ids, <[id]>; a llama-server "
                "older than that syntax refuses it: update it, or score with lv.load(...) or a vLLM server)")
    return ServerError(f"the server at {engine.base_url} refused to score {n_given} given tokens after "
                       f"{n_context}: {error}{hint}", status=error.status, server=engine.base_url)


def _force_once(engine, prompt: list[int], given: list[int], k: int, seen: Callable[[int], None]
                ) -> tuple[Trace | None, bool]:
    """One streamed /completion that generates `given` after `prompt` under a grammar of their ids: its
    rows (maybe fewer than asked; None for none), and whether the grammar broke off.

    It breaks off at an end-of-generation token: llama.cpp's grammar masks those until the grammar
    is complete (``llama_grammar_apply_impl``), so the grammar cannot force one; `force` scores that
    token by a one-token request and goes on."""
    body = _body(prompt, k, n_predict=len(given), grammar=token_grammar(given), stream=True)
    chunks, n, broke = [], 0, False
    try:
        events = request_sse(engine.root_url + "/completion", body, api_key=engine.api_key,
                             timeout=engine.timeout, server=engine.base_url, path="/completion")
        try:
            for event in events:
                chunks.append(event)
                got = event.get("completion_probabilities")
                n += len(got) if isinstance(got, list) else 0
                seen(n)
        finally:
            events.close()  # (Ctrl-C: closing the stream stops the server's generation)
    except ServerError as e:
        words = str(e).lower()
        if "grammar" not in words or "parse" in words:  # a refusal, not the grammar's end
            raise _refused(engine, e, len(prompt), len(given)) from e
        broke = True
    return (_read(engine, chunks, k) if n else None), broke


def _force_one(engine, prompt: list[int], token: int, k: int) -> Trace:
    """One /completion that generates `token` after `prompt`, forced by logit_bias: its row."""
    body = _body(prompt, k, n_predict=1, logit_bias=[[int(token), FORCE_BIAS]])
    try:
        answer = request_json(engine.root_url + "/completion", "POST", body, api_key=engine.api_key,
                              timeout=engine.timeout, server=engine.base_url, path="/completion")
    except ServerError as e:
        raise _refused(engine, e, len(prompt), 1) from e
    return _read(engine, answer, k)


def _read(engine, answer, k: int) -> Trace:
    try:
        return llamacpp_trace(answer, top_logprobs=k)
    except LogprobFormatError as e:
        raise ServerError(f"the server at {engine.base_url} returned an unexpected /completion answer while "
                          f"scoring: {e}", server=engine.base_url) from e


def force(engine, context: list[int], given: list[int], k: int, seen: Callable[[int], None] | None = None,
          route: str = "requests") -> tuple[Trace | None, int]:
    """The rows of `given` scored after `context` (None when `given` is empty), and the requests it took.

    ``seen(n)``, when given, is told how many given tokens are scored so far; ``route`` is one of `ROUTES`."""
    if route not in ROUTES:
        raise ValueError(f"route must be one of {ROUTES}, got {route!r}")
    tell = seen if seen is not None else (lambda n: None)
    parts, done, requests = [], 0, 0
    while done < len(given):
        if route == "requests":
            part = _force_one(engine, context + given[:done], given[done], k)
        else:
            part, broke = _force_once(engine, context + given[:done], given[done:], k,
                                      lambda n, at=done: tell(at + n))
            head = [] if part is None else [part]
            at = done + sum(len(h) for h in head)
            if broke and at < len(given):  # the next token is one the grammar cannot force: one request forces it
                part = Trace.concat(*head, _force_one(engine, context + given[:at], given[at], k))
                requests += 1
        requests += 1
        got = part.token_ids.tolist()
        if not got or got != given[done: done + len(got)]:
            raise ServerError(f"the server at {engine.base_url} did not generate the forced tokens "
                              f"{given[done: done + 8]}... (it gave {got[:8]}) by {route}", server=engine.base_url)
        parts.append(part)
        done += len(got)
        tell(done)
    return (Trace.concat(*parts) if parts else None), requests


def _scored_meta(trace: Trace, engine, requests: int, route: str) -> None:
    """How the trace was obtained; what the reader said of the forced generation (its text, its greedy
    settings, why it stopped) would describe the forcing, not the scored text."""
    for key in ("text", "format", "stream_chunks", "sampling", "stop_type"):
        trace.meta.pop(key, None)
    trace.meta.update({"model": engine.model, "scored_by": FORCED[route], "requests": requests})


def score_tokens(engine, tokens: list[Token], k: int, bar, route: str = "requests") -> Trace:
    """A whole text's tokens scored teacher-forced: the first unscored (no context), each next forced."""
    ids = [t.id for t in tokens]
    head = unscored(tokens[:1], k)
    bar.update_to(1)
    rows, requests = force(engine, ids[:1], ids[1:], k, lambda n: bar.update_to(1 + n), route)
    trace = head if rows is None else Trace.concat(head, rows)
    trace.prompt_len = len(trace)  # score: every token is given
    if trace.token_ids.tolist() != ids:
        raise ServerError(f"the server at {engine.base_url} scored other tokens than the ones sent",
                          server=engine.base_url)
    _scored_meta(trace, engine, requests, route)
    return trace


def score_rows(engine, rows: list[list[int]], k: int, scored_from: list[int], route: str = "requests") -> list[Trace]:
    """Each row of ids with its tokens from ``scored_from[i]`` on forced after the ones before (a
    choose's prompt, unscored; its tokens read once and its KV cache reused by every option)."""
    heads: dict[tuple, Trace] = {}
    out = []
    for ids, start in zip(rows, scored_from, strict=True):
        context = list(ids[:start])
        if tuple(context) not in heads:
            tokens = engine.tokenize(context, add_special=False)
            if [t.id for t in tokens] != context:
                raise ServerError(f"the server at {engine.base_url} does not know some of the token ids "
                                  f"{context[:8]}...", server=engine.base_url)
            heads[tuple(context)] = unscored(tokens, k)
        rows_of, requests = force(engine, context, list(ids[start:]), k, route=route)
        trace = heads[tuple(context)] if rows_of is None else Trace.concat(heads[tuple(context)], rows_of)
        _scored_meta(trace, engine, requests, route)
        out.append(trace)
    return out
