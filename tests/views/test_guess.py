"""The guessing game on the real default model: matching, the record, Shannon's estimate, the state.

The model's numbers in `game.results` are checked against a teacher-forced pass of a separately
loaded copy of the model; the class's bits against Shannon's formulas computed here.
"""

import base64
import json
import math
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch

import logprob_viz as lv
from logprob_viz.views import page
from logprob_viz.views.codec import read_array
from logprob_viz.views.guess_chart import BitsTable
from logprob_viz.views.guess_scoring import shannon_bounds
from logprob_viz.views.page import STATE_TYPE

TEXT = "The cat sat on the mat. It was a sunny day, and the cat was happy.\nThe end."


@pytest.fixture
def game(runner):
    return lv.guess(TEXT, runner=runner, top_logprobs=10)


def test_starts_after_the_first_sentence_and_hides_the_rest(game):
    t = game.trace
    assert "".join(t.tokens[: game.start]) == "The cat sat on the mat."
    assert game.position == game.start and game.n_tokens == len(t)
    payload = game._payload
    assert payload["n"] == game.start, "the page gets only the tokens shown"
    blob = bytes(read_array(payload["arrays"]["text"]))
    assert b" It" not in blob and b"sunny" not in blob, "nothing hidden is in what the browser receives"
    assert len(game.choices) == 4 and t.tokens[game.start] in game.choices


def embedded_buffers(html: str) -> list[bytes]:
    """The binary buffers of the view state a notebook's text/html carries (base64 JSON, buffers base64)."""
    [b64] = re.findall(f'<script type="{re.escape(STATE_TYPE)}">([^<]*)</script>', html)
    state = json.loads(base64.b64decode(b64))
    return [base64.b64decode(b) for b in state["buffers"]]


