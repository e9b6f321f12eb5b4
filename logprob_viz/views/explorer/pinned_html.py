"""The pinned-token panel as HTML: the p(model) → p(settings) table and the band of each setting.

Token text is data: every piece goes through `html.escape` (after `visible`, which marks
whitespace), never into markup. The exact values ride along in data- attributes, for tests and for
anyone reading the page.
"""

from __future__ import annotations

import html

import numpy as np

from ...records.sampling import Band
from ...records.trace import Trace
from ..toolkit import percent
from .engine_choice import ENGINE_NAMES
from .forks import visible

__all__ = ["panel_html", "ranges_html", "waiting_html", "unavailable_html", "STYLE"]

NAMES = {"temperature": "temperature", "top_p": "top-p", "min_p": "min-p"}
SYMBOL = {"temperature": "T", "top_p": "top-p", "min_p": "min-p"}
EDGE = 1e-6  # a temperature boundary this close to 0 is T = 0 itself (greedy), not a number to print
WIDTH, HEIGHT = 300, 26  # the band's drawing, in its own units (it scales to the panel's width)

STYLE = """<style>
.lv-pin { font-size: 14px; line-height: 1.35; color: var(--jp-ui-font-color1, #222); padding: 6px 0; }
.lv-pin-title { margin-bottom: 4px; }
.lv-pin-body { display: flex; flex-wrap: wrap; gap: 10px 28px; align-items: flex-start; }
.lv-pin-numbers { max-width: 440px; }
.lv-pin table { border-collapse: collapse; }
.lv-pin th, .lv-pin td { padding: 1px 8px 1px 0; text-align: right; font-variant-numeric: tabular-nums; }
.lv-pin th:first-child, .lv-pin td:first-child { text-align: left; }
.lv-pin th { font-weight: 600; color: var(--jp-ui-font-color2, #555); }
.lv-pin tr.lv-pin-chosen td { font-weight: 700; }
.lv-pin td.lv-pin-cut { color: var(--jp-ui-font-color3, #888); }
.lv-pin-tok { font-family: var(--jp-code-font-family, monospace); white-space: pre; }
.lv-pin-bands { flex: 1 1 320px; max-width: 460px; }
.lv-pin-band { margin-bottom: 6px; }
.lv-pin-band svg { display: block; width: 100%; height: 26px; }
.lv-pin-band .lv-pin-on { fill: var(--jp-brand-color1, #1976d2); }
.lv-pin-band .lv-pin-only { fill: var(--jp-warn-color1, #e65100); }
.lv-pin-band .lv-pin-off { fill: var(--jp-ui-font-color2, #777); opacity: 0.8; }
.lv-pin-band .lv-pin-now { stroke: var(--jp-ui-font-color0, #000); stroke-width: 2; }
.lv-pin-ends { display: flex; justify-content: space-between; font-size: 12px; color: var(--jp-ui-font-color2, #555); }
.lv-pin-note { color: var(--jp-ui-font-color2, #555); }
.lv-pin-differs { color: var(--jp-warn-color0, #b26b00); font-weight: 600; }
</style>"""





def _title(trace: Trace, at: int) -> str:
    # numbered from 1, as the chart, the tree and the status line number tokens
    return (f"<div class='lv-pin-title'><b>Pinned token {at + 1}</b> "
            f"<span class='lv-pin-tok'>{html.escape(visible(trace.tokens[at]))}</span>")


def waiting_html(trace: Trace, at: int) -> str:
    return (f"{STYLE}<div class='lv-pin' data-state='waiting' data-at='{at}'>{_title(trace, at)}: "
            "computing its exact numbers (one forward pass over the whole vocabulary)…</div></div>")


def unavailable_html(trace: Trace, at: int, why: str) -> str:
    return (f"{STYLE}<div class='lv-pin' data-state='unavailable' data-at='{at}'>{_title(trace, at)}</div>"
            f"<div class='lv-pin-note'>{html.escape(why)}.</div></div>")


def settings_words(settings) -> str:
    if settings.temperature <= 0:
        return "T = 0 (greedy)"
    words = [f"T = {settings.temperature:.2f}"]
    if settings.top_k > 0:
        words.append(f"top-k {settings.top_k}")
    if settings.top_p < 1:
        words.append(f"top-p {settings.top_p:.2f}")
    if settings.min_p > 0:
        words.append(f"min-p {settings.min_p:.2f}")
    return ", ".join(words)


