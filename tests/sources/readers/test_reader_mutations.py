"""Malformed input never crashes the readers: a trace, or one documented error with a field path.

Mutations of real recorded responses (tests/fixtures/vllm/*.json, the seed response, and the
documented server fixtures in tests/fixtures/servers/ and tests/fixtures/llamacpp/): deleted
keys, values of the wrong type, truncated and extended lists, NaN / huge / positive numbers,
cut JSON text, garbled stream lines. Every outcome must be a `Trace` (or a list of them) whose
logprobs are valid, or `LogprobFormatError` / `ServerError`; anything else fails the
test with the mutation described. The mutations are generated from a fixed seed, so a failure
reproduces.
"""

from __future__ import annotations

import copy
import json
import math
import random

import numpy as np
import pytest

import logprob_viz as lv
import paths
from logprob_viz.sources.errors import LogprobFormatError, ServerError
from logprob_viz.sources.readers.inputs import parse_ndjson, parse_sse

FIXTURES = paths.FIXTURES
PER_SOURCE = 90  # structural mutations per response, plus text cuts and stream garbling


def sources() -> list[tuple[str, str]]:
    """(name, response text) of every real or documented response the readers must read."""
    out = [("seed", (FIXTURES / "seed_vllm_completion_mpt7b.json").read_text(encoding="utf-8"))]
    for path in sorted((FIXTURES / "vllm").glob("*.json")):
        out.append((f"vllm/{path.stem}", json.loads(path.read_text(encoding="utf-8"))["body"]))
    for folder in ("servers", "llamacpp"):
        for path in sorted((FIXTURES / folder).glob("*.json")):
            record = json.loads(path.read_text(encoding="utf-8"))
            body = record.get("body", record) if isinstance(record, dict) else record
            out.append((f"{folder}/{path.stem}", body if isinstance(body, str) else json.dumps(body)))
    return out


def reader():
    from logprob_viz.sources.readers import read  # lv.read once the public API maps it

    return getattr(lv, "read", read)


def paths(node, prefix=()):
    """Every (path, value) in a JSON tree."""
    yield prefix, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from paths(value, prefix + (i,))


def replaced(tree, path, make):
    """A deep copy of tree with the value at path replaced by make(old); make returns _DELETE to delete."""
    tree = copy.deepcopy(tree)
    parent = tree
    for step in path[:-1]:
        parent = parent[step]
    old = parent[path[-1]]
    new = make(old)
    if new is _DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return tree


_DELETE = object()
# Huge integers too: a token id of 2**40 once overflowed the trace's int32 arrays (OverflowError),
# and an integer beyond float range (10**400, valid JSON) cannot become a logprob.
HUGE = [2**40, -(2**40), 2**63, 10**400]
WRONG = ["x", 1.5, True, None, [], {}, -1, [1, "a"], {"a": 1}, *HUGE]
BAD_NUMBERS = [math.nan, 5.0, 1e308, math.inf, -math.inf, 1e-3, True, -1e308, *HUGE]


def structural(tree, rng: random.Random, n: int):
    """n (description, mutated tree) pairs."""
    every = [(p, v) for p, v in paths(tree) if p]
    numbers = [(p, v) for p, v in every if isinstance(v, (int, float)) and not isinstance(v, bool)]
    lists = [(p, v) for p, v in every if isinstance(v, list) and v]
    keyed = [(p, v) for p, v in every if isinstance(p[-1], str)]
    out = []
    for m in range(n):
        kind = m % 5
        if kind == 0 and keyed:
            path, _ = rng.choice(keyed)
            out.append((f"delete {path}", replaced(tree, path, lambda old: _DELETE)))
        elif kind == 1 and every:
            path, _ = rng.choice(every)
            value = rng.choice(WRONG)
            out.append((f"set {path} = {value!r}", replaced(tree, path, lambda old, v=value: copy.deepcopy(v))))
        elif kind == 2 and lists:
            path, value = rng.choice(lists)
            cut = rng.randrange(len(value))
            out.append((f"truncate {path} to {cut}", replaced(tree, path, lambda old, c=cut: old[:c])))
        elif kind == 3 and lists:
            path, value = rng.choice(lists)
            extra = rng.choice([copy.deepcopy(value[-1]), "x", None, 0.5, {"token": 3}])
            out.append((f"append {extra!r} to {path}", replaced(tree, path, lambda old, e=extra: old + [e])))
        elif numbers:
            path, _ = rng.choice(numbers)
            value = rng.choice(BAD_NUMBERS)
            out.append((f"set number {path} = {value!r}", replaced(tree, path, lambda old, v=value: v)))
    return out


