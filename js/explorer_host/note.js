// The explorer's "no kernel" note (anywidget): shown only while no kernel answers. On render it
// asks the kernel ({type: "ping"}, toolkit/ask.js); the Python side answers {type: "pong"}. A live,
// idle kernel answers within milliseconds and the note stays hidden; a saved copy reopened without
// a kernel (or with a new kernel that never ran the cell) never answers, and after KERNEL_WAIT_MS
// the note says why the buttons do nothing. A kernel busy with another cell answers late: the note
// asks again every KERNEL_WAIT_MS and hides at the first answer. A view with no comm to send on
// shows the note at once. Its words come from the trait, as text.

import "./note.css";
import { ask } from "../toolkit/ask.js";
import { h } from "../toolkit/dom.js";

function render({ model, el }) {
  const note = h("small", "lv-explore-note", model.get("text"));
  note.hidden = true;
  el.appendChild(note);
  let answered = () => {}; // stops the wait for the current ping's answer
  const ping = () => {
    answered = ask(model, { message: { type: "ping" } }, {
      noAnswer: (why) => {
        note.hidden = false;
        if (why === "late") ping(); // (unsent: no comm, so nothing would ever answer)
      },
    });
  };
  const onMessage = (msg) => {
    if (msg && msg.type === "pong") {
      answered();
      note.hidden = true;
    }
  };
  model.on("msg:custom", onMessage);
  ping();
  return () => {
    answered();
    model.off("msg:custom", onMessage);
    note.remove();
  };
}

export default { render };
