"""Panel 1.9.4 in a real browser, offline: an app script served by `panel serve` on 127.0.0.1, with
`lv.hosts.panel()` (anywidget's module from the package, docs/hosts.md), driven in Debian chromium
with every request outside 127.0.0.1 aborted. It hovers a token of a LogprobView (its chart's
numbers are the model's), presses the explorer's Generate (the greedy tokens stream in), branches
by a click on an alternative's bar, and reads the tree outline.
"""

from __future__ import annotations

import pytest

from browser.lab import ARTIFACTS

from .checks import MAX_NEW, MODEL_TIMEOUT, PROMPT, SCORED, check_generate_and_branch, check_hover, wait_tokens
from .conftest import host_env, start_server, stop_server, venv_tool

pytestmark = pytest.mark.browser

APP = f"""import panel as pn
import logprob_viz as lv

lv.hosts.panel()
pn.extension("ipywidgets")
app = lv.explore(max_new_tokens={MAX_NEW}, top_logprobs=5)
view = lv.LogprobView(app.runner.score({SCORED!r}, top_logprobs=5))
pn.Column(app.widget, view).servable()
"""


@pytest.fixture(scope="module")
def panel_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("panel")
    (root / "app.py").write_text(APP)
    env = host_env(tmp_path_factory.mktemp("panel-private"))
    cmd = [str(venv_tool("panel")), "serve", "app.py", "--address", "127.0.0.1", "--port", "{port}",
           "--allow-websocket-origin", "127.0.0.1:{port}"]
    server = start_server("panel", cmd, root, env, ready_path="/app")
    yield server
    stop_server(server)


def test_the_explorer_and_a_view_in_panel(page, panel_server, tokenizer, reference_model):
    outside: list[str] = []

    def only_local(route):
        url = route.request.url
        if url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:")):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    page.route("**/*", only_local)
    page.goto(panel_server.url + "/app", wait_until="domcontentloaded")
    app = page.locator(".lv-explore")
    app.locator("textarea").wait_for(state="visible", timeout=MODEL_TIMEOUT * 1000)
    views = page.locator(".lv-root")
    wait_tokens(views.nth(1), lambda s: len(s) > 0, "the scored view", timeout=MODEL_TIMEOUT)
    check_hover(views.nth(1), tokenizer, reference_model)
    app.locator("textarea").fill(PROMPT)
    check_generate_and_branch(
        views.nth(0),
        lambda: app.locator("button", has_text="Generate").click(),
        lambda: app.locator(".lv-tree-row").all_text_contents(),
        tokenizer,
        reference_model,
    )
    # Only Panel's own font-awesome CSS is asked of a CDN (offline, the icons are empty boxes).
    assert all("font-awesome" in url for url in outside), outside
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "host-panel.png"), full_page=True)
