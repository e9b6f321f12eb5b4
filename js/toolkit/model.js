// A minimal anywidget model over a plain state object, for the view outside Jupyter: the
// standalone page (standalone.js) and the frontend benchmark's harness. get/set/on/off/
// save_changes/send, change events fired synchronously on set, as anywidget's Backbone model does;
// `receive` plays a custom message from the kernel.

/** Put `value` at `path` (a list of keys) inside `obj`: where a widget buffer goes back. */
export function setPath(obj, path, value) {
  let o = obj;
  for (let i = 0; i < path.length - 1; i++) o = o[path[i]];
  o[path[path.length - 1]] = value;
}

/** A minimal anywidget model over a plain state object; no kernel behind it. */
export function makeModel(state) {
  const handlers = new Map(); // event name -> callbacks
  const emit = (name, ...args) => {
    for (const cb of (handlers.get(name) || []).slice()) cb(...args);
  };
  return {
    get: (key) => state[key],
    set: (key, value) => {
      const old = state[key];
      state[key] = value;
      if (old !== value) {
        emit(`change:${key}`, value);
        emit("change");
      }
    },
    on: (name, cb) => {
      for (const n of name.split(/\s+/)) {
        if (!handlers.has(n)) handlers.set(n, []);
        handlers.get(n).push(cb);
      }
    },
    off: (name, cb) => {
      const names = name ? name.split(/\s+/) : [...handlers.keys()];
      for (const n of names) {
        if (!cb) handlers.delete(n);
        else handlers.set(n, (handlers.get(n) || []).filter((f) => f !== cb));
      }
    },
    save_changes: () => {},
    send: () => {},
    /** Deliver a custom message as if from the kernel (the frontend benchmark streams appends so). */
    receive: (msg, buffers = []) => emit("msg:custom", msg, buffers),
    widget_manager: {},
  };
}
