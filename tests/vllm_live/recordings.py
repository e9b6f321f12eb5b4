"""Real vLLM responses the tests read: the requests, and a recorder that replays them live.

``python -m tests.vllm_live.recordings http://127.0.0.1:8011/v1`` (re)records every request below
into ``tests/fixtures/vllm/<name>.json`` as ``{"endpoint", "request", "status", "server",
"body"}``, where ``body`` is the response's raw text exactly as received (JSON, or SSE lines
for streams). The offline tests (tests/test_openai_adapter.py) parse these files; the live
tests (tests/vllm_live/) send the same requests to a fresh server and parse its answers.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vllm"
MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"  # the name logprob_viz.servers.vllm serves
ROBOT = "A robot may not injure a human being"
SPLIT = "Robots 🤖 say こんにちは — it’s “fine”."  # characters that the tokenizer splits across tokens
EMOJI_CHAT = [{"role": "user", "content": "Reply with the robot emoji 🤖 and nothing else"}]
HI_CHAT = [{"role": "user", "content": "Hi"}]

# name -> (endpoint, request body without "model"); each exercises a format or a quirk.
REQUESTS: dict[str, tuple[str, dict]] = {
    # Completions, greedy, K=5, token ids (vLLM's return_token_ids)
    "completions_greedy_k5": ("/completions", dict(prompt=ROBOT, max_tokens=16, logprobs=5, temperature=0,
                                                   return_token_ids=True)),
    # sampled far outside the top 1: top_logprobs holds K+1 entries, the chosen listed first
    "completions_sampled_k1": ("/completions", dict(prompt=ROBOT, max_tokens=12, logprobs=1, temperature=2.0, seed=1)),
    # echo + prompt_logprobs with split characters: "" tokens, keys collided on "", text_offset in characters
    "completions_echo_split": ("/completions", dict(prompt=SPLIT, max_tokens=8, logprobs=2, prompt_logprobs=2,
                                                    echo=True, temperature=0, return_token_ids=True)),
    # prompt_logprobs alone (scoring): the first prompt token is known only by its id
    "completions_prompt_logprobs": ("/completions", dict(prompt=ROBOT, max_tokens=1, prompt_logprobs=5, temperature=0,
                                                         return_token_ids=True)),
    # "token_id:123" tokens (return_tokens_as_token_ids), echoed
    "completions_token_ids": ("/completions", dict(prompt="A robot may not injure", max_tokens=4, logprobs=2, echo=True,
                                                   temperature=0, return_tokens_as_token_ids=True)),
    # two choices -> two traces
    "completions_n2": ("/completions", dict(prompt=ROBOT, max_tokens=6, logprobs=2, n=2, temperature=1.0, seed=3)),
    # a stream: SSE text, one token per chunk
    "completions_stream": ("/completions", dict(prompt=ROBOT, max_tokens=8, logprobs=3, temperature=0, stream=True,
                                                return_token_ids=True)),
    # a stream of two prompts: chunks of choices 0 and 1 interleave
    "completions_stream_two_prompts": ("/completions", dict(prompt=["A robot", "Hello"], max_tokens=4, logprobs=1,
                                                            temperature=0, stream=True)),
    # Chat with top_logprobs, token ids and the (templated) prompt's logprobs
    "chat_top_logprobs": ("/chat/completions", dict(messages=HI_CHAT, max_tokens=16, logprobs=True, top_logprobs=5,
                                                    temperature=0, return_token_ids=True, prompt_logprobs=2)),
    # Chat: an emoji split over three tokens: "" tokens with bytes []
    "chat_emoji_split": ("/chat/completions", dict(messages=EMOJI_CHAT, max_tokens=8, logprobs=True, top_logprobs=3,
                                                   temperature=0, return_token_ids=True)),
    # Chat, sampled: vLLM lists the chosen token first and cuts at K
    "chat_sampled_k1": ("/chat/completions", dict(messages=HI_CHAT, max_tokens=6, logprobs=True, top_logprobs=1,
                                                  temperature=2.0, seed=3)),
    # Chat with token_id:N tokens: real bytes on the chosen token, the placeholder's on alternatives
    "chat_token_ids": ("/chat/completions", dict(messages=HI_CHAT, max_tokens=4, logprobs=True, top_logprobs=2,
                                                 temperature=0, return_tokens_as_token_ids=True)),
    # Chat ending on the end-of-turn token, which is in the logprobs but not in the content
    "chat_eos": ("/chat/completions", dict(messages=[{"role": "user", "content": "Say OK"}], max_tokens=40,
                                           logprobs=True, top_logprobs=2, temperature=0, return_token_ids=True)),
    # a Chat stream with a final usage chunk
    "chat_stream": ("/chat/completions", dict(messages=HI_CHAT, max_tokens=6, logprobs=True, top_logprobs=3,
                                              temperature=0, stream=True, stream_options={"include_usage": True})),
    # error bodies
    "error_logprobs_25": ("/completions", dict(prompt="A", max_tokens=1, logprobs=25)),
    "error_unknown_model": ("/completions", dict(prompt="A", max_tokens=1, model="no-such-model")),
}


def request(base_url: str, endpoint: str, body: dict, timeout: float = 120) -> tuple[int, str]:
    """POST `body` (with the served model unless it names one); (status, raw body text)."""
    body = {"model": MODEL, **body}
    req = urllib.request.Request(base_url.rstrip("/") + endpoint, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8")


def load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def record(base_url: str) -> list[Path]:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(base_url.rstrip("/").removesuffix("/v1") + "/version", timeout=10) as r:
        version = json.load(r).get("version")
    written = []
    for name, (endpoint, body) in REQUESTS.items():
        status, text = request(base_url, endpoint, body)
        path = FIXTURES / f"{name}.json"
        record = {"endpoint": endpoint, "request": {"model": MODEL, **body}, "status": status,
                  "server": f"vllm {version} (CPU), logprob_viz.servers.vllm", "body": text}
        path.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for p in record(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8011/v1"):
        print(p)


def server_logprobs(text: str, choice: int) -> list:
    """The chosen tokens' logprobs exactly as the server wrote them, for one choice (JSON or SSE)."""
    if text.lstrip().startswith("data:"):
        bodies = [json.loads(line[5:]) for line in text.splitlines()
                  if line.startswith("data:") and line[5:].strip() != "[DONE]"]
    else:
        bodies = [json.loads(text)]
    out = []
    for b in bodies:
        for ch in b.get("choices") or []:
            lp = ch.get("logprobs") if ch.get("index", 0) == choice else None
            if lp:
                out += lp.get("token_logprobs") or [e["logprob"] for e in lp.get("content") or []]
    return out


