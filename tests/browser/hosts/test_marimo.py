"""marimo 0.25 in a real browser: `marimo run` of an app on 127.0.0.1, driven in Debian chromium.

A LogprobView shows, hovers (the chart's numbers are the model's) and pins (a cell that reads the
view's `selected` re-runs and shows the index Python received); `lv.explore()` renders as the
explorer, not its static copy: Generate streams the greedy tokens, a click on an alternative's bar
branches, the branch list switches back. Screenshots in marimo's light and dark themes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from browser.lab import ARTIFACTS

from .checks import MAX_NEW, MODEL_TIMEOUT, PROMPT, SCORED, check_generate_and_branch, check_hover, wait_tokens
from .conftest import host_env, start_server, stop_server, venv_tool

pytestmark = pytest.mark.browser

APP = f'''\
import marimo

app = marimo.App(width="medium")


@app.cell
def _():
    import marimo as mo

    import logprob_viz as lv
    return lv, mo


@app.cell
def _(lv):
    explorer = lv.explore(max_new_tokens={MAX_NEW}, top_logprobs=5)
    explorer
    return (explorer,)


@app.cell
def _(explorer, lv, mo):
    view = mo.ui.anywidget(lv.LogprobView(explorer.runner.score({SCORED!r}, top_logprobs=5)))
    view
    return (view,)


@app.cell
def _(mo, view):
    mo.md(f"selected token: **{{view.value['selected']}}**")
    return


if __name__ == "__main__":
    app.run()
'''


@pytest.fixture(scope="module")
def marimo_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("marimo")
    (root / "app.py").write_text(APP)
    env = host_env(tmp_path_factory.mktemp("marimo-private"))
    config = Path(env["XDG_CONFIG_HOME"]) / "marimo"
    config.mkdir(parents=True, exist_ok=True)
    # "system": the page follows the browser's colour scheme, so one server shows both themes
    (config / "marimo.toml").write_text('[display]\ntheme = "system"\n')
    cmd = [str(venv_tool("marimo")), "run", "app.py", "--host", "127.0.0.1", "-p", "{port}", "--headless",
           "--no-token", "--no-sandbox", "--no-check"]
    server = start_server("marimo", cmd, root, env)
    yield server
    stop_server(server)


def open_app(page, server):
    page.goto(server.url, wait_until="domcontentloaded")
    panel = page.locator(".lvh-root")
    panel.wait_for(state="visible", timeout=MODEL_TIMEOUT * 1000)
    views = page.locator(".lv-root")
    wait_tokens(views.nth(1), lambda s: len(s) > 0, "the scored view", timeout=MODEL_TIMEOUT)
    return panel, views.nth(0), views.nth(1)


def test_the_view_and_the_explorer_in_marimo(page, marimo_server, tokenizer, reference_model):
    panel, explorer_view, view = open_app(page, marimo_server)
    assert page.get_by_text("not supported in marimo").count() == 0  # no ipywidgets banner
    assert page.locator(".lv-explore-offline").count() == 0  # the live app, not its static copy

    check_hover(view, tokenizer, reference_model)
    view.locator(".lv-token[data-index='7']").click()  # pin: Python receives it, the cell below re-runs
    page.get_by_text("selected token: 7").wait_for(timeout=60_000)

    prompt = panel.locator("textarea.lvh-prompt")
    prompt.fill(PROMPT)
    root = check_generate_and_branch(
        explorer_view,
        lambda: panel.locator("button.lvh-generate").click(),
        lambda: panel.locator("select.lvh-branch option").all_text_contents(),
        tokenizer,
        reference_model,
    )
    # (the branch may wait for the runner, e.g. behind the pinned token's readout: the status says so until it ran)
    panel.locator(".lvh-status", has_text="Branch #1").wait_for(timeout=120_000)
    panel.locator("select.lvh-branch").select_option(index=0)  # back to the root: its text again
    wait_tokens(explorer_view, lambda s: s == root, "the switch back to the root", timeout=60)

    explorer_view.locator(".lv-token[data-index='12']").hover()  # the pictures show a token's alternatives
    explorer_view.locator(".lv-chart[data-index='12']").wait_for(state="visible", timeout=20_000)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "host-marimo.png"), full_page=True)
    page.emulate_media(color_scheme="dark")
    page.wait_for_function("() => document.body.classList.contains('dark') "
                           "|| document.documentElement.classList.contains('dark')", timeout=10_000)
    explorer_view.locator(".lv-token[data-index='12']").hover()
    page.screenshot(path=str(ARTIFACTS / "host-marimo-dark.png"), full_page=True)

    # A projector, 1280x720 at 150 % zoom: 853x480 CSS pixels. The panel wraps, nothing overflows sideways.
    page.emulate_media(color_scheme="light")
    page.set_viewport_size({"width": 853, "height": 480})
    panel.scroll_into_view_if_needed()
    assert panel.evaluate("el => el.scrollWidth <= el.clientWidth + 1 && el.getBoundingClientRect().right <= 853")
    page.screenshot(path=str(ARTIFACTS / "host-marimo-projector.png"))
