// Work that may wait: run in the page's idle time, so that it delays no frame and no input.

/**
 * Run `fn(deadline)` when the page is idle (within 300 ms however busy); returns the cancel.
 * Without requestIdleCallback (Safari) in a task of its own, given `budgetMs` to work in.
 */
export function whenIdle(fn, budgetMs = 8) {
  if (typeof requestIdleCallback !== "function") {
    const timer = setTimeout(() => fn({ didTimeout: true, timeRemaining: () => budgetMs }), 0);
    return () => clearTimeout(timer);
  }
  const id = requestIdleCallback(fn, { timeout: 300 });
  return () => cancelIdleCallback(id);
}
