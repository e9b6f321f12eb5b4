// Token text in the DOM. Text from the model is only ever inserted with textContent or text
// nodes, never parsed as HTML: a token can be `<script>`. Long traces are built in blocks,
// a few per task, so opening 100,000 tokens never blocks the page; off-screen blocks are not laid
// out (content-visibility), and from WINDOW_FROM tokens on not even in the DOM (block_window.js).

import { h } from "../toolkit/dom.js";
import { BlockWindow } from "./block_window.js";
import { controlGlyph, hexBytes, segments } from "../toolkit/tokens.js";
import { EMPTY_MARK, WHITESPACE_MARKS } from "../toolkit/whitespace.js";

const WS_CLASS = { space: "lv-ws lv-sp", tab: "lv-ws lv-tab", newline: "lv-ws lv-nl", cr: "lv-ws lv-ctrl lv-cr" };

/** A span that shows `glyph` (through CSS, `data-glyph`) in place of `text`, which it keeps. */
function marked(className, glyph, text) {
  const span = h("span", className);
  span.setAttribute("data-glyph", glyph);
  if (text != null) span.appendChild(document.createTextNode(text));
  return span;
}

/**
 * Append `text` to `parent` with whitespace and invisible characters made visible. Each space,
 * tab and newline is a span holding the real character (so copying gives the original text),
 * showing a glyph through CSS. Control, zero-width and bidi characters show a glyph
 * (`\x07`, `[RLO]`) and keep the real character in a hidden span, so it neither draws nor
 * reorders the text around it.
 */
export function appendText(parent, text, segs = segments(text)) {
  if (text === "") {
    parent.appendChild(marked("lv-ws lv-empty", EMPTY_MARK));
    return;
  }
  for (const seg of segs) {
    if (seg.kind === "text") {
      parent.appendChild(document.createTextNode(seg.text));
    } else if (seg.kind === "space" || seg.kind === "tab" || seg.kind === "newline") {
      parent.appendChild(marked(WS_CLASS[seg.kind], WHITESPACE_MARKS[seg.text], seg.text));
    } else {
      // A control character neither draws nor moves the text around it: kept in a hidden span.
      const glyph = seg.kind === "cr" ? WHITESPACE_MARKS["\r"] : controlGlyph(seg.text);
      const span = marked(seg.kind === "cr" ? WS_CLASS.cr : "lv-ws lv-ctrl", glyph);
      span.appendChild(h("span", "lv-raw", seg.text));
      parent.appendChild(span);
    }
  }
}

/**
 * Where blocks end. A block is a box (display: block, so that it can be skipped off screen), and a
 * box ends its line: so a block ends where the text has a line break anyway, after a newline once it
 * has `min` tokens. A paragraph with no newline grows to `max` tokens, then ends at a sentence's
 * end, never mid-sentence; only text without either (no newline, no full stop in 3 × `max` tokens)
 * is cut at 3 × `max`.
 */
export function blockEnds(tokens, min = BLOCK_MIN, max = BLOCK_MAX) {
  const ends = [];
  let start = 0;
  for (let i = 0; i < tokens.length; i++) {
    if (endsBlock(tokens[i], i + 1 - start, min, max)) {
      ends.push(i + 1);
      start = i + 1;
    }
  }
  if (start < tokens.length) ends.push(tokens.length);
  return ends;
}

