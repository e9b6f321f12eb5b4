"""HTTP for the server runner, with the standard library only: JSON requests, SSE streams, and
errors that name the server and the cause (refused, timed out, HTTP status, not JSON).
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator

from ..readers import OpenAIResponseError

__all__ = ["ServerError", "request_json", "request_sse"]


class ServerError(OpenAIResponseError):
    """The server could not be reached, did not answer in time, or answered with an error."""


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
        raw = e.read() if e.fp is not None else b""
        message = error_message(raw) or (raw.decode("utf-8", "replace").strip()[:500] or e.reason)
        raise ServerError(f"{where} answered HTTP {e.code} to {method} {path}: {message}", status=e.code,
                          server=server) from None
    except urllib.error.URLError as e:
        raise ServerError(f"cannot reach {where} ({method} {path}): {_cause(e.reason, timeout)}",
                          server=server) from None
    except TimeoutError:
        raise ServerError(f"{where} did not answer {method} {path} within {timeout:g} s (timeout=)",
                          server=server) from None
    except (ConnectionError, http.client.HTTPException) as e:
        raise ServerError(f"{where} broke off {method} {path}: {_cause(e, timeout)}", server=server) from None


def request_json(url: str, method: str, body: dict | None, *, api_key: str | None, timeout: float, server: str,
                 path: str) -> dict:
    """One request whose answer is a JSON object."""
    where = f"the server at {server}"
    with _open(url, method, body, api_key, timeout, server, path) as r:
        try:
            raw, status = r.read(), r.status
        except TimeoutError:
            raise ServerError(f"{where} did not finish answering {method} {path} within {timeout:g} s (timeout=)",
                              server=server) from None
        except (ConnectionError, http.client.HTTPException) as e:
            raise ServerError(f"{where} broke off {method} {path}: {_cause(e, timeout)}", server=server) from None
    try:
        out = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ServerError(f"{where} answered {method} {path} with HTTP {status} but not JSON: "
                          f"{raw[:300].decode('utf-8', 'replace')!r}", status=status, server=server) from None
    return check_object(out, where, f"{method} {path}", status, server)


def request_sse(url: str, body: dict, *, api_key: str | None, timeout: float, server: str, path: str) -> Iterator[dict]:
    """POST with ``stream: true``: the server-sent events' JSON objects as they arrive.

    Closing the iterator closes the connection, which tells the server to stop generating.
    """
    where = f"the server at {server}"
    with _open(url, "POST", body, api_key, timeout, server, path, accept="text/event-stream") as r:
        for line in r:
            line = line.strip()
            if not line.startswith(b"data:"):
                continue  # blank separators, comments (": ping"), event names
            data = line[5:].strip()
            if data == b"[DONE]":
                return
            try:
                event = json.loads(data)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise ServerError(f"{where} streamed something that is not JSON for POST {path}: "
                                  f"{data[:300].decode('utf-8', 'replace')!r}", server=server) from None
            yield check_object(event, where, f"POST {path} (stream)", r.status, server)


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


def _cause(reason, timeout: float) -> str:
    if isinstance(reason, ConnectionRefusedError):
        return ("connection refused: nothing listens there. Is the server running? "
                "(a local vLLM: python -m logprob_viz.servers.vllm start; "
                "llama.cpp: python -m logprob_viz.servers.llamacpp start)")
    if isinstance(reason, TimeoutError):
        return f"no answer within {timeout:g} s (timeout=)"
    if isinstance(reason, socket.gaierror):
        return f"unknown host ({reason})"
    if isinstance(reason, ConnectionResetError):
        return "the connection was reset by the server"
    if isinstance(reason, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    return f"{type(reason).__name__}: {reason}"
