"""Voilà 0.5.13 in a real browser: a notebook with the explorer and a LogprobView served by `voila`
on 127.0.0.1, driven in Debian chromium.

Voilà runs the notebook in a kernel of its own and renders its widgets with its own widget
manager, which loads anywidget's frontend from where the Voilà server runs (docs/hosts.md). The
test types a prompt, presses Generate (the greedy tokens stream in), branches by a click on an
alternative's bar, hovers a token of the LogprobView (its chart's numbers are the model's), and
checks that the "no kernel" note stays hidden while the kernel is live. Screenshots in Voilà's
light and dark themes.
"""

from __future__ import annotations

import json
import time

import pytest

from browser.lab import ARTIFACTS

from .checks import MAX_NEW, MODEL_TIMEOUT, PROMPT, SCORED, check_generate_and_branch, check_hover, wait_tokens
from .conftest import host_env, start_server, stop_server, venv_tool

pytestmark = pytest.mark.browser

CELLS = [
    f"import logprob_viz as lv\napp = lv.explore(max_new_tokens={MAX_NEW}, top_logprobs=5)\napp",
    f"view = lv.LogprobView(app.runner.score({SCORED!r}, top_logprobs=5))\nview",
]


def notebook(cells: list[str]) -> str:
    return json.dumps({
        "cells": [
            {"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
             "source": source}
            for i, source in enumerate(cells)
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    })


@pytest.fixture(scope="module")
def voila_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("voila")
    (root / "explore.ipynb").write_text(notebook(CELLS))
    env = host_env(tmp_path_factory.mktemp("voila-private"))
    cmd = [str(venv_tool("voila")), "explore.ipynb", "--no-browser", "--port={port}", "--Voila.ip=127.0.0.1",
           "--Voila.port_retries=0", "--VoilaConfiguration.allow_theme_override=YES"]
    server = start_server("voila", cmd, root, env, ready_path="/voila/static/")
    yield server
    stop_server(server)


def open_app(page, server, query: str = ""):
    page.goto(server.url + "/" + query, wait_until="domcontentloaded")
    app = page.locator(".lv-explore")
    app.locator("textarea").wait_for(state="visible", timeout=MODEL_TIMEOUT * 1000)
    views = page.locator(".lv-root")
    wait_tokens(views.nth(1), lambda s: len(s) > 0, "the scored view", timeout=MODEL_TIMEOUT)
    return app, app.locator(".lv-root"), views.nth(1)


def test_the_explorer_and_a_view_in_voila(page, voila_server, tokenizer, reference_model):
    errors_before = len(page.page_errors)
    app, explorer_view, view = open_app(page, voila_server)
    assert page.get_by_text("No version of module").count() == 0  # anywidget's frontend was found
    assert page.get_by_text("Error displaying widget").count() == 0  # no output of a closed model (a bar)
    assert page.get_by_text("Loading weights").count() == 0  # the default model loads quietly

    check_hover(view, tokenizer, reference_model)
    app.locator("textarea").fill(PROMPT)
    check_generate_and_branch(
        explorer_view,
        lambda: app.locator("button", has_text="Generate").click(),
        lambda: app.locator(".lv-tree-row").all_text_contents(),
        tokenizer,
        reference_model,
    )
    # The kernel is live: the note about a copy without one is not shown (it waits 5 s for an answer:
    # js/toolkit/ask.js KERNEL_WAIT_MS).
    time.sleep(6)  # (longer than the note waits for the kernel's answer)
    assert not app.locator(".lv-explore-note").is_visible()
    assert page.page_errors[errors_before:] == []
    hover_and_shoot(page, explorer_view, "host-voila.png")


def hover_and_shoot(page, view, name: str, at: int = 12) -> None:
    """A picture of the page with the alternatives of token `at` of `view` shown."""
    # Mid-stream, the text's next block can replace the hovered span before the chart is drawn (the
    # hover is then on an element that is gone): hover again, up to a minute, until the chart shows.
    chart = view.locator(f".lv-chart[data-index='{at}']")
    deadline = time.monotonic() + 60
    while True:
        view.locator(f".lv-token[data-index='{at}']").hover()
        try:
            chart.wait_for(state="visible", timeout=5_000)
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def test_voila_dark_theme(page, voila_server):
    app, explorer_view, view = open_app(page, voila_server, "?theme=dark")
    background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    red, green, blue = (int(x) for x in background[background.index("(") + 1 : background.index(")")].split(",")[:3])
    assert red + green + blue < 3 * 80, background  # Voilà's dark theme is on
    app.locator("textarea").fill(PROMPT)
    app.locator("button", has_text="Generate").click()
    wait_tokens(explorer_view, lambda s: len(s) >= 16, "the generation")
    hover_and_shoot(page, explorer_view, "host-voila-dark.png")
