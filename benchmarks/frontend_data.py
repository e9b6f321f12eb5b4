"""The frontend benchmark's data: a real trace of the default model tiled to each size, the
widget state and the append messages the page gets (through the wire codec, as the notebook
gets them), their size next to the same data as OpenAI JSON, and CircuitsVis's page for it.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.frontend_server import HARNESS, PAGE_SETTLE_MS, STATIC

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "logprob_viz" / "bench"
K = 20
BASE_TOKENS = 300
MESSAGES = [
    {
        "role": "user",
        "content": "Write a short story about a robot who learns to paint. Use dialogue, numbers and some code.",
    }
]


def log(msg: str) -> None:
    print(f"[frontend {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def base_file(tokens: int = BASE_TOKENS) -> Path:
    """Where the base trace of `tokens` new tokens is cached (the full run's keeps its old name)."""
    return CACHE / ("frontend_base_trace.json" if tokens == BASE_TOKENS else f"frontend_base_trace_{tokens}.json")


def base_trace(tokens: int = BASE_TOKENS):
    """A real trace of the default model (K=20), generated once and cached."""
    import logprob_viz as lv

    cached = base_file(tokens)
    if cached.is_file():
        return lv.Trace.from_dict(json.loads(cached.read_text())), "cached"
    log(f"generating the base trace ({tokens} tokens, top_logprobs={K}) with the default model ...")
    start = time.perf_counter()
    trace = lv.generate(messages=MESSAGES, max_new_tokens=tokens, top_logprobs=K)
    CACHE.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(trace.to_dict()))
    return trace, f"generated in {time.perf_counter() - start:.0f} s"


def tile(base, n: int):
    """`base` repeated (and cut) to `n` tokens; only the first copy's prompt is a prompt."""
    from logprob_viz import Trace

    reps = math.ceil(n / len(base))
    idx = np.arange(n) % len(base)

    def rows(a):
        return np.asarray(a)[idx]

    processed = base.processed_logprobs is not None
    return Trace(
        tokens=[base.tokens[i] for i in idx],
        token_bytes=[base.token_bytes[i] for i in idx],
        token_ids=rows(base.token_ids),
        logprobs=rows(base.logprobs),
        ranks=rows(base.ranks),
        entropy=rows(base.entropy),
        top_tokens=[base.top_tokens[i] for i in idx],
        top_logprobs=rows(base.top_logprobs),
        top_ids=rows(base.top_ids),
        processed_logprobs=rows(base.processed_logprobs) if processed else None,
        processed_top_logprobs=rows(base.processed_top_logprobs) if processed else None,
        prompt_len=min(base.prompt_len, n),
        meta={**base.meta, "tiled": f"{reps} x {len(base)} tokens"},
    )



def widget_state(trace):
    """The widget's state as the notebook ships it: JSON state, buffer paths, buffers (the wire
    codec's `split_buffers`, through the HTML export's `state_parts`: the page gets what it gets)."""
    import logprob_viz as lv

    view = lv.LogprobView(trace)
    try:
        from logprob_viz.views.page import state_parts
    except ImportError:  # a build from before the wire codec (a --baseline run of an older checkout)
        from ipywidgets.widgets.widget import _remove_buffers

        def state_parts(v):
            return _remove_buffers({k: x for k, x in v.get_state().items() if k not in ("_esm", "_css", "layout")})

    state, paths, buffers = state_parts(view)
    view.close()
    return state, paths, [bytes(b) for b in buffers]



def stream_messages(trace, first: int, batch: int, trace_id: str):
    """The "append" messages a view of `trace[:first]` gets while it grows to the whole trace,
    `batch` tokens a message (what the kernel sends every 100 ms while a stream is fast)."""
    from logprob_viz.views.codec import append_start, encode_append, split_buffers

    messages, sent = [], first
    while sent < len(trace):
        n = min(len(trace), sent + batch)
        longer = trace[:n]
        content, paths, buffers = split_buffers(encode_append(longer, append_start(longer, sent), trace_id))
        messages.append(({"type": "append", "buffer_paths": paths, "payload": content}, buffers))
        sent = n
    return messages



