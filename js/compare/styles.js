// The compare view's CSS, scoped under .lvc-root and injected with the view (one bundle, no
// separate stylesheet to ship). Colours come from JupyterLab's theme variables (light and dark),
// with fallbacks for other frontends.

export const STYLES = `
.lvc-root {
  --lvc-fg: var(--jp-ui-font-color1, #1f1f1f);
  --lvc-fg-muted: var(--jp-ui-font-color2, #616161);
  --lvc-bg: var(--jp-layout-color1, #ffffff);
  --lvc-bg-alt: var(--jp-layout-color2, #eeeeee);
  --lvc-border: var(--jp-border-color2, #e0e0e0);
  --lvc-accent: var(--jp-brand-color1, #1976d2);
  --lvc-mono: var(--jp-code-font-family, "DejaVu Sans Mono", Menlo, Consolas, monospace);
  --lvc-mono-size: var(--jp-code-font-size, 13px);
  box-sizing: border-box;
  color: var(--lvc-fg);
  background: var(--lvc-bg);
  font-family: var(--jp-ui-font-family, system-ui, sans-serif);
  font-size: var(--jp-ui-font-size1, 13px);
  line-height: 1.4;
  border: 1px solid var(--lvc-border);
  border-radius: 6px;
  padding: 10px 12px 12px;
  outline: none;
  max-width: 100%;
}
.lvc-root *, .lvc-root *::before, .lvc-root *::after { box-sizing: border-box; }
.lvc-root:focus-visible { border-color: var(--lvc-accent); }
.lvc-root .lvc-header { border-collapse: collapse; font-variant-numeric: tabular-nums; margin-bottom: 6px; }
.lvc-root .lvc-header th, .lvc-root .lvc-header td { padding: 1px 10px 1px 0; text-align: left; }
.lvc-root .lvc-header th { color: var(--lvc-fg-muted); font-weight: normal; }
.lvc-root .lvc-caption { color: var(--lvc-fg-muted); padding-bottom: 4px; }
.lvc-root .lvc-controls { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin-bottom: 8px; }
.lvc-root select {
  color: var(--lvc-fg); background: var(--lvc-bg); border: 1px solid var(--lvc-border);
  border-radius: 3px; font: inherit; padding: 1px 4px;
}
.lvc-root .lvc-ctl-label { color: var(--lvc-fg-muted); }
.lvc-root .lvc-legend { display: inline-flex; align-items: center; gap: 6px; color: var(--lvc-fg-muted); margin-left: 8px; }
.lvc-root .lvc-gradient { display: inline-block; width: 140px; height: 10px; border-radius: 2px; border: 1px solid var(--lvc-border); }
.lvc-root .lvc-rows { display: flex; flex-direction: column; gap: 6px; }
.lvc-root .lvc-row { display: grid; grid-template-columns: minmax(80px, 14%) 1fr; gap: 8px; border-top: 1px solid var(--lvc-border); padding-top: 4px; }
.lvc-root .lvc-row-label { color: var(--lvc-fg-muted); overflow-wrap: anywhere; }
.lvc-root .lvc-text {
  font-family: var(--lvc-mono); font-size: var(--lvc-mono-size); white-space: pre-wrap; overflow-wrap: anywhere;
  max-height: 240px; overflow-y: auto;
  /* a row's layout and paint stay inside it: hovering one span repaints no other row's text */
  contain: content;
}
.lvc-root .lvc-block { content-visibility: auto; contain-intrinsic-size: auto 60px; }
.lvc-root .lvc-span { border-radius: 2px; cursor: pointer; box-shadow: inset 1px 0 0 var(--lvc-border); }
.lvc-root .lvc-tok { border-radius: 2px; }
/* pieces of a character split across tokens: the character on the last piece, the others a sliver */
.lvc-root .lvc-tok.lvc-split { text-decoration: underline dashed; text-underline-offset: 3px; }
.lvc-root .lvc-tok.lvc-split:empty { display: inline-block; width: 4px; height: 1.1em; vertical-align: text-bottom; }
.lvc-root .lvc-tok + .lvc-tok { box-shadow: inset 1px 0 0 rgba(127, 127, 127, 0.45); }
.lvc-root .lvc-unknown { outline: 1px dashed var(--lvc-fg-muted); outline-offset: -1px; }
.lvc-root.lvc-mode-diff .lvc-tok { background: transparent; color: inherit; outline: none; }
.lvc-root.lvc-mode-diff .lvc-span.lvc-dnan { outline: 1px dashed var(--lvc-fg-muted); outline-offset: -1px; }
.lvc-root .lvc-span.lvc-hl { outline: 2px solid var(--lvc-accent); outline-offset: 0; }
.lvc-root .lvc-span.lvc-pinned { outline: 2px solid var(--lvc-fg); outline-offset: 1px; }
.lvc-root .lvc-fork { color: var(--lvc-fg-muted); font-family: var(--jp-ui-font-family, sans-serif); margin-right: 6px; }
.lvc-root .lvc-tail { opacity: 0.85; }
.lvc-root.lvc-mode-diff .lvc-tail { opacity: 0.5; }
/* a fixed height above the rows: hovering changes no row's position (nothing jumps under the pointer) */
.lvc-root .lvc-panel {
  height: 190px; overflow: auto; margin-bottom: 8px; border: 1px solid var(--lvc-border); border-radius: 4px;
  padding: 4px 6px; contain: strict;
}
.lvc-root .lvc-placeholder { color: var(--lvc-fg-muted); }
.lvc-root .lvc-panel-title { margin-bottom: 6px; }
.lvc-root code { font-family: var(--lvc-mono); background: var(--lvc-bg-alt); border-radius: 2px; padding: 0 2px; white-space: pre; }
.lvc-root .lvc-cols { display: flex; gap: 10px; overflow-x: auto; }
.lvc-root .lvc-col { flex: 1 1 0; min-width: 150px; border-left: 3px solid var(--lvc-border); padding-left: 6px; }
.lvc-root .lvc-col-label { font-weight: 600; }
.lvc-root .lvc-col-sum, .lvc-root .lvc-more { color: var(--lvc-fg-muted); font-variant-numeric: tabular-nums; }
.lvc-root .lvc-token-box { margin-top: 4px; }
.lvc-root .lvc-alts { margin: 2px 0 0 0; padding-left: 20px; font-variant-numeric: tabular-nums; }
.lvc-root .lvc-alt.lvc-chosen { font-weight: 600; }
`;
