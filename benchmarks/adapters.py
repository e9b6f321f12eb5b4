"""Adapter benchmarks: reading a server's response costs how many json.loads of the same text?

    python -m benchmarks.adapters [--repeats 7] [--sizes 1000,100000] [--formats completions,...]
                                  [--profile FORMAT] [--quick]

Builds one response per format with N tokens and K=3 alternatives (token strings drawn from a
real recorded response's vocabulary, logprobs from a fixed seed), as the JSON (or stream) text a
server would send, and times `lv.read` / `lv.from_openai` on that text against `json.loads` of
the same text, alternating call by call, in one process. Prints a Markdown table: format, tokens,
read ms, json.loads ms, ratio, and the same ratio in CPU time of this process measured on the same
calls (steadier on a shared machine), which the goal (<= 3) is judged by. ``--profile FORMAT``
prints a cProfile of one 100k read.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from benchmarks.common import machine, median, parse_args, table

K = 3
FIXTURES = Path(__file__).parent.parent / "tests" / "fixtures"


def vocabulary() -> list[str]:
    """Token strings of real responses (the recorded vLLM chat responses), deduplicated."""
    words: dict[str, None] = {}
    for path in sorted((FIXTURES / "vllm").glob("chat_*.json")):
        body = json.loads(path.read_text(encoding="utf-8"))["body"]
        for event in ([json.loads(body)] if body.lstrip().startswith("{") else []):
            for choice in event.get("choices", []):
                for entry in (choice.get("logprobs") or {}).get("content") or []:
                    for alt in [entry, *entry.get("top_logprobs", [])]:
                        words[alt["token"]] = None
    return [w for w in words if w] or [" the", " a", ","]


def _positions(n: int, seed: int = 0):
    """n (chosen, [(alternative, logprob) x K]) with the chosen token usually the most likely."""
    rng = random.Random(seed)
    vocab = vocabulary()
    out = []
    for _ in range(n):
        picks = rng.sample(vocab, K + 1)
        lps = sorted((-rng.expovariate(1.0) for _ in range(K + 1)), reverse=True)
        alts = list(zip(picks[:K], lps[:K], strict=True))
        chosen = alts[0] if rng.random() < 0.8 else (picks[K], lps[K])
        out.append((chosen, alts))
    return out


def _ids(text: str) -> int:
    return sum(map(ord, text)) % 49152


def completions(n: int) -> str:
    pos = _positions(n)
    lp = {
        "tokens": [c for (c, _), _ in pos],
        "token_logprobs": [v for (_, v), _ in pos],
        "top_logprobs": [dict([*alts, chosen]) for chosen, alts in pos],
        "text_offset": [0] * n,
    }
    text = "".join(lp["tokens"])
    return json.dumps({"id": "cmpl-0123456789abcdef", "object": "text_completion", "model": "m",
                       "choices": [{"index": 0, "text": text, "logprobs": lp, "finish_reason": "length"}]})


def chat(n: int) -> str:
    def entry(token, value):
        return {"token": token, "logprob": value, "bytes": list(token.encode())}

    content = [{**entry(*chosen), "top_logprobs": [entry(*a) for a in alts]} for chosen, alts in _positions(n)]
    text = "".join(e["token"] for e in content)
    return json.dumps({"id": "chatcmpl-0123456789abcdef", "object": "chat.completion", "model": "m",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                    "logprobs": {"content": content}, "finish_reason": "length"}]})


def prompt_logprobs(n: int) -> str:
    rows, ids = [None], [1]
    for chosen, alts in _positions(n - 1):
        rank = 1 + (chosen not in alts)
        row = {str(_ids(chosen[0])): {"logprob": chosen[1], "rank": rank, "decoded_token": chosen[0]}}
        for rank, (tok, value) in enumerate(alts, 1):
            row.setdefault(str(_ids(tok)), {"logprob": value, "rank": rank, "decoded_token": tok})
        rows.append(row)
        ids.append(_ids(chosen[0]))
    return json.dumps({"id": "cmpl-0123456789abcdef", "object": "text_completion", "model": "m",
                       "choices": [{"index": 0, "text": "", "prompt_logprobs": rows, "prompt_token_ids": ids,
                                    "logprobs": None}]})


def _entries(n: int, *, with_ids: bool = False, key: str = "logprob", top_key: str = "top_logprobs") -> list:
    """Per-token {token, logprob, bytes, top_logprobs: [...]} entries (OpenAI chat / Ollama / Responses / llama.cpp)."""
    def entry(token, value):
        out = {"token": token, key: value, "bytes": list(token.encode())}
        if with_ids:
            out["id"] = _ids(token)
        return out

    return [{**entry(*chosen), top_key: [entry(*a) for a in alts]} for chosen, alts in _positions(n)]


def llamacpp(n: int) -> str:
    probs = _entries(n, with_ids=True)
    return json.dumps({"index": 0, "content": "".join(e["token"] for e in probs), "stop": True, "model": "m",
                       "completion_probabilities": probs})


def tgi(n: int) -> str:
    def token(text, value):
        return {"id": _ids(text), "text": text, "logprob": value, "special": False}

    pos = _positions(n)
    details = {"finish_reason": "length", "generated_tokens": n, "seed": None, "prefill": [],
               "tokens": [token(*chosen) for chosen, _ in pos],
               "top_tokens": [[token(*a) for a in alts] for _, alts in pos]}
    return json.dumps({"generated_text": "".join(c for (c, _), _ in pos), "details": details})


def sglang(n: int) -> str:
    pos = _positions(n)
    info = {"id": "x", "input_token_logprobs": [], "input_top_logprobs": [],
            "output_token_logprobs": [[v, _ids(c), c] for (c, v), _ in pos],
            "output_top_logprobs": [[[v, _ids(a), a] for a, v in alts] for _, alts in pos]}
    return json.dumps({"text": "".join(c for (c, _), _ in pos), "meta_info": info})


def ollama(n: int) -> str:
    entries = _entries(n)
    return json.dumps({"model": "m", "created_at": "2025-01-01T00:00:00Z", "done": True,
                       "response": "".join(e["token"] for e in entries), "logprobs": entries})


def responses(n: int) -> str:
    entries = _entries(n)
    part = {"type": "output_text", "text": "".join(e["token"] for e in entries), "annotations": [], "logprobs": entries}
    return json.dumps({"id": "resp_x", "object": "response", "model": "m",
                       "output": [{"type": "message", "role": "assistant", "content": [part]}]})


def gemini(n: int) -> str:
    pos = _positions(n)
    result = {"chosenCandidates": [{"token": c, "logProbability": v} for (c, v), _ in pos],
              "topCandidates": [{"candidates": [{"token": a, "logProbability": v} for a, v in alts]}
                                for _, alts in pos]}
    return json.dumps({"candidates": [{"content": {"parts": [{"text": "".join(c for (c, _), _ in pos)}]},
                                       "logprobsResult": result}], "modelVersion": "m"})


FORMATS = {
    "openai completions": (completions, "from_openai"),
    "openai chat": (chat, "from_openai"),
    "vllm prompt_logprobs": (prompt_logprobs, "from_openai"),
    "llama.cpp /completion": (llamacpp, "read"),
    "tgi /generate": (tgi, "read"),
    "sglang /generate": (sglang, "read"),
    "ollama /api/generate": (ollama, "read"),
    "openai responses": (responses, "read"),
    "gemini": (gemini, "read"),
}


def reader(name: str):
    import logprob_viz as lv

    if name == "from_openai":
        return lv.from_openai
    from logprob_viz.sources.readers import read

    return read


GOAL = 3.0  # read <= 3x json.loads of the same text, at every size, for every format


def side_by_side(candidates: dict, repeats: int) -> dict[str, tuple[list[float], list[float]]]:
    """Per candidate, (wall seconds, CPU seconds of this process) of each call, the candidates
    alternating (the order rotating each round) so a busy spell of the shared machine hits both."""
    for fn in candidates.values():
        fn()  # warm-up
    out: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in candidates}
    names = list(candidates)
    for round_ in range(repeats):
        for name in names[round_ % len(names):] + names[: round_ % len(names)]:
            wall, cpu = time.perf_counter(), time.process_time()
            candidates[name]()
            out[name][0].append(time.perf_counter() - wall)
            out[name][1].append(time.process_time() - cpu)
    return out


def bench(sizes: list[int], repeats: int, formats: list[str] | None = None) -> str:
    rows = []
    for fmt, (build, read_name) in FORMATS.items():
        if formats and not any(f in fmt for f in formats):
            continue
        read = reader(read_name)
        for n in sizes:
            text = build(n)
            times = side_by_side({"read": lambda read=read, text=text: read(text),
                                  "json.loads": lambda text=text: json.loads(text)}, repeats)
            (wall_read, cpu_read), (wall_json, cpu_json) = times["read"], times["json.loads"]
            cpu_ratio = median(cpu_read) / median(cpu_json)
            rows.append([fmt, f"{n:,}", f"{len(text) / 1e6:.1f}", f"{median(wall_read) * 1000:.1f}",
                         f"{median(wall_json) * 1000:.1f}", f"{median(wall_read) / median(wall_json):.2f}",
                         f"{cpu_ratio:.2f}", "met" if cpu_ratio <= GOAL else "missed"])
    return table(["format", "tokens", "MB", "read ms", "json.loads ms", "ratio", "ratio (CPU time)",
                  f"goal <= {GOAL:g} (CPU)"], rows)


def profile(fmt: str, n: int) -> None:
    import cProfile
    import pstats

    build, read_name = FORMATS[fmt]
    read = reader(read_name)
    text = build(n)
    read(text)
    cProfile.runctx("read(text)", globals(), {"read": read, "text": text}, "/tmp/adapters.prof")
    pstats.Stats("/tmp/adapters.prof").sort_stats("tottime").print_stats(18)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--profile", default=None, help="a format name from the table")
    parser.add_argument("--formats", default=None, help="only the formats whose names contain one of these "
                                                        "comma-separated words (e.g. completions,gemini)")
    args = parse_args(parser, quick={"repeats": 3, "sizes": "1000,10000"})
    if args.profile:
        profile(args.profile, 100_000)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"Machine: {machine()}\n")
    print(f"## Adapters: read vs json.loads of the same text (K={K}, median of {args.repeats})\n")
    print(bench(sizes, args.repeats, args.formats.split(",") if args.formats else None))


if __name__ == "__main__":
    main()