def check(traces, text: str, request: dict) -> int:
    """Claims that hold for every parsed real response; returns how many traces were checked.

    The server's own numbers, read here with plain json (not with the adapter), must come
    through exactly (as float32); alternatives are most likely first and at most K.
    """
    import numpy as np

    traces = traces if isinstance(traces, list) else [traces]
    k = request.get("top_logprobs", request.get("logprobs"))
    if not isinstance(k, int) or isinstance(k, bool):
        k = request.get("prompt_logprobs") or 0
    for t in traces:
        assert t.meta["source"] == "vllm" and t.meta["model"] == request["model"]
        lps = server_logprobs(text, t.meta["choice"])
        n_gen = len(t) - t.prompt_len
        gen = lps[len(lps) - n_gen :] if n_gen else []
        assert t.logprobs[t.prompt_len :].tolist() == [float(np.float32(x)) for x in gen]
        assert t.k <= max(k, request.get("prompt_logprobs") or 0)
        finite = np.where(np.isfinite(t.top_logprobs), t.top_logprobs, -1e30)
        assert (np.diff(finite, axis=1) <= 0).all(), "alternatives are most likely first"
        assert len(t.tokens) == len(t.token_bytes) == len(t.token_ids)
        assert len(t.flags) == len(t)
    return len(traces)
