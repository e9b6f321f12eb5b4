"""A runner backed by an OpenAI-compatible server (vLLM, llama.cpp, OpenAI, ...): the same
generate / stream / score API as the local runner, returning the same Trace.

    runner = lv.connect("http://127.0.0.1:8011/v1")          # model: the server's first
    t = runner.generate("A robot may not injure a human being", max_new_tokens=32, top_logprobs=5)
    runner.generate(messages=[{"role": "user", "content": "Hi"}], temperature=0.7, seed=0)
    for t in runner.stream("Once upon a time", max_new_tokens=64): ...   # the server's SSE stream
    runner.generate(prompt_ids=[1, 2, 3])                     # token ids as the prompt (vLLM, llama.cpp)
    runner.score("Text to score, token by token.")            # vLLM's prompt_logprobs

Text and token ids go to ``/completions``, messages to ``/chat/completions``. On a vLLM server
the prompt's tokens are scored too (``prompt_logprobs``, ``echo``) and token ids come back
(``return_token_ids``), so a trace holds prompt + completion like the local runner's; other
servers give the completion only. A llama.cpp server (recognised by its model listing) is
driven through its native ``/completion`` instead: `llamacpp_server` says how and what it cannot
do (score). Requests use the standard library (no ``openai`` package
needed); every failure names the server and the cause.
"""

from __future__ import annotations

import logging
import os
import time
import urllib.parse
from typing import Any

from ...records.flags import flag_warnings
from ...records.trace import Trace
from ..base import INTERRUPTS, Request, Runner, Step, check_prompt_ids, is_int, note_interrupt
from ..readers import OpenAIResponseError, from_openai
from . import llamacpp as llamacpp_server
from .http import ServerError, request_json, request_sse

__all__ = ["connect", "OpenAIRunner", "ServerError"]

logger = logging.getLogger(__name__)

# vLLM's default --max-logprobs, and OpenAI's cap on top_logprobs.
DEFAULT_MAX_TOP_LOGPROBS = 20
# Without stream_every, a server stream yields a snapshot at most this often (each re-reads the chunks).
STREAM_SNAPSHOT_S = 0.1


def connect(base_url: str | None = None, model: str | None = None, api_key: str | None = None,
            **kwargs: Any) -> OpenAIRunner:
    """A runner for the OpenAI-compatible server at `base_url` (e.g. ``http://127.0.0.1:8011/v1``).

    Parameters
    ----------
    base_url : str, optional
        The API's base URL, as the ``openai`` SDK takes it; ``/v1`` is added when the URL has no
        path. Default ``$OPENAI_BASE_URL``.
    model : str, optional
        The served model's name; default: the first the server lists at ``/models``.
    api_key : str, optional
        Sent as a bearer token; default ``$OPENAI_API_KEY`` (a local vLLM needs none).
    **kwargs
        ``timeout`` (seconds per request, default 120), ``max_top_logprobs`` (the server's cap,
        default 20), ``tokenizer`` (the served model's transformers tokenizer: on vLLM every
        token and alternative then comes back as an id and is decoded to its exact bytes here).
    """
    return OpenAIRunner(base_url, model=model, api_key=api_key, **kwargs)


