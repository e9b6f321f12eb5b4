// The panel's shift as the notebook scrolls (stick.js): written out case by case.
import assert from "node:assert/strict";
import { test } from "node:test";

import { shiftFor } from "../stick.js";

test("a panel moves down by as much as its top went above the visible area, never past its box", () => {
  // visible area from y = 91 (under the notebook's toolbar); the panel 267 px tall in a box ending at 476
  assert.equal(shiftFor(79, 267, 476, 91), 12); // 12 px hidden: down 12
  assert.equal(shiftFor(91, 267, 476, 91), 0); // at the top: where it is
  assert.equal(shiftFor(200, 267, 476, 91), 0); // below the top: where it is
  assert.equal(shiftFor(-300, 267, 476, 91), 391); // far above: down to the visible top
  assert.equal(shiftFor(-300, 267, 300, 91), 300 - (-300 + 267)); // the box almost gone: down to its end only
  assert.equal(shiftFor(-300, 267, -33, 91), 0); // already at the end of its box: stays
  assert.equal(shiftFor(-300, 267, -100, 91), 0); // taller than what is left of its box: never up
});
