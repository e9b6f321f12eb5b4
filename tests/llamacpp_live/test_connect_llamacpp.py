"""`lv.connect` against the real llama-server (conftest.py): recognised, generating, streaming,
branching and exploring on llama.cpp.

The independent side of every check is a direct HTTP request to the server's native routes
(``/completion``, ``/tokenize``, ``/v1/models``) read with plain json. The server runs with one
slot, where llama.cpp gives identical numbers for the same tokens whatever it did before
(`test_llamacpp_live.test_routes_and_cache_agree_exactly`), so values are compared to 1e-5.
"""

from __future__ import annotations

import json
import math
import threading

import numpy as np
import pytest

import logprob_viz as lv
from llamacpp_live import llamacpp_recordings as recordings

ROBOT = recordings.ROBOT
TOL = 1e-5


def call(url: str, path: str, body: dict | None = None) -> dict:
    if body is None:
        return recordings.get(url, path)
    status, text = recordings.request(url, path, body)
    assert status == 200, text[:500]
    return json.loads(text)


def native_greedy(url: str, prompt, n: int, k: int) -> list[dict]:
    """The server's own greedy continuation of `prompt` (text or ids), with its top-k, from /completion."""
    body = call(url, "/completion", dict(prompt=prompt, n_predict=n, n_probs=k, temperature=0, top_k=0,
                                         return_tokens=True, cache_prompt=False))
    return body["completion_probabilities"]


def served_ids(url: str, text: str, add_special: bool = True) -> list[int]:
    return call(url, "/tokenize", {"content": text, "add_special": add_special})["tokens"]


@pytest.fixture(scope="module")
def server(llamacpp_url):
    return lv.connect(llamacpp_url)


@pytest.fixture(scope="module")
def greedy(server):
    return server.generate(ROBOT, max_new_tokens=12, top_logprobs=4)


def test_recognises_the_server_from_the_root_or_the_v1_url(llamacpp_url, server):
    models = call(llamacpp_url, "/v1/models")["data"]
    assert [m["owned_by"] for m in models] == ["llamacpp"]
    for s in (server, lv.connect(llamacpp_url + "/v1")):
        assert s.server == "llama.cpp" and s.base_url == llamacpp_url + "/v1"
        assert s.model == models[0]["id"] == recordings.MODEL
        assert s.capabilities.vocab_size == models[0]["meta"]["n_vocab"]
        assert s.capabilities.can_continue_from_ids
        assert "llama.cpp" in repr(s)


def test_greedy_generate_is_the_servers_own_greedy_continuation(llamacpp_url, greedy):
    t = greedy
    assert t.meta["server"] == "llama.cpp" and t.meta["base_url"] == llamacpp_url + "/v1"
    assert t.meta["prompt"] == ROBOT and t.meta["do_sample"] is False
    # the prompt: the server's own tokens, with their ids and exact pieces; llama.cpp scores none of them
    ids = served_ids(llamacpp_url, ROBOT)
    assert t.prompt_len == len(ids) and t.token_ids[: t.prompt_len].tolist() == ids
    assert b"".join(t.token_bytes[: t.prompt_len]) == ROBOT.encode()
    assert np.isnan(t.logprobs[: t.prompt_len]).all()
    # the completion: /completion's greedy tokens, requested here directly
    probs = native_greedy(llamacpp_url, ROBOT, 12, 4)
    gen = t[t.prompt_len :]
    assert gen.token_ids.tolist() == [p["id"] for p in probs]
    assert gen.token_bytes == [bytes(p["bytes"]) for p in probs]
    np.testing.assert_allclose(gen.logprobs, [p["logprob"] for p in probs], rtol=0, atol=TOL)
    assert gen.top_ids.tolist() == [[a["id"] for a in p["top_logprobs"]] for p in probs]
    np.testing.assert_allclose(gen.top_logprobs, [[a["logprob"] for a in p["top_logprobs"]] for p in probs],
                               rtol=0, atol=TOL)
    assert (gen.ranks == 1).all() and gen.k == 4


