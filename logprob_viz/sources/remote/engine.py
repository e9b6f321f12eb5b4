"""What every engine behind a server shares (`RemoteEngine`): the server's address and model, its
HTTP requests, the one streaming loop that turns server-sent events into growing snapshots, and
errors that name the server. Each server's engine (`openai`, `vllm`, `llamacpp`) says only what it
sends and how it reads the answer; the user's face over it is `runner.RemoteRunner`.
"""

from __future__ import annotations

import os
import time
import urllib.parse
import warnings
from collections.abc import Callable

from ...records.trace import Trace
from ...records.trace_fields import check_top_logprobs
from ..engine import Capabilities
from ..progress import INTERRUPTS, note_interrupt
from ..request import UPDATE_S, Request, Step, check_prompt_ids
from .http import ServerError, request_json, request_sse
from .inflight import DEFAULT_CONCURRENCY, InFlight

__all__ = ["RemoteEngine", "base_url_of", "api_key_of", "list_models", "note_failure", "DEFAULT_MAX_TOP_LOGPROBS"]

# vLLM's default --max-logprobs, and OpenAI's cap on top_logprobs.
DEFAULT_MAX_TOP_LOGPROBS = 20


def base_url_of(base_url: str | None) -> str:
    """The API's base URL as the ``openai`` SDK takes it (``/v1`` added when the URL has no path)."""
    base_url = base_url or os.environ.get("OPENAI_BASE_URL")
    if not base_url:
        raise ValueError("give the server's base URL, e.g. lv.connect('http://127.0.0.1:8011/v1')")
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"base_url must be an http(s) URL such as http://127.0.0.1:8011/v1, got {base_url!r}")
    return base_url.rstrip("/") if parts.path.strip("/") else base_url.rstrip("/") + "/v1"


def api_key_of(api_key: str | None) -> str | None:
    return api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")


def list_models(base_url: str, api_key: str | None, timeout: float) -> list:
    """The server's ``/models`` listing (``data``): the names it serves, and who wrote it."""
    answer = request_json(base_url + "/models", "GET", None, api_key=api_key, timeout=timeout, server=base_url,
                          path="/models")
    return answer.get("data") or []


def note_failure(trace: Trace, error: ServerError, n_new: int) -> None:
    """A stream the server broke off: the trace keeps what arrived and says why it ends there."""
    trace.meta["finish_reason"] = "error"
    trace.meta["error"] = (f"{error} — the trace holds the {n_new} tokens received before that; once the server "
                           "answers again, generate again (or branch from the last token) to go on")
    warnings.warn(f"generation ended by a server failure after {n_new} tokens: {error}", RuntimeWarning, stacklevel=4)


