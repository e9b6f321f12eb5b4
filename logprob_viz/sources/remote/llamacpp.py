"""The runner for llama.cpp's llama-server: generations through its native ``/completion``.

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

from ...records.trace import Trace
from ...records.trace_fields import empty
from ..readers import LogprobFormatError
from ..readers.assemble import build_trace
from ..readers.llamacpp import llamacpp_trace
from ..readers.position import Token
from ..request import Request, Step, is_int
from .http import ServerError
from .inflight import DEFAULT_CONCURRENCY, InFlight
from .openai import OpenAIEngine, OpenAIRunner

__all__ = ["LlamaCppRunner", "LlamaCppEngine", "is_llamacpp_listing", "NO_PROMPT_LOGPROBS"]

NO_PROMPT_LOGPROBS = ("llama.cpp's server returns no logprobs for prompt tokens; score with lv.load(...) "
                      "locally or a vLLM server")
# A bias no logit overcomes: the forced token is the greedy choice (n_probs ignores biases).
FORCE_BIAS = 1.0e4


def is_llamacpp_listing(listed: list) -> bool:
    """Whether ``/v1/models`` was answered by llama-server (it writes ``owned_by: "llamacpp"``)."""
    return any(isinstance(m, dict) and m.get("owned_by") == "llamacpp" for m in listed)


def llama_sampling(req: Request) -> dict:
    """llama.cpp's sampler settings for `req`, with its own defaults (top_k 40, top_p 0.95,
    min_p 0.05) turned off: the distribution sampled from is the one the settings say."""
    s = req.sampling
    if s is None:
        return {"temperature": 0.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0}
    body = {"temperature": s.temperature, "top_k": s.top_k, "top_p": s.top_p, "min_p": 0.0}
    if s.seed is not None:
        body["seed"] = s.seed
    return body


class LlamaCppEngine(OpenAIEngine):
    """Generates or streams text on llama-server, recording a Trace of prompt + completion with ids."""

    server = "llama.cpp"
    can_continue_from_ids = True
    takes_top_k = True
    top_logprobs_limit = "for this server (connect(max_top_logprobs=) raises it)"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        sizes = [m.get("meta", {}).get("n_vocab") for m in self.listed if isinstance(m.get("meta"), dict)]
        self.vocab_size = next((int(v) for v in sizes if is_int(v)), None)

    # -- the steps the runner's face drives (sources.engine.Engine) -------------------------

    def steps(self, req: Request, snapshots: bool):
        """A text or ids prompt through ``/completion`` (streamed); messages through the OpenAI chat route."""
        if req.messages is not None:
            if not snapshots:  # (the chat route's whole answer, as before: its stream is not checked equal)
                req.extra["whole_answer"] = True
            return (yield from super().steps(req, snapshots))
        ids, prompt = self._prompt(req)
        body = _native_body(req, ids, req.max_new_tokens)
        if snapshots:
            yield Step(0, lambda: self._whole(prompt, self._read([], req), req))
        # generate streams too (the stream's tokens and numbers are the whole answer's, tested live):
        # a server that dies, stalls or is stopped in the middle leaves the tokens it sent.
        return (yield from self._stream("/completion", body, req, _new_tokens_in,
                                        lambda chunks: self._whole(prompt, self._read(chunks, req), req), root=True))

    def score_request(self, req: Request, bar) -> Trace:
        raise ValueError(f"{NO_PROMPT_LOGPROBS} (the server at {self.base_url})")

    def check_choose(self) -> None:
        raise ValueError(f"choose scores given answers, which needs the prompt's logprobs: {NO_PROMPT_LOGPROBS}, "
                         f"e.g. lv.load(...).choose(prompt, options) (the server at {self.base_url})")

    def token_id(self, text: str) -> int:
        """The id of `text` when it is exactly one token (the tokenizer's, else the server's /tokenize)."""
        if self.tokenizer is not None:
            return super().token_id(text)
        return self._one_token(text, [t.id for t in self._tokenize(text, add_special=False)])

    def in_flight(self) -> InFlight:
        """llama-server's slots (``/props`` ``total_slots``, its ``--parallel``): more requests only wait for one."""
        try:
            slots = self._request("GET", "/props", root=True).get("total_slots")
        except ServerError as e:
            slots, why = None, f"/props did not answer: {e}"
        else:
            why = f"/props gave total_slots={slots!r}"
        if is_int(slots) and slots >= 1:
            return InFlight.fixed(int(slots), f"the server's slots (/props total_slots, its --parallel): {slots}")
        return InFlight.fixed(DEFAULT_CONCURRENCY, f"the default: the server's slots are unknown ({why})"[:300])

    def _sampling_body(self, req: Request) -> dict:
        return super()._sampling_body(req) if req.sampling is None else llama_sampling(req)

    def _finish(self, trace: Trace, req: Request) -> Trace:
        trace.meta["server"] = "llama.cpp"
        return super()._finish(trace, req)

    # -- the native route ------------------------------------------------------------------

    def _tokenize(self, content, add_special: bool) -> list[Token]:
        """``content`` (text or ids) as unscored prompt tokens with ids and exact bytes (``/tokenize``)."""
        body = {"content": content, "add_special": add_special, "with_pieces": True}
        out = self._request("POST", "/tokenize", body, root=True).get("tokens")
        if not isinstance(out, list):
            raise ServerError(f"the server at {self.base_url} answered /tokenize without a token list",
                              server=self.base_url)
        tokens = []
        for n, entry in enumerate(out):
            piece = entry.get("piece") if isinstance(entry, dict) else None
            tid = entry.get("id") if isinstance(entry, dict) else None
            if type(tid) is not int or not isinstance(piece, (str, list)):
                raise ServerError(f"the server at {self.base_url} answered /tokenize with an unexpected entry "
                                  f"tokens[{n}] = {entry!r}", server=self.base_url)
            data = piece.encode("utf-8") if isinstance(piece, str) else bytes(piece)  # a list: bytes of split UTF-8
            tokens.append(Token(data.decode("utf-8", "replace"), given=data, id=tid))
        return tokens

    def _prompt(self, req: Request) -> tuple[list[int], Trace]:
        """The prompt's ids and its trace (unscored, but for a prompt given as ids its last token)."""
        k = req.top_logprobs
        if req.prompt_ids is None:
            tokens = self._tokenize(req.text, add_special=True)  # as /completion would tokenize the text
            if not tokens:
                raise ValueError("the prompt makes no tokens on this server: give some text to continue")
            return [t.id for t in tokens], _unscored(tokens, k)
        ids = list(req.prompt_ids)
        tokens = self._tokenize(ids, add_special=False)
        if [t.id for t in tokens] != ids:
            raise ValueError(f"the server at {self.base_url} does not know some of the token ids {ids[:8]}...")
        if len(ids) < 2:
            return ids, _unscored(tokens, k)
        return ids, Trace.concat(_unscored(tokens[:-1], k), self._forced_last(req, ids))

    def _forced_last(self, req: Request, ids: list[int]) -> Trace:
        """The last prompt token scored as a one-token generation on the rest, forced by logit_bias."""
        greedy = Request(top_logprobs=req.top_logprobs)
        body = {**_native_body(greedy, ids[:-1], 1), "logit_bias": [[ids[-1], FORCE_BIAS]]}
        row = self._read(self._request("POST", "/completion", body, root=True), req)
        if len(row) != 1 or int(row.token_ids[0]) != ids[-1]:
            raise ServerError(f"the server at {self.base_url} did not score the forced token {ids[-1]} "
                              f"(it gave {row.token_ids.tolist()})", server=self.base_url)
        row.prompt_len = 1  # given, not generated: it is the prompt's last token
        return row

    def _read(self, resp, req: Request) -> Trace:
        try:
            return llamacpp_trace(resp, top_logprobs=req.top_logprobs)
        except LogprobFormatError as e:
            raise ServerError(f"the server at {self.base_url} returned an unexpected /completion answer: {e}",
                              server=self.base_url) from e

    def _whole(self, prompt: Trace, completion: Trace, req: Request) -> Trace:
        trace = Trace.concat(prompt, completion)
        trace.meta["model"] = self.model
        return self._finish(trace, req)


def _unscored(tokens: list[Token], k: int) -> Trace:
    trace = build_trace([(tokens, "decoded")], prompt_len=len(tokens), meta={"server": "llama.cpp",
                                                                             "source": "llama.cpp"})
    # no alternatives: K columns of nothing, so a stream's first snapshot has the K asked for
    return Trace.concat(trace, Trace(tokens=[], top_logprobs=empty("top_logprobs", 0, k)))


def _native_body(req: Request, prompt: list[int], n: int) -> dict:
    """A ``/completion`` request: ``n`` tokens after `prompt` (ids), each with its id, bytes and top-K."""
    return {"prompt": prompt, "n_predict": n, "n_probs": max(req.top_logprobs, 1), "return_tokens": True,
            "cache_prompt": True, **llama_sampling(req)}


def _new_tokens_in(event: dict) -> int:
    got = event.get("completion_probabilities")
    return len(got) if isinstance(got, list) else 0


class LlamaCppRunner(OpenAIRunner):
    """Generates or streams text on llama-server, a Trace of prompt + completion with ids (`LlamaCppEngine`)."""

    _engine_type = LlamaCppEngine