def panel_html(trace: Trace, at: int, numbers: dict) -> str:
    """The whole panel for `numbers` (see `pinned.numbers_at`)."""
    s = numbers["settings"]
    engine = numbers.get("engine", "transformers")
    label = html.escape(settings_words(s) + ("" if engine == "transformers" else f" as in {ENGINE_NAMES[engine]}"))
    rows = []
    for row in numbers["rows"]:
        cls = " class='lv-pin-chosen'" if row["chosen"] else ""
        cut = " class='lv-pin-cut'" if row["new"] == 0 else ""
        new = "cut off" if row["new"] == 0 else html.escape(percent(row["new"]))
        rows.append(
            f"<tr{cls} data-token-id='{row['id']}' data-p-model='{row['model']!r}' data-p-new='{row['new']!r}'>"
            f"<td><span class='lv-pin-tok'>{html.escape(visible(row['text']))}</span></td><td>{row['rank']}</td>"
            f"<td>{html.escape(percent(row['model']))}</td><td{cut}>{new}</td></tr>"
        )
    table = (f"<table class='lv-pin-table'><tr><th>token</th><th>rank</th><th>p(model)</th>"
             f"<th title='the distribution sampled from under {label}'>p(sampled)</th></tr>{''.join(rows)}</table>")
    kept = (f"<div class='lv-pin-note' data-kept='{numbers['kept']}'>{label} keeps {numbers['kept']:,} of "
            f"{numbers['vocab']:,} tokens. Exact: computed from the whole distribution.</div>")
    if numbers.get("differs"):  # the chosen engine's order keeps another set than transformers' here
        kept += f"<div class='lv-pin-note lv-pin-differs'>{html.escape(numbers['differs'])}.</div>"
    bands = "".join(band_html(b) for b in numbers["bands"].values())
    greedy = ("<div class='lv-pin-note'>T = 0 is greedy: the most likely token is always the one chosen, whatever "
              "top-p and min-p say; raise the temperature to sample.</div>" if s.temperature <= 0 else "")
    return (f"{STYLE}<div class='lv-pin' data-state='exact' data-at='{at}' data-rank='{numbers['rank']}'>"
            f"{_title(trace, at)}: p(model) → p({label})</div>"
            f"<div class='lv-pin-body'><div class='lv-pin-numbers'>{table}{kept}</div>"
            f"<div class='lv-pin-bands'><div class='lv-pin-note'>Where <span class='lv-pin-tok'>"
            f"{html.escape(visible(trace.tokens[at]))}</span> can be sampled, each setting swept with the others as "
            "they are (bars: its probability there; grey: cut off; orange: the only token left):</div>"
            f"{bands}<div class='lv-pin-note lv-pin-likely'>{html.escape(likely_words(numbers))}</div>{greedy}</div>"
            "</div></div>")


def likely_words(numbers: dict) -> str:
    """Where the token is the most likely: temperature, top-p and min-p reorder nothing."""
    rank = numbers["rank"]
    if rank == 1:
        return ("The most likely token at every setting: temperature, top-p and min-p reshape and cut the "
                "distribution but never reorder it.")
    t = numbers["bands"]["temperature"]
    peak = int(np.argmax(t.probs))
    where = ""
    if t.probs[peak]:
        where = f"; its probability is highest near T = {t.values[peak]:.2f} ({percent(t.probs[peak])})"
    return (f"Rank {rank} at every setting, so never the most likely: temperature, top-p and min-p reorder "
            f"nothing{where}.")


def band_words(band: Band) -> str:
    """One setting's band in words, e.g. "sampleable for T ≥ 0.43"."""
    sym, name = SYMBOL[band.setting], NAMES[band.setting]
    every = f"at every {name} from {band.low:g} to {band.high:g}"
    if band.sampleable_from is None:
        words = f"cut off {every}"
    elif band.sampleable_from <= band.low and band.sampleable_to >= band.high:
        words = f"sampleable {every}"
    elif band.setting == "temperature" and band.sampleable_from < EDGE:
        words = "sampleable at every T above 0 (T = 0 is greedy: the most likely token only)"
    elif band.sampleable_from > band.low:
        words = f"sampleable for {sym} {'≥' if band.setting == 'temperature' else '>'} {band.sampleable_from:.3g}"
    else:
        words = f"sampleable for {sym} ≤ {band.sampleable_to:.3g}"
    if band.only_from is None:
        return words
    if band.only_from <= band.low and band.only_to >= band.high:
        return f"{words}; the only token left (sampled for sure) {every}"
    if band.setting == "temperature" and band.only_to < EDGE:
        return f"{words}; the only token left at T = 0 (greedy)"
    if band.only_from > band.low:
        return f"{words}; the only token left (sampled for sure) for {sym} > {band.only_from:.3g}"
    return f"{words}; the only token left (sampled for sure) for {sym} ≤ {band.only_to:.3g}"


