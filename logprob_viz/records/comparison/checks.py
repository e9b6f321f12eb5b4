"""Input checks of `lv.compare`: what it was given, the labels, and the messages that say what was wrong."""

from __future__ import annotations

import numpy as np

from ..trace import Trace

__all__ = ["check_input", "common_prefix", "describe", "unknown_start_hint"]


def describe(traces) -> str:
    parts = []
    for i, tr in enumerate(traces):
        if isinstance(tr, Trace):
            n_bytes = len(b"".join(tr.token_bytes))
            parts.append(f"[{i}] {len(tr)} tokens, {n_bytes} bytes, model={tr.meta.get('model', '?')}")
        else:
            parts.append(f"[{i}] {type(tr).__name__}")
    return "; ".join(parts)


def check_input(traces, labels) -> tuple[list[Trace], list[str]]:
    if isinstance(traces, Trace):
        raise TypeError("compare needs a list of two or more traces, got one Trace; e.g. lv.compare([t1, t2])")
    if isinstance(traces, dict):
        labels = list(traces) if labels is None else labels
        traces = list(traces.values())
    try:
        traces = list(traces)
    except TypeError:
        raise TypeError(f"compare needs a list of two or more traces, got {type(traces).__name__}") from None
    if len(traces) < 2:
        raise ValueError(f"compare needs two or more traces to put side by side, got {len(traces)}")
    for i, tr in enumerate(traces):
        if not isinstance(tr, Trace):
            raise TypeError(
                f"compare compares logprob_viz.Trace objects; item {i} is a {type(tr).__name__} "
                "(make traces with lv.score, lv.generate or lv.from_openai)"
            )
        if len(tr) == 0:
            raise ValueError(f"trace {i} has no tokens, so there is nothing to align ({describe(traces)})")
        if np.isnan(tr.logprobs).all():
            raise ValueError(
                f"trace {i} has no known logprob (all NaN): there is nothing to compare. "
                f"Ask its source for logprobs (e.g. logprobs=True / prompt_logprobs). Compared: {describe(traces)}"
            )
    if labels is None:
        labels = default_labels(traces)
    labels = [str(x) for x in labels]
    if len(labels) != len(traces):
        raise ValueError(f"give one label per trace: {len(traces)} traces, {len(labels)} labels")
    if len(set(labels)) != len(labels):
        raise ValueError(f"labels must be distinct, got {labels}")
    return traces, labels


def default_labels(traces: list[Trace]) -> list[str]:
    labels = []
    for i, tr in enumerate(traces):
        name = str(tr.meta.get("model") or tr.meta.get("source") or "trace")
        name = name.rstrip("/").rsplit("/", 1)[-1]
        labels.append(f"{i}: {name}")
    return labels


def unknown_start_hint(traces: list[Trace]) -> str:
    # A server that does not say what the first prompt token was (vLLM's prompt_logprobs) leaves
    # that token without bytes, so its text starts later than the others'.
    lost = [i for i, tr in enumerate(traces) if tr.flags[0] and {"first_token_unknown", "no_bytes"} & set(tr.flags[0])]
    if not lost:
        return ""
    return (
        f" Trace(s) {lost} do not know their first token's text (flag first_token_unknown/no_bytes); if that is "
        "the only difference, leave the first token out of every trace: lv.compare([t[1:] for t in traces])."
    )


def common_prefix(texts: list[bytes]) -> int:
    """Length of the longest byte prefix every text shares."""
    first = texts[0]
    end = min(len(t) for t in texts)
    for other in texts[1:]:
        # compare in blocks, then narrow down: texts are up to megabytes
        lo = 0
        while lo < end and first[lo : lo + 4096] == other[lo : lo + 4096]:
            lo += 4096
        while lo < end and first[lo] == other[lo]:
            lo += 1
        end = min(end, lo)
    return end