class OpenAIRunner(Runner):
    """Generates, streams or scores text on an OpenAI-compatible server, recording a Trace."""

    def __init__(self, base_url: str | None = None, model: str | None = None, api_key: str | None = None, *,
                 timeout: float = 120.0, max_top_logprobs: int | None = None, tokenizer=None):
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            raise ValueError("give the server's base URL, e.g. lv.connect('http://127.0.0.1:8011/v1')")
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base_url must be an http(s) URL such as http://127.0.0.1:8011/v1, got {base_url!r}")
        self.base_url = base_url.rstrip("/") if parts.path.strip("/") else base_url.rstrip("/") + "/v1"
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.timeout = float(timeout)
        self.tokenizer = tokenizer
        listed = self._request("GET", "/models").get("data") or []
        names = [m.get("id") for m in listed if isinstance(m, dict)]
        self.server = "vllm" if any(m.get("owned_by") == "vllm" for m in listed if isinstance(m, dict)) else "openai"
        self.vocab_size = None
        if llamacpp_server.is_llamacpp_listing(listed):
            self.server = "llama.cpp"
            sizes = [m.get("meta", {}).get("n_vocab") for m in listed if isinstance(m.get("meta"), dict)]
            self.vocab_size = next((int(v) for v in sizes if is_int(v)), None)
        if model is None:
            if not names:
                raise ServerError(f"the server at {self.base_url} lists no models at /models; pass model=",
                                  server=self.base_url)
            model = names[0]
        elif names and model not in names:
            raise ValueError(f"the server at {self.base_url} does not serve {model!r}; "
                             f"it serves: {', '.join(names[:20])}")
        self.model = model
        self.name = model
        self.max_top_logprobs = int(max_top_logprobs if max_top_logprobs is not None else DEFAULT_MAX_TOP_LOGPROBS)

    def __repr__(self) -> str:
        return f"<OpenAIRunner {self.model} at {self.base_url} ({self.server})>"

    @property
    def can_continue_from_ids(self) -> bool:
        """Whether ``prompt_ids=`` works here: vLLM and llama.cpp take a list of ids as the prompt."""
        return self.server in ("vllm", "llama.cpp")

    # -- what base.Runner asks of a runner -----------------------------------------------

    def _prepare(self, req: Request) -> None:
        if req.sampling is not None and req.sampling.top_k and self.server not in ("vllm", "llama.cpp"):
            raise ValueError(f"top_k is not part of the OpenAI API; the server at {self.base_url} is not vLLM "
                             "or llama.cpp")
        if req.prompt_ids is not None:
            if not self.can_continue_from_ids:
                raise ValueError(f"the server at {self.base_url} ({self.server}) cannot continue from token ids: "
                                 "prompt_ids (and branching) need a vLLM or llama.cpp server, which take ids as the "
                                 "prompt")
            vocab = len(self.tokenizer) if self.tokenizer is not None else self.vocab_size
            req.prompt_ids = check_prompt_ids(req.prompt_ids, vocab)

    def _body(self, req: Request) -> tuple[str, dict]:
        """The endpoint and the request body of a generation."""
        k, vllm, s = req.top_logprobs, self.server == "vllm", req.sampling
        body: dict[str, Any] = {"model": self.model}
        if s is None:
            body["temperature"] = 0.0  # explicit: a server applies the model's generation_config defaults otherwise
        elif self.server == "llama.cpp":
            body.update(llamacpp_server.sampling_body(req))  # its own default samplers turned off
        else:
            body.update(temperature=s.temperature, top_p=s.top_p)
            if s.top_k:
                body["top_k"] = s.top_k
            if s.seed is not None:
                body["seed"] = s.seed
        if vllm and self.tokenizer is not None:
            # every token and alternative as "token_id:N", decoded here by the tokenizer: no
            # string keys to collide, and exact bytes for pieces of split characters
            body["return_tokens_as_token_ids"] = True
        if req.messages is not None:
            body.update(messages=req.messages, max_tokens=req.max_new_tokens, logprobs=True)
            # vLLM lists the chosen token first and cuts at K: one more entry keeps the top K whole.
            body["top_logprobs"] = min(k + 1, self.max_top_logprobs) if vllm else k
            if vllm:
                body.update(prompt_logprobs=k, return_token_ids=True)
            return "/chat/completions", body
        prompt = req.text if req.prompt_ids is None else req.prompt_ids
        body.update(prompt=prompt, max_tokens=req.max_new_tokens, logprobs=k)
        if vllm:
            body.update(echo=True, prompt_logprobs=k, return_token_ids=True)
        return "/completions", body

    def _run(self, req: Request, snapshots: bool):
        """One request; when streaming, the server's SSE stream with a snapshot per step.

        vLLM refuses ``prompt_logprobs`` in a stream, so a vLLM stream first scores the prompt
        (the same request as `score`: its first snapshot) and then streams the completion alone;
        each snapshot is the scored prompt joined with the completion so far.
        """
        if self.server == "llama.cpp" and req.messages is None:
            return (yield from llamacpp_server.run(self, req, snapshots))
        path, body = self._body(req)
        if not snapshots:
            return self._finish(self._trace(self._request("POST", path, body), req), req)
        prompt = None
        if self.server == "vllm":
            prompt = self._prompt_trace(req, like_generate=True)
            yield Step(0, lambda: self._finish(prompt, req))
            for key in ("echo", "prompt_logprobs"):
                body.pop(key, None)
        chunks: list[dict] = []
        events = request_sse(self.base_url + path, {**body, "stream": True}, api_key=self.api_key,
                             timeout=self.timeout, server=self.base_url, path=path)
        n_new, shown_at, since = 0, time.perf_counter(), 0
        interrupted = False
        try:
            for event in events:
                chunks.append(event)
                n_new += _new_tokens(event)
                since += 1
                now = time.perf_counter()
                due = since >= req.stream_every if req.stream_every else now - shown_at >= STREAM_SNAPSHOT_S
                if due and n_new:
                    since, shown_at = 0, now
                    seen = list(chunks)
                    yield Step(n_new, lambda seen=seen: self._streamed(prompt, seen, req))
        except INTERRUPTS as error:
            if not chunks:
                raise
            interrupted = True
            note_interrupt(error)
        finally:
            events.close()  # closes the connection: the server stops generating
        trace = self._streamed(prompt, chunks, req)
        if interrupted:
            trace.meta["finish_reason"] = "interrupted"
        return trace

    def _streamed(self, prompt: Trace | None, chunks: list[dict], req: Request) -> Trace:
        """The trace of a stream so far: the scored prompt (vLLM) joined with the streamed completion."""
        completion = self._trace(chunks, req, prompt_given=prompt is not None)
        if prompt is not None:
            completion = join(prompt, completion[completion.prompt_len :])
        return self._finish(completion, req)

    def _prompt_trace(self, req: Request, like_generate: bool = False) -> Trace:
        """The prompt alone, scored by vLLM (``prompt_logprobs``): every token is a prompt token.

        ``like_generate``: ask for the prompt as `generate` does (the echo's K alternatives, ids
        as tokens), so that a stream's prompt is the one generate returns.
        """
        k = req.top_logprobs
        as_ids = like_generate and self.tokenizer is not None
        if req.messages is not None:
            # the chat template is applied by the server; one generated token is dropped
            body = {"model": self.model, "messages": req.messages, "max_tokens": 1, "temperature": 0,
                    "prompt_logprobs": k, "return_token_ids": True}
            if as_ids:
                body["return_tokens_as_token_ids"] = True
            return _prompt_only(self._trace(self._request("POST", "/chat/completions", body), req))
        prompt = req.text if req.prompt_ids is None else req.prompt_ids
        body = {"model": self.model, "prompt": prompt, "max_tokens": 0, "echo": True,
                "logprobs": k if like_generate else 0, "prompt_logprobs": k, "return_token_ids": True}
        if as_ids:
            body["return_tokens_as_token_ids"] = True
        return self._trace(self._request("POST", "/completions", body), req)

    def _score(self, req: Request, bar) -> Trace:
        if self.server == "llama.cpp":
            raise ValueError(f"{llamacpp_server.NO_PROMPT_LOGPROBS} (the server at {self.base_url})")
        if self.server != "vllm":
            raise ValueError(
                f"scoring needs the prompt's logprobs, which the server at {self.base_url} ({self.server}) does not "
                "return; vLLM does (prompt_logprobs)"
            )
        trace = self._prompt_trace(req)
        bar.update_to(len(trace))
        trace.meta.update({"base_url": self.base_url, "mode": "score", **req.input_meta()})
        return trace

    def _check_top_logprobs(self, top_logprobs) -> int:
        cap = self.max_top_logprobs
        if not is_int(top_logprobs) or not 0 <= top_logprobs <= cap:
            why = {"vllm": "vLLM's --max-logprobs", "llama.cpp": "connect(max_top_logprobs=) raises it"}.get(
                self.server, "the OpenAI API's cap")
            raise ValueError(f"top_logprobs must be between 0 and {cap} for this server ({why}), got {top_logprobs!r}")
        return int(top_logprobs)

    # -- helpers -----------------------------------------------------------------------

    def token_id(self, text: str) -> int:
        """The id of `text` when it is exactly one token (the tokenizer's, else the server's /tokenize)."""
        if self.tokenizer is not None:
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        elif self.server == "llama.cpp":
            ids = [t.id for t in llamacpp_server.tokenize(self, text, add_special=False)]
        elif self.server == "vllm":
            body = {"model": self.model, "prompt": text, "add_special_tokens": False}
            ids = self._request("POST", "/tokenize", body, root=True).get("tokens") or []
        else:
            raise ValueError(f"the server at {self.base_url} cannot tell which token {text!r} is; give its id")
        if len(ids) != 1:
            raise ValueError(f"{text!r} is not one token of {self.model}: it makes {len(ids)} tokens {list(ids)[:8]}; "
                             "give one token's text or its id")
        return int(ids[0])

    def _finish(self, trace: Trace, req: Request) -> Trace:
        trace.meta.update({"base_url": self.base_url, **req.sampling_meta(), **req.input_meta()})
        if self.server == "llama.cpp":
            trace.meta["server"] = "llama.cpp"
        return trace

    def _trace(self, resp, req: Request, prompt_given: bool = False) -> Trace:
        try:
            trace = from_openai(resp, top_logprobs=req.top_logprobs, prompt=None if prompt_given else req.text,
                                tokenizer=self.tokenizer, source=self.server)
        except OpenAIResponseError as e:
            raise ServerError(f"the server at {self.base_url} returned an error: {e}", server=self.base_url) from e
        if isinstance(trace, list):
            trace = trace[0]
        if trace.prompt_len and "first_token_unknown" in trace.flags[0]:
            self._fill_first_token(trace)
        trace.meta["model"] = self.model
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
            before = flag_warnings(trace.flags)  # the sentences those codes produced
            trace.flags[0] = [f for f in trace.flags[0] if f != "first_token_unknown"]
            others = [w for w in trace.meta.get("warnings", []) if w not in before]
            trace.meta["warnings"] = others + flag_warnings(trace.flags)
            if not trace.meta["warnings"]:
                del trace.meta["warnings"]

    def _request(self, method: str, path: str, body: dict | None = None, *, root: bool = False) -> dict:
        base = self.base_url.removesuffix("/v1") if root else self.base_url
        return request_json(base + path, method, body, api_key=self.api_key, timeout=self.timeout,
                            server=self.base_url, path=path)


