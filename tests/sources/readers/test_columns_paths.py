"""The readers' one-pass paths (all positions at once) give what the per-position path gives.

Bodies are generated from a fixed seed with the cases that matter for ranking: the chosen token
inside and outside the top K, tied logprobs, a chosen key that holds another token's value
(collided), ids given or not. Each is checked (1) against an independent computation written
here (rank = 1 + entries strictly more likely; alternatives = the K most likely), where the
body allows one, and (2) against the per-position path on the same body (its fast function
switched off), field by field. A malformed value in an otherwise well-formed body still gives
the per-position path's error naming the field.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import logprob_viz as lv
from logprob_viz.sources.readers import gemini, openai_completions, sglang, tgi, vllm_prompt
from logprob_viz.sources.readers.errors import LogprobFormatError

WORDS = [" the", " a", ",", " robot", "\n", " human", "ing", " be", "!", " not", "é", " 🙂", "", " may"]


def _positions(n: int, k: int, seed: int, ties: bool = False):
    """n (chosen (word, logprob), [(word, logprob)] most likely first, K of them) with distinct words per row."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = rng.sample(WORDS, k + 1)
        # all below ln(1/2): a trace reads p > 1/2 as rank 1 whatever the list says
        lps = sorted((round(-0.7 - rng.expovariate(1.0), 1 if ties else 6) for _ in range(k + 1)), reverse=True)
        alts = list(zip(words[:k], lps[:k], strict=True))
        # outside the top K: less likely than all K
        chosen = alts[rng.randrange(k)] if rng.random() < 0.75 else (words[k], lps[k] - 1.0)
        out.append((chosen, alts))
    return out


def _expected(positions, k: int):
    """Independent: rank of the chosen token among its listed entries; the top K texts."""
    ranks, tops = [], []
    for (word, lp), alts in positions:
        inside = any(w == word for w, _ in alts)
        ranks.append(1 + sum(v > lp for _, v in alts) if inside else 0)
        tops.append([w for w, _ in sorted(alts, key=lambda a: -a[1])][:k])
    return ranks, tops


