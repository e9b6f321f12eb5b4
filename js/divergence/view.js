// The DivergenceView: one text of lv.divergence, each token coloured by its KL(base ‖ candidate)
// (the lower end of a range, outlined dashed) or |Δp|, flips underlined. Hovering a token shows both
// sides' alternatives in one order (panel.js); "next flip" walks the flips. Token text is data:
// inserted with textContent only. A payload of kind "rollout" (RolloutView) is one RL rollout
// coloured by |Δ|, its tokens outside the clip band marked as flips are: rollout.js.

import "./divergence.css";
import { h, select } from "../toolkit/dom.js";
import { formatPercent, formatStat } from "../toolkit/format.js";
import { visible } from "../toolkit/whitespace.js";
import { decodeDivergence, level, nextFlip, rangeText } from "./decode.js";
import { showPanel } from "./panel.js";
import { decodeRollout, rollLevel, rolloutCaption, rolloutItems, showRolloutPanel } from "./rollout.js";

const BINS = 16;

/** CSS of the colour levels: one orange at rising opacity, readable on the light and the dark theme. */
function colourRules() {
  const rules = [];
  for (let b = 0; b < BINS; b++) rules.push(`.lvd-root .lvd-l${b} { background: rgba(230, 97, 1, ${((b + 1) / BINS).toFixed(3)}); }`);
  return rules.join("\n");
}

class DivergenceRender {
  constructor(model, el) {
    this.model = model;
    this.root = h("div", "lvd-root");
    this.root.tabIndex = 0;
    el.append(h("style", null, colourRules()), this.root);
    this.tokenEls = [];
    this.lit = -1;
  }

  stats() {
    return this.model.get("stats") || {};
  }

  /** The marked tokens "next" walks: the flips, or a rollout's tokens outside the clip band. */
  marks() {
    const s = this.stats();
    return (this.rollout ? s.outside : s.flips) || [];
  }

  buildRolloutHeader() {
    const header = h("div", "lvd-header");
    for (const [name, value, key] of rolloutItems(this.stats())) {
      const el = h("span", "lvd-stat");
      el.dataset.stat = key;
      el.append(h("span", "lvd-stat-name", name), h("span", "lvd-stat-value", value));
      header.appendChild(el);
    }
    this.nextButton = h("button", "lvd-next", "next outside \u2192");
    this.nextButton.disabled = this.marks().length === 0;
    this.nextButton.addEventListener("click", () => this.goNextFlip());
    const caption = h("div", "lvd-caption", rolloutCaption(this.stats(), this.model.get("labels") || ["a", "b"]));
    return { header, caption };
  }

  buildHeader() {
    const s = this.stats();
    const [base, cand] = this.model.get("labels") || ["base", "candidate"];
    const header = h("div", "lvd-header");
    const item = (name, value, key) => {
      const el = h("span", "lvd-stat");
      el.dataset.stat = key;
      el.append(h("span", "lvd-stat-name", name), h("span", "lvd-stat-value", value));
      return el;
    };
    const flips = (s.flips || []).length;
    header.append(
      item("mean KLD", `${rangeText(s.mean_kld || [null, null])} nats`, "mean_kld"),
      item("same top", s.same_top == null ? "?" : formatPercent(s.same_top), "same_top"),
      item("PPL ratio", formatStat(s.ppl_ratio, 4), "ppl_ratio"),
      item("flips", `${flips} of ${s.tokens ?? "?"}`, "flips"),
    );
    this.nextButton = h("button", "lvd-next", "next flip \u2192");
    this.nextButton.disabled = flips === 0;
    this.nextButton.addEventListener("click", () => this.goNextFlip());
    const caption = h("div", "lvd-caption", `KL(${base} \u2016 ${cand}), ${s.cutoff == null ? "no cutoff (the whole sum)" : `summed over the base tokens with log p > \u2212${s.cutoff}`}${s.exact === false ? "; a token's KL is a range where a side gave only its top-K" : ""}`);
    return { header, caption };
  }

  buildControls() {
    this.legend = h("span", "lvd-legend");
    const controls = h("div", "lvd-controls");
    if (this.rollout) {
      this.modeSel = null;
      controls.append(this.legend, this.nextButton);
      return controls;
    }
    const modes = [["kld", "colour: KL per token"], ["delta_p", "colour: |\u0394p|"]];
    this.modeSel = select(modes, this.model.get("color_mode"), "lvd-mode", (v) => {
      this.model.set("color_mode", v);
      this.model.save_changes();
    });
    controls.append(this.modeSel, this.legend, this.nextButton);
    return controls;
  }

