"""HTTP for the server runner, with the standard library only: JSON requests, SSE streams, and
errors that name the server and the cause (refused, timed out, HTTP status, not JSON).
"""

from __future__ import annotations

import html
import http.client
import json
import re
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator

from ..errors import ServerError

__all__ = ["ServerError", "request_json", "request_sse", "plain_excerpt"]

EXCERPT_CHARS = 200  # of an error page's text: enough to read the cause, never a page of markup


def _open(url: str, method: str, body: dict | None, api_key: str | None, timeout: float, server: str, path: str,
          accept: str = "application/json"):
    """An open response, or a ServerError that says why there is none."""
    headers = {"Accept": accept}
    data = None
    if body is not None:
        data = json.dumps(body).encode("utf-8")
        headers["Content-Type"] = "application/json"
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    req = urllib.request.Request(url, data=data, headers=headers, method=method)
    where = f"the server at {server}"
    try:
        return urllib.request.urlopen(req, timeout=timeout)
    except urllib.error.HTTPError as e:
        try:
            raw = e.read() if e.fp is not None else b""
        except (OSError, http.client.HTTPException):
            raw = b""  # the error page itself broke off: its status still says what happened
        message = error_message(raw)
        if message is None:  # not an API's error object: a proxy's page, a bare text; its words, short
            excerpt = plain_excerpt(raw)
            message = f"{e.reason}" + (f" (the answer's text: {excerpt!r})" if excerpt else "")
        raise ServerError(f"{where} answered HTTP {e.code} to {method} {path}: {message}", status=e.code,
                          server=server) from None
    except urllib.error.URLError as e:
        raise ServerError(f"cannot reach {where} ({method} {path}): {_cause(e.reason, timeout)}",
                          server=server) from None
    except (TimeoutError, ConnectionError, http.client.HTTPException) as e:
        raise _cut_off(e, "answer", where, method, path, timeout, server) from None


def _cut_off(error: Exception, waiting: str, where: str, method: str, path: str, timeout: float,
             server: str) -> ServerError:
    """The error for a timeout or a broken connection while the server should `waiting` ("answer", ...)."""
    if isinstance(error, TimeoutError):
        return ServerError(f"{where} did not {waiting} {method} {path} within {timeout:g} s: read timeout "
                           "(lv.connect(url, timeout=...) sets it)", server=server)
    return ServerError(f"{where} broke off {method} {path}: {_cause(error, timeout)}", server=server)


def request_json(url: str, method: str, body: dict | None, *, api_key: str | None, timeout: float, server: str,
                 path: str) -> dict:
    """One request whose answer is a JSON object."""
    where = f"the server at {server}"
    with _open(url, method, body, api_key, timeout, server, path) as r:
        try:
            raw, status = r.read(), r.status
        except (TimeoutError, ConnectionError, http.client.HTTPException) as e:
            raise _cut_off(e, "finish answering", where, method, path, timeout, server) from None
    try:
        out = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ServerError(f"{where} answered {method} {path} with HTTP {status} but not JSON: "
                          f"{plain_excerpt(raw)!r}", status=status, server=server) from None
    return check_object(out, where, f"{method} {path}", status, server)


def request_sse(url: str, body: dict, *, api_key: str | None, timeout: float, server: str,
                path: str) -> Iterator[dict]:
    """POST with ``stream: true``: the server-sent events' JSON objects as they arrive.

    The stream ends at ``data: [DONE]`` (the OpenAI API), or when the connection closes after an
    event that says the generation is over (`says_finished`: llama.cpp's native route sends no
    [DONE]). A stream that breaks off before that (the server died, a proxy cut it) or goes
    silent for `timeout` seconds raises a ServerError that says so. Closing the iterator closes
    the connection, which tells the server to stop generating.
    """
    where = f"the server at {server}"
    what = f"POST {path} (stream)"
    finished = False
    with _open(url, "POST", body, api_key, timeout, server, path, accept="text/event-stream") as r:
        lines, started = _lines(r, where, what, timeout, server), False
        for line in lines:
            line = line.strip()
            if line.startswith(b"{") and not started:
                # not a stream: an error object, or a server that answers whole (its answer is the one event)
                yield _whole_answer(b"".join([line, *lines]), where, what, r.status, server)
                return
            if not line.startswith(b"data:"):
                continue  # blank separators, comments (": ping"), event names
            started = True
            data = line[5:].strip()
            if data == b"[DONE]":
                return
            try:
                event = json.loads(data)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise ServerError(f"{where} streamed something that is not JSON for POST {path}: "
                                  f"{plain_excerpt(data)!r}", server=server) from None
            finished = finished or says_finished(event)
            yield check_object(event, where, what, r.status, server)
    if finished:
        return
    raise ServerError(f"{where} closed {what} before the end of the stream (no [DONE], no last event): "
                      "did the server stop or restart?", server=server)


