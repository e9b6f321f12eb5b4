"""The speed rows: the runner's public calls, each against the floor its own benchmark defined.

- ``runner.generate`` against plain ``model.generate`` (the floor of `benchmarks.runner`), with
  the host waits per generated token and the peak memory of each;
- ``runner.score(list)`` against the padded batched forward passes alone over the same batches
  (the floor of `benchmarks.corpus`);
- the logit lens against its floor (`benchmarks.lens`: the forward pass + one read-out per block);
- ``runner.choose`` against issue 27's floor (`benchmarks.choices`: one padded forward pass of
  the prompts, each followed by its options' tokens).

Every ratio is measured side by side in one run (alternating, medians after a warm-up).
"""

from __future__ import annotations

from benchmarks.choices import SPEED_OPTIONS, floor_forward, speed_prompts
from benchmarks.corpus import padded_forward_gather, short_texts
from benchmarks.gpu.report import Row
from benchmarks.gpu.timing import count_waits, peak_memory_mib, profile_why, timed
from benchmarks.lens import routes as lens_routes
from benchmarks.lens import text_of
from benchmarks.runner import PROMPT

K = 20  # top_logprobs of generation and scoring: the mission's K
WAITS_GOAL = 1 / 16  # the decode loop reads its results on the host once per chunk of 16 steps


def generate_rows(runner, n_new: int, repeats: int) -> list[Row]:
    import torch

    model, device = runner.model, runner.device
    ids = torch.tensor([runner.tokenizer(PROMPT)["input_ids"]], device=device)

    def ours():
        return runner.generate(PROMPT, max_new_tokens=n_new, top_logprobs=K, progress=False)

    def plain():
        with torch.inference_mode():
            return model.generate(ids, max_new_tokens=n_new, do_sample=False, pad_token_id=0)

    made = (len(ours().completion), plain().shape[1] - ids.shape[1])
    assert made == (n_new, n_new), f"runner.generate and model.generate made {made} tokens, not {n_new}"
    seconds = timed({"ours": ours, "plain": plain}, device, repeats)
    rate, base = n_new / seconds["ours"], n_new / seconds["plain"]
    speed = Row(f"runner.generate, {n_new} tokens, K={K}: tokens/s", f"{rate:.1f}", f"model.generate {base:.1f}",
                rate / base, ">= 0.97")
    if speed.met == "no":
        speed.why = profile_why(ours, plain, device)
    (calls, waits), (plain_calls, plain_waits) = count_waits(ours, model, device), count_waits(plain, model, device)
    # On the CPU the loop reads every step by design (there is nothing to wait for): no goal there.
    goal = f"<= {WAITS_GOAL}" if device.type == "cuda" else "report"
    syncs = Row("host waits per generated token (decode steps after which the host waited)",
                f"{waits}/{n_new} ({calls} synchronising calls)",
                f"model.generate {plain_waits}/{n_new} ({plain_calls} calls)", waits / n_new, goal)
    if syncs.met == "no":
        syncs.why = profile_why(ours, plain, device, by="count")
    mine, theirs = peak_memory_mib(ours, device), peak_memory_mib(plain, device)
    memory = Row("peak memory above the weights, MiB (value: ours - reference)", f"{mine:.1f}",
                 f"model.generate {theirs:.1f}", mine - theirs)
    return [speed, syncs, memory]


def score_row(runner, n_texts: int, length: int, batch_tokens: int, repeats: int) -> Row:
    texts = short_texts(runner.tokenizer, n_texts, lengths=(length, length))

    def ours():
        return runner.score(texts, top_logprobs=K, batch_tokens=batch_tokens, progress=False)

    def floor():
        return padded_forward_gather(runner, texts, batch_tokens, gather=False)

    seconds = timed({"ours": ours, "floor": floor}, runner.device, repeats)
    tokens = n_texts * length
    row = Row(f"runner.score(list), {n_texts} texts x {length} tokens, K={K}, {batch_tokens} tokens a batch: "
              "tokens/s (value: throughput ratio)", f"{tokens / seconds['ours']:.0f}",
              f"padded forward alone {tokens / seconds['floor']:.0f}", seconds["floor"] / seconds["ours"], ">= 0.9")
    if row.met == "no":
        row.why = profile_why(ours, floor, runner.device)
    return row


def lens_row(runner, n_tokens: int, repeats: int, k: int = 10) -> Row:
    n, blocks, candidates = lens_routes(runner, n_tokens, k)
    floor = next(fn for name, fn in candidates.items() if "floor" in name)
    text, _ = text_of(runner, n_tokens)  # the text the floor reads

    def ours():
        return runner.lens(text, top_logprobs=k)

    seconds = timed({"ours": ours, "floor": floor}, runner.device, repeats)
    row = Row(f"runner.lens, {n} tokens, {blocks} blocks, K={k}: ms", f"{seconds['ours'] * 1000:.1f}",
              f"forward + a read-out per block {seconds['floor'] * 1000:.1f}", seconds["ours"] / seconds["floor"],
              "<= 1.2")
    if row.met == "no":
        row.why = profile_why(ours, floor, runner.device)
    return row


def choose_row(runner, n_prompts: int, repeats: int) -> Row:
    prompts = speed_prompts(n_prompts)

    def ours():
        return runner.choose(prompts, SPEED_OPTIONS, progress=False)

    def floor():
        return floor_forward(runner, prompts, SPEED_OPTIONS)

    seconds = timed({"ours": ours, "floor": floor}, runner.device, repeats)
    row = Row(f"runner.choose, {n_prompts} prompts x {len(SPEED_OPTIONS)} options: ms",
              f"{seconds['ours'] * 1000:.1f}", f"one padded forward pass {seconds['floor'] * 1000:.1f}",
              seconds["ours"] / seconds["floor"], "<= 1.3")
    if row.met == "no":
        row.why = profile_why(ours, floor, runner.device)
    return row


def divergence_row(runner, n_texts: int, length: int, batch_tokens: int, repeats: int) -> Row:
    """lv.divergence of the model in fp32 against its bf16 self (on a GPU the runner is bf16, on a CPU fp32:
    the other side is a copy in the other dtype), against the two sides' bare padded forward passes."""
    import copy

    import torch

    import logprob_viz as lv

    bf16 = runner.model.dtype == torch.bfloat16
    other = lv.load((copy.deepcopy(runner.model).to(torch.float32 if bf16 else torch.bfloat16), runner.tokenizer))
    base, candidate = (other, runner) if bf16 else (runner, other)
    texts = short_texts(runner.tokenizer, n_texts, lengths=(length, length))

    def ours():
        return lv.divergence(base, candidate, texts, top_logprobs=K, batch_tokens=batch_tokens, progress=False)

    def floor():
        for side in (base, candidate):
            padded_forward_gather(side, texts, batch_tokens, gather=False)

    seconds = timed({"ours": ours, "floor": floor}, runner.device, repeats)
    tokens = n_texts * length
    row = Row(f"lv.divergence, fp32 against bf16, {n_texts} texts x {length} tokens, K={K}: tokens/s "
              "(value: time over the two bare forward passes)", f"{tokens / seconds['ours']:.0f}",
              f"two padded forwards {tokens / seconds['floor']:.0f}", seconds["ours"] / seconds["floor"])
    del other
    return row
