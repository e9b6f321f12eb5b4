"""The Trace contract: validation, lossless JSON, pandas, slicing, derived numbers."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from logprob_viz import Trace


def make_trace(**overrides):
    fields = dict(
        tokens=["Hello", ",", " wor", "ld", "\n"],
        token_ids=[10, 11, 12, 13, 14],
        logprobs=[np.nan, -0.5, -1.25, -0.01, -3.0],
        ranks=[0, 1, 2, 1, 7],
        entropy=[np.nan, 1.0, 2.5, 0.1, 4.0],
        top_tokens=[[], [",", "!"], [" world", " wor"], ["ld", "d"], [".", "\n"]],
        top_logprobs=[[-np.inf, -np.inf], [-0.5, -1.1], [-0.3, -1.25], [-0.01, -5.0], [-0.2, -3.0]],
        prompt_len=2,
        meta={"source": "test", "model": "none"},
    )
    fields.update(overrides)
    return Trace(**fields)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("logprobs", [0.0, 0.0], "logprobs has 2 entries but there are 5 tokens"),
        ("ranks", [[1, 2, 3, 4, 5]], "ranks must be one-dimensional"),
        ("token_bytes", [b"a"], "token_bytes has 1 entries"),
        ("top_tokens", [[]] * 4, "top_tokens has 4 entries"),
        ("top_logprobs", np.zeros((5, 1)), "top_logprobs has 1 columns"),
        ("top_logprobs", np.zeros((4, 2)), r"top_logprobs must have shape \[N=5, K\]"),
        ("prompt_len", 6, "prompt_len must be an int between 0 and the number of tokens"),
        ("processed_logprobs", np.zeros(5), "processed_logprobs and processed_top_logprobs go together"),
        ("flags", [[]] * 3, "flags has 3 entries"),
    ],
)
def test_mismatched_shapes_name_the_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        make_trace(**{field: value})


def test_tokens_must_be_a_list():
    with pytest.raises(TypeError, match="tokens must be a list"):
        Trace(tokens="abc")


def test_json_round_trip_is_exact():
    rng = np.random.default_rng(0)
    # The arrays as given, in the dtypes the record keeps: the round trip is compared with these
    # inputs, not with the trace's own copies of them.
    arrays = dict(
        token_ids=np.array([10, 11, 12, 13, 14], np.int32),
        logprobs=np.r_[np.nan, rng.normal(size=4)].astype(np.float32),
        ranks=np.array([0, 1, 2, 1, 7], np.int32),
        entropy=np.array([np.nan, 1.0, 2.5, 0.1, 4.0], np.float32),
        top_logprobs=np.array(
            [[-np.inf, -np.inf], [-0.5, -1.1], [-0.3, -1.25], [-0.01, -5.0], [-0.2, -3.0]], np.float32
        ),
        top_ids=np.array([[-1, -1], [11, 15], [16, 12], [13, 17], [18, 14]], np.int32),
        processed_logprobs=np.r_[np.nan, np.nan, -np.inf, rng.normal(size=2)].astype(np.float32),
        processed_top_logprobs=rng.normal(size=(5, 2)).astype(np.float32),
    )
    token_bytes = [b"Hello", b",", b" wor", b"\xe2\x80", b"\x99"]
    tokens = ["Hello", ",", " wor", "\\xe2\\x80", "\\x99"]
    top_tokens = [[], [",", "!"], [" world", " wor"], ["ld", "d"], [".", "\n"]]
    meta = {"source": "test", "nested": {"temperature": 0.7, "stop": None}}
    flags = [[], [], ["collided"], ["no_bytes", "outside_top_k"], []]
    trace = make_trace(token_bytes=token_bytes, tokens=tokens, top_tokens=top_tokens, meta=meta, flags=flags, **arrays)
    back = Trace.from_dict(json.loads(json.dumps(trace.to_dict())))
    assert back.tokens == tokens and back.token_bytes == token_bytes
    assert back.top_tokens == top_tokens and back.meta == meta and back.prompt_len == 2
    assert back.flags == flags
    for name, given in arrays.items():
        got = getattr(back, name)
        assert got.dtype == given.dtype and got.shape == given.shape, name
        assert got.tobytes() == given.tobytes(), f"{name} changed in the JSON round trip"


def test_text_joins_bytes_so_split_characters_are_whole():
    trace = Trace(tokens=["\\xe2\\x80", "\\x99s"], token_bytes=[b"\xe2\x80", b"\x99s"])
    assert trace.text == "\u2019s"


def test_slicing_keeps_prompt_boundary_and_arrays():
    trace = make_trace()
    tail = trace[1:4]
    assert len(tail) == 3 and tail.prompt_len == 1 and tail.tokens == [",", " wor", "ld"]
    assert tail.top_logprobs.shape == (3, 2)
    assert trace.completion.tokens == [" wor", "ld", "\n"] and trace.completion.prompt_len == 0
    assert make_trace(flags=[[], ["a"], [], ["b"], []])[1:4].flags == [["a"], [], ["b"]]


def test_perplexity_and_mean_logprob_skip_unknown():
    trace = make_trace()
    mean = (-0.5 - 1.25 - 0.01 - 3.0) / 4
    assert trace.mean_logprob() == pytest.approx(mean, rel=1e-6)
    assert trace.perplexity() == pytest.approx(math.exp(-mean), rel=1e-6)


def test_to_pandas_has_one_row_per_token():
    df = make_trace().to_pandas()
    assert list(df["token"]) == ["Hello", ",", " wor", "ld", "\n"]
    assert list(df["is_prompt"]) == [True, True, False, False, False]
    assert df["prob"].iloc[1] == pytest.approx(math.exp(-0.5))


def test_import_is_light():
    code = (
        "import sys, logprob_viz; "
        "bad = [m for m in ('torch', 'transformers', 'plotly', 'anywidget', 'logprob_viz.views') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
