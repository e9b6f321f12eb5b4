"""Real llama.cpp responses the tests read: the requests, and a recorder that replays them live.

``python tests/llamacpp_live/llamacpp_recordings.py http://127.0.0.1:PORT`` (re)records every request below
into ``tests/fixtures/llamacpp/<name>.json`` as ``{"endpoint", "request", "status", "server",
"body"}`` (the convention of tests/fixtures/vllm/), where ``body`` is the response's raw text
exactly as received (JSON, or SSE lines for streams). The server is logprob_viz's own
(``python -m logprob_viz.servers.llamacpp start``: llama-server on the default model's GGUF file).
Offline tests parse these files; the live tests send the same requests to a fresh server.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llamacpp"
MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"  # the alias logprob_viz.servers.llamacpp serves
ROBOT = "A robot may not injure a human being"
HI_CHAT = [{"role": "user", "content": "Hi"}]
EMOJI_CHAT = [{"role": "user", "content": "Reply with the robot emoji 🤖 and nothing else"}]

# name -> (endpoint, request body); each exercises a format or a quirk. Native routes take no model.
REQUESTS: dict[str, tuple[str, dict]] = {
    # native, greedy, n_probs=5: completion_probabilities[] with logprob, bytes, top_logprobs[]
    "completion_greedy_n5": ("/completion", dict(prompt=ROBOT, n_predict=16, n_probs=5, temperature=0,
                                                 return_tokens=True)),
    # native, sampled, post_sampling_probs: prob / top_probs[] after the samplers (top_k 40, top_p
    # 0.95, min_p 0.05 by default), so possibly fewer than n_probs entries
    "completion_sampled_post": ("/completion", dict(prompt=ROBOT, n_predict=12, n_probs=5, temperature=1.0, seed=1,
                                                    post_sampling_probs=True)),
    # native, greedy, post_sampling_probs: greedy keeps one candidate (prob 1)
    "completion_greedy_post": ("/completion", dict(prompt=ROBOT, n_predict=6, n_probs=5, temperature=0,
                                                   post_sampling_probs=True)),
    # native stream: SSE, one token per event, a final event with the timings
    "completion_stream": ("/completion", dict(prompt=ROBOT, n_predict=8, n_probs=3, temperature=0, stream=True)),
    # OpenAI Completions, greedy, K=5
    "v1_completions_k5": ("/v1/completions", dict(model=MODEL, prompt=ROBOT, max_tokens=16, logprobs=5, temperature=0)),
    # OpenAI Completions stream
    "v1_completions_stream": ("/v1/completions", dict(model=MODEL, prompt=ROBOT, max_tokens=8, logprobs=3,
                                                      temperature=0, stream=True)),
    # OpenAI Chat with top_logprobs (the server applies the model's chat template)
    "v1_chat_top5": ("/v1/chat/completions", dict(model=MODEL, messages=HI_CHAT, max_tokens=16, logprobs=True,
                                                  top_logprobs=5, temperature=0)),
    # OpenAI Chat: an emoji split over several tokens (bytes carry the pieces)
    "v1_chat_emoji_split": ("/v1/chat/completions", dict(model=MODEL, messages=EMOJI_CHAT, max_tokens=8, logprobs=True,
                                                         top_logprobs=3, temperature=0)),
    # OpenAI Chat stream
    "v1_chat_stream": ("/v1/chat/completions", dict(model=MODEL, messages=HI_CHAT, max_tokens=6, logprobs=True,
                                                    top_logprobs=3, temperature=0, stream=True)),
}


def request(base_url: str, endpoint: str, body: dict, timeout: float = 120) -> tuple[int, str]:
    """POST `body` to the server's root URL + `endpoint`; (status, raw body text)."""
    req = urllib.request.Request(base_url.rstrip("/") + endpoint, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8")


def get(base_url: str, endpoint: str) -> dict:
    with urllib.request.urlopen(base_url.rstrip("/") + endpoint, timeout=10) as r:
        return json.load(r)


def load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def server_name(base_url: str) -> str:
    props = get(base_url, "/props")
    return f"llama.cpp {props.get('build_info', '?')} (llama-cpp-python 0.3.36 sdist), logprob_viz.servers.llamacpp"


def record(base_url: str) -> list[Path]:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    server = server_name(base_url)
    written = []
    for name, (endpoint, body) in REQUESTS.items():
        status, text = request(base_url, endpoint, body)
        path = FIXTURES / f"{name}.json"
        rec = {"endpoint": endpoint, "request": body, "status": status, "server": server, "body": text}
        path.write_text(json.dumps(rec, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        written.append(path)
    return written


def sse_events(text: str) -> list[dict]:
    """The JSON events of an SSE body, read with plain json (the tests' independent reading)."""
    return [json.loads(line[5:]) for line in text.splitlines()
            if line.startswith("data:") and line[5:].strip() != "[DONE]"]


if __name__ == "__main__":
    for p in record(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080"):
        print(p)
