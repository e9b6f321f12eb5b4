// Unit tests of `ask`, the one way a view asks the kernel and says when no answer came (`npm test`).
import assert from "node:assert/strict";
import { mock, test } from "node:test";

import { ask, KERNEL_WAIT_MS } from "../ask.js";
import { makeModel } from "../model.js";

function recordingModel() {
  const model = makeModel({ selected: -1 });
  model.sent = [];
  model.saved = 0;
  model.send = (msg) => model.sent.push(msg);
  model.save_changes = () => model.saved++;
  return model;
}

test("a request is sent, and no answer within the wait says so once", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const model = recordingModel();
    const said = [];
    ask(model, { message: { type: "ping" } }, { noAnswer: (why) => said.push(why) });
    assert.deepEqual(model.sent, [{ type: "ping" }]);
    mock.timers.tick(KERNEL_WAIT_MS - 1);
    assert.deepEqual(said, []);
    mock.timers.tick(1);
    assert.deepEqual(said, ["late"]);
  } finally {
    mock.timers.reset();
  }
});

test("an answer in time stops the wait; traits are set and saved; a longer wait is the caller's", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const model = recordingModel();
    const said = [];
    const answered = ask(model, { traits: { selected: 3 } }, { timeout: 60_000, noAnswer: (why) => said.push(why) });
    assert.equal(model.get("selected"), 3);
    assert.equal(model.saved, 1);
    assert.deepEqual(model.sent, []);
    mock.timers.tick(KERNEL_WAIT_MS);
    answered();
    mock.timers.tick(60_000);
    assert.deepEqual(said, []);
  } finally {
    mock.timers.reset();
  }
});

test("a request that cannot be sent says so at once, with the error", () => {
  const model = recordingModel();
  model.send = () => {
    throw new Error("no comm");
  };
  const said = [];
  const answered = ask(model, { message: { type: "why" } }, { noAnswer: (why, error) => said.push([why, error.message]) });
  assert.deepEqual(said, [["unsent", "no comm"]]);
  answered(); // (a no-op: nothing is waiting)
});
