"""The runner for a vLLM server: the OpenAI API plus what vLLM adds, so a trace holds prompt +
completion with ids, like the local runner's.

- the prompt's tokens are scored too (``prompt_logprobs``, and ``echo`` on ``/completions``),
  which also makes `score` possible;
- token ids come back (``return_token_ids``), so ``prompt_ids=`` and branching work;
- with ``connect(tokenizer=)`` every token and alternative comes back as ``"token_id:N"``
  (``return_tokens_as_token_ids``) and is decoded here to its exact bytes: no string keys to
  collide, and exact bytes for the pieces of a split character;
- ``top_k`` is accepted; ``/tokenize`` and ``/detokenize`` answer `token_id` and the first
  prompt token of a chat, which the chat response names by id only.

vLLM refuses ``prompt_logprobs`` in a stream, so a stream first scores the prompt (the same
request as `score`: its first snapshot) and then streams the completion alone; each snapshot is
the scored prompt joined with the completion so far. `generate` is that stream's last snapshot
(so a server that dies in the middle leaves the prompt and every token it sent); a corpus item
is one whole request (echo + ``prompt_logprobs``), which a batching server runs together.
"""

from __future__ import annotations

import logging

from ...records.trace import Trace
from ..readers import from_openai
from ..request import Request, Step
from .http import ServerError
from .inflight import SEARCH_CAP, START, InFlight
from .openai import OpenAIEngine, OpenAIRunner, new_tokens_in

__all__ = ["VLLMRunner", "VLLMEngine", "is_vllm_listing"]

logger = logging.getLogger(__name__)


def is_vllm_listing(listed: list) -> bool:
    """Whether ``/v1/models`` was answered by vLLM (it writes ``owned_by: "vllm"``)."""
    return any(isinstance(m, dict) and m.get("owned_by") == "vllm" for m in listed)