def textual(name: str, text: str, rng: random.Random):
    """Cut texts and garbled stream lines."""
    out = []
    for _ in range(8):
        cut = rng.randrange(1, max(2, len(text)))
        out.append((f"cut the text at {cut}", text[:cut]))
    lines = text.split("\n")
    if len(lines) > 2:
        for _ in range(8):
            i = rng.randrange(len(lines))
            garbled = list(lines)
            garbled[i] = rng.choice([
                "data: {not json", "data: [1, 2", "data:", "{\"choices\": 3}", "garbage \x00\x01",
                garbled[i][: len(garbled[i]) // 2], "data: null", "data: 12",
            ])
            out.append((f"garble line {i}", "\n".join(garbled)))
    return out


def events_of(text: str):
    stripped = text.strip()
    if stripped.startswith("data:") or "\ndata:" in stripped:
        return "sse", parse_sse(stripped)
    try:
        return "json", json.loads(stripped)
    except json.JSONDecodeError:
        return "ndjson", parse_ndjson(stripped)


def text_of(kind: str, tree) -> str:
    if kind == "sse":
        return "".join(f"data: {json.dumps(e)}\n\n" for e in tree) + "data: [DONE]\n\n"
    if kind == "ndjson":
        return "".join(json.dumps(e) + "\n" for e in tree)
    return json.dumps(tree)


def check_outcome(read, description: str, given) -> str:
    """'trace' or 'error'; fails the test on any other exception or an invalid trace."""
    try:
        result = read(given)
    except (LogprobFormatError, ServerError) as e:
        assert str(e), description
        return "error"
    except Exception as e:  # noqa: BLE001  (the point of the test: no other exception type)
        pytest.fail(f"{description}: {type(e).__name__}: {e}")
    traces = result if isinstance(result, list) else [result]
    assert traces and all(isinstance(t, lv.Trace) for t in traces), description
    for t in traces:
        known = t.logprobs[~np.isnan(t.logprobs)]
        assert (known <= 1e-4).all(), f"{description}: accepted a positive logprob {known.max()}"
        tops = t.top_logprobs[np.isfinite(t.top_logprobs)]
        assert (tops <= 1e-4).all(), f"{description}: accepted a positive alternative logprob"
    return "trace"


def run_mutations(read, name: str, text: str, seed: int) -> dict:
    rng = random.Random(seed)
    counts = {"trace": 0, "error": 0}
    kind, tree = events_of(text)
    for description, mutated in structural(tree, rng, PER_SOURCE):
        # half as parsed objects, half as text (NaN goes through as JSON's NaN literal)
        given = mutated if rng.random() < 0.5 else text_of(kind, mutated)
        counts[check_outcome(read, f"{name}: {description}", given)] += 1
    for description, mutated in textual(name, text, rng):
        counts[check_outcome(read, f"{name}: {description}", mutated)] += 1
    return counts


def test_mutated_openai_compatible_responses_give_a_trace_or_a_documented_error():
    totals = {"trace": 0, "error": 0}
    names = [s for s in sources() if s[0] == "seed" or s[0].startswith("vllm/")]
    for seed, (name, text) in enumerate(names):
        for key, value in run_mutations(lv.from_openai, name, text, seed).items():
            totals[key] += value
    print(f"from_openai: {sum(totals.values())} mutations of {len(names)} responses -> {totals}")
    assert sum(totals.values()) >= 1000 and totals["trace"] > 0 and totals["error"] > 0


def test_positive_nan_and_boolean_logprobs_are_rejected_with_the_field_path():
    data = json.loads((FIXTURES / "seed_vllm_completion_mpt7b.json").read_text(encoding="utf-8"))
    for value, words in ((5.0, "got 5.0"), (math.nan, "got nan"), (True, "got a boolean")):
        bad = copy.deepcopy(data)
        bad["choices"][0]["logprobs"]["token_logprobs"][3] = value
        with pytest.raises(LogprobFormatError, match=r"choices\[0\]\.logprobs\.token_logprobs\[3\]: .*" + words):
            lv.from_openai(bad)
    bad = copy.deepcopy(data)
    bad["choices"][0]["logprobs"]["top_logprobs"][4] = "oops"
    with pytest.raises(LogprobFormatError) as err:
        lv.from_openai(bad)
    assert str(err.value) == (
        "choices[0].logprobs.top_logprobs[4]: expected an object of token -> logprob, got str 'oops'")
    # the documented sentinel is not an error: -9999 is minus infinity
    ok = copy.deepcopy(data)
    ok["choices"][0]["logprobs"]["token_logprobs"][3] = -9999.0
    assert lv.from_openai(ok).logprobs[3] == -np.inf


def test_mutated_responses_of_every_server_give_lv_read_a_trace_or_a_documented_error():
    read = reader()
    totals = {"trace": 0, "error": 0}
    every = sources()
    servers = [name for name, _ in every if name.startswith(("servers/", "llamacpp/"))]
    for seed, (name, text) in enumerate(every, start=1000):
        for key, value in run_mutations(read, name, text, seed).items():
            totals[key] += value
    print(f"lv.read: {sum(totals.values())} mutations of {len(every)} responses ({len(servers)} non-vLLM) -> {totals}")
    assert len(servers) >= 14 and sum(totals.values()) >= 1000 and totals["trace"] > 0 and totals["error"] > 0


# -- every field, every wrong kind of value -------------------------------------------------------

EVERY_WRONG = [None, "x", True, 1.5, -1, 0, *HUGE, math.nan, math.inf, -math.inf, [], {}, [1, "a"], {"a": 1}]


def shape_paths(tree, prefix=()):
    """Every path of a JSON tree, lists visited at their first and last element only: each field
    of each kind of object once (a response repeats the same token object hundreds of times)."""
    yield prefix
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from shape_paths(value, prefix + (key,))
    elif isinstance(tree, list):
        for i in sorted({0, len(tree) - 1}) if tree else ():
            yield from shape_paths(tree[i], prefix + (i,))


def test_every_field_of_every_server_fixture_set_to_every_wrong_kind_of_value():
    """Exhaustive where the random mutations sample: each field of each object kind, each wrong value."""
    read = reader()
    totals = {"trace": 0, "error": 0}
    for name, text in sources():
        if not name.startswith("servers/"):
            continue
        kind, tree = events_of(text)
        for path in [p for p in shape_paths(tree) if p]:
            for value in EVERY_WRONG:
                mutated = replaced(tree, path, lambda old, v=value: copy.deepcopy(v))
                counts = check_outcome(read, f"{name}: set {path} = {value!r}", mutated)
                totals[counts] += 1
    print(f"lv.read, every field x {len(EVERY_WRONG)} values: {totals}")
    assert totals["trace"] > 0 and totals["error"] > 0 and sum(totals.values()) > 5000


# (fixture, path of a token id in its body): one per format that carries ids
ID_PATHS = [
    ("tgi_generate", ("details", "tokens", 2, "id")),
    ("tgi_generate", ("details", "prefill", 1, "id")),
    ("tgi_generate_top_tokens", ("details", "top_tokens", 0, 1, "id")),
    ("llamacpp_completion", ("completion_probabilities", 1, "id")),
    ("llamacpp_completion", ("completion_probabilities", 0, "top_logprobs", 1, "id")),
    ("sglang_generate", ("meta_info", "output_token_logprobs", 0, 1)),
    ("gemini_generate_content", ("candidates", 0, "logprobsResult", "chosenCandidates", 0, "tokenId")),
]


@pytest.mark.parametrize("name, path", ID_PATHS, ids=[f"{n}:{p[-2]}" for n, p in ID_PATHS])
@pytest.mark.parametrize("token_id", [2**31, 2**40, 2**63])
def test_a_token_id_beyond_int32_is_a_format_error_not_an_overflow(name, path, token_id):
    body = json.loads((FIXTURES / "servers" / f"{name}.json").read_text(encoding="utf-8"))["body"]
    parent = body
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = token_id  # set, or added where the fixture has no id there (Gemini's tokenId)
    for given in (body, json.dumps(body)):
        with pytest.raises(LogprobFormatError, match=rf"token id is out of range .*: {token_id} "):
            reader()(given)


def test_the_same_ids_within_int32_read():
    """The check above refuses only what cannot be an id: the largest int32 id is still read."""
    body = json.loads((FIXTURES / "servers" / "llamacpp_completion.json").read_text(encoding="utf-8"))["body"]
    t = reader()(replaced(body, ("completion_probabilities", 1, "id"), lambda old: 2**31 - 1))
    assert t.token_ids[1] == 2**31 - 1


@pytest.mark.parametrize("field, value, error, words", [
    ("token_ids", [2**40], ValueError, "token_ids holds an integer outside"),
    ("ranks", [2**63], ValueError, "ranks holds an integer outside"),
    ("token_ids", ["a"], ValueError, "token_ids must hold numbers"),
    ("logprobs", ["x"], ValueError, "logprobs must hold numbers"),
    ("logprobs", [{}], TypeError, "logprobs must hold numbers"),
])
def test_a_trace_built_directly_names_the_field_that_does_not_fit(field, value, error, words):
    with pytest.raises(error, match=words):
        lv.Trace(tokens=["a"], **{field: value})
