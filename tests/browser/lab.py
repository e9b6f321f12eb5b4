"""Driving JupyterLab (and Notebook 7) from a test as a person would: write a notebook into the
server's folder, open it, wait for its kernel, run cells, read what the page shows.

Every wait here waits for a condition (a kernel state, an element, a cell's prompt, Python's
answer), bounded by a timeout that fails with what the page showed; none sleeps a fixed time.
Screenshots go to tests/artifacts/ (ignored by git); the pictures in docs/ are refreshed by
scripts/screenshots.sh, never by a test run.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"

KERNEL_READY_TIMEOUT = 180  # s
HAND_MADE_TIMEOUT = 180  # s: kernel start + numpy + widget
MODEL_TIMEOUT = 600  # s: import torch, convert/load the default model, generate, on 2 shared cores
CELL_START_TIMEOUT = 30  # s for a cell to be taken by the kernel after Shift+Enter
OUTPUT_GRACE = 45  # s a finished cell may take to show its output (widgets, plotly figures render asynchronously)

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def write_notebook(server, name: str, cells: list[str]) -> None:
    nb = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "id": f"cell-{i}", "metadata": {}, "outputs": [],
             "source": src}
            for i, src in enumerate(cells)
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (server.root / name).write_text(json.dumps(nb))


# The page's own view of the notebook's kernel (window.jupyterapp: the server runs with
# expose_app_in_browser). JupyterLab 4.6 drops a cell run before this connection is ready, so a
# kernel that is idle on the server is not enough.
PAGE_KERNEL_JS = """name => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session && panel.sessionContext.session.kernel;
  if (!panel || !panel.context || !panel.context.path.endsWith(name)) return 'not the current widget';
  if (!kernel) return 'no kernel';
  return kernel.connectionStatus === 'connected' ? kernel.status : kernel.connectionStatus;
}"""


def wait_kernel_idle(page, server, name: str, timeout: float = KERNEL_READY_TIMEOUT) -> None:
    """Wait until notebook `name`'s kernel is idle on the server and connected and idle in the page."""
    deadline = time.monotonic() + timeout
    on_server = in_page = "not seen yet"
    while time.monotonic() < deadline:
        sessions = [s for s in server.api("/api/sessions") if s.get("path", "").endswith(name)]
        on_server = (sessions[0].get("kernel") or {}).get("execution_state", "no kernel") if sessions else "no session"
        in_page = page.evaluate(PAGE_KERNEL_JS, name)
        if on_server == "idle" and in_page == "idle":
            server.remember_kernels()
            return
        time.sleep(0.25)  # (polling the condition above, not a wait of its own)
    pytest.fail(
        f"the kernel of {name} was not ready after {timeout:.0f} s (server: {on_server}, page: {in_page}); "
        f"server log:\n{server.log_tail()}"
    )


def open_notebook(page, server, name: str, app: str = "lab") -> None:
    """Open `name` in JupyterLab (app="lab", a fresh workspace) or Notebook 7 (app="notebooks")."""
    url = f"{server.url}/lab/tree/{name}?reset" if app == "lab" else f"{server.url}/notebooks/{name}"
    page.goto(url)
    cell(page, 0).wait_for(state="visible", timeout=120_000)
    wait_kernel_idle(page, server, name)


def cell(page, index: int):
    return page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell").nth(index)


def prompt_of(page, index: int) -> str:
    return cell(page, index).locator(".jp-InputPrompt").inner_text().strip()


def run_cell(page, index: int) -> None:
    """Click into the cell's editor and press Shift+Enter, as a person does; return once the
    kernel has taken the cell (its prompt changed: "[*]" or a new execution count)."""
    before = prompt_of(page, index)
    cell(page, index).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    try:
        page.wait_for_function(
            "([el, before]) => el.querySelector('.jp-InputPrompt').textContent.trim() !== before",
            arg=[cell(page, index).element_handle(), before],
            timeout=CELL_START_TIMEOUT * 1000,
        )
    except PlaywrightTimeout:
        pytest.fail(f"cell {index} was not run: its prompt stayed {before!r} for {CELL_START_TIMEOUT} s")