def payload_bytes(state, buffers) -> tuple[int, int, int]:
    """(binary bytes, JSON bytes of the rest, bundle + CSS bytes: a fixed cost, not per token)."""
    fixed = sum((STATIC / name).stat().st_size for name in ("widget.js", "widget.css") if (STATIC / name).is_file())
    return sum(len(b) for b in buffers), len(json.dumps(state, separators=(",", ":")).encode()), fixed



def openai_bytes(base, n: int) -> int:
    """Bytes of `openai_json(tile(base, n))`, exactly, without building it: the compact JSON is
    the tokens' pieces joined by commas, and the tiled trace repeats the base's pieces."""
    empty = len(openai_json(base[:0]))  # the wrapper, with an empty content list
    pieces = [len(openai_json(base[i : i + 1])) - empty for i in range(len(base))]
    idx = np.arange(n) % len(base)
    return empty + int(np.asarray(pieces)[idx].sum()) + max(0, n - 1)



def openai_json(trace) -> bytes:
    """The same data as an OpenAI chat completion's `choices[0].logprobs` (compact JSON)."""

    def lp(x):
        x = float(x)
        return x if math.isfinite(x) else -9999.0  # what OpenAI writes for -inf

    content = []
    for i, tok in enumerate(trace.tokens):
        tops = [
            {"token": a, "logprob": lp(trace.top_logprobs[i, j]), "bytes": list(a.encode("utf-8"))}
            for j, a in enumerate(trace.top_tokens[i])
        ]
        content.append(
            {"token": tok, "logprob": lp(trace.logprobs[i]), "bytes": list(trace.token_bytes[i]), "top_logprobs": tops}
        )
    return json.dumps({"content": content, "refusal": None}, separators=(",", ":")).encode()



def peer_html(trace) -> tuple[str, str]:
    """CircuitsVis's TokenLogProbs page (local_src: its bundle inlined) for the same data.

    `circuitsvis.logits.token_log_probs(token_indices, log_probs[N, vocab], to_string, top_k)`
    sorts the full vocabulary and then calls `render("TokenLogProbs", prompt, topKLogProbs,
    topKTokens, correctTokenRank, correctTokenLogProb)`. A [N, 49152] float tensor is 197 MB
    at 1k tokens and 19.7 GB at 100k, so we give `render` the props token_log_probs would
    compute, from the trace itself (top-20 alternatives, the chosen token's rank - 1 and logprob);
    `prompt` starts with a BOS placeholder, which CircuitsVis does not show, so row i of its
    arrays is our token i. At 1k we also check that token_log_probs itself gives the same props.
    """
    from circuitsvis.utils.render import render

    ranks = np.where(trace.ranks > 0, trace.ranks - 1, 0)  # 0-based in CircuitsVis
    html = render(
        "TokenLogProbs",
        prompt=["<|bos|>"] + list(trace.tokens),
        topKLogProbs=np.nan_to_num(trace.top_logprobs, nan=-100.0, neginf=-100.0),
        topKTokens=[list(r) for r in trace.top_tokens],
        correctTokenRank=ranks,
        correctTokenLogProb=np.nan_to_num(trace.logprobs, nan=-100.0, neginf=-100.0),
    ).local_src
    div = html.split('id="', 1)[1].split('"', 1)[0]
    # Time from the render call (the props literal and the bundle are already evaluated, as our
    # bundle is imported and our state decoded before the clock starts) to the end of the rendering
    # of the frame that first holds its text (lvWaitContent: the end lvRender times ours to).
    # The call runs from a timer once the page has settled, as ours renders (PAGE_SETTLE_MS).
    call = html.rfind("CircuitsVis.render(")
    end = html.rfind("</script>")
    html = (
        html[:call]
        + "setTimeout(() => {\nwindow.__cvT0 = performance.now();\n"
        + html[call:end]
        + f';window.lvWaitContent(document.getElementById("{div}"), "__cvT0")'
        + ".then((ms) => { window.__cvMs = ms; });\n"
        + f"}}, {PAGE_SETTLE_MS});\n"
        + html[end:]
    )
    head = HARNESS.read_text().split("<body>", 1)[0]  # the long-task observer and helpers' <script>
    helpers = HARNESS.read_text().split("<script>", 1)[1].split("</script>", 1)[0]
    page = f"{head}<body>\n<script>{helpers}</script>\n{html}\n</body></html>"
    return page, div



