"""The widget where notebooks live besides JupyterLab: Notebook 7, the standalone offline HTML
export, nbconvert's HTML export and a saved notebook reopened in JupyterLab.

The offline routes (logprob_viz/views/page.py): `lv.to_html(trace)` is one self-contained page
(bundle, CSS and state inlined; a minimal model object instead of a kernel). In a notebook, the
view's mime bundle also carries that page's body as `text/html`; a frontend shows it where no
widget manager renders the widget: nbconvert's HTML when the notebook has no saved widget state
for the view, and JupyterLab for a notebook it does not trust (it only uses "safe" renderers
there; its HTML sanitizer drops the script, so the text fallback shows).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from browser.cells import FEATURES_CELL, HOSTILE, HOSTILE_ALT, HOSTILE_IMG
from browser.expected import expected_rows
from browser.lab import (
    HAND_MADE_TIMEOUT,
    WIDGET_VIEW,
    chart_rows,
    open_notebook,
    run_cell,
    save_screenshot,
    wait_for_output,
    wait_kernel_idle,
    wait_widgets_restored,
    write_notebook,
)

pytestmark = pytest.mark.browser


def test_notebook_7_shows_the_view_and_its_chart(page, lab_server):
    import notebook  # noqa: F401  (the dev extra installs Notebook 7: a missing one fails, not skips)

    write_notebook(lab_server, "nb7.ipynb", [FEATURES_CELL])
    open_notebook(page, lab_server, "nb7.ipynb", app="notebooks")
    is_notebook_7 = page.locator("#main-panel, .jp-NotebookApp, body[data-notebook='notebooks']").count()
    assert is_notebook_7 or "/notebooks/" in page.url
    # Notebook 7.6.5 + JupyterLab 4.6.6 raise errors of their own while starting ("reading
    # 'schema'", "filebrowser:open-path not registered"), with or without the view: count from here.
    errors_before = len(page.page_errors)
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-root .lv-token", HAND_MADE_TIMEOUT)
    trace = json.loads((lab_server.root / "features.json").read_text())
    root = page.locator(".lv-root:visible").first
    assert root.locator(".lv-token").count() == len(trace["tokens"])
    root.locator(".lv-token[data-index='5']").hover()
    assert chart_rows(page, 5) == expected_rows(trace, 5)
    save_screenshot(page, "notebook7.png")
    assert page.page_errors[errors_before:] == []


# ---- offline exports -----------------------------------------------------------------------

BREAKOUT = "</script><script>window.__pwned = 4</script>"
OFFLINE_TRACE_SRC = f"""\
import numpy as np
import logprob_viz as lv
ninf = -np.inf
t = lv.Trace(
    tokens=["Say", " hi", {BREAKOUT!r}, {HOSTILE_IMG!r}, {HOSTILE!r}, " two  spaces", " 🤖"],
    token_ids=[1, 2, 3, 4, 5, 6, 7],
    logprobs=[np.nan, -0.2, -1.5, -0.1, -3.0, -6.0, -0.05],
    ranks=[0, 1, 2, 1, 1, 12, 1],
    top_tokens=[[], [" hi", " hello"], [",", {BREAKOUT!r}, " -"], [{HOSTILE_IMG!r}, " "],
                [{HOSTILE!r}, {HOSTILE_ALT!r}],
                [" one", " three"], [" 🤖"]],
    top_logprobs=[[ninf, ninf, ninf], [-0.2, -1.8, ninf], [-0.4, -1.5, -2.9], [-0.1, -2.5, ninf],
                  [-3.0, -3.2, ninf], [-0.9, -1.3, ninf], [-0.05, ninf, ninf]],
    top_ids=[[-1, -1, -1], [2, 20, -1], [30, 3, 31], [4, 40, -1], [5, 50, -1], [70, 71, -1], [7, -1, -1]],
    prompt_len=1,
    meta={{"model": "</script><b>offline</b>", "source": "test"}},
)"""
# The notebook cell: the trace as the last expression, as users show it.
EXPORT_CELL = OFFLINE_TRACE_SRC + "\nt"
HTML_MIME = "text/html"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
NBCONVERT_TIMEOUT = 180  # s: kernel start + numpy + the widget, on 2 shared cores


def offline_trace():
    scope: dict = {}
    exec(OFFLINE_TRACE_SRC, scope)  # the same trace as the notebook cell's
    return scope["t"]


@contextlib.contextmanager
def serve(root: Path):
    """Static files of `root` on 127.0.0.1 (a page served as a user's web server would)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def guard_network(page, local: str) -> dict:
    """Record every request of the page; let through only those to `local`, abort the rest (no internet)."""
    seen: dict = {"local": [], "blocked": []}

    def handle(route):
        url = route.request.url
        if url.startswith(local):
            seen["local"].append(url)
            route.continue_()
        else:
            seen["blocked"].append(url)
            route.abort()

    page.route("**/*", handle)
    page.add_init_script(
        "window.__csp = []; document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.blockedURI));"
    )
    return seen


def assert_offline_view(page, trace, root_selector: str = ".lv-root") -> None:
    """The view of `trace` is on the page, reads as the trace, hovers, and ran none of its text."""
    root = page.locator(root_selector).first
    root.locator(".lv-token").first.wait_for(state="visible", timeout=30_000)
    tokens = root.locator(".lv-token")
    assert tokens.evaluate_all("els => els.map(e => e.textContent)") == trace.tokens
    assert f"{len(trace)} tokens" in root.locator(".lv-header").inner_text()
    d = trace.to_dict()
    for i in (2, 3, 4):
        tokens.nth(i).hover()
        assert chart_rows(page, i) == expected_rows(d, i)
    # No element came from the data (so no onerror/onload can fire later), and nothing ran so far.
    assert root.locator("script, img, svg, b, iframe").count() == 0
    assert page.evaluate("() => window.__pwned") is None, "a token's text ran as code"
    # Interactive without a kernel: click pins, arrow keys move the pin.
    tokens.nth(2).click()
    root.locator(".lv-token[data-index='2'].lv-pinned").wait_for(timeout=10_000)
    page.keyboard.press("ArrowRight")
    root.locator(".lv-token[data-index='3'].lv-pinned").wait_for(timeout=10_000)
    page.keyboard.press("Escape")


def test_standalone_html_export_renders_offline_with_hostile_text_as_text(page, tmp_path):
    from logprob_viz.views.page import to_html

    trace = offline_trace()
    assert to_html(trace, tmp_path / "view.html") == tmp_path / "view.html"  # the path, not the page
    with serve(tmp_path) as url:
        seen = guard_network(page, url)
        page.goto(f"{url}/view.html")
        assert_offline_view(page, trace)
        assert page.title() == "logprob_viz: </script><b>offline</b>"
        save_screenshot(page, "standalone-export.png", ".lv-root")
        assert seen == {"local": [f"{url}/view.html"], "blocked": []}, "the page requested something besides itself"
        assert page.evaluate("() => window.__csp") == []
    assert page.page_errors == []


def test_standalone_html_export_opens_from_a_file(page, tmp_path):
    from logprob_viz.views.page import to_html

    trace = offline_trace()
    path = tmp_path / "view.html"
    to_html(trace, path, color_mode="rank", selected=5)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    root = page.locator(".lv-root")
    root.locator(".lv-token[data-index='5'].lv-pinned").wait_for(timeout=30_000)
    page.locator(".lv-root .lv-chart[data-index='5']").wait_for(timeout=10_000)
    assert root.locator(".lv-mode").input_value() == "rank"
    assert [u for u in requests if not u.startswith("file:")] == []
    assert page.evaluate("() => window.__pwned") is None
    assert page.page_errors == []


def execute_notebook(path: Path, store_widget_state: bool) -> dict:
    """Write a notebook of EXPORT_CELL to `path` and run it headless (nbclient), as CI does."""
    import nbclient
    import nbformat

    source = EXPORT_CELL
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    client = nbclient.NotebookClient(
        nb,
        timeout=NBCONVERT_TIMEOUT,
        kernel_name="python3",
        store_widget_state=store_widget_state,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    nbformat.write(nb, path)
    return json.loads(path.read_text())


def output_of(nb: dict) -> dict:
    [out] = [o for o in nb["cells"][0]["outputs"] if o["output_type"] == "execute_result"]
    return out["data"]


def require_fallback(data: dict) -> None:
    assert WIDGET_VIEW in data, f"the cell did not show the widget: {list(data)}"
    assert HTML_MIME in data, "the view's mime bundle has no text/html fallback (bundled.HtmlFallback)"


def nbconvert_html(nb_path: Path, *options: str) -> Path:
    exe = Path(sys.executable).parent / "jupyter-nbconvert"
    done = subprocess.run(
        [str(exe), "--to", "html", *options, str(nb_path)], capture_output=True, text=True, timeout=NBCONVERT_TIMEOUT
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return nb_path.with_suffix(".html")


def open_nbconvert_page(page, html_path: Path, trace) -> list[str]:
    """Open an nbconvert page from 127.0.0.1 with the internet cut; the view must show all the same."""
    with serve(html_path.parent) as url:
        seen = guard_network(page, url)
        page.goto(f"{url}/{html_path.name}")
        assert_offline_view(page, trace, ".jp-OutputArea-output .lv-root")
        assert seen["local"] == [f"{url}/{html_path.name}"]
        # nbconvert's own template asks cdnjs for require.js and MathJax (it does with or without us);
        # nothing else may be asked for: not the widget html-manager, not the view's bundle.
        assert all("cdnjs.cloudflare.com" in u for u in seen["blocked"]), seen["blocked"]
        return seen["blocked"]


@pytest.mark.parametrize("store_widget_state", [False, True], ids=["no-widget-state", "widget-state-saved"])
def test_nbconvert_html_of_an_executed_notebook_shows_the_view_offline(page, tmp_path, store_widget_state):
    """nbconvert shows a widget output from saved widget state (through its html-manager, from unpkg,
    which is offline here) when it has that state, else the output's next format: our text/html.

    - no widget state (a notebook saved by JupyterLab, whose widget manager does not save state by
      default, or executed with store_widget_state=False): plain `jupyter nbconvert --to html`.
    - widget state saved (nbclient's default, `jupyter nbconvert --execute`'s too): the state must go
      for the view to show offline: `--ClearMetadataPreprocessor.enabled=True`.
    """
    nb = execute_notebook(tmp_path / "executed.ipynb", store_widget_state)
    data = output_of(nb)
    require_fallback(data)
    has_state = WIDGET_STATE in nb["metadata"].get("widgets", {})
    assert has_state == store_widget_state
    trace = offline_trace()
    options = ["--ClearMetadataPreprocessor.enabled=True"] if store_widget_state else []
    html_path = nbconvert_html(tmp_path / "executed.ipynb", *options)
    html = html_path.read_text()
    assert "@jupyter-widgets/html-manager" not in html
    open_nbconvert_page(page, html_path, trace)
    assert page.page_errors == []


def test_saved_notebook_reopened_without_a_kernel_shows_the_view_from_its_widget_state(page, lab_server, tmp_path):
    """JupyterLab renders a notebook's widget outputs from the widget state saved in its metadata
    (ipywidgets' manager loads it when the notebook opens), kernel or not, but only once the
    notebook is trusted: for an untrusted one it uses "safe" renderers alone, and the widget
    renderer is not one, so the output shows its text/html (sanitized: the script is dropped, the
    text fallback stays) or text/plain. A notebook that nbclient executed is not signed (untrusted);
    one the user ran and saved in JupyterLab is trusted for them.
    """
    nb = execute_notebook(tmp_path / "saved.ipynb", store_widget_state=True)
    state = nb["metadata"]["widgets"][WIDGET_STATE]["state"]
    model_id = output_of(nb)[WIDGET_VIEW]["model_id"]
    assert state[model_id]["model_name"] == "AnyModel" and "_esm" in state[model_id]["state"]
    (lab_server.root / "saved-state.ipynb").write_text(json.dumps(nb))
    page.goto(f"{lab_server.url}/lab/tree/saved-state.ipynb?reset")
    out = page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output").first
    out.wait_for(state="visible", timeout=120_000)
    wait_kernel_idle(page, lab_server, "saved-state.ipynb")
    errors_before = len(page.page_errors)

    # Untrusted: the text fallback, nothing ran.
    page.get_by_text("<Trace 7 tokens").first.wait_for(timeout=30_000)
    assert out.locator(".lv-root").count() == 0
    assert out.locator("script").count() == 0  # the sanitizer dropped the text/html's scripts, if any
    assert page.evaluate("() => window.__pwned") is None

    # No kernel: shut it down (the toolbar then reads "No Kernel"). The widget manager reads the saved
    # state when the notebook opens, after asking the kernel for its widgets: let it finish first.
    wait_widgets_restored(page)
    page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.sessionContext.shutdown(); }")
    no_kernel = page.locator(".jp-NotebookPanel:visible .jp-Toolbar-kernelName", has_text="No Kernel")
    no_kernel.first.wait_for(timeout=30_000)
    assert [s for s in lab_server.api("/api/sessions") if s.get("path", "").endswith("saved-state.ipynb")] == []

    # Trusted (File > Trust Notebook, as a user does): the view, from the saved state alone.
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:trust'); }")
    page.locator(".jp-Dialog .jp-mod-accept").click()
    view = ".jp-NotebookPanel:visible .jp-OutputArea-output .lv-root"
    try:
        page.locator(view).locator(".lv-token").first.wait_for(state="visible", timeout=60_000)
    except PlaywrightTimeout:
        pytest.fail(
            f"no view from the saved state; the output holds:\n{out.inner_html()[:3000]}\n"
            f"page errors: {page.page_errors}"
        )
    assert_offline_view(page, offline_trace(), view)
    assert page.locator(f".jupyter-widgets-disconnected {view.split(' ')[-1]}").count() == 1  # no kernel behind it
    save_screenshot(page, "saved-notebook-no-kernel.png")
    assert page.page_errors[errors_before:] == []


SAVE_STATE = "@jupyter-widgets/jupyterlab-manager:saveWidgetState"


def test_notebook_saved_in_jupyterlab_with_widget_state_reopens_with_the_view(page, lab_server):
    """The user's path: run the cell in JupyterLab with Settings > "Save Widget State Automatically"
    on (ipywidgets' setting; off by default), save, and open the notebook again later: a new kernel
    that never saw the widget, then none at all. The view comes back from the saved state.

    With the setting off, the saved notebook has no widget state, and JupyterLab (trusted notebook:
    the widget renderer wins over text/html) shows "Error displaying widget: model not found".
    """
    write_notebook(lab_server, "live-save.ipynb", [EXPORT_CELL])
    open_notebook(page, lab_server, "live-save.ipynb")
    toggled = page.evaluate(f"() => window.jupyterapp.commands.isToggled('{SAVE_STATE}')")
    try:
        if not toggled:
            page.evaluate(f"async () => {{ await window.jupyterapp.commands.execute('{SAVE_STATE}'); }}")
            page.wait_for_function(f"() => window.jupyterapp.commands.isToggled('{SAVE_STATE}')", timeout=10_000)
        run_cell(page, 0)
        wait_for_output(page, lab_server, 0, ".lv-root .lv-token", HAND_MADE_TIMEOUT)
        page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
        path = lab_server.root / "live-save.ipynb"
        deadline = time.monotonic() + 30
        while WIDGET_STATE not in json.loads(path.read_text())["metadata"].get("widgets", {}):
            assert time.monotonic() < deadline, "JupyterLab did not save the widget state"
            time.sleep(0.5)
        nb = json.loads(path.read_text())
        model_id = output_of(nb)[WIDGET_VIEW]["model_id"]
        assert model_id in nb["metadata"]["widgets"][WIDGET_STATE]["state"]

        # Later: the kernel is gone; the notebook opens again (a new kernel, which never saw the widget).
        for session in lab_server.api("/api/sessions"):
            if session.get("path", "").endswith("live-save.ipynb"):
                lab_server.api(f"/api/sessions/{session['id']}", method="DELETE")
        open_notebook(page, lab_server, "live-save.ipynb")
        errors_before = len(page.page_errors)
        view = ".jp-NotebookPanel:visible .jp-OutputArea-output .lv-root"
        page.locator(view).locator(".lv-token").first.wait_for(state="visible", timeout=60_000)
        assert page.locator(".jp-NotebookPanel:visible .jupyter-widgets-disconnected .lv-root").count() == 1
        # ...and without any kernel (once the widget manager is done with the new one).
        wait_widgets_restored(page)
        page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.sessionContext.shutdown(); }")
        no_kernel = page.locator(".jp-NotebookPanel:visible .jp-Toolbar-kernelName", has_text="No Kernel")
        no_kernel.first.wait_for(timeout=30_000)
        assert_offline_view(page, offline_trace(), view)
        assert page.page_errors[errors_before:] == []
    finally:
        if not toggled and page.evaluate(f"() => window.jupyterapp.commands.isToggled('{SAVE_STATE}')"):
            page.evaluate(f"async () => {{ await window.jupyterapp.commands.execute('{SAVE_STATE}'); }}")

