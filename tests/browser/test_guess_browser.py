"""The guessing game in a real JupyterLab + chromium, on the real default model.

A class types a wrong guess, a hostile one, the right one, reveals one, picks a button; Python
plays one with ``game.submit``; the game ends. What the page shows is compared with the trace
the kernel wrote to guess.json (the model's alternatives, formatted here independently) and with
Python's own state. Screenshots (tests/artifacts/): the normal size, a 1280x720 screen at 150 %
zoom (853x480 CSS pixels at device scale 1.5), the dark theme and the finished game.
"""

from __future__ import annotations

import json

import pytest

from browser.expected import expected_percent
from browser.lab import (
    MODEL_TIMEOUT,
    cell,
    dark_screenshot,
    open_notebook,
    projector_page,
    python_prints,
    run_cell,
    save_screenshot,
    screen_shot,
    wait_cell_done,
    wait_for_output,
    write_notebook,
)

pytestmark = pytest.mark.browser

TEXT = "The cat sat on the mat. It was a sunny day, and the cat was happy."
HOSTILE_GUESS = '<img src=x onerror="window.__pwned = 2">'

CELLS = [
    f"""\
import json, pathlib
import logprob_viz as lv
game = lv.guess({TEXT!r}, top_logprobs=5)
pathlib.Path("guess.json").write_text(json.dumps({{"trace": game.trace.to_dict(), "start": game.start}}))
game""",
    "print('state', game.position, game.guesses, [r['n_guesses'] for r in game.rows])",
    "print(game.submit(game.trace.tokens[game.position]))",
    "game",
    "while not game.done:\n    game.reveal()\nprint('over', game.summary()['played'])",
]
GAME = ".lvg-root:visible"


def played(root) -> int:
    return root.locator(".lvg-text .lvg-played").count()


def wait_played(root, start: int, count: int) -> None:
    """Wait until `count` tokens after the start are shown (the last at index start + count - 1)."""
    root.locator(f".lvg-text .lvg-played[data-index='{start + count - 1}']").wait_for(timeout=30_000)
    assert played(root) == count


def guess_in_box(root, text: str) -> None:
    box = root.locator(".lvg-input")
    box.fill(text)
    box.press("Enter")


def chart_rows(root):
    rows = root.locator(".lvg-chart .lv-alt-row").evaluate_all(
        """rows => rows.map(r => [r.querySelector('.lv-alt-token').textContent,
            r.querySelector('.lv-alt-prob').textContent, r.classList.contains('lv-chosen')])"""
    )
    return [tuple(r) for r in rows]


def expected_chart(trace: dict, i: int):
    rows = []
    for j, text in enumerate(trace["top_tokens"][i]):
        lp = float(trace["top_logprobs"][i][j])
        rows.append((text, expected_percent(lp), trace["top_ids"][i][j] == trace["token_ids"][i]))
    if not any(r[2] for r in rows):
        rows.append((trace["tokens"][i], expected_percent(float(trace["logprobs"][i])), True))
    return rows


