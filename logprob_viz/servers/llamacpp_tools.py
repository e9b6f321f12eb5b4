"""llama.cpp's own tools beside llama-server: ``llama-quantize`` and ``llama-perplexity``.

``python -m logprob_viz.servers.llamacpp build`` builds them from the same vendored llama.cpp
source as the server (the set-up does it; a cache that has only the server gets them added).
They give the reference figures that ``lv.divergence`` is checked against: llama.cpp's own
KL-divergence statistics of a quantized GGUF file against its base::

    quantize(base_gguf, "requant.gguf", "Q2_K")                  # a requantized copy (--allow-requantize)
    save_base_logits(base_gguf, "text.txt", "base.kld", n_ctx=128)  # --kl-divergence-base: the base's log-probs
    stats = kl_divergence("requant.gguf", "base.kld")              # --kl-divergence: llama.cpp's statistics
    stats["mean_kld"], stats["same_top"], stats["ppl_ratio"]

What llama-perplexity computes (``tools/perplexity/perplexity.cpp``): the text is tokenized by
llama.cpp and cut into chunks of `n_ctx` tokens (a BOS first when the model asks for one); in
each chunk the positions ``n_ctx/2 .. n_ctx-2`` predict the next token, so ``n_ctx - 1 - n_ctx//2``
tokens per chunk are scored. The base file keeps, per scored position, the base's log-probs in
16 bits (down to 16 nats below the top); KLD(base ‖ candidate) sums over the base tokens above
-16 nats. It prints the final statistics only for 100 scored tokens or more.

`parse_kl_divergence` reads those printed statistics into a dict whose keys are llama.cpp's
names in snake case, as ``lv.Divergence.summary()`` names them (issue 44): ``mean_kld``,
``mean_kld_err``, ``median_kld``, ``kld_max``, ``kld_99_9``, ``kld_99``, ``kld_95``, ``kld_90``,
``kld_10``, ``kld_5``, ``kld_1``, ``kld_0_1``, ``kld_min``, ``rms_delta_p``, ``rms_delta_p_err``,
``same_top``, ``same_top_err``, ``mean_ln_ppl_ratio``, ``ppl_ratio``, ``tokens``, and the other
lines it prints under the same scheme (``ppl_q``, ``ppl_base``, ``ln_ppl_correlation``,
``mean_delta_p``, ``delta_p_99``, ``median_delta_p``, ..., each ``± x`` as ``<key>_err``).
Probabilities are fractions, not percent; the values keep llama.cpp's printed precision
(6 decimals for KLD and PPL, 3 for percentages).
"""

from __future__ import annotations

import logging
import re
import subprocess
from pathlib import Path

from . import llamacpp

__all__ = ["LlamaCppToolError", "tool_binary", "ensure_built", "quantize", "save_base_logits", "kl_divergence",
           "kl_divergence_output", "base_file_context", "parse_kl_divergence", "REQUIRED_KEYS"]

logger = logging.getLogger(__name__)

# the keys issue 44 names for lv.Divergence.summary(); a parse that misses one is an error
REQUIRED_KEYS = ("mean_kld", "mean_kld_err", "median_kld", "kld_max", "kld_99_9", "kld_99", "kld_95", "kld_90",
                 "kld_10", "kld_5", "kld_1", "kld_0_1", "kld_min", "rms_delta_p", "rms_delta_p_err", "same_top",
                 "same_top_err", "mean_ln_ppl_ratio", "ppl_ratio", "tokens")


class LlamaCppToolError(llamacpp.LlamaCppServerError):
    """llama-quantize or llama-perplexity is missing, failed, or printed no statistics; the message says why."""


def tool_binary(name: str, root: Path | None = None) -> Path:
    """The built program `name` (``llama-perplexity`` or ``llama-quantize``); an error that says how to build it."""
    if name not in llamacpp.TOOLS:
        raise ValueError(f"unknown llama.cpp tool {name!r}: this recipe builds {', '.join(llamacpp.TOOLS)}")
    if not llamacpp.is_built(root, (name,)):
        raise LlamaCppToolError(f"{name} is not built under {Path(root) if root else llamacpp.home()}; run: "
                                "python -m logprob_viz.servers.llamacpp build (a build that has llama-server "
                                "only gets the tools added, about a minute)")
    return llamacpp.binary(name, root)


