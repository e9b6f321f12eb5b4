"""The guessing game on the real default model: matching, the record, Shannon's estimate, the state.

The model's numbers in `game.results` are checked against a teacher-forced pass of a separately
loaded copy of the model; the class's guess numbers and Shannon's bounds against the formulas,
computed here from the guesses themselves (`shannon_from_guesses`), never by the package's scoring.
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
from logprob_viz.views.guess.chart import GuessTable, summary_line
from logprob_viz.views.page import STATE_TYPE

TEXT = "The cat sat on the mat. It was a sunny day, and the cat was happy.\nThe end."


def shannon_from_guesses(per_token: list[tuple[list[str], bool]]) -> tuple[float, float]:
    """(lower, upper) from what the class typed at each token (its distinct guesses, whether revealed);
    the lower one NaN unless the guess numbers' frequencies fall from 1 guess on.

    A found token's guess number is its count of distinct guesses; a revealed one took more than
    its k wrong ones: at k + 1 in the lower bound, the outcome "more than k" in the upper one.
    upper = -sum q log2 q over the outcomes; lower = sum_i i (q_i - q_{i+1}) log2 i, written out.
    """
    outcomes, numbers = [], []
    for guesses, revealed in per_token:
        k = len(dict.fromkeys(g.strip() for g in guesses))
        outcomes.append(f"more than {k}" if revealed else str(k))
        numbers.append(k + 1 if revealed else k)
    n = len(per_token)
    upper = -sum(outcomes.count(o) / n * math.log2(outcomes.count(o) / n) for o in set(outcomes))
    q = [numbers.count(i) / n for i in range(max(numbers) + 2)]
    lower = sum(i * (q[i] - q[i + 1]) * math.log2(i) for i in range(1, max(numbers) + 1))
    ideal = all(q[i] >= q[i + 1] for i in range(1, max(numbers) + 1))  # Shannon's bound needs q_1 >= q_2 >= ...
    return (lower if ideal else math.nan), upper


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
    assert right.correct and right.text == first and right.n_guesses == 3 and right.token == game.start + 1
    assert game.position == game.start + 1 and game.guesses == []
    revealed = game.reveal()
    assert revealed.text == game.trace.tokens[game.start + 1] and revealed.guess is None
    game.submit("zzz")
    game.submit(game.trace.tokens[game.start + 2])  # with its leading space: matches too

    df = game.results
    assert list(df.columns) == ["token", "text", "guesses", "class_guesses", "revealed", "model_guesses",
                                "model_prob", "model_bits"]
    assert df["token"].tolist() == [game.start + 1, game.start + 2, game.start + 3], "numbered from 1, as the widget"
    assert str(right).startswith(f"token {game.start + 1}: right")
    assert df["guesses"][0] == ["Dog", first.strip().lower(), first.strip()]
    assert df["class_guesses"].tolist() == [3, 0, 2]
    assert df["revealed"].tolist() == [False, True, False]

    # the model's numbers, from an independent teacher-forced pass
    ids = game.trace.token_ids.tolist()
    with torch.no_grad():
        logp = torch.log_softmax(reference_model(torch.tensor([ids])).logits[0].double(), dim=-1)
    ranks = []
    for _, row in df.iterrows():
        i = row["token"] - 1
        want = logp[i - 1, ids[i]].item()
        assert row["text"] == game.trace.tokens[i]
        assert row["model_prob"] == pytest.approx(math.exp(want), rel=1e-4)
        assert row["model_bits"] == pytest.approx(-want / math.log(2), abs=1e-4)
        ranks.append(int((logp[i - 1] > logp[i - 1, ids[i]]).sum()) + 1)
    assert df["model_guesses"].tolist() == ranks, "the model's guesses: its rank of the token"

    # over the game: the revealed token counts (as "more than 0"), it is not dropped
    s = game.summary()
    assert (s["n"], s["found"], s["revealed"], s["first_guess"], s["few"]) == (3, 2, 1, 0, True)
    played = [(df["guesses"][j], df["revealed"][j]) for j in range(3)]
    assert (s["class_lower"], s["class_upper"]) == pytest.approx(shannon_from_guesses(played))
    assert s["class_upper"] == pytest.approx(math.log2(3)), "three outcomes: 3, more than 0, 2"
    assert s["class_lower"] == pytest.approx(math.log2(3)), "in the lower one 3, 1 and 2 guesses: q_1 = q_2 = q_3"
    # the model "found" each token at its rank
    rank_lower, rank_upper = shannon_from_guesses([([str(g) for g in range(r)], False) for r in ranks])
    assert (s["model_lower"], s["model_upper"]) == pytest.approx((rank_lower, rank_upper), nan_ok=True)
    assert s["model_n"] == 3
    assert s["model_bits"] == pytest.approx(df["model_bits"].mean())


def test_a_longer_game_scores_every_token_the_same_way_as_written_out(runner):
    game = lv.guess(TEXT, runner=runner, top_logprobs=10, choices=0)
    played = []
    for j in range(game.n_tokens - game.start):
        token = game.trace.tokens[game.position]
        tries = [[token], [token], ["zzz", token], ["zzz", "yyy", token], ["zzz"]][j % 5]
        for g in tries:
            game.submit(g)
        if j % 5 == 4:
            game.reveal()
        played.append((tries, j % 5 == 4))
    s = game.summary()
    assert s["n"] == len(played) and s["revealed"] == sum(r for _, r in played)
    assert (s["class_lower"], s["class_upper"]) == pytest.approx(shannon_from_guesses(played))
    assert 0 < s["class_lower"] <= s["class_upper"], "1 guess most often, then 2, then 3: a lower bound"
    df = game.results
    assert df["class_guesses"].tolist() == [len(t) for t, _ in played], "found: the guesses; revealed: the wrong ones"


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
    s = game.summary()
    assert s["class_upper"] == 0.0 and s["class_lower"] == 0.0, "every token at the first guess: 0 bits"
    assert (s["model_n"], s["model_upper"]) == (2, 1.0), "the model's bounds over the tokens with a rank (1 and 2)"
    assert s["model_lower"] == 1.0, "q_1 = q_2 = 1/2: 2 * (1/2) * log2 2"


def test_the_score_puts_fewer_guesses_first_and_names_shannons_bounds_for_what_they_are():
    """A class that needs exactly 3 guesses at every token has Shannon's upper bound 0 (its guess
    numbers never vary): the score is the mean log2(guesses), which puts a 1-guess class first."""
    words = ["The", " cat", " sat", " on", " the", " mat", "."]
    trace = lv.Trace(tokens=words, logprobs=[np.nan, -1.0, -2.0, -0.5, -0.3, -1.5, -0.2], ranks=[0, 2, 4, 1, 1, 3, 1])
    at_once, three_each = lv.guess(trace, start=1, choices=0), lv.guess(trace, start=1, choices=0)
    for word in words[1:]:
        assert at_once.submit(word).correct
        assert not three_each.submit("wrong").correct and not three_each.submit("no").correct
        assert three_each.submit(word).correct
    best, worst = at_once.summary(), three_each.summary()
    assert best["class_score"] == 0.0 and worst["class_score"] == pytest.approx(math.log2(3))
    assert worst["class_upper"] == 0.0, "Shannon's upper bound: the guess numbers' entropy, 0 when they never vary"
    ranks = [2, 4, 1, 1, 3, 1]  # the model's guesses: its ranks, the same for both games
    assert best["model_score"] == pytest.approx(sum(math.log2(r) for r in ranks) / len(ranks))
    line_best, line_worst = summary_line(best), summary_line(worst)
    assert "the class guessed better" in line_best and "the model guessed better" in line_worst, (line_best, line_worst)
    assert "too few tokens for a bound (6 found; play 20 or more)" in line_best and "nan" not in line_best
    # a revealed token is not scored (at any count, revealing would pay): the rest are, for both
    revealed = lv.guess(trace, start=1, choices=0)
    revealed.reveal()
    assert revealed.submit(" sat").correct
    s = revealed.summary()
    assert (s["class_score"], s["model_scored"]) == (0.0, 1) and s["model_score"] == pytest.approx(math.log2(4))
    assert "Score over the 1 tokens found (1 revealed, not scored)" in summary_line(s)


def test_svg_table_without_plotly_escapes_tokens():
    rows = [{"token": 3, "text": "<script>]]>&", "class_guesses": 2, "revealed": False, "model_guesses": 4},
            {"token": 4, "text": "\x07", "class_guesses": 1, "revealed": True, "model_guesses": 1}]
    summary = {"n": 2, "found": 1, "revealed": 1, "class_lower": 0.5, "class_upper": 1.0, "model_n": 2,
               "model_lower": 1.0, "model_upper": 1.0, "few": True}
    root = ET.fromstring(GuessTable(rows, summary)._repr_svg_())
    texts = [el.text for el in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "<script>]]>&" in texts and "\\x07" in texts and "2" in texts and "> 1" in texts
    assert any("too few tokens for a bound" in (t or "") for t in texts)


def test_a_missing_build_names_the_file_and_the_command(monkeypatch, tmp_path):
    import logprob_viz.views.guess.game  # noqa: F401  (loaded with the real build first: in any test order,
    # the game's class keeps its frontend files for the tests after this one)

    trace = lv.Trace(tokens=["Hello", " world"], logprobs=[np.nan, -1.0])
    monkeypatch.setattr(page, "STATIC", tmp_path)  # a checkout whose js/ was never built
    with pytest.raises(FileNotFoundError, match=r"guess\.js is missing.*`npm install && npm run build` in js/"):
        lv.guess(trace, start=1)
