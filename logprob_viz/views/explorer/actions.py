"""The explorer's actions in one table: what its buttons, the keys the view passes on, the view's
messages and the marimo panel's presses run.

`action_table(app)` names every action once (name -> the app's method); `from_view` and
`from_panel` read a message into (action name, arguments), so the three ways in dispatch through
the same table and run the same checks (one job at a time, errors in the status line).
"""

from __future__ import annotations

from collections.abc import Callable

from ...records.trace_fields import is_int
from .engine_choice import set_engine

__all__ = ["action_table", "from_view", "from_panel", "run", "KEYS", "PRESSES"]

# The keys the view sends (Ctrl+Enter, n, s, u; layout.KEYS lists them for people): their actions.
KEYS = {"generate": "generate", "next": "next_token", "stop": "stop", "undo": "undo"}
PRESSES = ("generate", "next_token", "stop")  # the marimo panel's buttons (besides a choice, "choose")


def action_table(app) -> dict[str, Callable]:
    """Every action of the explorer `app`, by name."""
    return {
        "generate": app.generate,
        "next_token": app.next_token,
        "stop": app.stop,
        "choose": app.choose,  # (token id)
        "token_p": app.token_p,  # (text)
        "close_next": app.close_next,
        "branch": app.branch,  # (at, token)
        "alternative": app.alternative,  # (at, token): its branch, made now or shown when it exists
        "switch": app.switch,  # (node)
        "rename": app.rename,  # (name)
        "delete": app.delete,
        "undo": app.undo,
        "earlier": lambda: app.show_tree(-1),
        "later": lambda: app.show_tree(1),
        "compare": app.comparing.toggle,
        "engine": lambda engine: set_engine(app.state, engine),  # (name): whose sampler the pinned numbers follow
    }


def from_view(content) -> tuple[str, tuple] | None:
    """The action a message of the view asks for, with its arguments (None: none)."""
    if not isinstance(content, dict):
        return None
    event = content.get("event")
    if event == "key":
        name = KEYS.get(content.get("action"))
        return None if name is None else (name, ())
    if event == "choose" and is_int(content.get("token_id")):
        return "choose", (content["token_id"],)
    if event == "next_close":
        return "close_next", ()
    if event == "engine" and isinstance(content.get("engine"), str):
        return "engine", (content["engine"],)
    if event == "next_typed":
        return "token_p", (content.get("text", ""),)
    if event == "alternative":  # a click on an alternative's bar, or a key on a pinned token
        token_id = content.get("token_id")
        token = token_id if is_int(token_id) and token_id >= 0 else content.get("token")
        return "alternative", (content.get("at"), token)
    return None


def from_panel(content) -> tuple[str, tuple] | None:
    """The action a press in the marimo panel asks for, with its arguments (None: none)."""
    if not isinstance(content, dict) or content.get("type") != "press":
        return None
    name = content.get("name")
    if name == "choose" and is_int(content.get("token_id")):
        return "choose", (content["token_id"],)
    return (name, ()) if name in PRESSES else None


def run(actions: dict[str, Callable], request: tuple[str, tuple] | None) -> None:
    """Run the requested action (if any) from `actions`."""
    if request is not None:
        name, args = request
        actions[name](*args)
