"""A runner backed by an OpenAI-compatible server (vLLM, OpenAI, ...): the same generate/score
API as the local runner, returning the same Trace.

    runner = lv.connect("http://127.0.0.1:8011/v1")          # model: the server's first
    t = runner.generate("A robot may not injure a human being", max_new_tokens=32, top_logprobs=5)
    runner.generate(messages=[{"role": "user", "content": "Hi"}], temperature=0.7, seed=0)
    runner.score("Text to score, token by token.")            # vLLM's prompt_logprobs

Text goes to ``/completions``, messages to ``/chat/completions``. On a vLLM server the prompt's
tokens are scored too (``prompt_logprobs``, ``echo``) and token ids come back
(``return_token_ids``), so a trace holds prompt + completion like the local runner's; other
servers give the completion only. Requests use the standard library (no ``openai`` package
needed); every failure names the server and the cause.
"""

from __future__ import annotations

import http.client
import json
import logging
import math
import os
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from ..adapters.openai import OpenAIResponseError, from_openai
from ..flags import flag_warnings
from ..trace import Trace

__all__ = ["connect", "OpenAIRunner", "ServerError"]

logger = logging.getLogger(__name__)

# vLLM's default --max-logprobs, and OpenAI's cap on top_logprobs.
DEFAULT_MAX_TOP_LOGPROBS = 20


class ServerError(OpenAIResponseError):
    """The server could not be reached, did not answer in time, or answered with an error."""


def connect(base_url: str | None = None, model: str | None = None, api_key: str | None = None, **kwargs: Any) -> OpenAIRunner:
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


