// Requests by id: the lens view asks the kernel for one token's per-layer alternatives (a custom
// message {type: "lens-detail", id, position}); the answer carries the same id, its arrays
// through the wire codec. A request not answered in `request_timeout` seconds says so
// (toolkit/ask.js); a late answer still counts.

import { ask as askKernel } from "../toolkit/ask.js";
import { unpackMessage } from "../toolkit/codec.js";
import { answerAlternatives } from "./data.js";

export class DetailRequests {
  /** `changed()` is called whenever what is known about a token changes. */
  constructor(model, changed) {
    this.model = model;
    this.changed = changed;
    this.answers = new Map(); // token -> [row][alternatives] from the kernel
    this.errors = new Map(); // token -> message
    this.pending = new Map(); // request id -> {i, answered}, until answered or timed out
    this.asked = new Map(); // request id -> token, for every request this view sent
    this.nextId = 1;
    this.onMessage = (msg, buffers) => this.receive(msg, buffers);
    model.on("msg:custom", this.onMessage);
  }

  waiting(i) {
    return [...this.pending.values()].some((p) => p.i === i);
  }

  /** What is known of token i: {state: "ok", rows} | {state: "waiting"} | {state: "error", message} | {state: "ask"}. */
  state(i) {
    if (this.answers.has(i)) return { state: "ok", rows: this.answers.get(i) };
    if (this.waiting(i)) return { state: "waiting" };
    if (this.errors.has(i)) return { state: "error", message: this.errors.get(i) };
    return { state: "ask" };
  }

  ask(i) {
    if (i <= 0 || this.answers.has(i) || this.waiting(i)) return;
    this.errors.delete(i);
    const id = `lens-${Date.now()}-${this.nextId++}`;
    const seconds = this.model.get("request_timeout");
    const request = { i, answered: () => {} };
    this.pending.set(id, request);
    this.asked.set(id, i);
    request.answered = askKernel(this.model, { message: { type: "lens-detail", id, position: i } }, {
      timeout: seconds * 1000,
      noAnswer: (why, error) => {
        this.pending.delete(id);
        if (why === "unsent") return this.errors.set(i, `could not ask the kernel: ${error}`);
        this.errors.set(i, `no answer from the kernel after ${seconds} s: is it still running? Click the token again to retry.`);
        this.changed();
      },
    });
  }

  receive(msg, buffers) {
    if (!msg || msg.type !== "lens-detail" || !this.asked.has(msg.id)) return; // another view's request
    const i = this.asked.get(msg.id);
    this.pending.get(msg.id)?.answered();
    this.pending.delete(msg.id);
    if (this.answers.has(i)) return;
    this.errors.delete(i);
    if (msg.error) this.errors.set(i, `the kernel could not compute this token's layers: ${msg.error}`);
    else {
      try {
        this.answers.set(i, answerAlternatives(unpackMessage(msg, buffers)));
      } catch (error) {
        this.errors.set(i, `the kernel's answer could not be read: ${error}`);
      }
    }
    this.changed();
  }

  dispose() {
    this.model.off("msg:custom", this.onMessage);
    for (const { answered } of this.pending.values()) answered();
  }
}