def _same(a, b) -> None:
    assert a.tokens == b.tokens and a.token_bytes == b.token_bytes and a.prompt_len == b.prompt_len
    for name in ("token_ids", "logprobs", "ranks", "top_logprobs", "top_ids"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert list(a.top_tokens) == list(b.top_tokens)
    assert a.flags == b.flags and a.meta == b.meta


def _both(monkeypatch, module, name: str, read):
    """`read()` by the one-pass path (checked to be taken) and by the per-position path: the same trace."""
    taken = []
    original = getattr(module, name)
    with monkeypatch.context() as m:
        m.setattr(module, name, lambda *args, **kwargs: taken.append(original(*args, **kwargs)) or taken[-1])
        fast = read()
    assert any(result is not None for result in taken), f"{name} did not read this body"
    with monkeypatch.context() as m:
        m.setattr(module, name, lambda *args, **kwargs: None)
        slow = read()
    _same(fast, slow)
    return fast


def completions_body(positions, collide_at=()) -> str:
    tops = []
    for i, ((word, lp), alts) in enumerate(positions):
        top = dict(alts)
        top[word] = lp if i not in collide_at else lp - 0.5  # the chosen key holds another value
        tops.append(top)
    lp = {"tokens": [c for (c, _), _ in positions], "token_logprobs": [v for (_, v), _ in positions],
          "top_logprobs": tops, "text_offset": [0] * len(positions)}
    return json.dumps({"id": "cmpl-0123456789abcdef", "object": "text_completion", "model": "m",
                       "choices": [{"index": 0, "text": "".join(lp["tokens"]), "logprobs": lp}]})


@pytest.mark.parametrize("ties", [False, True])
def test_completions_ranks_against_an_independent_count(monkeypatch, ties):
    positions = _positions(400, 3, seed=1 + ties, ties=ties)
    t = _both(monkeypatch, openai_completions, "_columns", lambda: lv.from_openai(completions_body(positions)))
    ranks, tops = _expected(positions, 3)
    if not ties:  # with ties the rank among equals is the server's order: the per-position path decides
        assert t.ranks.tolist() == ranks and [list(r) for r in t.top_tokens] == tops
    outside = [i for i, r in enumerate(ranks) if r == 0]
    assert outside and [i for i, row in enumerate(t.flags) if "outside_top_k" in row] == outside
    fewer = _both(monkeypatch, openai_completions, "_columns",
                  lambda: lv.from_openai(completions_body(positions), top_logprobs=2))
    assert fewer.ranks.tolist() == [r if r <= 2 else 0 for r in ranks] or ties


def test_completions_collisions_and_a_given_k_match_the_per_position_path(monkeypatch):
    positions = _positions(300, 4, seed=3)
    body = completions_body(positions, collide_at={5, 17, 40})
    for k in (None, 2, 4, 6):
        t = _both(monkeypatch, openai_completions, "_columns", lambda k=k: lv.from_openai(body, top_logprobs=k))
        assert all("collided" in t.flags[i] for i in (5, 17, 40))


def test_malformed_values_in_a_well_formed_body_name_the_field():
    positions = _positions(50, 3, seed=4)
    data = json.loads(completions_body(positions))
    data["choices"][0]["logprobs"]["token_logprobs"][33] = 0.5
    with pytest.raises(LogprobFormatError, match=r"token_logprobs\[33\]: expected a logprob"):
        lv.from_openai(json.dumps(data))
    data = json.loads(completions_body(positions))
    first = next(iter(data["choices"][0]["logprobs"]["top_logprobs"][21]))
    data["choices"][0]["logprobs"]["top_logprobs"][21][first] = "x"
    with pytest.raises(LogprobFormatError, match=r"top_logprobs\[21\]"):
        lv.from_openai(json.dumps(data))


def _ids(word: str) -> int:
    return WORDS.index(word) + 10


def sglang_body(positions) -> dict:
    return {"text": "", "meta_info": {
        "id": "x", "input_token_logprobs": [], "input_top_logprobs": [],
        "output_token_logprobs": [[v, _ids(c), c] for (c, v), _ in positions],
        "output_top_logprobs": [[[v, _ids(a), a] for a, v in alts] for _, alts in positions]}}


def test_sglang_tgi_gemini_vllm_against_an_independent_count(monkeypatch):
    positions = _positions(300, 3, seed=5)
    ranks, tops = _expected(positions, 3)
    shuffled = [(c, random.Random(i).sample(alts, len(alts))) for i, (c, alts) in enumerate(positions)]
    body = sglang_body(shuffled)
    traces = [_both(monkeypatch, sglang, "_fast_section", lambda: lv.read(body))]
    tgi_body = {"generated_text": "", "details": {
        "finish_reason": "length", "prefill": [],
        "tokens": [{"id": _ids(c), "text": c, "logprob": v, "special": False} for (c, v), _ in shuffled],
        "top_tokens": [[{"id": _ids(a), "text": a, "logprob": v, "special": False} for a, v in alts]
                       for _, alts in shuffled]}}
    traces.append(_both(monkeypatch, tgi, "_fast_generated", lambda: lv.read(tgi_body)))
    for with_ids in (False, True):
        def entry(word, value, with_ids=with_ids):
            return {"token": word, "logProbability": value, **({"tokenId": _ids(word)} if with_ids else {})}
        gemini_body = {"candidates": [{"content": {"parts": [{"text": ""}]}, "logprobsResult": {
            "chosenCandidates": [entry(c, v) for (c, v), _ in positions],
            "topCandidates": [{"candidates": [entry(a, v) for a, v in alts]} for _, alts in positions]}}]}
        traces.append(_both(monkeypatch, gemini, "_fast", lambda body=gemini_body: lv.read(body)))
    fewer = [_both(monkeypatch, sglang, "_fast_section", lambda: lv.read(body, top_logprobs=2)),
             _both(monkeypatch, tgi, "_fast_generated", lambda: lv.read(tgi_body, top_logprobs=2))]
    for t in fewer:  # K=2 of the 3 listed: a chosen third is outside the top K
        assert t.ranks.tolist() == [r if r <= 2 else 0 for r in ranks]
        assert [list(r) for r in t.top_tokens] == [row[:2] for row in tops]
    for t in traces:
        assert t.ranks.tolist() == ranks and [list(r) for r in t.top_tokens] == tops
        outside = [i for i, row in enumerate(t.flags) if "outside_top_k" in row]
        assert outside == [i for i, r in enumerate(ranks) if r == 0]


def test_vllm_prompt_logprobs_against_the_ranks_given(monkeypatch):
    rng = random.Random(6)
    rows, ids, expected_tops = [None], [_ids(" the")], [[]]
    for (word, lp), alts in _positions(200, 3, seed=6):
        rank = next((r for r, (w, _) in enumerate(alts, 1) if w == word), rng.randrange(4, 50))
        row = {str(_ids(word)): {"logprob": lp, "rank": rank, "decoded_token": word}}
        for r, (w, v) in enumerate(alts, 1):
            row.setdefault(str(_ids(w)), {"logprob": v, "rank": r, "decoded_token": w})
        rows.append(row)
        ids.append(_ids(word))
        expected_tops.append([w for w, _ in alts])
    body = {"id": "cmpl-0123456789abcdef", "object": "text_completion", "model": "m",
            "choices": [{"index": 0, "text": "", "prompt_logprobs": rows, "prompt_token_ids": ids, "logprobs": None}]}
    t = _both(monkeypatch, vllm_prompt, "prompt_columns", lambda: lv.from_openai(json.dumps(body)))
    given = [0] + [row[str(i)]["rank"] for row, i in zip(rows[1:], ids[1:], strict=True)]
    assert t.ranks.tolist() == given and [list(r) for r in t.top_tokens] == expected_tops
    assert [i for i, row in enumerate(t.flags) if "outside_top_k" in row] == [i for i, r in enumerate(given) if r > 3]


@pytest.mark.parametrize("odd", [None, "token_id:7", "bytes:\\xe2\\x80", "\ud83e"])
def test_strings_resolved_at_once_are_what_each_resolves_to_alone(odd):
    """The assembler's bulk path for plain decoded strings (`assemble._plain_texts`) against `resolve`
    on each string; a placeholder, a legacy bytes: string or a lone surrogate sends all of them the
    per-string way, which must give the same as well."""
    from logprob_viz.sources.readers.assemble import _interned, resolve
    from logprob_viz.sources.readers.columns import Columns

    strings = [" the", "", "\ufffd", "a\x00", " é🙂", "\n", "x\ufffdy"] + ([odd] if odd else [])
    codes = np.arange(len(strings))
    n = len(strings)
    c = Columns(list(strings), np.full(n, -0.5), strings=strings, codes=codes, alt_codes=codes[::-1].copy(),
                counts=np.ones(n, np.int64), alt_lp=np.full(n, -1.0))
    texts, data, ids, alt_texts, _, flagged = _interned(c, "decoded")
    alone = [resolve(s, None, -1, "decoded", None) for s in strings]
    assert texts == [a[2] for a in alone] and alt_texts == [a[2] for a in alone][::-1]
    assert data == [b"" if a[1] is None else a[1] for a in alone] and ids == [a[0] for a in alone]
    assert dict(flagged) == {i: a[3] for i, a in enumerate(alone) if a[3]}
    assert dict(flagged)[1] == ("no_bytes",) and dict(flagged)[2] == ("replacement_char",)