const BLOCK_MIN = 150;
const BLOCK_MAX = 1500;
const SENTENCE_END = /[.!?\u3002\uff01\uff1f]["'\u201d\u2019)\]]*\s*$/; // . ! ? (and CJK's), closing quotes or brackets
const endsBlock = (token, size, min = BLOCK_MIN, max = BLOCK_MAX) =>
  (size >= min && token.endsWith("\n")) || (size >= max && SENTENCE_END.test(token)) || size >= 3 * max;

/**
 * The text's spans, in blocks (see `blockEnds`), built and removed at the end only: a growing
 * trace adds spans, a stream that resends its last tokens (a character completed) removes them
 * first. With more than one block, each is laid out only while near the view (`observe`: an
 * IntersectionObserver's observe, or null).
 */
export class TokenText {
  constructor(el, observe) {
    this.el = el;
    this.observe = observe;
    this.spans = [];
    this.blocks = []; // { el, start, end (exclusive, while open: the tokens so far), closed }
    this.labels = []; // { el, at }
    this.window = null; // a BlockWindow once the text is long (useWindow)
    this.width = -1; // the text box's width when the window last measured
  }

  get built() {
    return this.spans.length;
  }

  /** Spans for tokens [built, end): `make(i)` gives token i's span; labels where the prompt starts and ends. */
  add(data, end, make) {
    for (let i = this.built; i < end; i++) {
      let block = this.blocks[this.blocks.length - 1];
      if (!block || block.closed) block = this.newBlock(i);
      if (i === 0 && data.promptLen > 0) this.label(block, "lv-part-label", "prompt", i);
      if (i === data.promptLen && i > 0) this.label(block, "lv-part-label lv-part-completion", "completion", i);
      const span = make(i);
      this.spans.push(span);
      if (breaksBefore(data.tokens[i], i)) block.el.appendChild(h("wbr")); // (see breaksBefore)
      block.el.appendChild(span);
      block.end = i + 1;
      if (this.window && !block.el.isConnected) block.height = null; // (grown out of view: estimated again)
      block.closed = endsBlock(data.tokens[i], block.end - block.start);
    }
  }

  /** Remove the spans of tokens from `start` on (and the blocks and labels that held only them). */
  truncate(start) {
    if (start >= this.built) return;
    for (let i = start; i < this.spans.length; i++) {
      const before = this.spans[i].previousSibling;
      if (before && before.nodeName === "WBR") before.remove();
      this.spans[i].remove();
    }
    this.spans.length = start;
    this.labels = this.labels.filter((l) => (l.at >= start ? (l.el.remove(), false) : true));
    while (this.blocks.length && this.blocks[this.blocks.length - 1].start >= start) this.blocks.pop().el.remove();
    this.window?.dropFrom(this.blocks.length);
    const last = this.blocks[this.blocks.length - 1];
    if (last) Object.assign(last, { end: start, closed: false, height: null });
  }

  /**
   * From now on only the blocks near the view are in the DOM (block_window.js): the long blocks'
   * lazy layout (content-visibility, `observe`) is not needed any more.
   */
  useWindow() {
    if (this.window) return;
    for (const b of this.blocks) b.el.className = "lv-block lv-block-long";
    this.el.classList.add("lv-windowed");
    this.window = new BlockWindow(this.el, this.blocks);
  }

  /** After spans were added or the text re-flowed: the window follows (no-op without one); `measure`: see BlockWindow.update. */
  refresh(measure = true) {
    if (!this.window) return;
    if (!measure) return this.window.update(null, false);
    const width = this.el.clientWidth;
    if (width !== this.width) this.window.invalidate(); // (lines wrap elsewhere: every height changes)
    this.width = width;
    this.window.update();
  }

  /** Bring token i's block into the DOM, scrolled near the view (no-op without a window, or when it is in). */
  bringIn(i) {
    const w = this.window;
    if (!w || !this.blocks.length) return;
    const k = w.blockOf(i);
    if (k < w.lo || k >= w.hi) w.reveal(k);
  }

  stop() {
    this.window?.stop();
  }

  newBlock(start) {
    if (this.window) {
      const block = { el: h("div", "lv-block lv-block-long"), start, end: start, closed: false, height: null };
      this.blocks.push(block); // (in the DOM once the window reaches it)
      return block;
    }
    const long = this.blocks.length > 0;
    const el = h("div", long ? "lv-block lv-block-long lv-offscreen" : "lv-block");
    if (long && this.blocks.length === 1) {
      // A second block: the text is long, the first block too is laid out only near the view.
      this.blocks[0].el.classList.add("lv-block-long");
      if (this.observe) this.observe(this.blocks[0].el);
    }
    if (long && this.observe) this.observe(el);
    this.el.appendChild(el);
    const block = { el, start, end: start, closed: false, height: null };
    this.blocks.push(block);
    return block;
  }

  label(block, className, text, at) {
    const el = h("span", className, text);
    block.el.appendChild(el);
    this.labels.push({ el, at });
  }
}

// A token's box lies on one line: its text does not wrap inside it (CSS: white-space pre), and a
// line may break before a token that begins with a space, at a <wbr> put there (the text's own break
// opportunity is after the space: the space would stay at the end of one line, its word on the next,
// and the token's outline cover both). Only a token longer than a line could be is let wrap.
export const LONG_TOKEN = 24; // characters: longer, it may wrap inside (it might not fit any line)
const BREAK_BEFORE = /^[ \t\u00a0\u3000]/;

/** Whether a line may break before token `text` (it begins with a space; not the text's first token). */
export const breaksBefore = (text, i) => i > 0 && BREAK_BEFORE.test(text);

/** The class that lets token `text` wrap inside its box, when it is too long for one line ("" if not). */
export const longClass = (text) => (text.length > LONG_TOKEN ? " lv-token-long" : "");

/**
 * The class that marks a token's spaces through its own background (widget.css), or "": a token
 * " word" (a leading space then text: most tokens) or one of spaces only, on one line. Its text is
 * then one text node: a span per space cost a first render of 1,000 tokens about 9 ms (the spans,
 * not their marks). Every other token marks its whitespace with spans (appendText).
 */
function dotClass(text, segs) {
  // (only a long token wraps inside its box, where one background would draw a dot per line)
  if (text.length > LONG_TOKEN || segs[0]?.text !== " ") return "";
  if (segs.length === 2 && segs[1].kind === "text") return " lv-dot-lead";
  return segs.every((s) => s.text === " ") ? " lv-dot-all" : "";
}

/**
 * One token's span: its text, its colour (`style` from colors.tokenStyle, or null = unknown).
 * `split` (from data.splitOf): the token is a piece of a character split across tokens; `text`
 * is then what it completes, the character whole on its last piece, and the pieces before it
 * end with a marker. The run is underlined as one, with a divider between its pieces.
 */
export function tokenSpan(text, i, isPrompt, style, split = null) {
  let cls = `lv-token${isPrompt ? " lv-prompt" : ""}${style ? "" : " lv-unknown"}${longClass(text)}`;
  const last = split ? split.start + split.piece === split.end - 1 : false;
  if (split) cls += ` lv-split${split.piece === 0 ? " lv-split-start" : ""}${last ? " lv-split-end" : " lv-split-part"}`;
  const segs = split ? null : segments(text);
  const dots = split ? "" : dotClass(text, segs);
  const span = h("span", cls + dots);
  span.setAttribute("data-index", String(i));
  if (dots) span.appendChild(document.createTextNode(text));
  else if (!split) appendText(span, text, segs);
  else {
    if (text !== "") appendText(span, text);
    if (!last) span.appendChild(h("span", "lv-split-mark"));
    span.title = `piece ${split.piece + 1} of ${split.end - split.start} of ${JSON.stringify(split.text)} \u00b7 bytes ${hexBytes(split.bytes)}`;
  }
  // (background-color, not the shorthand: that would clear the space marks' background-image)
  if (style) span.style.cssText = `background-color:${style.background};color:${style.color}`; // one style write
  return span;
}

/** Colour a token span; null: the neutral "unknown" look. */
export function paint(span, style) {
  if (style) {
    span.style.backgroundColor = style.background;
    span.style.color = style.color;
    span.classList.remove("lv-unknown");
  } else {
    span.style.backgroundColor = "";
    span.style.color = "";
    span.classList.add("lv-unknown");
  }
}

/**
 * Run `step(start, end)` over [0, n) in slices of `size`, the first slice now and each next one
 * in a later task, so no task is long. Returns a function that cancels what has not run.
 */
export function inSlices(n, size, step, done) {
  let start = 0;
  let timer = null;
  let cancelled = false;
  const run = () => {
    timer = null;
    if (cancelled) return;
    const end = Math.min(n, start + size);
    step(start, end);
    start = end;
    if (start < n) timer = setTimeout(run, 0);
    else if (done) done();
  };
  run();
  return () => {
    cancelled = true;
    if (timer != null) clearTimeout(timer);
  };
}