def wait_cell_done(page, index: int, timeout: float = 60) -> None:
    """Wait until cell `index` has finished: its prompt holds an execution count, not "*"."""
    page.wait_for_function(
        "el => { const p = el.querySelector('.jp-InputPrompt').textContent; "
        "return /\\d/.test(p) && !p.includes('*'); }",
        arg=cell(page, index).element_handle(),
        timeout=timeout * 1000,
    )


def output_text(page, index: int) -> str:
    out = cell(page, index).locator(".jp-OutputArea")
    return out.inner_text() if out.count() else ""


def wait_for_output(page, server, index: int, selector: str, timeout: float) -> None:
    """Wait until `selector` shows in cell `index`'s output; fail early, with the traceback, on an error."""
    out = cell(page, index).locator(".jp-OutputArea")
    deadline = time.monotonic() + timeout
    finished_at = None
    while time.monotonic() < deadline:
        if out.locator(selector).count() and out.locator(selector).first.is_visible():
            return
        text = output_text(page, index)
        if "Traceback" in text or "Error:" in text:
            pytest.fail(f"cell {index} raised instead of showing {selector}:\n{text[-6000:]}")
        prompt = prompt_of(page, index)
        if "*" not in prompt and any(ch.isdigit() for ch in prompt):
            finished_at = finished_at or time.monotonic()
            if time.monotonic() - finished_at > OUTPUT_GRACE:
                pytest.fail(f"cell {index} finished ({prompt}) without showing {selector}; its output:\n{text[-6000:]}")
        time.sleep(0.5)  # (polling the conditions above)
    pytest.fail(
        f"{selector} did not show in cell {index} within {timeout:.0f} s; output so far:\n"
        f"{output_text(page, index)[-4000:]}\nserver log:\n{server.log_tail(2000)}"
    )


