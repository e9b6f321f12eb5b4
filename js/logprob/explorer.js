// What the LogprobView does inside the explorer (lv.explore): the app's keys, and the words of
// a chart row that branches. Both only where the view is an ExplorerView (its `app_keys` and
// `branching` traits); a plain LogprobView has neither and is unchanged.

const TYPED = (el) => el instanceof HTMLInputElement || el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement;
const PLAIN_KEYS = { n: "next", s: "stop", u: "undo" };

/**
 * The explorer's keys, anywhere in its app (the `.lv-explore` around this view): Ctrl+Enter in
 * the prompt generates, Esc there stops; outside a text box, n is Next token, s is Stop, u is
 * Undo. Each goes to the kernel as {event: "key", action}. Listened for on the document in the
 * capture phase, before the text boxes keep their keys from the notebook; returns the cleanup.
 */
export function listenAppKeys(view) {
  const onKey = (e) => {
    if (!view.model.get("app_keys")) return;
    const app = view.root.closest(".lv-explore");
    const target = e.target;
    if (!app || !(target instanceof Element) || !app.contains(target)) return;
    let action = null;
    if (target instanceof HTMLTextAreaElement) {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) action = "generate";
      else if (e.key === "Escape") action = "stop";
    } else if (!TYPED(target) && !e.ctrlKey && !e.metaKey && !e.altKey) action = PLAIN_KEYS[e.key] ?? null;
    if (!action) return;
    e.preventDefault();
    e.stopPropagation(); // not the notebook's shortcut too
    view.model.send({ event: "key", action });
  };
  document.addEventListener("keydown", onKey, true);
  return () => document.removeEventListener("keydown", onKey, true);
}

/** The tooltip of an alternative's row where a click branches: what the click does. */
export function branchHint(text, branch) {
  return branch == null ? `click to branch with \u201c${text}\u201d (b)` : `branch #${branch} takes \u201c${text}\u201d here: click to show it`;
}

export const FORK_TITLE = "fork: a branch of the tree takes another token here";