def test_a_class_plays_wrong_right_reveal_and_a_button(page, lab_server, browser):
    (lab_server.root / "guess.json").unlink(missing_ok=True)
    write_notebook(lab_server, "guess.ipynb", CELLS)
    open_notebook(page, lab_server, "guess.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvg-root .lvg-hidden", MODEL_TIMEOUT)
    saved = json.loads((lab_server.root / "guess.json").read_text())
    trace, start = saved["trace"], saved["start"]
    tokens = trace["tokens"]
    root = cell(page, 0).locator(".lvg-root")

    # The text up to the start, nothing of the rest on the page.
    shown = root.locator(".lvg-text .lvg-token").evaluate_all("els => els.map(e => e.textContent)")
    assert shown == tokens[:start] and "".join(shown) == "The cat sat on the mat."
    assert "sunny" not in root.inner_text()
    assert f"Guess token {start + 1} of {len(tokens)}" in root.locator(".lvg-header").inner_text()

    # A wrong guess counts and asks again; so does a hostile one, shown as text.
    guess_in_box(root, "Dog")
    root.locator(".lvg-tried .lv-chip").first.wait_for(timeout=30_000)
    assert "Dog is not it (guess 1)" in root.locator(".lvg-feedback").inner_text()
    python_prints(page, lab_server, 1, f"state {start} ['Dog'] []")
    guess_in_box(root, HOSTILE_GUESS)
    root.locator(".lvg-tried .lv-chip").nth(1).wait_for(timeout=30_000)
    assert root.locator(".lvg-tried .lv-chip").nth(1).text_content() == HOSTILE_GUESS
    assert root.locator("img, script").count() == 0 and page.evaluate("() => window.__pwned") is None

    # The right one (typed without its space) shows the token and the model's alternatives there.
    guess_in_box(root, tokens[start].strip())
    wait_played(root, start, 1)
    assert root.locator(".lvg-text .lvg-token").nth(start).text_content() == tokens[start]
    feedback = root.locator(".lvg-feedback").inner_text()
    assert feedback.startswith("Right:") and "in 3 guesses" in feedback
    model_says = f"the model gave it {expected_percent(float(trace['logprobs'][start]))} (rank {trace['ranks'][start]})"
    assert model_says in feedback
    assert chart_rows(root) == expected_chart(trace, start)
    guessed = root.locator(".lvg-chart-guesses .lv-chip").evaluate_all("els => els.map(e => e.textContent)")
    assert guessed == ["Dog", HOSTILE_GUESS, tokens[start].strip()]
    save_screenshot(page, "guess.png", GAME)

    # Reveal, then a button, then Python.
    root.locator(".lvg-reveal").click()
    wait_played(root, start, 2)
    assert root.locator(".lvg-was-revealed").count() == 1
    assert root.locator(".lvg-feedback").inner_text().startswith("It was")
    assert chart_rows(root) == expected_chart(trace, start + 1)
    buttons = root.locator(".lvg-choice")
    texts = buttons.evaluate_all("els => els.map(e => e.textContent)")
    assert tokens[start + 2] in texts and len(texts) == 4
    buttons.nth(texts.index(tokens[start + 2])).click()
    wait_played(root, start, 3)
    run_cell(page, 2)
    wait_cell_done(page, 2)
    wait_played(root, start, 4)
    python_prints(page, lab_server, 1, f"state {start + 4} [] [3, 0, 1, 1]")

    dark_screenshot(page, root, "guess-dark.png", GAME)
    projector_screenshot(browser, lab_server)

    # Python ends the game: the page shows the results and the totals; the controls are off.
    run_cell(page, 4)
    wait_cell_done(page, 4, timeout=60)
    root.locator(".lvg-table").wait_for(timeout=30_000)
    assert root.locator(".lvg-table tr").count() == 1 + len(tokens) - start
    first = root.locator(".lvg-table tr").nth(1).locator("td").evaluate_all("els => els.map(e => e.textContent)")
    assert first[:3] == [str(start + 1), tokens[start], "3"], "numbered from 1 as the header and the chart say"
    assert root.locator(".lvg-input").is_disabled()
    assert root.locator(".lvg-header").inner_text().startswith("Game over")
    save_screenshot(page, "guess-over.png", GAME)
    assert not page.page_errors, page.page_errors


def projector_screenshot(browser, lab_server) -> None:
    """A 1280x720 screen at 150 % zoom: 853x480 CSS pixels at device scale 1.5; a second view of the game."""
    with projector_page(browser, lab_server, "guess.ipynb") as small:
        run_cell(small, 3)
        wait_for_output(small, lab_server, 3, ".lvg-root .lvg-hidden", 120)
        root = cell(small, 3).locator(".lvg-root")
        root.scroll_into_view_if_needed()
        width = root.evaluate("el => el.getBoundingClientRect().width")
        assert root.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), "nothing overflows sideways"
        assert width <= 853
        save_screenshot(small, "guess-projector.png", GAME)
        screen_shot(small, "guess-projector-screen.png")
