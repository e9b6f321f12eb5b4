"""The runner for llama.cpp's llama-server: generations through its native ``/completion``.

Why the native route rather than ``/v1/completions``: it takes token ids as the prompt, returns
every generated token's id and exact bytes (``n_probs`` + ``return_tokens``), and accepts
``top_k``. The prompt's tokens come from ``/tokenize`` (``with_pieces``: ids and exact pieces),
so a trace holds prompt + completion with ids throughout, and a branch can continue from them.

llama.cpp returns no logprobs for prompt tokens (no ``echo``, no ``prompt_logprobs``): a
generation's prompt rows are unscored (NaN). `score` and ``choose`` generate the given tokens
instead, each forced (`llamacpp_score`, which says how and why). The same forcing makes branching
exact: when the prompt is given as ids (a branch, the explorer's manual steps), its last token is
scored by a one-token request on the prefix that forces it with ``logit_bias``. ``n_probs``
reports the model's distribution before the samplers (logit biases not applied), so the forced
token gets the same logprob it has as an alternative in the parent trace.

Messages go to ``/v1/chat/completions`` as on any OpenAI-compatible server (the chat template
is the server's).
"""

from __future__ import annotations

from ...records.trace import Trace
from ..readers import LogprobFormatError
from ..readers.llamacpp import llamacpp_trace
from ..readers.position import Token
from ..request import Request, Step, is_int
from .http import ServerError
from .inflight import DEFAULT_CONCURRENCY, InFlight
from .llamacpp_score import FORCE_BIAS, score_rows, score_tokens, unscored
from .openai import OpenAIEngine, OpenAIRunner

__all__ = ["LlamaCppRunner", "LlamaCppEngine", "is_llamacpp_listing"]

# llama.cpp's chat template continues a last assistant message (a prefill, without its end-of-turn),
# where the local runner scores the whole turn, its end included: not the same tokens.
NO_ANSWER = ("scoring messages that end with the assistant's answer is not supported on llama.cpp: its chat template "
             "leaves that turn open (a prefill, no end-of-turn token), so the tokens would not be the local runner's; "
             "give the conversation's text (the model's tokenizer: apply_chat_template(messages, tokenize=False)), or "
             "score with lv.load(...) or a vLLM server")


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
    # How score and choose force the given tokens (llamacpp_score.ROUTES): a request per token (measured
    # fastest on a local server), or "grammar": a request per text, for a server far away.
    score_route = "requests"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        sizes = [m.get("meta", {}).get("n_vocab") for m in self.listed if isinstance(m.get("meta"), dict)]
        self.vocab_size = next((int(v) for v in sizes if is_int(v)), None)
        self._n_ctx: int | None = None  # the server's context in tokens (/props), read when first needed

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

    def prepare(self, req: Request) -> None:
        """As `OpenAIEngine.prepare`; a text or ids to score are read into the server's tokens here (so
        ``score`` knows their number: its progress bar)."""
        super().prepare(req)
        if not req.scoring:
            return
        if req.messages is not None:
            last = req.messages[-1] if req.messages else None
            if isinstance(last, dict) and last.get("role") == "assistant":
                raise ValueError(f"{NO_ANSWER} (the server at {self.base_url})")
            tokens = self.tokenize(self.chat_text(req.messages), add_special=False)
        elif req.prompt_ids is None:
            tokens = self.tokenize(req.text, add_special=True)  # as /completion would tokenize the text
            if not tokens:
                raise ValueError("the text makes no tokens on this server: give some text to score")
        else:
            tokens = self.tokenize(list(req.prompt_ids), add_special=False)
            if [t.id for t in tokens] != list(req.prompt_ids):
                raise ValueError(f"the server at {self.base_url} does not know some of the token ids "
                                 f"{list(req.prompt_ids)[:8]}...")
        self.check_context(len(tokens))
        req.extra["tokens"] = tokens
        req.prompt_ids = [t.id for t in tokens]

    def check_context(self, n: int) -> None:
        """A ValueError before anything is scored when `n` tokens exceed the server's context (``/props``)."""
        if self._n_ctx is None:
            settings = self._request("GET", "/props", root=True).get("default_generation_settings")
            n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
            self._n_ctx = int(n_ctx) if is_int(n_ctx) and n_ctx > 0 else 0  # 0: unknown, the server will say
        if self._n_ctx and n > self._n_ctx:
            raise ValueError(f"the text is {n} tokens long, more than the context of the server at {self.base_url} "
                             f"({self._n_ctx} tokens, its --ctx-size); score a shorter text (or the text in parts)")

    def score_request(self, req: Request, bar) -> Trace:
        """The given text teacher-forced: each token after the first generated under a grammar that forces
        it, with the logprobs from before the samplers (`llamacpp_score`)."""
        trace = score_tokens(self, req.extra["tokens"], req.top_logprobs, bar, self.score_route)
        trace.meta.update({"server": "llama.cpp", "base_url": self.base_url, "mode": "score", **req.input_meta()})
        return trace

    # -- choose (remote.choose): each option forced after its prompt (llamacpp_score) -------------

    def check_choose(self) -> None:
        pass  # the options are forced by a grammar of token ids, their logprobs read before the samplers

    def choice_encoder(self, item: dict, where: str):
        """(the prompt's text, how to encode a text) with the server's /tokenize: a text as /completion
        encodes it; messages through the server's chat template (/apply-template, with the generation
        prompt, as the local runner's choose), then without special tokens added."""
        if "messages" not in item:
            return item["text"], lambda s: [t.id for t in self.tokenize(s, add_special=True)]
        return self.chat_text(item["messages"]), lambda s: [t.id for t in self.tokenize(s, add_special=False)]

    def chat_text(self, messages: list[dict]) -> str:
        """The messages through the server's own chat template, with the generation prompt (/apply-template)."""
        text = self._request("POST", "/apply-template", {"messages": messages}, root=True).get("prompt")
        if not isinstance(text, str):
            raise self.unexpected(f"answered /apply-template without the prompt's text ({text!r:.80})")
        return text

    def score_ids(self, rows: list[list[int]], k: int, scored_from: list[int] | None = None) -> list[Trace]:
        """Each row's ids from ``scored_from[i]`` on (default: after the first) forced after the ones before."""
        starts = [1] * len(rows) if scored_from is None else scored_from
        for row in rows:
            self.check_context(len(row))
        return score_rows(self, rows, k, [max(1, s) for s in starts], self.score_route)

    def unexpected(self, what: str) -> ServerError:
        return ServerError(f"the server at {self.base_url} {what}", server=self.base_url)

    def token_id(self, text: str) -> int:
        """The id of `text` when it is exactly one token (the tokenizer's, else the server's /tokenize)."""
        if self.tokenizer is not None:
            return super().token_id(text)
        return self._one_token(text, [t.id for t in self.tokenize(text, add_special=False)])

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

    def tokenize(self, content, add_special: bool) -> list[Token]:
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
            tokens = self.tokenize(req.text, add_special=True)  # as /completion would tokenize the text
            if not tokens:
                raise ValueError("the prompt makes no tokens on this server: give some text to continue")
            return [t.id for t in tokens], unscored(tokens, k)
        ids = list(req.prompt_ids)
        tokens = self.tokenize(ids, add_special=False)
        if [t.id for t in tokens] != ids:
            raise ValueError(f"the server at {self.base_url} does not know some of the token ids {ids[:8]}...")
        if len(ids) < 2:
            return ids, unscored(tokens, k)
        return ids, Trace.concat(unscored(tokens[:-1], k), self._forced_last(req, ids))

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
