"""The pictures' colours are the view's: the Python copy of the JS colour tables checked against them.

node imports ``js/toolkit/colors.js`` and ``js/logprob/modes.js`` themselves and prints their tables and
the colours `scale` and `readableOn` give for a grid of values in every mode and palette; the Python side must match.
"""

import json
import math
import subprocess

import pytest

from logprob_viz.views import pictures
from paths import REPO

MODES = ["probability", "logprob", "entropy", "rank", "ratio"]
VALUES = [-1.0, 0.0, 0.03, 0.1, 0.25, 0.5, 0.505, 0.77, 0.999, 1.0, 1.5, 2.2, 4.9, 7.5, 10.0, 12.0, 1, 5, 10, 11, 99,
          100, 101, 999, 1000, 1001, 50000]
RANGES = [None, [0.2, 0.6], [1.0, 3.0]]

NODE_SCRIPT = """
import { PALETTES, readableOn } from %s;
import { RANK_BUCKETS, scale } from %s;
const [modes, values, ranges] = JSON.parse(process.argv[1]);
const out = { palettes: PALETTES, buckets: RANK_BUCKETS.map((b) => [b.label, b.max === Infinity ? null : b.max, b.rgb]),
              colors: [] };
for (const mode of modes) for (const palette of Object.keys(PALETTES)) for (const range of ranges) {
  const sc = scale(mode, palette, range);
  for (const v of values) {
    const rgb = sc.rgb(v);
    out.colors.push([mode, palette, range, v, rgb, rgb ? readableOn(rgb) : null]);
  }
}
console.log(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def js():
    modules = (REPO / "js" / "toolkit" / "colors.js", REPO / "js" / "logprob" / "modes.js")
    script = NODE_SCRIPT % tuple(json.dumps(m.as_uri()) for m in modules)
    args = json.dumps([MODES, VALUES, RANGES])
    done = subprocess.run(["node", "--input-type=module", "-e", script, args], capture_output=True, text=True,
                          timeout=60, check=True)
    return json.loads(done.stdout)


def test_palette_tables_equal_the_views(js):
    assert {name: [list(c) for c in stops] for name, stops in pictures.PALETTES.items()} == js["palettes"]


def test_rank_buckets_equal_the_views(js):
    ours = [[label, None if math.isinf(top) else top, list(rgb)] for label, top, rgb in pictures.RANK_BUCKETS]
    assert ours == js["buckets"]


def test_every_colour_and_its_ink_equal_the_views(js):
    assert len(js["colors"]) == len(MODES) * 3 * len(RANGES) * len(VALUES)
    for mode, palette, color_range, value, rgb, ink in js["colors"]:
        ours = pictures.color_of(value, mode, palette, color_range)
        where = f"{mode} {palette} {color_range} {value}"
        assert (list(ours) if ours else None) == rgb, where
        assert (pictures.readable_on(ours) if ours else None) == ink, where


def test_unknown_values_have_no_colour_in_either():
    assert pictures.color_of(math.nan, "probability", "viridis") is None
    assert pictures.color_of(math.nan, "rank", "viridis") is None
