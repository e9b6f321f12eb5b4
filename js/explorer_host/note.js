// The explorer's "no kernel" note (anywidget): shown only when no kernel answers. On render it
// asks the kernel once ({type: "ping"}); the Python side answers {type: "pong"}. A live kernel
// answers within milliseconds and the note stays hidden; a saved copy reopened without a kernel
// (or with a new kernel that never ran the cell) never answers, and after NO_ANSWER_MS the note
// says why the buttons do nothing. The note's words come from the trait, inserted as text.

import "./note.css";
import { h } from "../toolkit/dom.js";

const NO_ANSWER_MS = 4000;

function render({ model, el }) {
  const note = h("small", "lv-explore-note", model.get("text"));
  note.hidden = true;
  el.appendChild(note);
  let answered = false;
  const onMessage = (msg) => {
    if (msg && msg.type === "pong") {
      answered = true;
      note.hidden = true;
    }
  };
  model.on("msg:custom", onMessage);
  const timer = setTimeout(() => {
    if (!answered) note.hidden = false;
  }, NO_ANSWER_MS);
  try {
    model.send({ type: "ping" });
  } catch {
    // no comm at all (a saved page): the timer shows the note
  }
  return () => {
    clearTimeout(timer);
    model.off("msg:custom", onMessage);
    note.remove();
  };
}

export default { render };