def _new_tokens(event: dict) -> int:
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


def join(prompt: Trace, completion: Trace) -> Trace:
    """One trace of a scored prompt followed by a completion (K padded to the larger of the two)."""
    import numpy as np

    k = max(prompt.k, completion.k)

    def wide(t: Trace, name: str, fill):
        m = getattr(t, name)
        return np.pad(m, ((0, 0), (0, k - m.shape[1])), constant_values=fill) if m.shape[1] < k else m

    flags = [list(f) for f in prompt.flags] + [list(f) for f in completion.flags]
    meta = {**prompt.meta, **completion.meta}
    meta.pop("warnings", None)
    if flag_warnings(flags):
        meta["warnings"] = flag_warnings(flags)
    return Trace(
        tokens=prompt.tokens + completion.tokens,
        token_bytes=prompt.token_bytes + completion.token_bytes,
        token_ids=np.concatenate([prompt.token_ids, completion.token_ids]),
        logprobs=np.concatenate([prompt.logprobs, completion.logprobs]),
        ranks=np.concatenate([prompt.ranks, completion.ranks]),
        entropy=np.concatenate([prompt.entropy, completion.entropy]),
        top_tokens=list(prompt.top_tokens) + list(completion.top_tokens),
        top_logprobs=np.concatenate([wide(prompt, "top_logprobs", -np.inf), wide(completion, "top_logprobs", -np.inf)]),
        top_ids=np.concatenate([wide(prompt, "top_ids", -1), wide(completion, "top_ids", -1)]),
        flags=flags,
        prompt_len=len(prompt),
        meta=meta,
    )


def _prompt_only(trace: Trace) -> Trace:
    """The prompt part of a trace."""
    out = trace[: trace.prompt_len]
    out.meta.pop("finish_reason", None)
    out.meta["text"] = out.text
    return out
