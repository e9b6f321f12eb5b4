"""The explorer's controls: prompt, sampling settings, the buttons and the status line (ipywidgets).

Plain ipywidgets, so they render in JupyterLab, Notebook 7 and VS Code alike. They show the app's
state (`state.py`): the settings widgets and ``state.settings`` follow each other both ways, the
status line draws ``state.status``, the buttons follow ``state.running``; the app (`app.py`) wires
the buttons to its actions. Nothing here touches a model.
"""

from __future__ import annotations

import html

import ipywidgets as w

from .engine_choice import checked_engine
from .kernel_note import NO_KERNEL_NOTE, KernelNote
from .layout import HELP_HTML, KEYS_TEXT, STYLE
from .sampling_settings import MIN_TOP_LOGPROBS, SETTING_NAMES, Settings, has_chat_template
from .state import ExplorerState

__all__ = ["Controls", "NO_KERNEL_NOTE"]

_LABEL = {"description_width": "initial"}


def _slider(value: float, low: float, high: float, description: str, **options) -> w.FloatSlider:
    """A sampling setting's slider: steps of 0.05, shown with two decimals (temperature, top-p)."""
    return w.FloatSlider(value=value, min=low, max=high, step=0.05, description=description, style=_LABEL,
                         readout_format=".2f", **options)