def ensure_built(root: Path | None = None) -> None:
    """Build both tools under `root` unless they are (minutes from nothing, about one beside a built server)."""
    llamacpp.build(root, targets=llamacpp.TOOLS)


# llama-perplexity reports a bad input (a text too short, an unreadable base file) as an error
# message, "<time> E <message>" on stderr, and still exits 0; such messages make the run a failure
# here. One may follow an unfinished line ("... ETA 0.12.904.652 E kl_divergence: failed ..."):
# the ETA's end goes to stdout, so it is searched for within lines, after its time stamp.
_ERROR_MESSAGE = re.compile(r"(?:^|(?:\d+\.)+\d+ )E (?P<message>.+)$")


def _run(cmd: list, what: str) -> subprocess.CompletedProcess:
    shown = " ".join(map(str, cmd))
    logger.info("%s: %s", what, shown)
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, errors="replace")
    errors = [m["message"] for m in map(_ERROR_MESSAGE.search, proc.stderr.splitlines()) if m]
    if proc.returncode != 0 or errors:
        said = "\n".join(errors) or "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        status = f"exit {proc.returncode}" if proc.returncode else "exit 0, with error lines"
        raise LlamaCppToolError(f"{what} failed ({status}): {shown}\n{said}")
    return proc


def _threads(threads: int | None) -> list:
    return [] if threads is None else ["--threads", threads]


def quantize(source: Path | str, target: Path | str, kind: str = "Q8_0", *, threads: int | None = None,
             root: Path | None = None) -> Path:
    """Write `target`: the GGUF file `source` quantized to `kind` (``Q8_0``, ``Q2_K``, ...; llama-quantize's names).

    ``--allow-requantize``: `source` may itself be quantized (the default model is Q4_1), so the
    result carries both roundings. Tensors whose rows do not fit `kind`'s blocks get llama.cpp's
    fallback type (it says so on stderr).
    """
    source, target = Path(source), Path(target)
    if not source.is_file():
        raise LlamaCppToolError(f"no GGUF file at {source}")
    cmd = [tool_binary("llama-quantize", root), "--allow-requantize", source, target, kind]
    _run(cmd + ([] if threads is None else [threads]), f"llama-quantize to {kind}")
    return target


def save_base_logits(model: Path | str, text_file: Path | str, base_file: Path | str, *, n_ctx: int = 512,
                     chunks: int | None = None, threads: int | None = None, root: Path | None = None) -> str:
    """``llama-perplexity --kl-divergence-base``: write the base model's log-probs over `text_file` to `base_file`.

    The text must tokenize to at least ``2 * n_ctx`` tokens; `chunks` caps how many chunks of
    `n_ctx` tokens are used. Returns what llama-perplexity printed (its perplexity is on stdout).
    """
    cmd = [tool_binary("llama-perplexity", root), "--model", model, "--file", text_file,
           "--kl-divergence-base", base_file, "--ctx-size", n_ctx, *_threads(threads)]
    if chunks is not None:
        cmd += ["--chunks", chunks]
    return _run(cmd, "llama-perplexity --kl-divergence-base").stdout


def kl_divergence(model: Path | str, base_file: Path | str, *, threads: int | None = None,
                  root: Path | None = None) -> dict[str, float]:
    """``llama-perplexity --kl-divergence``: llama.cpp's statistics of `model` against `base_file`, parsed.

    The dict is `parse_kl_divergence`'s, at the context the base file was written with.
    """
    output = kl_divergence_output(model, base_file, threads=threads, root=root)
    return parse_kl_divergence(output, n_ctx=base_file_context(base_file))


def kl_divergence_output(model: Path | str, base_file: Path | str, *, threads: int | None = None,
                         root: Path | None = None) -> str:
    """What ``llama-perplexity --kl-divergence`` prints on stdout (per-chunk rows, then the statistics)."""
    cmd = [tool_binary("llama-perplexity", root), "--model", model, "--kl-divergence-base", base_file,
           "--kl-divergence", "--ctx-size", base_file_context(base_file), *_threads(threads)]
    return _run(cmd, "llama-perplexity --kl-divergence").stdout


