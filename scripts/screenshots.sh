#!/usr/bin/env bash
# Refresh the pictures in docs/ (shown by the README) from a fresh run of the browser tests that
# take them. Tests write their screenshots to tests/artifacts/ only; this command is the one way
# the pictures in docs/ change. Arguments go to pytest. Commit docs/ afterwards if they look right.
set -euo pipefail
cd "$(dirname "$0")/.."
LOGPROB_VIZ_SKIP_LLAMACPP=1 bash scripts/setup.sh --browser  # (no server is needed here)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

# screenshot in tests/artifacts/    picture in docs/          the test that takes it
pictures="
widget.png                 screenshot.png           tests/browser/test_widget_browser.py::test_generated_trace_hover_lists_the_model_alternatives
widget-handmade-dark.png   dark.png                 tests/browser/test_widget_browser.py::test_hand_made_trace_shows_hostile_text_as_text_whitespace_and_pinning
mode-rank.png              color-mode-rank.png      tests/browser/test_explorer_browser.py::test_color_modes_palettes_and_legend_range_from_python_and_the_legend
mode-logprob.png           color-mode-surprisal.png tests/browser/test_explorer_browser.py::test_color_modes_palettes_and_legend_range_from_python_and_the_legend
chart-ids.png              chart.png                tests/browser/test_explorer_browser.py::test_chart_other_bar_outside_top_k_ids_and_processed_side_by_side
"

tests=()
while read -r shot doc test; do
  [ -n "$shot" ] || continue
  rm -f "tests/artifacts/$shot"  # nothing stale gets copied: each picture comes from this run
  case " ${tests[*]-} " in *" $test "*) ;; *) tests+=("$test") ;; esac
done <<<"$pictures"

.venv/bin/python -m pytest -q "${tests[@]}" "$@"

mkdir -p docs
while read -r shot doc test; do
  [ -n "$shot" ] || continue
  if [ ! -f "tests/artifacts/$shot" ]; then
    echo "screenshots.sh: $test passed but did not write tests/artifacts/$shot" >&2
    exit 1
  fi
  cp "tests/artifacts/$shot" "docs/$doc"
  echo "docs/$doc <- tests/artifacts/$shot"
done <<<"$pictures"
git status --short docs/ || true