class RemoteEngine:
    """The engine of a model behind a server (`base.ServerEngine`): requests over HTTP, the stream
    loop, and what a corpus and ``choose`` ask of the server.

    ``listed`` is the server's ``/models`` answer (``data``), which `connect` has already asked
    for to tell which server it is; without it, the engine asks.
    """

    server = "?"  # which server this runner speaks to: "openai", "vllm", "llama.cpp"
    can_continue_from_ids = True  # prompt_ids= works (a branch needs it); a plain OpenAI API cannot
    vocab_size: int | None = None  # token ids are below it; None where the server does not say it
    top_logprobs_limit = "for this runner"  # whose limit check_top_logprobs's message names
    device = None  # the model runs behind the server, not on a device of this process

    def __init__(self, base_url: str | None = None, model: str | None = None, api_key: str | None = None, *,
                 timeout: float = 120.0, max_top_logprobs: int | None = None, tokenizer=None,
                 listed: list | None = None):
        self.base_url = base_url_of(base_url)
        self.api_key = api_key_of(api_key)
        self.timeout = float(timeout)
        self.tokenizer = tokenizer
        if listed is None:
            listed = list_models(self.base_url, self.api_key, self.timeout)
        self.listed = [m for m in listed if isinstance(m, dict)]
        names = [m.get("id") for m in self.listed]
        if model is None:
            if not names:
                raise ServerError(f"the server at {self.base_url} lists no models at /models; pass model=",
                                  server=self.base_url)
            model = names[0]
        elif names and model not in names:
            raise ValueError(f"the server at {self.base_url} does not serve {model!r}; "
                             f"it serves: {', '.join(map(str, names[:20]))}")
        self.model = self.name = model
        self._max_top_logprobs = int(DEFAULT_MAX_TOP_LOGPROBS if max_top_logprobs is None else max_top_logprobs)

    @property
    def max_top_logprobs(self) -> int:
        """The server's cap on alternatives per token (``connect(max_top_logprobs=)``, default 20)."""
        return self._max_top_logprobs

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(max_top_logprobs=self.max_top_logprobs, top_logprobs_limit=self.top_logprobs_limit,
                            vocab_size=self.vocab_size, can_continue_from_ids=self.can_continue_from_ids,
                            in_process=False, applies_min_p=False)

    def check_top_logprobs(self, top_logprobs) -> int:
        return check_top_logprobs(top_logprobs, self.max_top_logprobs, self.top_logprobs_limit)

    def token_id(self, text: str) -> int:
        raise ValueError(f"the server at {self.base_url} cannot tell which token {text!r} is; give its id")

    @property
    def root_url(self) -> str:
        """The server's root, where routes outside the OpenAI API live (/tokenize, /completion)."""
        return self.base_url.removesuffix("/v1")

    # -- shared machinery ----------------------------------------------------------------

    def in_flight(self) -> InFlight:
        """How many requests a corpus keeps in flight when the caller does not say (`inflight`)."""
        return InFlight.fixed(DEFAULT_CONCURRENCY, f"the default for a server that states no limit "
                              f"({self.server}: an API's rate limits are per account)")

    def check_choose(self) -> None:
        """Raise when this server cannot score given text (it returns no logprobs for the prompt)."""
        raise ValueError(
            f"choose scores given answers after the prompt, which needs the logprobs of tokens the server is given; "
            f"the server at {self.base_url} ({self.server}) returns logprobs only for tokens it generates (no echo or "
            "prompt_logprobs). Serve the model with vLLM and lv.connect to it (prompt_logprobs), or load it here: "
            "lv.load(...).choose(prompt, options)")  # (TGI's and SGLang's native /generate have them; not this API)

    def _request(self, method: str, path: str, body: dict | None = None, *, root: bool = False) -> dict:
        return request_json((self.root_url if root else self.base_url) + path, method, body, api_key=self.api_key,
                            timeout=self.timeout, server=self.base_url, path=path)

    def _stream(self, path: str, body: dict, req: Request, count_new: Callable[[dict], int],
                build: Callable[[list[dict]], Trace], *, root: bool = False):
        """The server's SSE stream as `sources.engine.drive` drives it: a `Step` per due chunk, then the trace.

        ``count_new(event)`` says how many tokens an event brought; ``build(events)`` is the trace
        of the events so far. A snapshot is due every ``req.stream_every`` events, or every
        `UPDATE_S` seconds (each snapshot re-reads the chunks). Ctrl-C or a stop keeps what arrived (``finish_reason``
        "interrupted"); so does a server that fails in the middle (it dies, stalls past the
        timeout, a proxy cuts the stream): ``finish_reason`` "error", ``meta["error"]`` says what
        happened and what to do, with a warning. Closing the stream closes the connection, so the
        server stops generating.
        """
        url = (self.root_url if root else self.base_url) + path
        events = request_sse(url, {**body, "stream": True}, api_key=self.api_key, timeout=self.timeout,
                             server=self.base_url, path=path)
        chunks: list[dict] = []
        n_new, since, shown_at, interrupted, failure = 0, 0, time.perf_counter(), False, None
        try:
            for event in events:
                chunks.append(event)
                n_new += count_new(event)
                since += 1
                now = time.perf_counter()
                due = since >= req.stream_every if req.stream_every else now - shown_at >= UPDATE_S
                if due and n_new:
                    since, shown_at = 0, now
                    seen = list(chunks)
                    yield Step(n_new, lambda seen=seen: build(seen))
        except INTERRUPTS as error:
            if not chunks:
                raise
            interrupted = True
            note_interrupt(error)
        except ServerError as error:
            if not chunks:
                raise  # nothing arrived: nothing to keep, the error says why
            failure = error
        finally:
            events.close()
        trace = build(chunks)
        if interrupted:
            trace.meta["finish_reason"] = "interrupted"
        if failure is not None:
            note_failure(trace, failure, n_new)
        return trace
    def _finish(self, trace: Trace, req: Request) -> Trace:
        """The request's settings in ``meta``, as the local runner records them."""
        trace.meta.update({"base_url": self.base_url, **req.sampling_meta(), **req.input_meta()})
        return trace

    def _check_ids(self, req: Request) -> None:
        """Token ids as a prompt on a server that takes them (checked against the vocabulary when known)."""
        vocab = len(self.tokenizer) if self.tokenizer is not None else self.vocab_size
        req.prompt_ids = check_prompt_ids(req.prompt_ids, vocab)
