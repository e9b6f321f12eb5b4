// The explorer's controls as one anywidget, for hosts that render anywidgets but no ipywidgets
// containers (marimo): prompt, sampling settings, Generate / Next token / Stop, the status line,
// the next-token choices and the branch list. Every value is a trait linked (in Python,
// logprob_viz/views/explorer/host_panel.py) to the explorer's own ipywidgets, so the app behind
// it is the same one JupyterLab shows; a button press goes to the kernel as {type: "press", name}.
// Token text (choices, branch labels) is inserted as text, never as HTML.

import "./host.css";
import { h } from "../toolkit/dom.js";

const NUMBERS = [
  // [trait, label, step, min]
  ["top_k", "top-k", 1, 0],
  ["max_new_tokens", "max new tokens", 1, 1],
  ["top_logprobs", "top_logprobs", 1, 0],
  ["seed", "seed", 1, null],
];

const CONTROL_TRAITS = [
  "prompt", "temperature", "top_p", "min_p", "min_p_available", "top_k", "max_new_tokens", "top_logprobs", "top_logprobs_max", "seed",
  "chat", "chat_available", "running", "status", "status_kind",
];
const LIST_TRAITS = ["choices", "branches", "branch", "running"];

function labelled(text, ...children) {
  const label = h("label", null);
  label.append(h("span", null, text), ...children);
  return label;
}

/** A sampling setting's range input, with the explorer's own steps (temperature and top-p 0.05, min-p 0.01). */
function slider(model, name, text, low, high, step = 0.05) {
  const input = h("input", `lvh-${name}`);
  Object.assign(input, { type: "range", min: String(low), max: String(high), step: String(step) });
  const shown = h("span", "lvh-value");
  const sync = () => {
    input.value = String(model.get(name));
    shown.textContent = Number(model.get(name)).toFixed(2);
  };
  input.addEventListener("input", () => {
    model.set(name, Number(input.value));
    shown.textContent = Number(input.value).toFixed(2);
    model.save_changes();
  });
  sync();
  return [labelled(text, input, shown), sync];
}

function numberBox(model, [name, text, step, low]) {
  const input = h("input", `lvh-${name}`);
  Object.assign(input, { type: "number", step: String(step) });
  if (low != null) input.min = String(low);
  const sync = () => {
    input.value = String(model.get(name));
    if (name === "top_logprobs") input.max = String(model.get("top_logprobs_max"));
  };
  input.addEventListener("change", () => {
    const value = Number.parseInt(input.value, 10);
    if (Number.isFinite(value)) {
      model.set(name, value);
      model.save_changes();
    } else sync();
  });
  sync();
  return [labelled(text, input), sync];
}

function button(model, name, text, className) {
  const el = h("button", `lvh-${name} ${className || ""}`.trim(), text);
  el.type = "button";
  el.addEventListener("click", () => model.send({ type: "press", name }));
  return el;
}

/** The prompt box: Ctrl+Enter generates, as in the explorer's other hosts' keys. */
function promptBox(model) {
  const prompt = h("textarea", "lvh-prompt");
  prompt.placeholder = "Type a prompt, then Generate (or Next token to choose tokens yourself)";
  prompt.addEventListener("input", () => {
    model.set("prompt", prompt.value);
    model.save_changes();
  });
  prompt.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      model.send({ type: "press", name: "generate" });
    }
  });
  return prompt;
}

/** The next-token choices and the branch list: rebuilt from the traits on every change. */
function syncLists(model, parts, running) {
  const offered = model.get("choices");
  parts.choicesTitle.textContent = offered.length ? "Next token: choose one to append it" : "";
  parts.choices.replaceChildren(
    ...offered.map(([id, text]) => {
      const choice = h("button", "lvh-choice", text);
      choice.type = "button";
      choice.disabled = running;
      choice.addEventListener("click", () => model.send({ type: "press", name: "choose", token_id: id }));
      return choice;
    }),
  );
  const labels = model.get("branches");
  parts.branches.hidden = labels.length < 2;
  parts.branchSelect.replaceChildren(
    ...labels.map((label, i) => {
      const option = h("option", null, label);
      option.value = String(i);
      return option;
    }),
  );
  parts.branchSelect.value = String(model.get("branch"));
}

function branchList(model) {
  const branchSelect = h("select", "lvh-branch");
  branchSelect.size = 4;
  branchSelect.addEventListener("change", () => {
    model.set("branch", Number(branchSelect.value));
    model.save_changes();
  });
  const branches = h("div", "lvh-branches");
  branches.append(h("b", null, "Branches"), h("div", null), branchSelect);
  return { branches, branchSelect };
}

function render({ model, el }) {
  const root = h("div", "lvh-root lv-explore");
  const prompt = promptBox(model);
  const [temperature, syncT] = slider(model, "temperature", "temperature", 0, 2);
  const [topP, syncP] = slider(model, "top_p", "top-p", 0.05, 1);
  const [minP, syncMinP] = slider(model, "min_p", "min-p", 0, 1, 0.01);
  const numbers = NUMBERS.map((spec) => numberBox(model, spec));
  const chat = h("input", "lvh-chat");
  chat.type = "checkbox";
  chat.addEventListener("change", () => {
    model.set("chat", chat.checked);
    model.save_changes();
  });
  const buttons = {
    generate: button(model, "generate", "▶ Generate", "lvh-primary"),
    next_token: button(model, "next_token", "→ Next token"),
    stop: button(model, "stop", "■ Stop"),
  };
  const status = h("div", "lvh-status");
  status.setAttribute("aria-live", "polite");
  const parts = { choicesTitle: h("div", "lvh-hint"), choices: h("div", "lvh-choices"), ...branchList(model) };
  const rows = [h("div", "lvh-row"), h("div", "lvh-row"), h("div", "lvh-row")];
  rows[0].append(temperature, topP, minP);
  rows[1].append(...numbers.map(([label]) => label), labelled("chat messages", chat));
  rows[2].append(buttons.generate, buttons.next_token, buttons.stop);
  const hint = "Pin a token (click it), then click an alternative in its chart to branch from there.";
  root.append(prompt, ...rows, status, parts.choicesTitle, parts.choices, parts.branches, h("div", "lvh-hint", hint));
  el.appendChild(root);

  const syncControls = () => {
    if (prompt.value !== model.get("prompt")) prompt.value = model.get("prompt");
    syncT();
    syncP();
    syncMinP();
    // a server runner does not send min-p: the explorer's own slider is off there, and so is this one
    minP.querySelector("input").disabled = !model.get("min_p_available");
    for (const [, s] of numbers) s();
    chat.checked = model.get("chat");
    chat.disabled = !model.get("chat_available");
    const running = model.get("running");
    buttons.generate.disabled = running;
    buttons.next_token.disabled = running;
    buttons.stop.disabled = !running;
    status.textContent = model.get("status");
    status.className = `lvh-status lvh-${model.get("status_kind")}`;
  };
  // The lists are rebuilt only when they (or the busy state) change, not on every status line.
  const syncAllLists = () => syncLists(model, parts, model.get("running"));
  syncControls();
  syncAllLists();
  // one listener per trait: every host's model has "change:<name>" (not all have a bare "change")
  const listeners = [
    ...CONTROL_TRAITS.map((name) => [`change:${name}`, syncControls]),
    ...LIST_TRAITS.map((name) => [`change:${name}`, syncAllLists]),
  ];
  for (const [event, listener] of listeners) model.on(event, listener);
  return () => {
    for (const [event, listener] of listeners) model.off(event, listener);
  };
}

export default { render };