class OpenAIRunner:
    """Generates or scores text on an OpenAI-compatible server, recording a Trace."""

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
        if model is None:
            if not names:
                raise ServerError(f"the server at {self.base_url} lists no models at /models; pass model=", server=self.base_url)
            model = names[0]
        elif names and model not in names:
            raise ValueError(f"the server at {self.base_url} does not serve {model!r}; it serves: {', '.join(names[:20])}")
        self.model = model
        self.name = model
        self.max_top_logprobs = int(max_top_logprobs if max_top_logprobs is not None else DEFAULT_MAX_TOP_LOGPROBS)

    def __repr__(self) -> str:
        return f"<OpenAIRunner {self.model} at {self.base_url} ({self.server})>"

    # -- public API --------------------------------------------------------------------

    def generate(
        self,
        prompt: str | None = None,
        *,
        messages: list[dict] | None = None,
        max_new_tokens: int = 32,
        temperature: float | None = None,
        top_p: float | None = None,
        top_k: int | None = None,
        do_sample: bool | None = None,
        seed: int | None = None,
        top_logprobs: int = 5,
    ) -> Trace:
        """Generate a continuation on the server and record every token's logprob, rank and top-K.

        Same arguments as the local runner's ``generate``: decoding is greedy unless
        ``do_sample=True`` or a temperature > 0, ``top_p`` or ``top_k`` is given. On vLLM the
        prompt's tokens are scored too (``prompt_len`` marks them). The server gives only the
        top K, so ``entropy`` is NaN.
        """
        self._check_input(prompt, messages)
        k = self._check_top_logprobs(top_logprobs)
        if not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool) or max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be an int >= 0, got {max_new_tokens!r}")
        sampling = _sampling(temperature, top_p, top_k, do_sample, seed)
        if sampling.get("top_k") and self.server != "vllm":
            raise ValueError(f"top_k is not part of the OpenAI API; the server at {self.base_url} is not vLLM")
        vllm = self.server == "vllm"
        body: dict[str, Any] = {"model": self.model, **sampling}
        if vllm and self.tokenizer is not None:
            # every token and alternative as "token_id:N", decoded here by the tokenizer: no
            # string keys to collide, and exact bytes for pieces of split characters
            body["return_tokens_as_token_ids"] = True
        if messages is not None:
            path = "/chat/completions"
            body.update(messages=messages, max_tokens=max_new_tokens, logprobs=True)
            # vLLM lists the chosen token first and cuts at K: one more entry keeps the top K whole.
            body["top_logprobs"] = min(k + 1, self.max_top_logprobs) if vllm else k
            if vllm:
                body.update(prompt_logprobs=k, return_token_ids=True)
        else:
            path = "/completions"
            body.update(prompt=prompt, max_tokens=max_new_tokens, logprobs=k)
            if vllm:
                body.update(echo=True, prompt_logprobs=k, return_token_ids=True)
        started = time.perf_counter()
        resp = self._request("POST", path, body)
        trace = self._trace(resp, k, prompt)
        trace.meta.update(
            {
                "base_url": self.base_url,
                "max_new_tokens": int(max_new_tokens),
                "do_sample": sampling["temperature"] > 0,
                "temperature": sampling["temperature"] if sampling["temperature"] > 0 else None,
                "top_p": sampling.get("top_p"),
                "top_k": sampling.get("top_k"),
                "seed": sampling.get("seed"),
                "seconds": round(time.perf_counter() - started, 4),
                **({"messages": messages} if messages is not None else {"prompt": prompt}),
            }
        )
        return trace

    def score(self, text: str | None = None, *, messages: list[dict] | None = None, top_logprobs: int = 5) -> Trace:
        """Score existing text token by token (vLLM's ``prompt_logprobs``): every token is a prompt token.

        The first token has no preceding context: its logprob is NaN and its rank 0.
        """
        self._check_input(text, messages)
        k = self._check_top_logprobs(top_logprobs)
        if self.server != "vllm":
            raise ValueError(
                f"scoring needs the prompt's logprobs, which the server at {self.base_url} ({self.server}) does not "
                "return; vLLM does (prompt_logprobs)"
            )
        started = time.perf_counter()
        if messages is not None:
            # the chat template is applied by the server; one generated token is dropped
            body = {"model": self.model, "messages": messages, "max_tokens": 1, "temperature": 0,
                    "prompt_logprobs": k, "return_token_ids": True}
            resp = self._request("POST", "/chat/completions", body)
            trace = _prompt_only(self._trace(resp, k, None))
        else:
            body = {"model": self.model, "prompt": text, "max_tokens": 0, "echo": True, "logprobs": 0,
                    "prompt_logprobs": k, "return_token_ids": True}
            resp = self._request("POST", "/completions", body)
            trace = self._trace(resp, k, text)
        trace.meta.update({"base_url": self.base_url, "mode": "score", "seconds": round(time.perf_counter() - started, 4),
                           **({"messages": messages} if messages is not None else {"prompt": text})})
        return trace

    # -- helpers -----------------------------------------------------------------------

    def _trace(self, resp: dict, k: int, prompt: str | None) -> Trace:
        try:
            trace = from_openai(resp, top_logprobs=k, prompt=prompt, tokenizer=self.tokenizer, source=self.server)
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

    def _check_input(self, text, messages) -> None:
        if (text is None) == (messages is None):
            raise ValueError("give either a text (the first argument) or messages=[{'role': ..., 'content': ...}], not both")
        if messages is not None:
            if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m and "content" in m for m in messages):
                raise ValueError("messages must be a list of dicts with 'role' and 'content', e.g. [{'role': 'user', 'content': 'Hi'}]")
        elif not isinstance(text, str):
            raise TypeError(f"the text must be a str, got {type(text).__name__}")
        elif not text:
            raise ValueError("the text is empty: give at least one character to start from")

    def _check_top_logprobs(self, top_logprobs) -> int:
        cap = self.max_top_logprobs
        if not isinstance(top_logprobs, int) or isinstance(top_logprobs, bool) or not 0 <= top_logprobs <= cap:
            why = "vLLM's --max-logprobs" if self.server == "vllm" else "the OpenAI API's cap"
            raise ValueError(f"top_logprobs must be between 0 and {cap} for this server ({why}), got {top_logprobs!r}")
        return top_logprobs

    def _request(self, method: str, path: str, body: dict | None = None, *, root: bool = False) -> dict:
        base = self.base_url.removesuffix("/v1") if root else self.base_url
        url = base + path
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        where = f"the server at {self.base_url}"
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                raw = r.read()
                status = r.status
        except urllib.error.HTTPError as e:
            raw = e.read() if e.fp is not None else b""
            message = _error_message(raw) or (raw.decode("utf-8", "replace").strip()[:500] or e.reason)
            raise ServerError(f"{where} answered HTTP {e.code} to {method} {path}: {message}", status=e.code,
                              server=self.base_url) from None
        except urllib.error.URLError as e:
            raise ServerError(f"cannot reach {where} ({method} {path}): {_cause(e.reason, self.timeout)}",
                              server=self.base_url) from None
        except (TimeoutError, socket.timeout):
            raise ServerError(f"{where} did not answer {method} {path} within {self.timeout:g} s (timeout=)",
                              server=self.base_url) from None
        except (ConnectionError, http.client.HTTPException) as e:
            raise ServerError(f"{where} broke off {method} {path}: {_cause(e, self.timeout)}", server=self.base_url) from None
        try:
            out = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ServerError(f"{where} answered {method} {path} with HTTP {status} but not JSON: "
                              f"{raw[:300].decode('utf-8', 'replace')!r}", status=status, server=self.base_url) from None
        if isinstance(out, dict) and "error" in out and not out.get("choices") and not out.get("data"):
            message = _error_message(raw) or json.dumps(out["error"])[:500]
            raise ServerError(f"{where} returned an error for {method} {path}: {message}", status=status, server=self.base_url)
        if not isinstance(out, dict):
            raise ServerError(f"{where} answered {method} {path} with a JSON {type(out).__name__}, not an object",
                              status=status, server=self.base_url)
        return out


