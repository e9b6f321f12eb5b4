#!/usr/bin/env bash
# Refresh the pictures in docs/ (shown by the README) from a fresh run of the browser tests that
# take them. Tests write their screenshots to tests/artifacts/ only; this command is the one way
# the pictures in docs/ change. Arguments go to pytest. Commit docs/ afterwards if they look right.
set -euo pipefail
cd "$(dirname "$0")/.."
LOGPROB_VIZ_SKIP_LLAMACPP=1 bash scripts/setup.sh --browser  # (no server is needed here)
# Fonts for the pictures' CJK and emoji text (the tests pass without them; the pictures show boxes)
if ! fc-list 2>/dev/null | grep -qi "noto color emoji"; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq fonts-noto-color-emoji fonts-noto-cjk >/dev/null
fi
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

# screenshot in tests/artifacts/    picture in docs/          the test that takes it
pictures="
widget.png                 screenshot.png           tests/browser/test_widget_browser.py::test_generated_trace_hover_lists_the_model_alternatives
look-dark.png              dark.png                 tests/browser/test_look_browser.py::test_dark_theme_live_and_the_projector_size_a_class_can_read
look-projector.png         projector.png            tests/browser/test_look_browser.py::test_dark_theme_live_and_the_projector_size_a_class_can_read
mode-rank.png              color-mode-rank.png      tests/browser/test_logprob_view_browser.py::test_color_modes_palettes_and_legend_range_from_python_and_the_legend
mode-logprob.png           color-mode-surprisal.png tests/browser/test_logprob_view_browser.py::test_color_modes_palettes_and_legend_range_from_python_and_the_legend
chart-ids.png              chart.png                tests/browser/test_logprob_view_browser.py::test_chart_other_bar_outside_top_k_ids_and_processed_side_by_side
overview.png               overview.png             tests/browser/test_overview_browser.py::test_the_overview_lists_where_the_model_hesitated_and_a_row_pins_its_token
explore-mid-stream.png     explorer-stream.png      tests/browser/test_explore_browser.py::test_type_generate_stream_stop_branch_switch_and_step
explore-three-branches.png explorer-branches.png    tests/browser/test_explore_browser.py::test_type_generate_stream_stop_branch_switch_and_step
explore-tree.png           explorer-tree.png        tests/browser/test_explore_tree_browser.py::test_the_tree_as_a_class_sees_it
explore-projector-pinned.png explorer-projector.png  tests/browser/test_explore_screen_browser.py::test_the_explorer_on_one_screen_at_projector_and_large_sizes
explore-projector-dark.png explorer-projector-dark.png tests/browser/test_explore_screen_browser.py::test_the_explorer_on_one_screen_at_projector_and_large_sizes
explore-large.png          explorer-screen.png      tests/browser/test_explore_screen_browser.py::test_the_explorer_on_one_screen_at_projector_and_large_sizes
lens.png                   lens.png                 tests/browser/test_lens_browser.py::test_hover_reads_a_layers_alternatives_and_pin_plots_the_token_through_the_layers
compare-cross-tokenizer.png compare.png             tests/browser/test_compare_browser.py::test_cross_tokenizer_comparison_on_real_models
compare-branches.png       compare-branches.png     tests/browser/test_compare_numbers_browser.py::test_two_branches_show_their_own_continuations_numbers
compare-linked-plot.png    linked-plot.png          tests/browser/test_compare_browser.py::test_plotly_point_pins_the_token_and_the_reverse
lesson-03.png              lesson.png               tests/browser/test_lessons_browser.py::test_lesson_3_runs_in_jupyterlab_and_shows_the_branch
corpus-view.png            corpus.png               tests/browser/test_corpus_browser.py::test_sort_filter_and_a_row_opens_its_trace_below
corpus-150.png             corpus-projector.png     tests/browser/test_corpus_browser.py::test_the_index_lists_a_groups_occurrences_and_one_opens_its_trace_pinned
why.png                    why.png                  tests/browser/test_why_browser.py::test_why_colours_the_earlier_text_by_the_kernels_scores_without_moving_it
guess-projector.png        guess.png                tests/browser/test_guess_browser.py::test_a_class_plays_wrong_right_reveal_and_a_button
pinned-band.png            explorer-pinned.png      tests/browser/test_pinned_browser.py::test_pinned_token_numbers_are_exact_the_page_stays_and_the_band_matches_a_sweep
host-voila.png             host-voila.png           tests/browser/hosts/test_voila.py::test_the_explorer_and_a_view_in_voila
host-voila-dark.png        host-voila-dark.png      tests/browser/hosts/test_voila.py::test_voila_dark_theme
host-marimo.png            host-marimo.png          tests/browser/hosts/test_marimo.py::test_the_view_and_the_explorer_in_marimo
host-marimo-dark.png       host-marimo-dark.png     tests/browser/hosts/test_marimo.py::test_the_view_and_the_explorer_in_marimo
divergence_hover.png       divergence.png           tests/browser/test_divergence_browser.py::test_hover_next_flip_and_pictures
badge_mismatch.png         badge_mismatch.png       tests/browser/test_badge_browser.py::test_the_badge_steps_through_the_disagreeing_tokens
rollout_hover.png          rollout.png              tests/browser/test_rollout_browser.py::test_hover_next_outside_and_pictures
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
