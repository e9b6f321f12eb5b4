"""Notebook cells and hostile texts that more than one browser test module uses.

Each cell builds a trace in the kernel, writes its `to_dict()` to a JSON file next to the
notebook (the tests read the view's input from there) and shows the view.
"""

from __future__ import annotations

HOSTILE = "<script>window.__pwned = 1</script>"
HOSTILE_IMG = '<img src=x onerror="window.__pwned = 2">'
HOSTILE_ALT = "<b>bold</b><svg onload=\"window.__pwned = 3\"></svg>"

# 18 hand-made tokens with every per-token field, processed (sampled-from) numbers included;
# written to features.json.
FEATURES_CELL = """\
import json, pathlib
import numpy as np
import logprob_viz as lv
ninf = -np.inf
words = ["The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog", ".", "\\n",
         "It", " was", " not", " amused", " at", " all", "!"]
rng = np.random.default_rng(0)
n, k = len(words), 3
lp = np.log(rng.uniform(0.02, 0.98, n)).astype(np.float32); lp[0] = np.nan
ranks = np.where(rng.uniform(size=n) < 0.5, 1, rng.integers(2, 3000, n)); ranks[0] = 0
lp = np.where(ranks > 1, np.minimum(lp, np.log(0.04)), lp).astype(np.float32)  # outside the top 3: below its 5%
top_tokens, top_lp, top_ids = [], np.full((n, k), ninf, np.float32), np.full((n, k), -1)
for i, w in enumerate(words):
    if i == 0:
        top_tokens.append([]); continue
    alts = [w, " alt%d" % i, " other%d" % i] if ranks[i] == 1 else [" alt%d" % i, " other%d" % i, " third%d" % i]
    ps = sorted([np.exp(lp[i]) if ranks[i] == 1 else 0.5, 0.3 * (1 - np.exp(lp[i])), 0.05], reverse=True)
    top_tokens.append(alts); top_lp[i] = np.log(ps); top_ids[i] = [1000 * i + j for j in range(k)]
    if ranks[i] == 1: top_lp[i, 0] = lp[i]
ids = [1000 * i if ranks[i] == 1 else 1000 * i + 999 for i in range(n)]
t = lv.Trace(tokens=words, token_ids=ids, logprobs=lp, ranks=ranks,
             entropy=np.where(np.arange(n) == 0, np.nan, rng.uniform(0, 5, n)).astype(np.float32),
             top_tokens=top_tokens, top_logprobs=top_lp, top_ids=top_ids,
             processed_logprobs=np.where(np.isnan(lp), np.nan, lp * 0.7),
             processed_top_logprobs=np.where(np.isfinite(top_lp), top_lp * 0.7, ninf),
             prompt_len=3, meta={"model": "hand-made", "source": "test"})
pathlib.Path("features.json").write_text(json.dumps(t.to_dict()))
v = lv.LogprobView(t)
v"""
