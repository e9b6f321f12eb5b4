"""The explorer app, `lv.explore()`: prompt, sampling controls, streaming, manual decoding and branches
around one LogprobView (see `app.py`).

Its modules:

- `app`: the `Explorer` (its actions, and `apply`: the one place its state changes) and `explore`;
- `state`: `ExplorerState`, everything the app remembers, as traits its panels observe;
- `actions`: the one table of actions that the buttons, the keys, the view's messages and the marimo panel run;
- `model_work`: the jobs' bodies (generate, next token, choose, branch, a typed token's p), each
  returning what it made;
- `worker`: runs one job at a time in a background thread; `warmup`: a local model's first run, in the background;
- `tree_edits`: new tree, switch, rename, delete, undo, earlier / later tree, free of widgets;
  `history`: every tree made and the changes to undo;
- `forks`: where branches fork and how the outline labels them (plain Python over traces);
- `sampling_settings`: the sampling settings (`Settings`) and how they become runner arguments;
- the panels, each given the state: `controls` (prompt, settings, buttons, status line), `branches`
  (the tree's outline and branch-here), `comparing` (Compare), `panels` (Next token's choices) and
  `pinned` with `pinned_html` (the pinned token's numbers and bands) and
  `engine_choice` (whose sampler, transformers, vLLM, llama.cpp, SGLang or Ollama, those numbers follow);
- `view`: the `ExplorerView`; `layout`: the stylesheet and keys; `kernel_note`: the "no kernel" note;
- `host_panel`: the controls as one anywidget for marimo; `offline`: every branch as static HTML.
"""

from __future__ import annotations

from .app import Explorer, explore
from .view import ExplorerView

__all__ = ["Explorer", "ExplorerView", "explore"]
