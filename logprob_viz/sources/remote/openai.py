"""The runner for an OpenAI-compatible server (OpenAI, and any server `connect` does not know
better): the OpenAI API and nothing more.

Text goes to ``/completions``, messages to ``/chat/completions``; a trace holds the completion
only (the API returns no logprobs for the prompt), so `score` and ``prompt_ids`` are refused
with what to use instead. The vLLM and llama.cpp runners build on this one.

`generate` streams under the hood, as `stream` does (its trace is the stream's last snapshot, the
same tokens and numbers as the whole answer's): a server that dies, stalls or is cut off in the
middle leaves every token it sent, with ``finish_reason`` "error", ``meta["error"]`` and a
warning; a failure before anything arrived raises a ServerError that says why. The items of a
corpus (`corpus`) are whole answers, one request each (``req.extra["whole_answer"]``): a
failed item is failed whole, the finished ones are kept.
"""

from __future__ import annotations

from typing import Any

from ...records.trace import Trace
from ..readers import from_openai
from ..request import Request
from .engine import RemoteEngine
from .http import ServerError
from .runner import RemoteRunner

__all__ = ["OpenAIRunner", "OpenAIEngine", "new_tokens_in"]


class OpenAIEngine(RemoteEngine):
    """Generates or streams text on an OpenAI-compatible server, recording a Trace."""

    server = "openai"
    can_continue_from_ids = False
    takes_top_k = False  # top_k is not part of the OpenAI API
    top_logprobs_limit = "for this server (the OpenAI API's cap)"

    # -- the steps the runner's face drives (sources.engine.Engine) -------------------------

    def prepare(self, req: Request) -> None:
        if req.sampling is not None and req.sampling.top_k and not self.takes_top_k:
            raise ValueError(f"top_k is not part of the OpenAI API; the server at {self.base_url} is not vLLM "
                             "or llama.cpp")
        if req.prompt_ids is not None:
            if not self.can_continue_from_ids:
                raise ValueError(f"the server at {self.base_url} ({self.server}) cannot continue from token ids: "
                                 "prompt_ids (and branching) need a vLLM or llama.cpp server, which take ids as the "
                                 "prompt")
            self._check_ids(req)

    def steps(self, req: Request, snapshots: bool):
        """The server's SSE stream, with a step (a snapshot when streaming) per due chunk; a corpus
        item's whole answer in one request."""
        path, body = self._body(req)
        if req.extra.get("whole_answer"):
            return self._finish(self._trace(self._request("POST", path, body), req), req)
        return (yield from self._stream(path, body, req, new_tokens_in,
                                        lambda chunks: self._finish(self._trace(chunks, req), req)))

    def score_request(self, req: Request, bar) -> Trace:
        raise ValueError(
            f"scoring needs the prompt's logprobs, which the server at {self.base_url} ({self.server}) does not "
            "return; vLLM does (prompt_logprobs)"
        )

    def token_id(self, text: str) -> int:
        """The id of `text` when it is exactly one token (needs ``connect(tokenizer=)`` here)."""
        if self.tokenizer is None:
            raise ValueError(f"the server at {self.base_url} cannot tell which token {text!r} is; give its id")
        return self._one_token(text, self.tokenizer(text, add_special_tokens=False)["input_ids"])

    # -- what a server's runner may change -------------------------------------------------

    def _sampling_body(self, req: Request) -> dict:
        s = req.sampling
        if s is None:
            return {"temperature": 0.0}  # explicit: a server applies the model's generation_config defaults otherwise
        body: dict[str, Any] = {"temperature": s.temperature, "top_p": s.top_p}
        if s.top_k:
            body["top_k"] = s.top_k
        if s.seed is not None:
            body["seed"] = s.seed
        return body

    def _body(self, req: Request) -> tuple[str, dict]:
        """The endpoint and the request body of a generation."""
        body: dict[str, Any] = {"model": self.model, **self._sampling_body(req), "max_tokens": req.max_new_tokens}
        if req.messages is not None:
            return "/chat/completions", {**body, "messages": req.messages, "logprobs": True,
                                         "top_logprobs": req.top_logprobs}
        prompt = req.text if req.prompt_ids is None else req.prompt_ids
        return "/completions", {**body, "prompt": prompt, "logprobs": req.top_logprobs}

    def _trace(self, resp, req: Request, prompt_given: bool = False) -> Trace:
        """The trace of a response (or of stream chunks); a malformed one is the server's error."""
        try:
            trace = from_openai(resp, top_logprobs=req.top_logprobs, prompt=None if prompt_given else req.text,
                                tokenizer=self.tokenizer, source=self.server)
        except ServerError as e:  # the body is the server's error: say which server
            raise ServerError(f"the server at {self.base_url} returned an error: {e}", status=e.status, type=e.type,
                              code=e.code, param=e.param, server=self.base_url) from e
        if isinstance(trace, list):
            trace = trace[0]
        trace.meta["model"] = self.model
        return trace

    def _one_token(self, text: str, ids: list) -> int:
        if len(ids) != 1:
            raise ValueError(f"{text!r} is not one token of {self.model}: it makes {len(ids)} tokens {list(ids)[:8]}; "
                             "give one token's text or its id")
        return int(ids[0])


def new_tokens_in(event: dict) -> int:
    """Generated tokens in one stream chunk (vLLM's token_ids, else the logprobs entries)."""
    n = 0
    for choice in event.get("choices") or []:
        if not isinstance(choice, dict):
            continue
        ids = choice.get("token_ids")
        if isinstance(ids, list):
            n += len(ids)
            continue
        lp = choice.get("logprobs")
        if isinstance(lp, dict):
            n += len(lp.get("tokens") or lp.get("content") or [])
    return n


class OpenAIRunner(RemoteRunner):
    """Generates or streams text on an OpenAI-compatible server, recording a Trace (the engine: `OpenAIEngine`)."""

    _engine_type = OpenAIEngine