def base_file_context(base_file: Path | str) -> int:
    """The n_ctx a llama-perplexity base file was written with: after the magic ``_logits_``, a uint32.

    Only this much of the header is read here (what the --kl-divergence run must be given);
    the whole file is ``lv.read_kld``'s to read.
    """
    path = Path(base_file)
    if not path.is_file():
        raise LlamaCppToolError(f"no base file at {path}; write one with save_base_logits")
    with open(path, "rb") as f:
        head = f.read(12)
    if len(head) < 12 or head[:8] != b"_logits_":
        raise LlamaCppToolError(f"{path} is not a llama-perplexity base file: it does not start with b'_logits_' "
                                "and a context size; write one with save_base_logits (--kl-divergence-base)")
    return int.from_bytes(head[8:12], "little")


_NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)"
# "Mean    KLD:   0.123456 ±   0.001234", "99.9%   Δp: 12.345%", "Same top p: 95.238 ± 1.345 %"
_STATISTIC = re.compile(
    rf"^(?P<label>[^:]+?)\s*:\s*(?P<value>{_NUMBER})\s*(?:±\s*(?P<err>{_NUMBER}))?\s*(?P<pct>%)?\s*$")
# one row per chunk, running totals: "   3     12.3456 ±    0.1234    0.01234 ±    0.00567 ..."
_CHUNK_ROW = re.compile(rf"^\s*\d+(?:\s+{_NUMBER}\s*±\s*{_NUMBER}\s*%?){{5}}\s*$")
_PERCENTILE = re.compile(r"^(?P<fraction>\d+(?:\.\d+)?)% (?P<of>KLD|Δp)$")
_KEYS = {
    "Mean PPL(Q)": "ppl_q", "Mean PPL(base)": "ppl_base", "Cor(ln(PPL(Q)), ln(PPL(base)))": "ln_ppl_correlation",
    "Mean ln(PPL(Q)/PPL(base))": "mean_ln_ppl_ratio", "Mean PPL(Q)/PPL(base)": "ppl_ratio",
    "Mean PPL(Q)-PPL(base)": "ppl_diff",
    "Mean KLD": "mean_kld", "Maximum KLD": "kld_max", "Median KLD": "median_kld", "Minimum KLD": "kld_min",
    "Mean Δp": "mean_delta_p", "Maximum Δp": "delta_p_max", "Median Δp": "median_delta_p", "Minimum Δp": "delta_p_min",
    "RMS Δp": "rms_delta_p", "Same top p": "same_top",
}


def _key(label: str) -> str | None:
    label = " ".join(label.split())  # llama.cpp pads labels to line up their colons
    if label in _KEYS:
        return _KEYS[label]
    m = _PERCENTILE.match(label)
    if m is None:
        return None
    of = "kld" if m["of"] == "KLD" else "delta_p"
    return f"{of}_{float(m['fraction']):g}".replace(".", "_")  # "99.0%" -> kld_99, "0.1%" -> kld_0_1


def parse_kl_divergence(output: str, *, n_ctx: int) -> dict[str, float]:
    """llama-perplexity's ``--kl-divergence`` statistics from its printed `output` (stdout), as a dict.

    `n_ctx` is the context it ran with: ``tokens`` (how many were scored) is the number of chunk
    rows times ``n_ctx - 1 - n_ctx // 2``, as llama.cpp counts. Raises LlamaCppToolError naming
    what is missing when the output holds no final statistics (llama.cpp prints them only for 100
    scored tokens or more) or lacks one of `REQUIRED_KEYS`.
    """
    stats: dict[str, float] = {}
    chunks = 0
    for line in output.splitlines():
        if _CHUNK_ROW.match(line):
            chunks += 1
            continue
        m = _STATISTIC.match(line)
        key = _key(m["label"]) if m else None
        if key is None:
            continue
        scale = 0.01 if m["pct"] else 1.0  # a percentage becomes a fraction, its ± too
        stats[key] = float(m["value"]) * scale
        if m["err"] is not None:
            stats[f"{key}_err"] = float(m["err"]) * scale
    scored = chunks * (n_ctx - 1 - n_ctx // 2)
    if "mean_kld" not in stats:
        raise LlamaCppToolError(
            f"llama-perplexity printed no KL-divergence statistics ({chunks} chunk rows, {scored} tokens scored at "
            f"n_ctx={n_ctx}); it prints them for 100 scored tokens or more: give a longer text or a larger n_ctx")
    stats["tokens"] = scored
    missing = [key for key in REQUIRED_KEYS if key not in stats]
    if missing:
        raise LlamaCppToolError(f"llama-perplexity's statistics lack {', '.join(missing)}; has its output "
                                f"format changed? got: {', '.join(sorted(stats))}")
    return stats
