// The chart panel stays in sight while its view is scrolled through, in a notebook too. CSS
// `position: sticky` binds an element to its nearest scroll container, and JupyterLab's output area
// is one (overflow: auto) that never scrolls: the panel stayed at the top of the view and went up
// under the notebook's toolbar with the text, its first line hidden. So the panel is also moved by
// the notebook's own scroll: by as much as the view's top has gone above the visible area (never
// past the view's bottom). Where CSS sticky works (a page that scrolls itself) it has already
// moved the panel, and this adds nothing.

/** The nearest ancestor of `el` that scrolls vertically now (its content taller than it), or the window. */
export function scrollerOf(el) {
  for (let p = el.parentElement; p; p = p.parentElement) {
    const y = getComputedStyle(p).overflowY;
    if ((y === "auto" || y === "scroll" || y === "overlay") && p.scrollHeight > p.clientHeight + 1) return p;
  }
  return window;
}

/**
 * How far down to move a panel whose top (unmoved) is `top`, `height` tall, inside a box ending at
 * `bottom`, so that it starts at `visibleTop`: 0 when it is already below it (it moves only as the
 * scroll goes on, never with a jump), at most to the box's end.
 */
export function shiftFor(top, height, bottom, visibleTop) {
  const room = bottom - (top + height);
  return Math.max(0, Math.min(visibleTop - top, room));
}

export class Stick {
  /** `el` follows the scroll within `box` (its parent: the view's body, or the explorer's grid). */
  constructor(el, box) {
    this.el = el;
    this.box = box;
    this.shift = 0;
    this.frame = 0;
    this.scroller = null;
    this.onScroll = () => {
      if (!this.frame) this.frame = requestAnimationFrame(() => this.place());
    };
    // (laid out, resized, or moved to another scroller: look for the scroller again, place again)
    this.observer = typeof ResizeObserver === "function" ? new ResizeObserver(() => this.attach()) : null;
    this.observer?.observe(box);
  }

  attach() {
    const scroller = scrollerOf(this.box);
    if (scroller !== this.scroller) {
      this.scroller?.removeEventListener("scroll", this.onScroll);
      this.scroller = scroller;
      scroller.addEventListener("scroll", this.onScroll, { passive: true });
    }
    this.onScroll();
  }

  place() {
    this.frame = 0;
    if (!this.el.isConnected || !this.scroller) return;
    const visibleTop = this.scroller === window ? 0 : this.scroller.getBoundingClientRect().top;
    const r = this.el.getBoundingClientRect();
    const top = r.top - this.shift; // (where CSS alone puts it)
    const shift = Math.round(shiftFor(top, r.height, this.box.getBoundingClientRect().bottom, visibleTop));
    if (shift === this.shift) return;
    this.shift = shift;
    this.el.style.transform = shift ? `translateY(${shift}px)` : "";
  }

  stop() {
    this.observer?.disconnect();
    this.scroller?.removeEventListener("scroll", this.onScroll);
    cancelAnimationFrame(this.frame);
  }
}