def _prompt_only(trace: Trace) -> Trace:
    """The prompt part of a trace."""
    out = trace[: trace.prompt_len]
    out.meta.pop("finish_reason", None)
    out.meta["text"] = out.text
    return out


def _error_message(raw: bytes) -> str | None:
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(body, dict):
        return None
    err = body.get("error", body.get("detail", body.get("message")))
    if isinstance(err, dict):
        return str(err.get("message") or json.dumps(err))
    return None if err is None else str(err)


def _cause(reason, timeout: float) -> str:
    if isinstance(reason, ConnectionRefusedError):
        return ("connection refused: nothing listens there. Is the server running? "
                "(a local vLLM: python -m logprob_viz.vllm_server start)")
    if isinstance(reason, (TimeoutError, socket.timeout)):
        return f"no answer within {timeout:g} s (timeout=)"
    if isinstance(reason, socket.gaierror):
        return f"unknown host ({reason})"
    if isinstance(reason, ConnectionResetError):
        return "the connection was reset by the server"
    if isinstance(reason, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    return f"{type(reason).__name__}: {reason}"


def _sampling(temperature, top_p, top_k, do_sample, seed) -> dict:
    """Request fields for the same sampling rules as the local runner (greedy unless asked)."""
    if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, (int, float))
                                    or temperature < 0 or not math.isfinite(temperature)):
        raise ValueError(f"temperature must be a number >= 0 (0 means greedy), got {temperature!r}")
    if top_p is not None and (isinstance(top_p, bool) or not isinstance(top_p, (int, float)) or not 0 < top_p <= 1):
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
    if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 0):
        raise ValueError(f"top_k must be an int >= 0 (0 means no top-k), got {top_k!r}")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise TypeError(f"seed must be an int or None, got {type(seed).__name__}")
    if do_sample is None:
        do_sample = (temperature is not None and temperature > 0) or top_p is not None or bool(top_k)
    if not do_sample or temperature == 0:
        # Explicit: a server applies the model's generation_config defaults to what is not sent.
        return {"temperature": 0.0}
    out: dict[str, Any] = {"temperature": float(1.0 if temperature is None else temperature),
                           "top_p": float(1.0 if top_p is None else top_p)}
    if top_k:
        out["top_k"] = int(top_k)
    if seed is not None:
        out["seed"] = int(seed)
    return out