def test_the_notebook_html_shows_what_was_played_and_nothing_hidden(game):
    data, _ = game._repr_mimebundle_()
    html = data["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in data, "the live game stays the preferred output"
    assert 'class="lv-standalone"' in html, "the LogprobView's own fallback (page.fallback_html), not a copy"
    blobs = b"".join(embedded_buffers(html))
    assert b"The cat sat on the mat." in blobs
    assert b"sunny" not in blobs and b"sunny" not in html.encode(), "the hidden text is not in the notebook"
    game.reveal()
    blobs = b"".join(embedded_buffers(game._repr_mimebundle_()[0]["text/html"]))
    assert game.trace.tokens[game.start].encode() in blobs and b"sunny" not in blobs


def test_wrong_right_and_reveal_make_the_record(game, reference_model):
    first = game.trace.tokens[game.start]  # " It"
    wrong = game.submit("Dog")
    assert not wrong.correct and wrong.n_guesses == 1 and game.guesses == ["Dog"]
    again = game.submit("  Dog ")  # the same guess again: whitespace does not count, nor does a repeat
    assert again.n_guesses == 1 and game.guesses == ["Dog"]
    assert not game.submit(first.strip().lower()).correct, "case-sensitive by default"
    right = game.submit(first.strip())
    assert right.correct and right.token == first and right.n_guesses == 3
    assert game.position == game.start + 1 and game.guesses == []
    revealed = game.reveal()
    assert revealed.token == game.trace.tokens[game.start + 1] and revealed.guess is None
    game.submit("zzz")
    game.submit(game.trace.tokens[game.start + 2])  # with its leading space: matches too

    df = game.results
    assert list(df.columns) == ["position", "token", "guesses", "n_guesses", "revealed", "model_rank", "model_prob",
                                "class_bits", "model_bits"]
    assert df["position"].tolist() == [game.start, game.start + 1, game.start + 2]
    assert df["guesses"][0] == ["Dog", first.strip().lower(), first.strip()] and df["n_guesses"].tolist() == [3, 0, 2]
    assert df["revealed"].tolist() == [False, True, False]

    # the model's numbers, from an independent teacher-forced pass
    ids = game.trace.token_ids.tolist()
    with torch.no_grad():
        logp = torch.log_softmax(reference_model(torch.tensor([ids])).logits[0].double(), dim=-1)
    for _, row in df.iterrows():
        i = row["position"]
        want = logp[i - 1, ids[i]].item()
        assert row["model_prob"] == pytest.approx(math.exp(want), rel=1e-4)
        assert row["model_bits"] == pytest.approx(-want / math.log(2), abs=1e-4)
        assert row["model_rank"] == int((logp[i - 1] > logp[i - 1, ids[i]]).sum()) + 1

    # class bits: -log2 q(n) over the found positions (n = 3 and 2, one each: 1 bit each), NaN when revealed
    assert df["class_bits"][0] == pytest.approx(1.0) and df["class_bits"][2] == pytest.approx(1.0)
    assert math.isnan(df["class_bits"][1])
    s = game.summary()
    assert (s["played"], s["found"], s["revealed"], s["first_guess"]) == (3, 2, 1, 0)
    assert s["class_bits_upper"] == pytest.approx(1.0)
    assert s["model_bits"] == pytest.approx(df["model_bits"][[0, 2]].mean())


def test_shannon_bounds_against_the_formulas():
    numbers = [1] * 8 + [2] * 4 + [3] * 2 + [4]
    q = np.bincount(numbers)[1:] / len(numbers)  # q_1..q_4
    upper = -(q * np.log2(q)).sum()
    q_next = np.append(q[1:], 0.0)
    lower = sum((i + 1) * (q[i] - q_next[i]) * math.log2(i + 1) for i in range(len(q)))
    assert shannon_bounds(numbers) == pytest.approx((lower, upper))
    assert lower <= upper
    lo, hi = shannon_bounds([2, 2, 1])  # q_2 > q_1: not an ideal predictor's, no lower bound
    assert math.isnan(lo) and hi == pytest.approx(-(2 / 3 * math.log2(2 / 3) + 1 / 3 * math.log2(1 / 3)))


def test_whitespace_tokens_and_case_insensitive_games(runner):
    game = lv.guess(TEXT, runner=runner, start="The cat sat on the mat. It was a sunny day, and the cat was happy.",
                    case_sensitive=False, choices=0)
    assert game.trace.tokens[game.position] == "\n" and game.choices == []
    assert game.submit("").correct, "an empty guess names a whitespace-only token"
    assert game.submit(game.trace.tokens[game.position].upper()).correct


def test_the_last_token_ends_the_game(runner):
    game = lv.guess("One two three four five six seven eight nine", runner=runner, start=7)
    while not game.done:
        game.reveal()
    assert game.choices == [] and game._payload["n"] == game.n_tokens
    with pytest.raises(ValueError, match="the game is over"):
        game.submit("ten")
    game._on_message(game, {"type": "guess", "text": "ten"}, [])  # from the page: answered, not raised
    fig = game.chart()
    assert [len(bar.x) for bar in fig.data] == [2, 2]


@pytest.mark.parametrize("start, message", [(0, "start must be a token index from 1"), (99, "start must be"),
                                            ("The ca", "does not end on a token boundary"), (True, "start must be")])
def test_bad_starts_say_what_to_give(runner, start, message):
    with pytest.raises(ValueError, match=message):
        lv.guess(TEXT, runner=runner, start=start)


def test_bad_inputs(runner):
    with pytest.raises(TypeError, match="non-empty str"):
        lv.guess("   ", runner=runner)
    game = lv.guess(TEXT, runner=runner)
    with pytest.raises(TypeError, match="a guess is the text"):
        game.submit(3)
    with pytest.raises(ValueError, match="choices must be an int"):
        lv.guess(TEXT, runner=runner, choices=-1)


def test_a_servers_trace_with_unknown_numbers_plays_too():
    trace = lv.Trace(tokens=["Hello", ",", " world", "!"], logprobs=[np.nan, -0.5, np.nan, -1.0], ranks=[0, 1, 0, 2],
                     meta={"source": "a server"})
    game = lv.guess(trace, start=1, choices=0)
    assert game.submit(",").correct and game.submit("world").correct and game.submit("!").correct
    df = game.results
    assert df["model_bits"][0] == pytest.approx(0.5 / math.log(2))
    assert math.isnan(df["model_bits"][1]), "an unknown logprob gives unknown bits, not infinite ones"
    assert game.summary()["class_bits_upper"] == 0.0, "every token at the first guess: 0 bits"


def test_svg_table_without_plotly_escapes_tokens():
    rows = [{"position": 3, "token": "<script>]]>&", "n_guesses": 2, "revealed": False, "model_rank": 4,
             "model_prob": 0.1, "class_bits": 1.0, "model_bits": 3.32},
            {"position": 4, "token": "\x07", "n_guesses": 1, "revealed": True, "model_rank": 1,
             "model_prob": 0.9, "class_bits": math.nan, "model_bits": 0.15}]
    summary = {"class_bits_upper": 1.0, "found": 1, "revealed": 1, "model_bits": 3.32}
    root = ET.fromstring(BitsTable(rows, summary)._repr_svg_())
    texts = [el.text for el in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "<script>]]>&" in texts and "\\x07" in texts and "2" in texts and "1 (revealed)" in texts


def test_a_missing_build_names_the_file_and_the_command(monkeypatch, tmp_path):
    import logprob_viz.views.guess  # noqa: F401  (loaded with the real build first: in any test order,
    # the game's class keeps its frontend files for the tests after this one)

    trace = lv.Trace(tokens=["Hello", " world"], logprobs=[np.nan, -1.0])
    monkeypatch.setattr(page, "STATIC", tmp_path)  # a checkout whose js/ was never built
    with pytest.raises(FileNotFoundError, match=r"guess\.js is missing.*`npm install && npm run build` in js/"):
        lv.guess(trace, start=1)