def check_peer_equivalence(trace) -> str:
    """At small N: does token_log_probs itself, over a compact vocabulary, give the same props?"""
    import torch
    from circuitsvis.logits import token_log_probs

    ids = sorted({int(i) for i in trace.top_ids.reshape(-1) if i >= 0} | {int(i) for i in trace.token_ids if i >= 0})
    col = {v: c for c, v in enumerate(ids)}
    n = len(trace)
    lp = torch.full((n + 1, len(ids)), -1e4)  # row i predicts token i (row 0 after the BOS)
    for i in range(n):
        for j, a in enumerate(trace.top_ids[i]):
            if a >= 0 and math.isfinite(trace.top_logprobs[i, j]):
                lp[i, col[int(a)]] = float(trace.top_logprobs[i, j])
        if math.isfinite(trace.logprobs[i]) and trace.token_ids[i] >= 0:
            lp[i, col[int(trace.token_ids[i])]] = float(trace.logprobs[i])
    token_indices = torch.tensor([0] + [col[int(t)] for t in trace.token_ids])
    start = time.perf_counter()
    out = token_log_probs(token_indices, lp, to_string=lambda c: str(ids[c]), top_k=K)
    took = time.perf_counter() - start
    return (
        f"token_log_probs over a compact vocabulary of {len(ids)} ids: "
        f"{len(out.local_src) / 1e6:.1f} MB page in {took:.1f} s"
    )


def prepare_pages(server, base, sizes: list[int], peer_max: int) -> dict:
    """Writes each size's widget state (and CircuitsVis page, up to `peer_max`) for the server;
    returns per size its payload: binary and JSON bytes, the fixed bundle cost, the OpenAI JSON's
    bytes, the binary keys, CircuitsVis's page bytes; and under "peer_check" the equivalence check."""
    info = {}
    for n in sizes:
        trace = tile(base, n)
        state, paths, buffers = widget_state(trace)
        server.put_state(f"ours-{n}", state, paths, buffers)
        binary, rest, fixed = payload_bytes(state, buffers)
        oa = openai_bytes(base, n)
        if n == min(sizes):
            assert oa == len(openai_json(trace))
        info[n] = {
            "binary": binary,
            "json": rest,
            "fixed": fixed,
            "openai": oa,
            "binary_keys": sorted({".".join(map(str, p)) for p in paths}),
        }
        if n <= peer_max:
            page, _ = peer_html(trace)
            server.put_page(f"peer-{n}", page)
            info[n]["peer_bytes"] = len(page.encode())
        if n == min(sizes) and n <= 2000:  # the check builds a dense [N, vocab] tensor
            try:
                info["peer_check"] = check_peer_equivalence(trace)
            except Exception as e:  # noqa: BLE001
                info["peer_check"] = f"token_log_probs check failed: {e!r}"
        log(f"{n} tokens: state ready ({(binary + rest) / n:.0f} B/token)")
    return info


def prepare_stream(server, base, tokens: int, first: int, batch: int) -> None:
    """Writes the state of a view of the first `first` tokens ("stream-state") and the append
    messages that grow it to `tokens` tokens, `batch` a message ("stream")."""
    import logprob_viz as lv
    from logprob_viz.views.page import state_parts

    streamed = tile(base, tokens)
    view = lv.LogprobView(streamed[:first])
    state, paths, buffers = state_parts(view)
    server.put_state("stream-state", state, paths, [bytes(b) for b in buffers])
    server.put_stream("stream", stream_messages(streamed, first, batch, view._payload["id"]))
    view.close()