def test_prompt_ids_continue_exactly_and_score_their_last_token(llamacpp_url, server, greedy):
    ids = greedy.token_ids[: greedy.prompt_len + 3].tolist()  # the prompt and three generated tokens
    t = server.generate(prompt_ids=ids, max_new_tokens=5, top_logprobs=4)
    assert t.token_ids[: len(ids)].tolist() == ids and t.prompt_len == len(ids)
    assert t.meta["prompt_ids"] == ids
    # the last id is scored: the same logprob and alternatives it had when it was generated
    last = len(ids) - 1
    assert abs(float(t.logprobs[last]) - float(greedy.logprobs[last])) < TOL
    assert t.top_ids[last].tolist() == greedy.top_ids[last].tolist()
    assert np.isnan(t.logprobs[:last]).all()
    probs = native_greedy(llamacpp_url, ids, 5, 4)
    assert t.token_ids[len(ids) :].tolist() == [p["id"] for p in probs]
    np.testing.assert_allclose(t.logprobs[len(ids) :], [p["logprob"] for p in probs], rtol=0, atol=TOL)


def test_stream_ends_as_generate_and_a_stop_keeps_the_tokens_so_far(server, greedy):
    snapshots = list(server.stream(ROBOT, max_new_tokens=12, top_logprobs=4, stream_every=1))
    assert len(snapshots) > 3  # token by token, not one final trace
    lengths = [len(s) for s in snapshots]
    assert lengths == sorted(lengths) and lengths[0] == greedy.prompt_len
    last = snapshots[-1]
    assert last.token_ids.tolist() == greedy.token_ids.tolist()
    assert last.token_bytes == greedy.token_bytes
    np.testing.assert_allclose(last.logprobs, greedy.logprobs, rtol=0, atol=TOL)  # NaN == NaN here
    stop, seen = threading.Event(), []
    for snapshot in server.stream(ROBOT, max_new_tokens=200, top_logprobs=4, stream_every=1, stop=stop):
        seen.append(snapshot)
        if len(snapshot) - snapshot.prompt_len >= 3:
            stop.set()
    final = seen[-1]
    kept = len(final) - final.prompt_len
    assert 3 <= kept < 200 and final.meta["finish_reason"] == "interrupted"
    n = min(kept, len(greedy) - greedy.prompt_len)
    assert final.token_ids[: final.prompt_len + n].tolist() == greedy.token_ids[: greedy.prompt_len + n].tolist()


def test_sampling_settings_reach_llamas_samplers(server, greedy):
    # top_k=1 keeps only the most likely token: sampling at temperature 1 must give the greedy text
    top1 = server.generate(ROBOT, max_new_tokens=12, top_logprobs=4, temperature=1.0, top_k=1, seed=7)
    assert top1.token_ids.tolist() == greedy.token_ids.tolist()
    assert top1.meta["top_k"] == 1 and top1.meta["seed"] == 7
    a = server.generate(ROBOT, max_new_tokens=16, top_logprobs=4, temperature=1.5, seed=3)
    b = server.generate(ROBOT, max_new_tokens=16, top_logprobs=4, temperature=1.5, seed=3)
    assert a.token_ids.tolist() == b.token_ids.tolist()  # the seed reaches the server
    assert a.token_ids.tolist() != greedy.token_ids.tolist()[: len(a)]  # and it did sample (T=1.5, 16 tokens)
    # every sampled token's logprob is the model's own (n_probs: before the samplers), as the
    # greedy request on the same prefix reports it
    at = a.prompt_len + 4
    probs = native_greedy(server.base_url.removesuffix("/v1"), a.token_ids[:at].tolist(), 1, 100)
    alt = {x["id"]: x["logprob"] for x in probs[0]["top_logprobs"]}
    assert int(a.token_ids[at]) in alt, "the sampled token is among the 100 most likely"
    assert abs(float(a.logprobs[at]) - alt[int(a.token_ids[at])]) < TOL


def test_token_id_is_the_servers(llamacpp_url, server):
    assert server.token_id(" robot") == served_ids(llamacpp_url, " robot", add_special=False)[0]
    with pytest.raises(ValueError, match="not one token"):
        server.token_id(" robots are here")