class VLLMEngine(OpenAIEngine):
    """Generates, streams or scores text on a vLLM server, recording a Trace of prompt + completion."""

    server = "vllm"
    can_continue_from_ids = True
    takes_top_k = True
    top_logprobs_limit = "for this server (vLLM's --max-logprobs)"

    def _body(self, req: Request) -> tuple[str, dict]:
        path, body = super()._body(req)
        k = req.top_logprobs
        if self.tokenizer is not None:
            body["return_tokens_as_token_ids"] = True
        if req.messages is not None:
            # vLLM lists the chosen token first and cuts at K: one more entry keeps the top K whole.
            body.update(top_logprobs=min(k + 1, self.max_top_logprobs), prompt_logprobs=k, return_token_ids=True)
        else:
            body.update(echo=True, prompt_logprobs=k, return_token_ids=True)
        return path, body

    def steps(self, req: Request, snapshots: bool):
        if req.extra.get("whole_answer"):
            return (yield from super().steps(req, snapshots))  # one request: echo + prompt_logprobs
        prompt = self._prompt_trace(req, like_generate=True)
        if snapshots:
            yield Step(0, lambda: self._finish(prompt, req))
        path, body = self._body(req)
        for key in ("echo", "prompt_logprobs"):
            body.pop(key, None)

        def joined(chunks: list[dict]) -> Trace:
            completion = self._trace(chunks, req, prompt_given=True)
            return self._finish(Trace.concat(prompt, completion[completion.prompt_len :]), req)

        return (yield from self._stream(path, body, req, new_tokens_in, joined))

    def score_request(self, req: Request, bar) -> Trace:
        trace = self._prompt_trace(req)
        bar.update_to(len(trace))
        trace.meta.update({"base_url": self.base_url, "mode": "score", **req.input_meta()})
        return trace

    def token_id(self, text: str) -> int:
        """The id of `text` when it is exactly one token (the tokenizer's, else the server's /tokenize)."""
        if self.tokenizer is not None:
            return super().token_id(text)
        return self._one_token(text, self._server_ids({"prompt": text, "add_special_tokens": False}))

    def in_flight(self) -> InFlight:
        """Grown from `START` while tokens/s rises, up to the server's ``max_num_seqs`` (more only
        wait in its queue) when it says it (``/server_info``, in vLLM's development mode), else `SEARCH_CAP`."""
        limit = self._max_num_seqs()
        if limit is None:
            how = (f"grown while tokens/s rose, from {START} up to {SEARCH_CAP} at most (vLLM states its max_num_seqs "
                   "only in development mode, at /server_info)")
            return InFlight(START, SEARCH_CAP, True, how)
        if limit <= START:
            return InFlight.fixed(limit, f"the server's max_num_seqs (/server_info): {limit}")
        return InFlight(START, limit, True, f"grown while tokens/s rose, from {START} up to the server's "
                        f"max_num_seqs (/server_info), {limit}")

    def _max_num_seqs(self) -> int | None:
        """The scheduler's ``max_num_seqs`` from ``/server_info`` (served with VLLM_SERVER_DEV_MODE=1), or None."""
        try:
            info = self._request("GET", "/server_info?config_format=json", root=True)
        except ServerError as e:
            logger.debug("no /server_info (%s): the number in flight is found by measuring", e)
            return None
        config = info.get("vllm_config")
        scheduler = config.get("scheduler_config") if isinstance(config, dict) else None
        limit = scheduler.get("max_num_seqs") if isinstance(scheduler, dict) else None
        return limit if type(limit) is int and limit >= 1 else None  # JSON's integer rule, as the readers'

    # -- choose (remote.choose): given text scored through prompt_logprobs ----------------------

    def check_choose(self) -> None:
        pass  # vLLM scores the tokens it is given (prompt_logprobs)

    def choice_encoder(self, item: dict, where: str):
        """(the prompt's text, how to encode a text) as the server does: a text with its special
        tokens, as /completions encodes it; messages through the server's chat template (its
        /tokenize of the messages, read back as text by /detokenize), then without special tokens."""
        special = "messages" not in item
        if special:
            text = item["text"]
        else:
            ids = self._server_ids({"messages": item["messages"], "add_generation_prompt": True})
            text = self._request("POST", "/detokenize", {"model": self.model, "tokens": ids}, root=True).get("prompt")
            if not isinstance(text, str):
                raise self.unexpected("answered /detokenize without the prompt's text")
        if self.tokenizer is not None:
            return text, lambda s: self.tokenizer(s, add_special_tokens=special)["input_ids"]
        return text, lambda s: self._server_ids({"prompt": s, "add_special_tokens": special})

    def score_ids(self, rows: list[list[int]], k: int, scored_from: list[int] | None = None) -> list[Trace]:
        """Each row of token ids scored by one /completions request (a list of prompts, echoed; every
        token is scored, whatever ``scored_from`` says: one pass scores them all)."""
        ids = {"return_tokens_as_token_ids": True} if self.tokenizer is not None else {}
        body = {"model": self.model, "prompt": rows, "max_tokens": 0, "echo": True, "logprobs": 0,
                "prompt_logprobs": k, "return_token_ids": True, **ids}
        try:
            traces = from_openai(self._request("POST", "/completions", body), top_logprobs=k,
                                 tokenizer=self.tokenizer, source=self.server)
        except ServerError as e:  # the body is the server's error: say which server
            raise self.unexpected(f"returned an unexpected answer to a choose request: {e}") from e
        traces = traces if isinstance(traces, list) else [traces]
        if len(traces) != len(rows):
            raise self.unexpected(f"scored {len(traces)} of the {len(rows)} options sent")
        out = [_prompt_only(trace) for trace in traces]  # (max_tokens 0: the prompt)
        for trace in out:
            trace.meta["model"] = self.model
        return out

    def _server_ids(self, body: dict) -> list[int]:
        ids = self._request("POST", "/tokenize", {"model": self.model, **body}, root=True).get("tokens")
        if not isinstance(ids, list) or not all(type(i) is int for i in ids):
            raise self.unexpected(f"answered /tokenize without a list of token ids ({ids!r:.80})")
        return ids

    def unexpected(self, what: str) -> ServerError:
        return ServerError(f"the server at {self.base_url} {what}", server=self.base_url)

    def _prompt_trace(self, req: Request, like_generate: bool = False) -> Trace:
        """The prompt alone, scored by vLLM (``prompt_logprobs``): every token is a prompt token.

        ``like_generate``: ask for the prompt as `generate` does (the echo's K alternatives, ids
        as tokens), so that a stream's prompt is the one generate returns.
        """
        k = req.top_logprobs
        ids = {"return_tokens_as_token_ids": True} if like_generate and self.tokenizer is not None else {}
        if req.messages is not None:
            # the chat template is applied by the server; one generated token is dropped
            body = {"model": self.model, "messages": req.messages, "max_tokens": 1, "temperature": 0,
                    "prompt_logprobs": k, "return_token_ids": True, **ids}
            return _prompt_only(self._trace(self._request("POST", "/chat/completions", body), req))
        prompt = req.text if req.prompt_ids is None else req.prompt_ids
        body = {"model": self.model, "prompt": prompt, "max_tokens": 0, "echo": True,
                "logprobs": k if like_generate else 0, "prompt_logprobs": k, "return_token_ids": True, **ids}
        trace = self._trace(self._request("POST", "/completions", body), req)
        return trace if len(trace) == trace.prompt_len else trace[: trace.prompt_len]  # (max_tokens 0: the prompt)

    def _trace(self, resp, req: Request, prompt_given: bool = False) -> Trace:
        trace = super()._trace(resp, req, prompt_given)
        if trace.prompt_len and "first_token_unknown" in trace.flags[0]:
            self._fill_first_token(trace)
        return trace

    def _fill_first_token(self, trace: Trace) -> None:
        """Chat responses say nothing of the first prompt token but its id: ask vLLM's /detokenize."""
        tid = int(trace.token_ids[0])
        if tid < 0:
            return
        try:
            text = self._request("POST", "/detokenize", {"model": self.model, "tokens": [tid]}, root=True).get("prompt")
        except ServerError as e:
            logger.info("could not detokenize the first prompt token: %s", e)
            return
        if isinstance(text, str):
            trace.tokens[0] = text
            trace.token_bytes[0] = text.encode("utf-8")
            trace.flags[0] = [f for f in trace.flags[0] if f != "first_token_unknown"]  # its words go with it


def _prompt_only(trace: Trace) -> Trace:
    """The prompt part of a trace."""
    out = trace[: trace.prompt_len]
    out.meta.pop("finish_reason", None)
    out.meta["text"] = out.text
    return out


class VLLMRunner(OpenAIRunner):
    """Generates, streams, scores or chooses on a vLLM server: a Trace of prompt + completion (`VLLMEngine`)."""

    _engine_type = VLLMEngine