def python_prints(page, server, index: int, text: str, timeout: float = 60) -> None:
    """Run cell `index` (a print of the view's traits) until its output shows `text`.

    The view's changes reach Python asynchronously: ipywidgets sends a model's changes one message
    at a time (the next waits for the kernel's answer to the previous one), so a cell run right
    after a click may still print the old value. Each run reads Python's state afresh. Returns once
    the notebook stands still (Shift+Enter scrolled to the next cell): a hover next points where it aims.
    """
    deadline = time.monotonic() + timeout
    while True:
        run_cell(page, index)
        wait_cell_done(page, index)
        got = output_text(page, index)
        if text in got:
            return wait_scroll_still(page)
        if "Traceback" in got:
            pytest.fail(f"cell {index} raised:\n{got[-6000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"Python did not print {text!r} within {timeout:.0f} s; last output:\n{got[-2000:]}")


def next_frames(page, n: int = 2) -> None:
    """Wait until the browser has rendered `n` more frames (what a scroll or a hover queued is laid out)."""
    page.evaluate(
        "n => new Promise(done => { const f = k => (k ? requestAnimationFrame(() => f(k - 1)) : done()); f(n); })", n
    )


SCROLL_STILL_JS = """frames => new Promise(done => {
  const scroller = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
  let last = null, same = 0;
  const look = () => {
    const now = scroller ? scroller.scrollTop : 0;
    same = now === last ? same + 1 : 0;
    last = now;
    if (same >= frames) done(); else requestAnimationFrame(look);
  };
  look();
})"""


def wait_scroll_still(page, frames: int = 5) -> None:
    """Wait until the notebook has not scrolled for `frames` frames: Shift+Enter moves to the next cell
    and JupyterLab scrolls it into view a moment later, which would move what a hover then points at."""
    page.evaluate(SCROLL_STILL_JS, frames)


def wait_main_thread_idle(page, timeout_ms: int = 10_000) -> None:
    """Wait until JupyterLab has restored its layout and the page's main thread has an idle moment."""
    page.evaluate(
        "t => window.jupyterapp.restored"
        ".then(() => new Promise(done => requestIdleCallback(() => done(), {timeout: t})))",
        timeout_ms,
    )


# ipywidgets' manager of the current notebook restores its widgets (asking the kernel first, then
# reading the notebook's saved widget state) on its own schedule. It has no public handle in the
# page; the renderer it registers for widget outputs once the notebook's session is ready holds
# it (`_manager`, a promise; private to @jupyter-widgets/jupyterlab-manager 3.x: if that changes,
# this fails loudly here). Before that, the factory makes renderers without a manager.
WIDGETS_RESTORED_JS = """async ([mime, timeoutMs]) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const renderer = panel.content.rendermime.getFactory(mime).createRenderer({mimeType: mime});
    let manager = null;
    try {
      manager = await Promise.race([renderer._manager.promise, Promise.resolve(null)]);  // (set yet?)
    } finally {
      renderer.dispose();
    }
    if (manager && manager.restoredStatus) return true;
    if (performance.now() > deadline) throw new Error(manager ? 'widgets not restored' : 'no widget manager');
    await new Promise(next => setTimeout(next, 100));  // (polling the condition above)
  }
}"""


def wait_widgets_restored(page, timeout_s: float = 60) -> None:
    """Wait until the current notebook's widget manager has finished restoring its widgets."""
    page.evaluate(WIDGETS_RESTORED_JS, [WIDGET_VIEW, int(timeout_s * 1000)])


def chart_rows(page, i: int) -> list[tuple[str, str, str, bool]]:
    chart = page.locator(f".lv-root:visible .lv-chart[data-index='{i}']")
    chart.wait_for(state="visible", timeout=10_000)
    rows = chart.evaluate(
        """chart => [...chart.querySelectorAll('.lv-alt-row')].map(r => [
            r.querySelector('.lv-alt-token').textContent,
            r.querySelector('.lv-alt-prob').textContent,
            r.querySelector('.lv-alt-logprob').textContent,
            r.classList.contains('lv-chosen'),
        ])"""
    )
    return [tuple(r) for r in rows]


def pseudo(page, selector: str) -> str:
    return page.locator(selector).first.evaluate("el => getComputedStyle(el, '::before').content")


def dot_cells(page, token) -> list[bool]:
    """For each character cell (1ch) of `token` (on one line), whether the page draws something
    there that goes when the token's background image (its space dots) is removed: two
    screenshots of each cell's middle, with and without it, compared pixel for pixel."""
    ch, box = token.evaluate("""el => { const s = document.createElement('span'); s.textContent = '0';
      el.appendChild(s); const w = s.getBoundingClientRect().width; s.remove();
      return [w, el.getBoundingClientRect().toJSON()]; }""")
    clips = [dict(x=box["x"] + i * ch + 1, y=box["y"] + box["height"] / 3, width=ch - 2, height=box["height"] / 3)
             for i in range(round(box["width"] / ch))]
    shot = lambda: [page.screenshot(clip=c, animations="disabled") for c in clips]  # noqa: E731
    with_dots = shot()
    token.evaluate("el => { el.style.backgroundImage = 'none'; }")
    without = shot()
    token.evaluate("el => { el.style.backgroundImage = ''; }")
    return [a != b for a, b in zip(with_dots, without, strict=True)]


def save_screenshot(page, name: str, root_selector: str = ".lv-root:visible") -> Path:
    """A picture of the view in tests/artifacts/ (scripts/screenshots.sh copies the chosen ones to docs/)."""
    root = page.locator(root_selector).first
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    root.screenshot(path=str(path), animations="disabled")
    return path



def tall_screenshot(page, name: str, selector: str, height: int = 2200) -> Path:
    """`selector`'s picture in a page `height` px tall, so that nothing of it is cut by the window
    or overlapped (the window's size as it was afterwards)."""
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": height})
    try:
        next_frames(page)
        page.locator(selector).first.scroll_into_view_if_needed()
        return save_screenshot(page, name, selector)
    finally:
        page.set_viewport_size(size)


# -- the pictures every view is looked at in: the dark theme, a projector -------------------------

PROJECTOR = {"width": 853, "height": 480}  # CSS pixels of a 1280x720 screen at 150 % zoom
PROJECTOR_SCALE = 1.5


def set_theme(page, dark: bool) -> None:
    """Switch JupyterLab's theme (its own command, as the Settings menu does) and wait until it applies."""
    name, light = ("JupyterLab Dark", "false") if dark else ("JupyterLab Light", "true")
    page.evaluate(f"() => window.jupyterapp.commands.execute('apputils:change-theme', {{theme: '{name}'}})")
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'", timeout=30_000)
    # JupyterLab shows its splash screen for a theme change and removes it 200 ms after; a second
    # change inside that time has both removals run and the second throws (a removeChild page
    # error from JupyterLab's own code). A person does not switch twice in 200 ms: wait it out.
    page.wait_for_function("() => !document.getElementById('jupyterlab-splash')", timeout=30_000)


@contextlib.contextmanager
def dark_theme(page, root, prop: str = "backgroundColor"):
    """JupyterLab's dark theme for the `with` block (light again afterwards, also on failure); it
    waits until `root`'s computed `prop` has changed, so what follows sees the dark colours."""
    before = root.evaluate(f"el => getComputedStyle(el).{prop}")
    try:
        set_theme(page, dark=True)
        page.wait_for_function(f"([el, before]) => getComputedStyle(el).{prop} !== before",
                               arg=[root.element_handle(), before], timeout=30_000)
        yield
    finally:
        set_theme(page, dark=False)


def dark_screenshot(page, root, name: str, selector: str = ".lv-root:visible", prop: str = "backgroundColor") -> Path:
    """`selector`'s picture in the dark theme (tests/artifacts/`name`); the light theme afterwards."""
    with dark_theme(page, root, prop):
        return save_screenshot(page, name, selector)


@contextlib.contextmanager
def projector_page(browser, server, notebook: str):
    """A second page as a projector shows it (1280x720 at 150 %: 853x480 CSS pixels at device scale
    1.5), with `notebook` open in it and the news toast answered; closed after the `with` block."""
    context = browser.new_context(viewport=PROJECTOR, device_scale_factor=PROJECTOR_SCALE)
    small = context.new_page()
    try:
        open_notebook(small, server, notebook)
        yield small
    finally:
        context.close()


def screen_shot(page, name: str) -> Path:
    """The whole screen of `page` (what the class sees) in tests/artifacts/`name`."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), animations="disabled")
    return path


def show_more(page, app: str, shown: bool) -> None:
    """Open or close the explorer's "more" popover (top-k, seed, max new tokens, ..., the tree's
    tools) of the app at selector `app`, with a click on its toggle, as a person does."""
    toggle = page.locator(f"{app} button", has_text="more").first
    if ("mod-active" in (toggle.get_attribute("class") or "")) != shown:
        toggle.click()
    page.locator(f"{app} .lv-explore-pop").first.wait_for(state="visible" if shown else "hidden", timeout=10_000)


def printed(page, index: int, tag: str) -> dict:
    """Run cell `index` and return the JSON it printed on its line starting with `tag` ("REF {...}")."""
    run_cell(page, index)
    wait_cell_done(page, index, timeout=MODEL_TIMEOUT)
    text = output_text(page, index)
    line = next((ln for ln in text.splitlines() if ln.startswith(tag + " ")), None)
    assert line, f"cell {index} printed no {tag}:\n{text[-3000:]}"
    return json.loads(line[len(tag) + 1:])