class Controls:
    """The widgets of the explorer's top bar, showing `state` (an `ExplorerState`). ``settings()``
    reads them into a `Settings`, which they keep in ``state.settings``.

    Their limits are the runner's they drive: the top_logprobs box goes up to what the runner can
    record (``runner.capabilities.max_top_logprobs``), so it never offers more than Generate can ask for, and
    the chat toggle is off without a chat template. Starting settings beyond them are refused.
    """

    def __init__(self, prompt: str, settings: Settings, runner, state: ExplorerState | None = None) -> None:
        # (the most alternatives, whose limit that is): Settings.check's arguments for this runner
        self.top_logprobs_limit = (int(runner.capabilities.max_top_logprobs), runner.capabilities.top_logprobs_limit)
        settings.check(*self.top_logprobs_limit)
        chat_available = has_chat_template(runner)
        self.prompt = w.Textarea(
            value=prompt,
            placeholder="Type a prompt, then Generate (or Next token to choose tokens yourself)",
            layout=w.Layout(width="100%", height="3.4em"),  # two lines: the text below stays in sight
        )
        self.chat = w.Checkbox(
            value=settings.chat and chat_available,
            description="chat messages",
            indent=False,
            disabled=not chat_available,
            tooltip="wrap the prompt as [{'role': 'user', 'content': prompt}] with the model's chat template",
            layout=w.Layout(width="auto", margin="0 0 0 1em"),
        )
        self._sampling_controls(settings, runner)
        self._length_controls(settings, self.top_logprobs_limit[0])
        self._buttons()
        self.state = state if state is not None else ExplorerState(settings=settings)  # (alone: its own)
        self.status = w.HTML(value=_status_html(self.state.status[1], self.state.status[0]))
        self.status.add_class("lv-explore-statusbox")
        # Shown only when no kernel answers it: a saved copy reopened without one says why its buttons do nothing.
        self.note = KernelNote(NO_KERNEL_NOTE)
        # The sliders are drawn by the view, in its column above the chart (ExplorerView.sampling, linked
        # to these by the app); the rest of the settings sit behind "more", the keys behind "?".
        self.more = w.ToggleButton(description="more", icon="ellipsis-h", layout=w.Layout(width="auto"),
                                   tooltip="top-k, seed, max new tokens, top_logprobs, chat, branch with a typed "
                                           "token, and the tree's tools")
        self.help = w.ToggleButton(description="?", layout=w.Layout(width="auto"), tooltip=KEYS_TEXT)
        self.settings_row = w.HBox([self.top_k, self.seed, self.max_new_tokens, self.top_logprobs, self.chat],
                                   layout=w.Layout(flex_flow="row wrap", align_items="center"))
        self.more_box = w.VBox([self.settings_row], layout=w.Layout(display="none"))
        self.more_box.add_class("lv-explore-pop")
        self.help_box = w.HTML(HELP_HTML, layout=w.Layout(display="none"))
        self.help_box.add_class("lv-explore-pop")
        self.more.observe(lambda change: self._pop(self.more_box, change["new"], self.help), names="value")
        self.help.observe(lambda change: self._pop(self.help_box, change["new"], self.more), names="value")
        bar = w.HBox([self.generate, self.next_token, self.stop, self.status, self.more, self.help],
                     layout=w.Layout(align_items="center", width="100%"))
        bar.add_class("lv-explore-bar")
        self.box = w.VBox([w.HTML(STYLE, layout=w.Layout(display="none")), w.HBox([self.prompt]), bar,
                           self.more_box, self.help_box, self.note])
        self.box.add_class("lv-explore-head")
        self._bind_state()

    def _bind_state(self) -> None:
        """The widgets and the state follow each other: settings both ways, the status and buttons from it."""
        state, self._syncing = self.state, False
        state.settings = self.settings()
        for name in SETTING_NAMES:  # (a widget per setting, of the same name)
            getattr(self, name).observe(lambda _: self._to_state(), names="value")
        state.observe(lambda change: self._from_state(change["new"]), names="settings")
        state.observe(lambda change: self._show_status(*change["new"]), names="status")
        state.observe(lambda change: self._show_running(change["new"] is not None), names="running")

    def _to_state(self) -> None:
        if not self._syncing:
            self.state.settings = self.settings()

    def _from_state(self, settings: Settings) -> None:
        self._syncing = True  # (setting one widget must not write the others' old values back)
        try:
            for name in SETTING_NAMES:
                value = getattr(settings, name)
                getattr(self, name).value = bool(value) and not self.chat.disabled if name == "chat" else value
        finally:
            self._syncing = False
        self._to_state()  # what the widgets hold (a bounded one clamps): the state says the same

    @staticmethod
    def _pop(box, shown: bool, other: w.ToggleButton) -> None:
        """Open or close a popover (over what is below it: opening it moves nothing); one at a time."""
        box.layout.display = "flex" if shown else "none"
        if shown:
            other.value = False

    def _sampling_controls(self, settings: Settings, runner) -> None:
        self.temperature = _slider(settings.temperature, 0.0, 2.0, "temperature", tooltip="0 is greedy",
                                   continuous_update=True)
        self.top_p = _slider(settings.top_p, 0.05, 1.0, "top-p")
        # min-p: keep the tokens at least min_p times as likely as the most likely one. Only a runner
        # that applies it gets it; a server runner would ignore it, so its slider is off and says why.
        applies = bool(getattr(getattr(runner, "capabilities", None), "applies_min_p", False))
        if settings.min_p > 0 and not applies:
            raise ValueError(f"min_p={settings.min_p} was given, but {type(runner).__name__} does not send min_p to "
                             "its server (it would be ignored): leave min_p out, or use lv.load() to run the model")
        self.min_p = w.FloatSlider(
            value=settings.min_p, min=0.0, max=1.0, step=0.01, description="min-p", style=_LABEL, readout_format=".2f",
            disabled=not applies,
            tooltip=("keep tokens with p >= min-p x p(most likely); 0 is off" if applies else
                     f"min-p is off: {type(runner).__name__} does not send min_p to its server, so it would be "
                     "ignored; lv.load() runs the model here and applies it"),
        )
        self.top_k = w.BoundedIntText(
            value=settings.top_k, min=0, max=1_000_000, description="top-k", style=_LABEL, layout=w.Layout(width="9em")
        )
        self.seed = w.IntText(value=settings.seed, description="seed", style=_LABEL, layout=w.Layout(width="9em"))

    def _length_controls(self, settings: Settings, max_top_logprobs: int) -> None:
        self.max_new_tokens = w.BoundedIntText(
            value=settings.max_new_tokens,
            min=1,
            max=100_000,
            description="max new tokens",
            style=_LABEL,
            layout=w.Layout(width="13em"),
        )
        self.top_logprobs = w.BoundedIntText(
            value=settings.top_logprobs,
            min=MIN_TOP_LOGPROBS,
            max=max_top_logprobs,
            description="top_logprobs",
            tooltip=f"alternatives per token: {MIN_TOP_LOGPROBS} to {max_top_logprobs} (what the runner can record)",
            style=_LABEL,
            layout=w.Layout(width="12em"),
        )

    def _buttons(self) -> None:
        self.generate = w.Button(
            description="Generate",
            button_style="primary",
            icon="play",
            tooltip="generate from the prompt, streaming the tokens into the view (Ctrl+Enter in the prompt)",
            layout=w.Layout(width="auto", flex="0 0 auto"),
        )
        self.next_token = w.Button(
            description="Next token",
            icon="step-forward",
            tooltip="show the next token's distribution beside the text, then choose the token yourself (n)",
            layout=w.Layout(width="auto", flex="0 0 auto"),
        )
        self.stop = w.Button(
            description="Stop", icon="stop", disabled=True, tooltip="stop generating; keeps what was generated (s)",
            layout=w.Layout(width="auto", flex="0 0 auto"),
        )

    def settings(self) -> Settings:
        return Settings(
            temperature=float(self.temperature.value),
            top_p=float(self.top_p.value),
            top_k=int(self.top_k.value),
            min_p=float(self.min_p.value),
            max_new_tokens=int(self.max_new_tokens.value),
            top_logprobs=int(self.top_logprobs.value),
            seed=int(self.seed.value),
            chat=bool(self.chat.value),
        )

    def checked_settings(self) -> Settings:
        """The settings, checked against the runner's limits (ValueError says which is out of range)."""
        settings = self.settings()
        settings.check(*self.top_logprobs_limit)
        return settings

    def job_input(self) -> dict:
        """The prompt box as a runner's arguments: a prompt, or a user message when "chat messages" is on."""
        text = self.prompt.value
        if not text.strip():
            raise ValueError("the prompt is empty: type some text to start from")
        if self.chat.value:
            return {"messages": [{"role": "user", "content": text}]}
        return {"prompt": text}

    def _show_running(self, busy: bool) -> None:
        """Buttons while a job runs: only Stop is pressable."""
        self.generate.disabled = busy
        self.next_token.disabled = busy
        self.stop.disabled = not busy

    def _show_status(self, kind: str, message: str) -> None:
        """The status line shows `message`; kind "error" shows it as an error."""
        self.status.value = _status_html(message, kind)


