"""The trace view of a served trace: `lv.audit`'s verdict as a badge (``_served``), the numbers'
label from the reader's tag or the audit, and the message where the provider returned no logprobs.
The served bodies are built here from the default model's own distribution (plain transformers,
float64), then read by `lv.read` as a server's body would be."""

from __future__ import annotations

import math

import numpy as np
import pytest

import logprob_viz as lv
from logprob_viz.views.logprob.served import served_state

PROMPT = "A robot may not injure a human being"
N_NEW = 12
K = 5


@pytest.fixture(scope="module")
def rows(reference_model, runner):
    """(greedy continuation ids, float64 log-softmax rows (N_NEW, V) predicting each)."""
    import torch

    ids = list(runner.tokenizer(PROMPT)["input_ids"])
    with torch.inference_mode():
        for _ in range(N_NEW):
            ids.append(int(reference_model(torch.tensor([ids])).logits[0, -1].argmax()))
        logits = reference_model(torch.tensor([ids])).logits[0].double()
    p = len(ids) - N_NEW
    return ids[p:], torch.log_softmax(logits[p - 1:-1], dim=-1).numpy()


def body(tokenizer, chosen, rows, shift=None):
    """An OpenAI Completions body; `shift` {position: nats} alters the chosen token's served value."""
    text = [tokenizer.decode([i]) for i in chosen]
    shift = shift or {}
    tops, values = [], []
    for n, (i, row) in enumerate(zip(chosen, rows, strict=True)):
        top = {tokenizer.decode([int(j)]): float(row[j]) for j in np.argsort(-row, kind="stable")[:K]}
        values.append(float(row[i]) + shift.get(n, 0.0))
        top[text[n]] = values[-1]
        tops.append(top)
    return {"id": "cmpl-badge", "object": "text_completion", "model": "smollm2",
            "choices": [{"index": 0, "text": "".join(text), "finish_reason": "length",
                         "logprobs": {"tokens": text, "token_logprobs": values, "top_logprobs": tops}}]}


def test_disagreeing_tokens_are_the_badge_and_its_steps(runner, rows):
    chosen, logp = rows
    altered = {2: 0.4, 7: -0.5, 10: 0.3}
    trace = lv.read(body(runner.tokenizer, chosen, logp, altered))
    audit = lv.audit(trace, runner, prompt=PROMPT)
    view = lv.LogprobView(trace)
    badge = view._served["badge"]
    assert badge["label"] == "3 tokens disagree"
    assert badge["positions"] == sorted(altered) and badge["kind"] == "mismatch"
    assert badge["explanation"] == audit.explanation
    assert trace.meta["audit"]["label"] == "3 tokens disagree"
    assert "numbers" not in view._served  # a mismatch says nothing of which distribution


def test_processed_numbers_are_labelled_with_the_requested_settings(runner, rows):
    chosen, logp = rows
    processed = []
    for row in logp:  # T 0.7 then top-p 0.9 (transformers' order), computed here in float64
        scaled = row / 0.7
        scaled -= scaled.max() + math.log(np.exp(scaled - scaled.max()).sum())
        order = np.argsort(-scaled, kind="stable")
        mass = np.cumsum(np.exp(scaled[order]))
        keep = order[: int(np.searchsorted(mass, 0.9)) + 1]  # the token that crosses 0.9 stays
        out = np.full_like(scaled, -np.inf)
        out[keep] = scaled[keep] - math.log(np.exp(scaled[keep]).sum())
        processed.append(out)
    served = body(runner.tokenizer, chosen, [np.where(np.isfinite(r), r, -9999.0) for r in processed])
    trace = lv.read(served)
    lv.audit(trace, runner, prompt=PROMPT, settings={"temperature": 0.7, "top_p": 0.9})
    state = served_state(trace)
    assert state["badge"]["label"] == "processed (T 0.7, top-p 0.9)"
    assert state["badge"]["positions"] == []
    assert state["numbers"] == "as sampled from" and state["numbers_from"].startswith("lv.audit")


def test_the_audit_overrules_the_readers_tag(runner, rows):
    chosen, logp = rows
    tagged = {**body(runner.tokenizer, chosen, logp), "logprobs_mode": "processed_logprobs"}  # a wrong tag
    trace = lv.read(tagged)
    assert lv.LogprobView(trace)._served["numbers"] == "as sampled from"  # the tag alone
    lv.audit(trace, runner, prompt=PROMPT)
    state = lv.LogprobView(trace)._served
    assert state["badge"]["label"] == "raw"
    assert state["numbers"] == "as the model gave them"


def test_a_trace_without_logprobs_says_so_instead_of_an_empty_view():
    none = lv.Trace(tokens=[" but", " a", " robot"], logprobs=[math.nan] * 3)  # a stream that carried none
    assert lv.LogprobView(none)._served == {"no_logprobs": "the provider returned no logprobs"}
    some = lv.Trace(tokens=[" but", " a"], logprobs=[math.nan, -1.0])  # a scored text: the first has none
    assert "no_logprobs" not in lv.LogprobView(some)._served
    view = lv.LogprobView(some)
    view.trace = none  # a replaced trace: its own state
    assert view._served == {"no_logprobs": "the provider returned no logprobs"}


def test_an_audit_after_the_view_is_shown_updates_its_badge_in_place(runner, rows):
    """The view is made (shown) first, the audit comes later: the view's synced ``_served`` trait follows
    (the widget redraws its badge), no second display. A view of another trace is left alone."""
    chosen, logp = rows
    altered = {4: -0.6}
    trace = lv.read(body(runner.tokenizer, chosen, logp, altered))
    other = lv.read(body(runner.tokenizer, chosen, logp))
    view, other_view = lv.LogprobView(trace), lv.LogprobView(other)
    assert "badge" not in view._served and "badge" not in other_view._served
    seen = []
    view.observe(lambda change: seen.append(change["new"]), names="_served")
    lv.audit(trace, runner, prompt=PROMPT)
    assert len(seen) == 1 and seen[0]["badge"]["label"] == "1 token disagrees", seen
    assert seen[0]["badge"]["positions"] == [4]
    # the served value at token 4 is the float64 reference plus the shift: that is what the audit caught
    assert trace.logprobs[4] == pytest.approx(logp[4][chosen[4]] - 0.6, abs=1e-6)
    assert "badge" not in other_view._served