def test_a_branch_forces_the_alternative_with_the_logprob_it_had(llamacpp_url, server, greedy):
    tree = lv.Tree(greedy, runner=server)
    at = greedy.prompt_len + 2
    alt = int(greedy.top_ids[at][1])  # the model's second choice there
    node = tree.branch(at=at, token=alt, max_new_tokens=6)
    assert node.token_ids[:at].tolist() == greedy.token_ids[:at].tolist() and int(node.token_ids[at]) == alt
    assert abs(float(node.logprobs[at]) - float(greedy.top_logprobs[at][1])) < TOL
    prefix = greedy.token_ids[:at].tolist() + [alt]
    probs = native_greedy(llamacpp_url, prefix, 6, 4)
    assert node.token_ids[at + 1 :].tolist() == [p["id"] for p in probs]
    np.testing.assert_allclose(node.logprobs[at + 1 :], [p["logprob"] for p in probs], rtol=0, atol=TOL)
    # by text: one of the alternatives' strings
    text = greedy.top_tokens[at][2]
    by_text = tree.branch(at=at, token=text, max_new_tokens=1)
    assert int(by_text.token_ids[at]) == int(greedy.top_ids[at][2])


def test_chat_messages_still_go_through_the_openai_route(server):
    chat = server.generate(messages=recordings.HI_CHAT, max_new_tokens=6, top_logprobs=2)
    assert chat[chat.prompt_len :].text.startswith("Hello") and chat.meta["server"] == "llama.cpp"


def test_the_explorer_generates_and_branches_on_the_server(llamacpp_url, server):
    from logprob_viz.views.explorer import explore

    app = explore(ROBOT, runner=server, max_new_tokens=10, top_logprobs=5)
    app.controls.generate.click()
    assert app.wait(300), "Generate did not finish"
    assert app.last_error is None, app.controls.status.value
    root = app.tree.nodes[0]
    assert root.token_ids[: root.prompt_len].tolist() == served_ids(llamacpp_url, ROBOT)
    probs = native_greedy(llamacpp_url, ROBOT, 10, 5)
    assert root.token_ids[root.prompt_len :].tolist() == [p["id"] for p in probs]
    assert "Generated" in app.controls.status.value
    at = root.prompt_len + 2
    alt = int(root.top_ids[at][1])
    app.view.selected = at
    app.branch_here.alternative.value = alt
    app.branch_here.branch.click()
    assert app.wait(300), "Branch did not finish"
    assert app.last_error is None, app.controls.status.value
    node = app.current
    assert len(app.tree.nodes) == 2 and app.view.trace is node
    assert node.token_ids[:at].tolist() == root.token_ids[:at].tolist() and int(node.token_ids[at]) == alt
    assert abs(float(node.logprobs[at]) - float(root.top_logprobs[at][1])) < TOL
    rest = node.token_ids[at + 1 :].tolist()
    expected = [p["id"] for p in native_greedy(llamacpp_url, root.token_ids[:at].tolist() + [alt], len(rest), 5)]
    assert len(rest) > 0 and rest == expected
    assert not math.isnan(float(node.logprobs[-1]))


def test_the_explorer_picks_tokens_by_hand_on_the_server(llamacpp_url, server):
    from logprob_viz.views.explorer import explore

    prompt = "The capital of France is"
    app = explore(prompt, runner=server, top_logprobs=5)
    app.controls.next_token.click()
    assert app.wait(300) and app.last_error is None, app.controls.status.value
    ids = served_ids(llamacpp_url, prompt)
    assert app.view.trace.token_ids.tolist() == ids
    first = native_greedy(llamacpp_url, ids, 1, 5)[0]["top_logprobs"]
    offered = app.next_panel.options
    assert [i for i, _, _ in offered] == [a["id"] for a in first]
    for (_, _, lp), a in zip(offered, first, strict=True):
        assert abs(lp - a["logprob"]) < TOL
    # choosing the second appends it with the server's number for it, and the next distribution follows
    app.choose(int(offered[1][0]))  # what a click on the second choice's row asks the app for
    assert app.wait(300) and app.last_error is None, app.controls.status.value
    grown = app.view.trace
    assert grown.token_ids.tolist() == ids + [first[1]["id"]] and grown.prompt_len == len(ids)
    assert abs(float(grown.logprobs[-1]) - first[1]["logprob"]) < TOL and int(grown.ranks[-1]) == 2
    following = native_greedy(llamacpp_url, ids + [first[1]["id"]], 1, 5)[0]["top_logprobs"]
    assert [i for i, _, _ in app.next_panel.options] == [a["id"] for a in following]