_COLOURS = {"info": "inherit", "note": "var(--jp-ui-font-color2, #666)", "error": "var(--jp-error-color1, #c62828)"}


def _status_html(message: str, kind: str) -> str:
    # The message can hold token text or an exception's words: escaped, never markup.
    colour = _COLOURS.get(kind, "inherit")
    role = ' role="alert"' if kind == "error" else ""
    text = html.escape(message)
    return (f'<div class="lv-explore-status lv-explore-{kind}"{role} style="color:{colour}" '
            f'title="{text}">{text}</div>')


def checked_arguments(prompt, engine, settings: dict) -> tuple[Settings, str | None]:
    """`lv.explore(prompt, engine=, **settings)` checked: the settings, and the engine (None: the runner's)."""
    if prompt is not None and not isinstance(prompt, str):
        raise TypeError(f"the prompt must be a str, got {type(prompt).__name__}")
    return settings_from(settings), None if engine is None else checked_engine(engine)


def settings_from(kwargs: dict) -> Settings:
    """`lv.explore(**settings)` as a Settings; an unknown name is a TypeError listing the known ones."""
    unknown = sorted(set(kwargs) - set(SETTING_NAMES))
    if unknown:
        raise TypeError(f"lv.explore() got unknown settings {unknown}; the settings are {', '.join(SETTING_NAMES)}")
    settings = Settings(**kwargs)
    settings.check()
    return settings


SAMPLING_SLIDERS = ("temperature", "top_p", "min_p")  # drawn by the view (ExplorerView.sampling)


def link_sampling(controls: Controls, view) -> None:
    """Keep the view's `sampling` trait (its sliders, js/logprob/explorer_side.js) and the controls'
    sliders equal, both ways; the controls' limits hold (a FloatSlider clamps what it is given)."""

    def to_view(_=None) -> None:
        values = {name: float(getattr(controls, name).value) for name in SAMPLING_SLIDERS}
        values["min_p_off"] = controls.min_p.tooltip if controls.min_p.disabled else ""
        view.sampling = values

    def from_view(change) -> None:
        for name in SAMPLING_SLIDERS:
            value = change["new"].get(name)
            slider = getattr(controls, name)
            if isinstance(value, (int, float)) and float(value) != slider.value:
                slider.value = float(value)
        to_view()  # (a clamped value goes back to the view as the control holds it)

    for name in SAMPLING_SLIDERS:
        getattr(controls, name).observe(to_view, names="value")
    view.observe(from_view, names="sampling")
    to_view()
