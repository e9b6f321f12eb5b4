"""lv.read_lm_eval on samples that lm-eval 0.4.13 itself wrote (issue 48 item 4): the committed file
tests/fixtures/lm_eval/samples_lv_cities.jsonl (its README says how it was made), and a fresh run of
lm-eval's own CLI where lm-eval is installed (tests/lm_eval_peer.py). The checks are lm-eval's own
numbers: each document's acc, acc_norm and acc_bytes (written in the same file by lm-eval's
process_results) against the Choices' correct under "sum", "per_char" and "per_byte", and the
loglikelihoods against runner.choose re-scoring the same split."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import logprob_viz as lv
from lm_eval_peer import lm_eval_or_skip
from paths import REPO

FIXTURES = REPO / "tests" / "fixtures" / "lm_eval"
SAMPLES = FIXTURES / "samples_lv_cities.jsonl"
LV_CITIES_YAML = """task: lv_cities
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: "{{{{answer}}}}"
metric_list:
  - metric: acc
  - metric: acc_norm
  - metric: acc_bytes
"""


def check_against_lm_eval_metrics(path):
    samples = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    ch = lv.read_lm_eval(path)
    assert isinstance(ch, lv.Choices) and len(ch) == len(samples) and ch.meta["task"] == "lv_cities"
    for r, sample in enumerate(samples):
        arguments = sample["arguments"]
        assert ch.prompts[r] == arguments["gen_args_0"]["arg_0"]
        assert ch.option_rows[r] == [arguments[f"gen_args_{j}"]["arg_1"] for j in range(len(arguments))]
        assert ch.logprob_table[r].tolist() == [float(resp[0]) for resp in sample["filtered_resps"]]  # exact
        assert ch.gold[r] == int(sample["target"])
        assert ch.meta["docs"][r] == {"doc_id": sample["doc_id"], "doc": sample["doc"]}
    for rule, metric in (("sum", "acc"), ("per_char", "acc_norm"), ("per_byte", "acc_bytes")):
        assert ch.with_length(rule).correct.tolist() == [s[metric] == 1.0 for s in samples], (rule, metric)
    return ch, samples


def test_lm_eval_samples_file_reads_as_choices_with_lm_eval_own_metrics():
    ch, _ = check_against_lm_eval_metrics(SAMPLES)
    cal = ch.calibration(bins=2)  # what the issue asked for: calibration, the corpus view, the choices view
    assert cal.table["count"].sum() == len(ch)
    corpus = ch.to_corpus()
    assert corpus.labels == [" Kraków", " white", " São Paulo"]
    assert ch.view().bars._payload["per_prompt"] is True
    trace = ch.traces[0][0]
    assert trace.tokens == [ch.prompts[0], " Kraków"] and trace.prompt_len == 1
    with pytest.raises(ValueError, match="length='per_token' needs each option's tokens, which lm-eval did not"):
        _ = ch.with_length("per_token").probs


def test_rescoring_a_sample_with_choose_gives_lm_eval_loglikelihoods(runner):
    ch = lv.read_lm_eval(SAMPLES)
    for r in range(len(ch)):
        again = runner.choose(ch.prompts[r], ch.option_rows[r], progress=False)
        np.testing.assert_allclose(again.logprob_table[0], ch.logprob_table[r], atol=1e-4)


def test_what_is_not_a_multiple_choice_sample_is_named(tmp_path):
    line = json.loads(SAMPLES.read_text(encoding="utf-8").splitlines()[0])
    generated = {**line, "arguments": {"gen_args_0": {"arg_0": "Q", "arg_1": {"until": ["\n"]}}}}
    path = tmp_path / "samples_gen_2026.jsonl"
    path.write_text(json.dumps(generated) + "\n")
    with pytest.raises(ValueError, match="line 1: not a multiple-choice sample.*generate_until"):
        lv.read_lm_eval(path)
    path.write_text(json.dumps({**line, "target": "Berlin"}) + "\n")
    with pytest.raises(ValueError, match="the target 'Berlin' is neither an option's index"):
        lv.read_lm_eval(path)
    path.write_text('{"results": {}}\n')
    with pytest.raises(ValueError, match="not an lm-eval sample"):
        lv.read_lm_eval(path)


def test_a_fresh_lm_eval_run_reads_with_its_own_metrics(tmp_path):
    lm_eval = lm_eval_or_skip()
    from logprob_viz.sources.local.default_model import default_model_path

    data = tmp_path / "cities.json"
    data.write_text((FIXTURES / "cities.json").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "lv_cities.yaml").write_text(LV_CITIES_YAML.format(data=data), encoding="utf-8")
    peer = os.path.dirname(os.path.dirname(lm_eval.__file__))
    done = subprocess.run(
        [sys.executable, "-m", "lm_eval", "run", "--model", "hf", "--model_args",
         f"pretrained={default_model_path()},dtype=float32", "--device", "cpu", "--batch_size", "8",
         "--include_path", str(tmp_path), "--tasks", "lv_cities", "--log_samples", "--output_path",
         str(tmp_path / "out")],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": peer, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    written = sorted((tmp_path / "out").rglob("samples_lv_cities_*.jsonl"))
    # (lm-eval's CLI prints its results table last, with pytablewriter, whose own dependencies the peer
    # folder may lack: the samples are written before that, so only the file is asked for)
    assert len(written) == 1, done.stderr[-2000:]
    ch, _ = check_against_lm_eval_metrics(written[0])
    assert ch.logprob_table == pytest.approx(lv.read_lm_eval(SAMPLES).logprob_table, abs=1e-4)
    assert lv.read_lm_eval(tmp_path / "out").prompts == ch.prompts  # a folder with one samples file
