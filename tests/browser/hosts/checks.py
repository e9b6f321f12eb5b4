"""What the hosts tests check in the page, against an independent computation: the default model
loaded a second time with plain transformers in the test process (`reference_model`).

A host shows the same views; these helpers read them the same way in every host: the tokens of
a view (`.lv-token` text), the chart of a hovered or pinned token (`.lv-chart[data-index]`), and
a branch by a click on an alternative's bar.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

PROMPT = "A robot may not injure a human being"
SCORED = "The capital of France is Paris, and the capital of Italy is Rome."
MAX_NEW = 10  # tokens the explorer generates: enough to branch in, little on 2 shared cores
MODEL_TIMEOUT = 600  # s: a kernel imports torch and loads the default model on 2 shared cores


def reference_ids(tokenizer, text: str) -> list[int]:
    return tokenizer(text)["input_ids"]


def reference_greedy(model, ids: list[int], n: int, eos: int) -> list[int]:
    import torch

    with torch.inference_mode():
        out = model.generate(torch.tensor([ids]), max_new_tokens=n, do_sample=False, pad_token_id=0)
    new = out[0, len(ids) :].tolist()
    return new[: new.index(eos) + 1] if eos in new else new


def reference_logprobs(model, ids: list[int]) -> np.ndarray:
    """log softmax of the next token after every prefix of `ids`: (N, V), float64."""
    import torch

    with torch.inference_mode():
        logits = model(torch.tensor([ids])).logits[0].double()
    return torch.log_softmax(logits, dim=-1).numpy()


def texts(tokenizer, ids: list[int]) -> list[str]:
    return [tokenizer.decode([i]) for i in ids]


def view_tokens(view) -> list[str]:
    """The token texts a view (a locator of its `.lv-root`) shows."""
    return view.evaluate("root => [...root.querySelectorAll('.lv-token')].map((e) => e.textContent)")


def wait_tokens(view, condition, what: str, timeout: float = MODEL_TIMEOUT) -> list[str]:
    """Poll the view until `condition(tokens)` holds; fail with what it shows."""
    deadline = time.monotonic() + timeout
    shown = view_tokens(view)
    while not condition(shown):
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {timeout:.0f} s; the view shows {shown}")
        time.sleep(0.2)  # (polling the page)
        shown = view_tokens(view)
    return shown


def chart_of(view, at: int):
    chart = view.locator(f".lv-chart[data-index='{at}']")
    chart.wait_for(state="visible", timeout=20_000)
    return chart


def chosen_probability(view, at: int) -> float:
    """The chart's probability (a fraction) of the chosen token at `at`, as printed."""
    text = chart_of(view, at).locator(".lv-alt-row.lv-chosen .lv-alt-prob").first.text_content()
    return float(text.strip().rstrip("%")) / 100


def alternatives(view, at: int) -> list[str]:
    return chart_of(view, at).evaluate(
        "c => [...c.querySelectorAll('.lv-alt-row:not(.lv-extra) .lv-alt-token')].map((e) => e.textContent)"
    )


def branch_by_click(view, at: int, option: int) -> str:
    """Pin token `at`, click alternative `option`'s bar in its chart (the view asks the kernel to branch)."""
    view.locator(f".lv-token[data-index='{at}']").click()
    row = chart_of(view, at).locator(".lv-alt-row:not(.lv-extra)").nth(option)
    text = row.locator(".lv-alt-token").text_content()
    row.click()
    return text


def check_hover(view, tokenizer, reference_model, text: str = SCORED, at: int = 5) -> None:
    """Hovering token `at` of a scored `text` shows its chart, whose chosen probability is the model's."""
    ids = reference_ids(tokenizer, text)
    assert view_tokens(view) == texts(tokenizer, ids)
    view.locator(f".lv-token[data-index='{at}']").hover()
    expected = float(np.exp(reference_logprobs(reference_model, ids)[at - 1, ids[at]]))
    assert abs(chosen_probability(view, at) - expected) <= 0.0006, (at, expected)  # printed with 0.1 %


def check_generate_and_branch(view, press_generate, branch_labels, tokenizer, reference_model) -> list[str]:
    """Generate streams the greedy tokens; a click on an alternative's bar branches, as the model continues.
    Returns the root's tokens."""
    prompt_ids = reference_ids(tokenizer, PROMPT)
    eos = tokenizer.eos_token_id
    greedy = reference_greedy(reference_model, prompt_ids, MAX_NEW, eos)
    expected = texts(tokenizer, prompt_ids + greedy)
    press_generate()
    shown = wait_tokens(view, lambda s: len(s) > len(prompt_ids), "the first generated token")
    assert shown == expected[: len(shown)]  # streaming: a beginning of the greedy text
    # until it is as long as the greedy text, or stops being a beginning of it
    shown = wait_tokens(view, lambda s: len(s) >= len(expected) or s != expected[: len(s)], "the whole generation")
    assert shown == expected

    at = len(prompt_ids) + 2  # the third generated token
    ref = reference_logprobs(reference_model, prompt_ids + greedy)[at - 1]
    second = int(np.argsort(-ref)[1])  # the model's second most likely token there
    clicked = branch_by_click(view, at, 1)
    assert clicked == tokenizer.decode([second])
    continued = reference_greedy(reference_model, prompt_ids + greedy[: at - len(prompt_ids)] + [second], MAX_NEW, eos)
    branch = texts(tokenizer, prompt_ids + greedy[: at - len(prompt_ids)] + [second] + continued)
    shown = wait_tokens(view, lambda s: len(s) > at and s[at] == clicked and len(s) > at + 1, "the branch")
    shown = wait_tokens(view, lambda s: len(branch_labels()) == 2, "the branch list of two", timeout=60)
    assert shown == branch[: len(shown)]
    return expected