def band_html(band: Band) -> str:
    """One setting's band: the token's probability over the range (bars), grey where it is cut off,
    orange where it is the only token left, and a line at the current value."""
    span = band.high - band.low
    step = WIDTH / (len(band.values) - 1)
    top = float(band.probs.max()) or 1.0
    bars = []
    for value, p in zip(band.values, band.probs, strict=True):
        x = (value - band.low) / span * WIDTH - step / 2
        if p <= 0:
            bars.append(f"<rect class='lv-pin-off' x='{x:.2f}' y='{HEIGHT - 4}' width='{step:.2f}' height='4'/>")
            continue
        h = max(3.0, (HEIGHT - 2) * p / top)
        cls = "lv-pin-only" if p >= 1 - 1e-12 else "lv-pin-on"
        bars.append(f"<rect class='{cls}' x='{x:.2f}' y='{HEIGHT - h:.2f}' width='{step:.2f}' height='{h:.2f}'/>")
    now = (min(max(band.current, band.low), band.high) - band.low) / span * WIDTH
    data = " ".join(f"data-{name}='{value!r}'" for name, value in (
        ("sampleable-from", band.sampleable_from), ("sampleable-to", band.sampleable_to),
        ("only-from", band.only_from), ("only-to", band.only_to), ("current", band.current)))
    return (f"<div class='lv-pin-band' data-setting='{band.setting}' {data}>"
            f"<div><b>{NAMES[band.setting]}</b> (now {band.current:.2f}): {html.escape(band_words(band))}</div>"
            f"<svg viewBox='{-step / 2:.2f} 0 {WIDTH + step:.2f} {HEIGHT}' preserveAspectRatio='none' role='img' "
            f"aria-label='{html.escape(band_words(band))}'>{''.join(bars)}"
            f"<line class='lv-pin-now' x1='{now:.2f}' x2='{now:.2f}' y1='0' y2='{HEIGHT}'/></svg>"
            f"<div class='lv-pin-ends'><span>{band.low:g}</span><span>tallest bar: {percent(top)}</span>"
            f"<span>{band.high:g}</span></div></div>")


def _range_words(low: float, high: float) -> str:
    if high == 0:
        return "cut off"
    low_text, high_text = percent(low), percent(high)
    return low_text if low_text == high_text else f"{low_text} – {high_text}"  # one number: exact to the digit shown


def ranges_html(trace: Trace, at: int, numbers: dict) -> str:
    """The panel for a server's trace (see `pinned.ranges_at`): p(model) and a certain range under the
    settings per alternative (in the chosen engine's order), and why it is a range."""
    engine = numbers.get("engine", "transformers")
    label = html.escape(settings_words(numbers["settings"]) + ("" if engine == "transformers" else
                                                               f" as in {ENGINE_NAMES[engine]}"))
    rows = []
    for row in numbers["rows"]:
        cls = " class='lv-pin-chosen'" if row["chosen"] else ""
        cut = " class='lv-pin-cut'" if row["high"] == 0 else ""
        sampled = html.escape(_range_words(row["low"], row["high"]))
        rows.append(
            f"<tr{cls} data-p-model='{row['model']!r}' data-low='{row['low']!r}' data-high='{row['high']!r}'>"
            f"<td><span class='lv-pin-tok'>{html.escape(visible(row['text']))}</span></td>"
            f"<td>{html.escape(percent(row['model']))}</td><td{cut}>{sampled}</td></tr>"
        )
    table = (f"<table class='lv-pin-table'><tr><th>token</th><th>p(model)</th>"
             f"<th title='the distribution sampled from under {label}'>p(sampled)</th></tr>{''.join(rows)}</table>")
    outside = ("" if numbers["chosen_listed"] else
               f" The chosen token (p {percent(numbers['chosen_p'])}) is not among them: no range for it.")
    note = (f"<div class='lv-pin-note' data-rest='{numbers['rest']!r}'>The server returned the {numbers['known']} most "
            f"likely tokens; the other {html.escape(percent(numbers['rest']))} of the probability lies in tokens it "
            f"did not list, each no more likely than the last of them. How that rest is spread changes the numbers "
            f"under {label}, so each is a range that holds for every spread (a single number where it is exact)."
            f"{html.escape(outside)} lv.load() runs the model here and gives exact numbers and the bands.</div>")
    return (f"{STYLE}<div class='lv-pin' data-state='ranges' data-at='{at}'>{_title(trace, at)}: "
            f"p(model) → p({label})</div><div class='lv-pin-body'><div class='lv-pin-numbers'>{table}{note}</div>"
            "</div></div>")
