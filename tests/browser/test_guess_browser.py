"""The guessing game in a real JupyterLab + chromium, on the real default model.

A class types a wrong guess, a hostile one, the right one, reveals one, picks a button; Python
plays one with ``game.submit``; the game ends. What the page shows is compared with the trace
the kernel wrote to guess.json (the model's alternatives, formatted here independently) and with
Python's own state. No guess, reveal or button moves the box typed in, the buttons or the page by
2 px or more (measured on the page). The finished game's table and totals are checked against the
class's guesses and the model's ranks: the score (mean log2 guesses) computed here, not by the package.
Screenshots (tests/artifacts/): the normal size, a 1280x720 screen at 150 % zoom (853x480 CSS pixels
at device scale 1.5), the dark theme and the finished game.
"""

from __future__ import annotations

import json
import math

import pytest

from browser.expected import expected_percent
from browser.lab import (
    ARTIFACTS,
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
LONG_TEXT = ("The cat sat on the mat. It was a sunny day, and the cat was happy. It looked at the birds in the "
             "garden and wondered where they were going, then it closed its eyes and slept until the evening came.")
HOSTILE_GUESS = '<img src=x onerror="window.__pwned = 2">'

CELLS = [
    f"""\
import json, pathlib
import logprob_viz as lv
game = lv.guess({TEXT!r}, top_logprobs=5)
pathlib.Path("guess.json").write_text(json.dumps({{"trace": game.trace.to_dict(), "start": game.start}}))
game""",
    "print('state', game.position, game.guesses, [r['class_guesses'] for r in game.rows])",
    "print(game.submit(game.trace.tokens[game.position]))",
    "game",
    "while not game.done:\n    game.reveal()\nprint('over', game.summary()['n'])",
    f"lv.guess({LONG_TEXT!r}, top_logprobs=5)",
]
GAME = ".lvg-root:visible"


def played(root) -> int:
    return root.locator(".lvg-text .lvg-played").count()


def wait_played(root, start: int, count: int) -> None:
    """Wait until `count` tokens after the start are shown (the last at index start + count - 1)."""
    root.locator(f".lvg-text .lvg-played[data-index='{start + count - 1}']").wait_for(timeout=30_000)
    assert played(root) == count


# Where the things a person clicks are, and the notebook's scroll: nothing of it may move.
WHERE_JS = """root => {
  const nb = root.closest('.jp-NotebookPanel');
  const scroller = nb.querySelector('.jp-WindowedPanel-outer') || nb.querySelector('.jp-Notebook');
  const at = (sel) => { const r = root.querySelector(sel).getBoundingClientRect(); return [r.left, r.top]; };
  return {input: at('.lvg-input'), reveal: at('.lvg-reveal'), choices: at('.lvg-choices'),
          scroll: scroller.scrollTop};
}"""


# How many lines the text's tokens lie on.
LINES_JS = ("el => new Set("
            "[...el.querySelectorAll('.lvg-token')].map(s => Math.round(s.getBoundingClientRect().top))).size")


# Tokens on one line, names whole (the chart, the chips), the text within its box, buttons inside the game.
FIT_JS = """root => {
  const text = root.querySelector('.lvg-text'), g = root.getBoundingClientRect();
  const split = [...text.querySelectorAll('.lvg-token')]
    .filter(s => !s.textContent.includes('\\n') && !s.classList.contains('lv-token-long'))
    .filter(s => s.getClientRects().length !== 1)
    .map(s => s.textContent);
  const cut = [...root.querySelectorAll('.lv-alt-token, .lv-chip')].filter(e => e.scrollWidth > e.clientWidth)
    .map(e => e.textContent);
  const outside = [...root.querySelectorAll('button')].filter(b => {
    const r = b.getBoundingClientRect(); return r.left < g.left || r.right > g.right; }).map(b => b.textContent);
  return {split, cut, outside, text: [text.scrollWidth, text.clientWidth]};
}"""


def assert_unmoved(root, before: dict, action: str) -> None:
    after = root.evaluate(WHERE_JS)
    for name in ("input", "reveal", "choices"):
        moved = max(abs(a - b) for a, b in zip(after[name], before[name], strict=True))
        assert moved < 2, f"{action} moved the {name} by {moved:.1f} px"
    scrolled = after["scroll"] - before["scroll"]
    assert abs(scrolled) < 2, f"{action} scrolled the page by {scrolled:.1f} px"


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
    root.scroll_into_view_if_needed()
    before = root.evaluate(WHERE_JS)
    guess_in_box(root, "Dog")
    root.locator(".lvg-tried .lv-chip").first.wait_for(timeout=30_000)
    assert_unmoved(root, before, "a wrong guess")
    assert "Dog is not it (guess 1)" in root.locator(".lvg-feedback").inner_text()
    python_prints(page, lab_server, 1, f"state {start} ['Dog'] []")
    before = root.evaluate(WHERE_JS)  # (running a cell may scroll the notebook: measured again)
    guess_in_box(root, HOSTILE_GUESS)
    root.locator(".lvg-tried .lv-chip").nth(1).wait_for(timeout=30_000)
    assert_unmoved(root, before, "a second wrong guess")
    assert root.locator(".lvg-tried .lv-chip").nth(1).text_content() == HOSTILE_GUESS
    assert root.locator("img, script").count() == 0 and page.evaluate("() => window.__pwned") is None

    # The right one (typed without its space) shows the token and the model's alternatives there.
    guess_in_box(root, tokens[start].strip())
    wait_played(root, start, 1)
    assert_unmoved(root, before, "a right guess")
    assert root.locator(".lvg-text .lvg-token").nth(start).text_content() == tokens[start]
    feedback = root.locator(".lvg-feedback").inner_text()
    assert feedback.startswith("Right:") and "in 3 guesses" in feedback
    model_says = (f"the model needed {trace['ranks'][start]} (its rank; it gave the token "
                  f"{expected_percent(float(trace['logprobs'][start]))})")
    assert model_says in feedback
    assert chart_rows(root) == expected_chart(trace, start)
    guessed = root.locator(".lvg-chart-guesses .lv-chip").evaluate_all("els => els.map(e => e.textContent)")
    assert guessed == ["Dog", HOSTILE_GUESS, tokens[start].strip()]
    save_screenshot(page, "guess.png", GAME)

    # Reveal, then a button, then Python.
    root.locator(".lvg-reveal").click()
    wait_played(root, start, 2)
    assert_unmoved(root, before, "reveal")
    assert root.locator(".lvg-was-revealed").count() == 1
    assert root.locator(".lvg-feedback").inner_text().startswith("It was")
    assert chart_rows(root) == expected_chart(trace, start + 1)
    buttons = root.locator(".lvg-choice")
    texts = buttons.evaluate_all("els => els.map(e => e.textContent)")
    assert tokens[start + 2] in texts and len(texts) == 4
    buttons.nth(texts.index(tokens[start + 2])).click()
    wait_played(root, start, 3)
    assert_unmoved(root, before, "a button")
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
    table = root.locator(".lvg-table tr").evaluate_all(
        "rows => rows.slice(1).map(r => [...r.querySelectorAll('td')].map(e => e.textContent))")
    # what the class did: 3 guesses, a reveal after none, a button, Python's right guess, then reveals
    outcomes = [(3, False), (0, True), (1, False), (1, False)] + [(0, True)] * (len(tokens) - start - 4)
    for j, (row, (k, revealed)) in enumerate(zip(table, outcomes, strict=True)):
        i = start + j
        assert row == [str(i + 1), tokens[i], f"> {k}" if revealed else str(k), str(trace["ranks"][i]),
                       expected_percent(float(trace["logprobs"][i]))], "numbered from 1, as the header and chart say"
    # the score: the mean log2(guesses) over the tokens found (revealed ones are not scored), the
    # model's ranks over the same tokens
    found = [(start + j, k) for j, (k, revealed) in enumerate(outcomes) if not revealed]
    class_score = sum(math.log2(k) for _, k in found) / len(found)
    model_score = sum(math.log2(trace["ranks"][i]) for i, _ in found) / len(found)
    summary = root.locator(".lvg-summary").inner_text()
    assert (f"Score over the 3 tokens found ({len(outcomes) - 3} revealed, not scored), the mean of log2(guesses) "
            f"per token, 0 when every token takes 1 guess: class {class_score:.2f} bits, model {model_score:.2f} bits "
            "(its ranks as guesses)") in summary, summary
    assert ("the class guessed better" if class_score < model_score else "the model guessed better") in summary
    # 3 found tokens: Shannon's bounds (an estimate of the text's entropy) are not given, nor NaN
    assert (f"Shannon's bounds on the text's entropy over the {len(outcomes)} tokens: too few tokens for a bound "
            "(3 found; play 20 or more)") in summary
    assert "nan" not in summary.lower()
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
        small.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        root.scroll_into_view_if_needed()
        width = root.evaluate("el => el.getBoundingClientRect().width")
        assert root.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), "nothing overflows sideways"
        assert width <= 853
        visible_part(small, root, "guess-projector.png")
        screen_shot(small, "guess-projector-screen.png")
        reveals_move_nothing_in_a_long_text(small, lab_server)


