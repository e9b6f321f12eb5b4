// The trace of a widget model, shared by every view of it (a notebook can show one widget in
// several outputs). The `_payload` trait replaces it; an "append" custom message from the kernel
// grows it (only the new tokens cross). Each view subscribes and rebuilds or adds spans.

import { unpackMessage } from "../toolkit/codec.js";
import { decodePayload } from "./trace_data.js";

const stores = new WeakMap(); // model -> the trace shared by its views

/** The model's trace, decoded when a view first needs it; views subscribe to its changes. */
export function storeOf(model) {
  let store = stores.get(model);
  if (store) return store;
  store = { data: null, error: null, views: new Set() };
  const notify = (what, start) => {
    for (const view of store.views) view(what, start);
  };
  store.load = () => {
    if (store.data || store.error) return store.data;
    try {
      store.data = decodePayload(model.get("_payload"));
    } catch (e) {
      store.error = e;
    }
    return store.data;
  };
  const onPayload = () => {
    const p = model.get("_payload");
    // The kernel folding a finished stream into the trait: the views already show all of it.
    if (store.data && p && p.id && p.id === store.data.id && p.n === store.data.n) return;
    store.data = store.error = null;
    notify("rebuild");
  };
  const onMessage = (msg, buffers) => {
    if (!msg || msg.type !== "append" || !store.load()) return;
    unpackMessage(msg, buffers);
    if (msg.payload.id !== store.data.id) return; // for a trace no longer on show
    store.data.apply(msg.payload);
    notify("grow", msg.payload.start);
  };
  model.on("change:_payload", onPayload);
  model.on("msg:custom", onMessage);
  store.dispose = () => {
    model.off("change:_payload", onPayload);
    model.off("msg:custom", onMessage);
    stores.delete(model);
  };
  stores.set(model, store);
  return store;
}

