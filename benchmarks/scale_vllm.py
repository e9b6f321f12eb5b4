"""A corpus through a vLLM server against vLLM itself (benchmarks/scale.py's vLLM table).

The same ``--vllm-texts`` short texts (400, 5-30 tokens, cut from Python's help topics) scored at
K=5, side by side in one run, alternating, ``--vllm-repeats`` rounds:

- ``lv.connect(url).score(texts, top_logprobs=5)`` at the default (the runner chooses how many
  requests are in flight: `remote.inflight`), and with ``concurrency=8`` and ``=32``, on the
  project's vLLM CPU server (``logprob_viz.servers.vllm``, started here from its install, its
  pid and log in a folder of this run, stopped after);
- vLLM offline: ``LLM.generate(texts, SamplingParams(prompt_logprobs=5, max_tokens=1))`` in the
  set-up's vLLM environment (its own python), on the same model folder with the server's
  settings (float32, max_model_len 2048, eager), loaded once in a process that waits for each round.

Tokens/s counts the texts' tokens (the server's traces; the offline prompt_token_ids), and the
ratio column divides by vLLM offline's median. While one route runs, the others are idle.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.common import table

K = 5
GOAL = 0.95  # the default setting's tokens/s over vLLM offline's

OFFLINE = r"""
import json, sys, time
from vllm import LLM, SamplingParams
llm = LLM(model=sys.argv[1], dtype="float32", max_model_len=2048, enforce_eager=True, max_logprobs=20)
texts = json.loads(sys.stdin.readline())
params = SamplingParams(prompt_logprobs=int(sys.argv[2]), max_tokens=1, temperature=0)
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    start = time.perf_counter()
    outs = llm.generate(texts, params, use_tqdm=False)
    seconds = time.perf_counter() - start
    assert all(o.prompt_logprobs is not None for o in outs)
    print(json.dumps({"seconds": seconds, "tokens": sum(len(o.prompt_token_ids) for o in outs)}), flush=True)
"""


class Offline:
    """vLLM's own ``LLM.generate`` in the vLLM environment's python: one engine, a round per `run`."""

    def __init__(self, texts: list[str]):
        from logprob_viz.servers import vllm as vllm_server

        python, model = vllm_server.home() / "venv" / "bin" / "python", vllm_server.home() / "smollm2-135m-instruct"
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "VLLM_CPU_KVCACHE_SPACE": "1",
               "VLLM_CACHE_ROOT": str(vllm_server.home() / "cache")}
        env.pop("PYTHONPATH", None)
        self.proc = subprocess.Popen([str(python), "-c", OFFLINE, str(model), str(K)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        self._send(json.dumps(texts))
        self._answer()  # {"ready": true}: the engine is loaded

    def _send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def _answer(self) -> dict:
        for line in self.proc.stdout:
            if line.startswith("{"):
                return json.loads(line)
        raise RuntimeError(f"vLLM offline ended (exit {self.proc.wait()}) without an answer")

    def run(self) -> dict:
        self._send("run")
        return self._answer()

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=120)


def texts_for(n: int) -> list[str]:
    from transformers import AutoTokenizer

    from benchmarks.corpus import short_texts
    from logprob_viz.servers import vllm as vllm_server

    tokenizer = AutoTokenizer.from_pretrained(str(vllm_server.home() / "smollm2-135m-instruct"))
    return short_texts(tokenizer, n, lengths=(5, 30))


def rounds(url: str, offline: Offline, texts: list[str], repeats: int) -> dict:
    """{route: [{"seconds", "tokens", "chosen"}...]}, the routes rotated each round."""
    import logprob_viz as lv

    runner = lv.connect(url)
    runner.score(texts[:16], top_logprobs=K, progress=False)  # (a first request warms the server)

    def score(concurrency):
        def run():
            start = time.perf_counter()
            corpus = runner.score(texts, top_logprobs=K, concurrency=concurrency, progress=False)
            seconds = time.perf_counter() - start
            return {"seconds": seconds, "tokens": sum(len(t) for t in corpus), "chosen": corpus.meta["concurrency"],
                    "tried": corpus.meta.get("concurrency_tried")}
        return run

    routes = {"vLLM offline LLM.generate": offline.run, "lv.connect(url).score, default": score(None),
              "lv.connect(url).score, concurrency=8": score(8), "lv.connect(url).score, concurrency=32": score(32)}
    names, out = list(routes), {name: [] for name in routes}
    for r in range(repeats):
        for name in names[r % len(names):] + names[: r % len(names)]:
            out[name].append(routes[name]())
    return out


def vllm_section(args) -> str:
    from logprob_viz.servers import vllm as vllm_server
    from logprob_viz.servers.process import free_port

    texts = texts_for(args.vllm_texts)
    with tempfile.TemporaryDirectory(prefix="lv-scale-vllm-") as state:
        url = vllm_server.start(port=free_port(), state=Path(state), timeout=600)
        try:
            offline = Offline(texts)
            try:
                runs = rounds(url, offline, texts, args.vllm_repeats)
            finally:
                offline.close()
        finally:
            vllm_server.stop(state=Path(state))
    return report(args, runs)


def report(args, runs: dict) -> str:
    med = statistics.median
    rate = {name: med([r["tokens"] / r["seconds"] for r in rs]) for name, rs in runs.items()}
    base = rate["vLLM offline LLM.generate"]
    rows = []
    for name, rs in runs.items():
        chosen = ", ".join(str(r["chosen"]) for r in rs) if "chosen" in rs[0] else ""
        goal = f">= {GOAL}" if name.endswith("default") else ""
        status = ("met" if rate[name] / base >= GOAL else "MISSED") if goal else ""
        rows.append([name, rs[0]["tokens"], f"{rate[name]:.1f}", f"{rate[name] / base:.3f}", chosen, goal, status])
    tried = "; ".join(json.dumps(r["tried"]) for r in runs["lv.connect(url).score, default"])
    head = (f"{args.vllm_texts} short texts (5-30 tokens each), K={K}, the project's vLLM CPU server and vLLM "
            f"offline on the same model folder; medians of {args.vllm_repeats} alternating rounds; load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (a shared machine). The default's search, tokens/s "
            f"per number in flight, each round: {tried}.\n\n")
    return head + table(["route", "tokens", "tokens/s", "ratio to vLLM offline", "in flight (each round)", "goal",
                         "status"], rows)
