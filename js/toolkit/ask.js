// Asking the kernel from a view: send a request, wait for the answer, and say so when none came
// (a saved notebook, a kernel gone or busy with another cell), never a spinner forever. Every view
// that asks goes through `ask`: a row's trace (corpus, choices), a group's occurrences and the
// surprise index (corpus), "What else?" (fields), a guess (guess), a token's layers (lens), "why?"
// (logprob) and the explorer's ping (explorer_host/note.js). The view keeps its own words.

/**
 * How long a view waits for the kernel's answer before saying that none came. A request whose
 * answer is known to take longer (a model call) waits for its view's own trait instead
 * (`request_timeout`, `why_timeout_s`: seconds, set from Python).
 */
export const KERNEL_WAIT_MS = 5000;

/**
 * Send `request` to the kernel and wait: `{message}` is sent as a custom message, `{traits}` are set
 * and saved (the kernel observes them); `{}` sends nothing (the request went already, e.g. with a tab's trait).
 *
 * Returns `answered()`: the view calls it when the answer came (or to stop waiting: a newer request,
 * the view closed). Not called within `timeout` ms: `noAnswer("late")`. A request that cannot be sent at
 * all (a view restored without a comm): `noAnswer("unsent", error)` at once.
 */
export function ask(model, request, { timeout = KERNEL_WAIT_MS, noAnswer = () => {} } = {}) {
  try {
    if (request.traits) {
      for (const [name, value] of Object.entries(request.traits)) model.set(name, value);
      model.save_changes();
    }
    if (request.message) model.send(request.message);
  } catch (error) {
    noAnswer("unsent", error);
    return () => {};
  }
  const timer = setTimeout(() => noAnswer("late"), timeout);
  return () => clearTimeout(timer);
}