def visible_part(small, root, name: str) -> None:
    """The part of the game the notebook shows on this screen (not what lies below the window)."""
    clip = root.evaluate("""el => {
      const r = el.getBoundingClientRect();
      const s = el.closest('.jp-WindowedPanel-outer').getBoundingClientRect();
      const top = Math.max(r.top, s.top), bottom = Math.min(r.bottom, s.bottom);
      return {x: r.left, y: top, width: r.width, height: bottom - top};
    }""")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    small.screenshot(path=str(ARTIFACTS / name), clip=clip, animations="disabled")


def reveals_move_nothing_in_a_long_text(small, lab_server) -> None:
    """A text of four lines at this width: tokens found or revealed wrap onto new lines, and none
    moves the box typed in, the buttons or the page (the text's room is kept from the start)."""
    run_cell(small, 5)
    wait_for_output(small, lab_server, 5, ".lvg-root .lvg-hidden", 120)
    root = cell(small, 5).locator(".lvg-root")
    root.scroll_into_view_if_needed()
    start = root.locator(".lvg-text .lvg-context").count()
    lines = root.locator(".lvg-text").evaluate(LINES_JS)
    root.locator(".lvg-choices").scroll_into_view_if_needed()  # (else typing in the box scrolls it into view)
    before = root.evaluate(WHERE_JS)
    for n in range(24):
        if n % 3 == 0:
            guess_in_box(root, f"zzz{n}")
            root.locator(".lvg-tried .lv-chip").first.wait_for(timeout=30_000)
            assert_unmoved(root, before, f"a wrong guess ({n} tokens played)")
        root.locator(".lvg-reveal").click()
        root.locator(f".lvg-text .lvg-played[data-index='{start + n}']").wait_for(timeout=30_000)
        assert_unmoved(root, before, f"reveal ({n + 1} tokens played)")
    grown = root.locator(".lvg-text").evaluate(LINES_JS)
    assert grown >= lines + 2, f"the text grew from {lines} to {grown} lines while it was played"
    fit = root.evaluate(FIT_JS)
    assert not fit["split"], f"tokens whose box lies on two lines: {fit['split']}"
    assert not fit["cut"], f"names cut: {fit['cut']}"
    assert fit["text"][0] <= fit["text"][1], f"the text overflows its box: {fit['text']}"
    assert not fit["outside"], f"buttons outside the game: {fit['outside']}"
    visible_part(small, root, "guess-projector-long.png")