def _whole_answer(raw: bytes, where: str, what: str, status: int, server: str) -> dict:
    try:
        out = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ServerError(f"{where} answered {what} with JSON that does not parse: {plain_excerpt(raw)!r}",
                          status=status, server=server) from None
    return check_object(out, where, what, status, server)


def says_finished(event) -> bool:
    """Whether a stream event is a generation's last word: a choice's ``finish_reason`` (the OpenAI
    API), ``stop: true`` (llama.cpp's /completion), ``done: true`` (Ollama)."""
    if not isinstance(event, dict):
        return False
    if event.get("stop") is True or event.get("done") is True:
        return True
    choices = event.get("choices")
    return isinstance(choices, list) and any(isinstance(c, dict) and c.get("finish_reason") for c in choices)


def _lines(response, where: str, what: str, timeout: float, server: str) -> Iterator[bytes]:
    """The response's lines; a silence longer than `timeout` or a broken connection is a ServerError."""
    while True:
        try:
            line = response.readline()
        except TimeoutError:
            raise ServerError(f"{where} stopped sending in the middle of {what}: read timeout, nothing for "
                              f"{timeout:g} s (raise it with lv.connect(url, timeout=...) if the server is "
                              "only slow)", server=server) from None
        except (OSError, http.client.HTTPException) as e:
            raise ServerError(f"{where} broke off {what}: {_cause(e, timeout)}", server=server) from None
        if not line:
            return
        yield line


def check_object(out, where: str, what: str, status: int, server: str) -> dict:
    if isinstance(out, dict) and "error" in out and not out.get("choices") and not out.get("data"):
        message = error_message(json.dumps(out).encode()) or json.dumps(out["error"])[:500]
        raise ServerError(f"{where} returned an error for {what}: {message}", status=status, server=server)
    if not isinstance(out, dict):
        raise ServerError(f"{where} answered {what} with a JSON {type(out).__name__}, not an object",
                          status=status, server=server)
    return out


def error_message(raw: bytes) -> str | None:
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


def plain_excerpt(raw: bytes, limit: int = EXCERPT_CHARS) -> str:
    """A body's readable text, short: an HTML page (a proxy's 502) as its words, never its markup."""
    text = raw[: 64 * 1024].decode("utf-8", "replace")
    if re.search(r"<(html|head|body|title|h1|p|div|center|!doctype)\b", text, re.IGNORECASE):
        text = re.sub(r"(?is)<(script|style)\b.*?</\1\s*>", " ", text)
        text = html.unescape(re.sub(r"(?s)<[^>]*>", " ", text))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cause(reason, timeout: float) -> str:
    if isinstance(reason, ConnectionRefusedError):
        return ("connection refused: nothing listens there. Is the server running? "
                "(a local vLLM: python -m logprob_viz.servers.vllm start; "
                "llama.cpp: python -m logprob_viz.servers.llamacpp start)")
    if isinstance(reason, TimeoutError):
        return f"read timeout: no answer within {timeout:g} s (lv.connect(url, timeout=...) sets it)"
    if isinstance(reason, socket.gaierror):
        return f"unknown host ({reason})"
    if isinstance(reason, http.client.RemoteDisconnected):  # (a ConnectionResetError too)
        return "the server closed the connection without answering (did it stop? start it again and retry)"
    if isinstance(reason, ConnectionResetError):
        return "the connection was reset by the server (did it stop? start it again and retry)"
    if isinstance(reason, http.client.IncompleteRead):
        return "the connection closed in the middle of the answer (did the server stop? start it again and retry)"
    return f"{type(reason).__name__}: {reason}"
