"""The explorer's one action table: the view's messages, the keys it passes on and the marimo panel's
presses read into the same (action, arguments), without a model."""

from __future__ import annotations

from logprob_viz.views.explorer.actions import KEYS, PRESSES, from_panel, from_view, run


def test_the_view_s_messages_and_keys_name_actions_of_the_table():
    assert from_view({"event": "key", "action": "next"}) == ("next_token", ())
    assert from_view({"event": "key", "action": "unknown"}) is None
    assert from_view({"event": "choose", "token_id": 7}) == ("choose", (7,))
    assert from_view({"event": "choose", "token_id": "7"}) is None  # not a token id
    assert from_view({"event": "next_close"}) == ("close_next", ())
    assert from_view({"event": "next_typed", "text": " the"}) == ("token_p", (" the",))
    assert from_view({"event": "alternative", "at": 4, "token_id": 9, "token": "x"}) == ("alternative", (4, 9))
    assert from_view({"event": "alternative", "at": 4, "token_id": -1, "token": "x"}) == ("alternative", (4, "x"))
    assert from_view(["not", "a", "dict"]) is None and from_view({"event": "other"}) is None


def test_the_panel_s_presses_name_actions_of_the_table():
    assert [from_panel({"type": "press", "name": name}) for name in PRESSES] == [(name, ()) for name in PRESSES]
    assert from_panel({"type": "press", "name": "choose", "token_id": 3}) == ("choose", (3,))
    assert from_panel({"type": "press", "name": "delete"}) is None  # not one of the panel's buttons
    assert from_panel({"type": "other", "name": "generate"}) is None


def test_run_calls_the_named_action_with_its_arguments():
    called = []
    actions = {name: (lambda *args, name=name: called.append((name, args))) for name in {*KEYS.values(), "choose"}}
    run(actions, from_view({"event": "key", "action": "undo"}))
    run(actions, from_panel({"type": "press", "name": "choose", "token_id": 5}))
    run(actions, None)
    assert called == [("undo", ()), ("choose", (5,))]
