// The explorer's "no kernel" note (anywidget): shown only while no kernel answers. On render it
// asks the kernel ({type: "ping"}); the Python side answers {type: "pong"}. A live, idle kernel
// answers within milliseconds and the note stays hidden; a saved copy reopened without a kernel
// (or with a new kernel that never ran the cell) never answers, and after NO_ANSWER_MS the note
// says why the buttons do nothing. A kernel busy with another cell answers late: the note asks
// again every NO_ANSWER_MS and hides at the first answer. Its words come from the trait, as text.

import "./note.css";
import { h } from "../toolkit/dom.js";

const NO_ANSWER_MS = 4000;

function ping(model) {
  try {
    model.send({ type: "ping" });
  } catch {
    // no comm at all (a saved page): the timer shows the note
  }
}

function render({ model, el }) {
  const note = h("small", "lv-explore-note", model.get("text"));
  note.hidden = true;
  el.appendChild(note);
  let answered = false;
  const onMessage = (msg) => {
    if (msg && msg.type === "pong") {
      answered = true;
      note.hidden = true;
      clearInterval(timer);
    }
  };
  model.on("msg:custom", onMessage);
  const timer = setInterval(() => {
    if (answered) return;
    note.hidden = false;
    ping(model);
  }, NO_ANSWER_MS);
  ping(model);
  return () => {
    clearInterval(timer);
    model.off("msg:custom", onMessage);
    note.remove();
  };
}

export default { render };
