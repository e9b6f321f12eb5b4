"""RL rollouts' mismatch (`lv.Divergence.from_logprobs`, `lv.read_rollouts`): the default model samples
rollouts (the "engine", side a) and a copy with bf16-rounded weights rescores the same tokens (the
"trainer", side b). Every per-rollout number equals a plain loop written here over the two logprob lists,
with J. Schulman's estimators written out; the files round-trip through Parquet and JSONL."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
import torch

import logprob_viz as lv

PROMPTS = ["The capital of France is", "Once upon a time", "def fibonacci(n):", "The three laws of robotics"]


@pytest.fixture(scope="module")
def rollouts(runner):
    model = copy.deepcopy(runner.model)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(torch.bfloat16).to(torch.float32))
    trainer = lv.load((model, runner.tokenizer))
    ids, lp_a, lp_b, entropy = [], [], [], []
    for i, prompt in enumerate(PROMPTS):
        t = runner.generate(prompt, max_new_tokens=12, do_sample=True, temperature=1.0, seed=i)
        rescored = trainer.score(prompt_ids=list(t.token_ids))
        ids.append(list(t.token_ids[t.prompt_len :]))
        lp_a.append(list(t.logprobs[t.prompt_len :]))
        lp_b.append(list(rescored.logprobs[t.prompt_len :]))
        entropy.append(list(t.entropy[t.prompt_len :]))
    return ids, lp_a, lp_b, entropy


def _by_loop(lp_a, lp_b, clip):
    rows = []
    for a, b in zip(lp_a, lp_b, strict=True):
        deltas = [float(y) - float(x) for x, y in zip(a, b, strict=True)]
        rows.append({
            "mean_abs_delta": sum(abs(d) for d in deltas) / len(deltas),
            "max_abs_delta": max(abs(d) for d in deltas),
            "mean_k1": sum(-d for d in deltas) / len(deltas),
            "mean_k2": sum(d * d / 2 for d in deltas) / len(deltas),
            "mean_k3": sum((math.exp(d) - 1) - d for d in deltas) / len(deltas),
            "share_outside": sum(not (1 / clip <= math.exp(d) <= clip) for d in deltas) / len(deltas)})
    return rows


@pytest.mark.parametrize("clip", [2.0, 1.0005])
def test_each_rollout_s_numbers_equal_a_loop_over_its_tokens(rollouts, clip):
    ids, lp_a, lp_b, _ = rollouts
    r = lv.Divergence.from_logprobs(ids, lp_a, lp_b, rewards=[1.0, 0.0, 0.5, 1.0], clip=clip)
    frame = r.to_pandas()
    assert list(frame["tokens"]) == [len(x) for x in ids] and list(frame["reward"]) == [1.0, 0.0, 0.5, 1.0]
    for row, expected in zip(frame.to_dict("records"), _by_loop(lp_a, lp_b, clip), strict=True):
        for key, value in expected.items():
            assert row[key] == pytest.approx(value, rel=1e-9, abs=1e-15), key
    assert frame["max_abs_delta"].max() > 1e-4  # bf16 weights do move the logprobs
    if clip < 1.01:
        assert 0 < frame["share_outside"].mean() < 1  # the band is crossed by some tokens, not all
    tokens = r.tokens_frame()
    assert len(tokens) == sum(len(x) for x in ids) and list(tokens["position"][: len(ids[0])]) == list(
        range(len(ids[0])))


def test_forking_tokens_are_the_top_fifth_by_entropy(rollouts):
    ids, lp_a, lp_b, entropy = rollouts
    r = lv.Divergence.from_logprobs(ids, lp_a, lp_b, entropy=entropy)
    flat = np.concatenate([np.asarray(e, dtype=np.float64) for e in entropy])
    assert abs(int(r.forking.sum()) - 0.2 * len(flat)) <= 1  # a fifth of the tokens (up to ties and rounding)
    assert flat[r.forking].min() > flat[~r.forking].max()  # and the most uncertain ones
    assert {"forking_mean_abs_delta", "other_mean_abs_delta"} <= set(r.to_pandas().columns)


def test_parquet_and_jsonl_files_read_with_the_user_s_column_names(tmp_path, rollouts):
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids, lp_a, lp_b, _ = rollouts
    columns = {"token_ids": "response_ids", "logprobs_a": "rollout_logprobs", "logprobs_b": "old_logprobs",
               "rewards": "score"}
    rewards = [1.0, 0.0, 0.5, 1.0]
    pq.write_table(pa.table({"response_ids": ids, "rollout_logprobs": lp_a, "old_logprobs": lp_b,
                             "score": rewards}), tmp_path / "r.parquet")
    with open(tmp_path / "r.jsonl", "w") as f:
        for row in zip(ids, lp_a, lp_b, rewards, strict=True):
            f.write(json.dumps(dict(zip(columns.values(), [list(map(int, row[0])), *map(_floats, row[1:3]), row[3]],
                                        strict=True))) + "\n")
    direct = lv.Divergence.from_logprobs(ids, lp_a, lp_b, rewards=rewards).to_pandas()
    for name in ("r.parquet", "r.jsonl"):
        read = lv.read_rollouts(tmp_path / name, columns=columns).to_pandas()
        np.testing.assert_allclose(read["mean_k3"], direct["mean_k3"], rtol=1e-6)
        assert list(read["reward"]) == rewards


def _floats(values):
    return [float(v) for v in values]


def test_bad_input_says_what_was_wrong(tmp_path, rollouts):
    ids, lp_a, lp_b, _ = rollouts
    with pytest.raises(ValueError, match="rollout 1 has"):
        lv.Divergence.from_logprobs(ids, lp_a, [lp_b[0], lp_b[1][:-1], *lp_b[2:]])
    with pytest.raises(ValueError, match="rewards must give one value per rollout"):
        lv.Divergence.from_logprobs(ids, lp_a, lp_b, rewards=[1.0])
    with pytest.raises(ValueError, match=r"missing \['logprobs_b'\]"):
        lv.read_rollouts(tmp_path / "x.jsonl", columns={"token_ids": "a", "logprobs_a": "b"})
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"ids": [1], "a": [0.1]}) + "\n")
    with pytest.raises(ValueError, match=r"line 1: no column \['b'\]"):
        lv.read_rollouts(path, columns={"token_ids": "ids", "logprobs_a": "a", "logprobs_b": "b"})