  buildText() {
    const { data } = this;
    const flips = new Set(this.marks());
    const forking = new Set(this.stats().forking || []);
    const text = h("div", "lvd-text");
    this.tokenEls = data.tokens.map((tok, i) => {
      const el = h("span", "lvd-tok", visible(tok) + "\n".repeat((tok.match(/\n/g) || []).length));
      el.dataset.index = String(i);
      if (flips.has(i)) el.classList.add("lvd-flip");
      if (forking.has(i)) el.classList.add("lvd-fork");
      if (this.rollout) {
        if (!Number.isFinite(data.delta[i])) el.classList.add("lvd-unscored");
      } else if (data.kldLow[i] !== data.kldHigh[i] && !Number.isNaN(data.kldLow[i])) el.classList.add("lvd-range");
      if (!this.rollout && Number.isNaN(data.deltaP[i])) el.classList.add("lvd-unscored");
      text.appendChild(el);
      return el;
    });
    text.addEventListener("mouseover", (e) => {
      const tok = e.target instanceof Element ? e.target.closest(".lvd-tok") : null;
      if (tok) this.show(Number(tok.dataset.index));
    });
    text.addEventListener("mouseleave", () => this.show(this.model.get("selected")));
    text.addEventListener("click", (e) => {
      const tok = e.target instanceof Element ? e.target.closest(".lvd-tok") : null;
      if (tok) this.select(Number(tok.dataset.index));
    });
    return text;
  }

  paintRollout() {
    const range = this.stats().abs_delta_range;
    this.tokenEls.forEach((el, i) => {
      const t = rollLevel(this.data, i, range);
      el.className = el.className.replace(/\s*lvd-l\d+/g, "");
      if (t > 0) el.classList.add(`lvd-l${Math.min(BINS - 1, Math.floor(t * BINS))}`);
    });
    this.legend.replaceChildren(h("span", null, `|\u0394| 0 \u2192 ${range}+ nats`), h("span", "lvd-gradient"),
      h("span", "lvd-legend-flip", "outside"), ...(this.stats().forking ? [h("span", "lvd-legend-fork", "forking")] : []));
  }

  paint() {
    if (this.rollout) return this.paintRollout();
    const mode = this.model.get("color_mode");
    const s = this.stats();
    const range = mode === "delta_p" ? s.delta_p_range : s.kld_range;
    this.tokenEls.forEach((el, i) => {
      const t = level(this.data, i, mode, range);
      el.className = el.className.replace(/\s*lvd-l\d+/g, "");
      if (t > 0) el.classList.add(`lvd-l${Math.min(BINS - 1, Math.floor(t * BINS))}`);
    });
    this.modeSel.value = mode;
    const what = mode === "delta_p" ? `|\u0394p| 0 \u2192 ${formatPercent(range)}+` : `KL 0 \u2192 ${range}+ nats`;
    this.legend.replaceChildren(h("span", null, what), h("span", "lvd-gradient"), h("span", "lvd-legend-flip", "flip"));
  }

  show(i) {
    if (this.lit >= 0) this.tokenEls[this.lit]?.classList.remove("lvd-hl");
    this.lit = i;
    if (i >= 0) this.tokenEls[i]?.classList.add("lvd-hl");
    const labels = this.model.get("labels") || [];
    if (this.rollout) showRolloutPanel(this.panel, this.data, i, labels, this.stats());
    else showPanel(this.panel, this.data, i, labels, this.stats().flips || []);
  }

  select(i) {
    this.model.set("selected", i);
    this.model.save_changes();
  }

  goNextFlip() {
    const next = nextFlip(this.marks(), this.model.get("selected"));
    if (next >= 0) this.select(next);
  }

  onSelected() {
    const i = this.model.get("selected");
    this.root.querySelectorAll(".lvd-current").forEach((e) => e.classList.remove("lvd-current"));
    const el = this.tokenEls[i];
    if (el) {
      el.classList.add("lvd-current");
      el.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
    this.show(i);
  }

  sized() {
    this.root.classList.toggle("lv-size-projector", this.model.get("size") === "projector");
  }

  build() {
    this.sized();
    const payload = this.model.get("_payload");
    this.rollout = payload?.kind === "rollout";
    this.data = this.rollout ? decodeRollout(payload) : decodeDivergence(payload);
    const { header, caption } = this.rollout ? this.buildRolloutHeader() : this.buildHeader();
    const controls = this.buildControls();
    this.panel = h("div", "lvd-panel");
    this.root.replaceChildren(header, caption, controls, this.panel, this.buildText());
    this.paint();
    this.onSelected();
  }

  start() {
    const handlers = [
      ["change:_payload", () => this.build()],
      ["change:stats", () => this.build()],
      ["change:color_mode", () => this.paint()],
      ["change:selected", () => this.onSelected()],
      ["change:size", () => this.sized()],
    ];
    for (const [name, fn] of handlers) this.model.on(name, fn);
    this.build();
    return () => handlers.forEach(([name, fn]) => this.model.off(name, fn));
  }
}

function render({ model, el }) {
  return new DivergenceRender(model, el).start();
}

export default { render };
