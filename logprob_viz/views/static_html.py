"""Static HTML (no script) of a comparison and of a lens, for where no widget manager runs their views.

nbconvert's HTML export of a notebook without saved widget state, notebook viewers, and a
notebook opened without a kernel show a notebook output's ``text/html`` instead of the widget.
This is that HTML (`logprob_viz.views.page` adds it to the views' outputs and writes pages of it):
a comparison's header (bits per byte, perplexity) and each row's tokens coloured by probability;
a lens's layers x tokens table, each cell the layer's top guess coloured by the probability it
gave the actual token. Token texts read as in every view (`toolkit.shown`: ``·``, ``↵``, ``[RLO]``),
through ``html.escape``: they are data, not markup.
"""

from __future__ import annotations

import html
import math

import numpy as np

from ..records.tokens import split_groups
from . import toolkit
from .toolkit import palette_color, percent, percent_of_logprob, readable_on

__all__ = ["comparison_html", "lens_html"]

MAX_COLOURED_TOKENS = 20_000  # beyond it the rows are plain text: each coloured token costs ~90 bytes of HTML
MAX_LENS_COLUMNS = 400  # tokens of a lens's table (x layers, ~100 bytes a cell); the rest is said in words


def _viridis(p: float) -> tuple[int, int, int]:
    return palette_color("viridis", p)  # the live view's colour of a probability


def _num(x: float, digits: int) -> str:
    return "–" if not math.isfinite(x) else f"{x:.{digits}f}"


def _part_cells(part) -> str:
    """Bits per byte, perplexity and what they are over; where nothing counts, the reason (as a tooltip)."""
    title = f' title="{html.escape(part.reason)}"' if part.reason else ""
    over = "nothing to compare" if part.reason else f"{part.tokens} tokens, {part.bytes} bytes"
    return (f"<td{title}>{_num(part.bits_per_byte, 4)}</td><td{title}>{_num(part.perplexity, 2)}</td>"
            f"<td{title}>{over}</td>")


def _comparison_header(cmp) -> list[str]:
    aligned, own = cmp.scored("aligned"), cmp.scored("own")
    part = "<th>bits / byte</th><th>perplexity</th><th>over</th>"
    out = ["<table>"]
    if not cmp.same_text:
        out.append(f'<tr><th></th><th colspan="3">own continuation (after the {cmp.shared_bytes} bytes every row '
                   f'shares)</th><th colspan="3">aligned part (the same bytes in every row)</th><th></th></tr>')
    out.append(f"<tr><th>label</th>{part}{'' if cmp.same_text else part}<th>tokens</th></tr>")
    for label, tr in zip(cmp.labels, cmp.traces, strict=True):
        own_cells = "" if cmp.same_text else _part_cells(own[label])
        out.append(f"<tr><td>{html.escape(label)}</td>{own_cells}{_part_cells(aligned[label])}<td>{len(tr)}</td></tr>")
    out.append("</table>")
    reason = next((p.reason for p in aligned.values() if p.reason), "")
    known = aligned[cmp.labels[0]].bytes
    said = (f"Aligned: {reason}" if reason else f"Aligned numbers over the {known} bytes of the spans every row "
            f"has a logprob for (of the first {cmp.shared_bytes}); perplexity over each row's own tokens there.")
    out.append(f"<p>{html.escape(said)}</p>")
    return out


def comparison_html(cmp) -> str:
    """The comparison as a static HTML fragment: header table and one coloured row per trace."""
    colour = sum(len(tr) for tr in cmp.traces) <= MAX_COLOURED_TOKENS
    out = ['<div class="lvc-static" style="font-family: var(--jp-ui-font-family, sans-serif); font-size: 13px">']
    out.extend(_comparison_header(cmp))
    mono = "font-family: var(--jp-code-font-family, monospace); white-space: pre-wrap; overflow-wrap: anywhere"
    for label, tr in zip(cmp.labels, cmp.traces, strict=True):
        out.append(f'<div style="margin-top: 6px"><b>{html.escape(label)}</b><div style="{mono}">')
        if not colour:
            out.append(html.escape(tr.text))
        else:
            shown = list(tr.tokens)
            for start, _, run in split_groups(tr.token_bytes):  # a split character whole, on its last piece
                shown[start : start + len(run)] = run
            for text, lp in zip(shown, tr.logprobs.tolist(), strict=True):
                # as the live row shows it (·, ↵, [RLO]: a bidi control reorders nothing), a newline still breaking
                text = html.escape(toolkit.shown(text)) + "\n" * text.count("\n")
                if math.isnan(lp):
                    out.append(f'<span style="outline: 1px dashed #888">{text}</span>')
                    continue
                rgb = _viridis(math.exp(lp))
                out.append(
                    f'<span style="background: rgb{rgb}; color: {readable_on(rgb)}" '
                    f'title="p {percent_of_logprob(lp)}, logprob {lp:.3f}">{text}</span>'
                )
        out.append("</div></div>")
    if not cmp.same_text:
        where = f"The texts differ from byte {cmp.common_prefix}; the first {cmp.shared_bytes} bytes are aligned."
        out.append(f"<p>{where}</p>")
    out.append("</div>")
    return "".join(out)


def _cell(text: str, p: float, bold: bool) -> str:
    if not math.isfinite(p):
        return f'<td style="outline: 1px dashed #888">{html.escape(text)}</td>'
    rgb = _viridis(p)
    weight = "; font-weight: bold" if bold else ""
    style = f"background: rgb{rgb}; color: {readable_on(rgb)}{weight}"
    return f'<td style="{style}" title="p {percent(p)}">{html.escape(text)}</td>'


def lens_html(lens) -> str:
    """The lens as a static HTML fragment: one row per layer (the last on top), one column per token."""
    n_layers, n = lens.shape
    shown = min(n, MAX_LENS_COLUMNS)
    top1 = lens.top_ids[:, :shown, 0] if lens.k else np.full((n_layers, shown), -1)  # (L, N)
    probs = np.exp(lens.logprobs[:, :shown].astype(np.float64))  # (L, N)
    name = html.escape(str(lens.meta.get("model", "")))
    cell = "font-family: var(--jp-code-font-family, monospace); font-size: 11px; white-space: pre; padding: 0 3px"
    out = [f'<div class="lvl-static" style="font-family: var(--jp-ui-font-family, sans-serif); font-size: 13px">'
           f"<p>{name + ' · ' if name else ''}{n_layers} layers × {n} tokens · colour: probability of the actual "
           f"token at that layer; text: the layer's top guess (bold where it is the actual token)</p>"
           f"<style>.lvl-static td {{{cell}}}</style>",
           '<div style="overflow-x: auto"><table style="border-collapse: collapse">']
    for r in range(n_layers - 1, -1, -1):
        out.append(f"<tr><th>{int(lens.layers[r])}</th>")
        for i in range(shown):
            guess = "" if i == 0 or top1[r, i] < 0 else toolkit.shown(lens.text_of(int(top1[r, i])))
            out.append(_cell(guess, float(probs[r, i]) if i else math.nan, int(lens.ranks[r, i]) == 1))
        out.append("</tr>")
    out.append("<tr><th>token</th>" + "".join(f"<td>{html.escape(toolkit.shown(t))}</td>" for t in lens.tokens[:shown]))
    out.append("</tr></table></div>")
    if n > shown:
        out.append(f"<p>({n - shown} more tokens: the live view shows them all)</p>")
    out.append("</div>")
    return "".join(out)
