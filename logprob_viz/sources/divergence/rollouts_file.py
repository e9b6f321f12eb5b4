"""`lv.read_rollouts(path, columns=...)`: RL rollouts from a Parquet or JSONL file (one row per rollout) into
`Rollouts` (records/divergence/rollouts.py). The file's column names are the user's, given as a mapping
from our names: token_ids, logprobs_a (the sampling engine's), logprobs_b (the trainer's), and optionally
labels, rewards, entropy.
"""

from __future__ import annotations

import json
import os

from ...records.divergence import Rollouts

__all__ = ["read_rollouts", "ROLLOUT_COLUMNS"]

# our name -> whether the file must have it
ROLLOUT_COLUMNS = {"token_ids": True, "logprobs_a": True, "logprobs_b": True, "labels": False, "rewards": False,
                   "entropy": False}


def _check_columns(columns) -> dict:
    if not isinstance(columns, dict):
        raise TypeError("columns must be a dict from our names (token_ids, logprobs_a, logprobs_b; optionally "
                        f"labels, rewards, entropy) to the file's column names, got {type(columns).__name__}")
    unknown = sorted(set(columns) - set(ROLLOUT_COLUMNS))
    missing = [name for name, needed in ROLLOUT_COLUMNS.items() if needed and name not in columns]
    if unknown or missing:
        raise ValueError(f"columns: {'unknown names ' + str(unknown) if unknown else ''}"
                         f"{'; ' if unknown and missing else ''}{'missing ' + str(missing) if missing else ''}; "
                         f"the names are {list(ROLLOUT_COLUMNS)} (token_ids, logprobs_a, logprobs_b required)")
    return dict(columns)


def _read_jsonl(path: str, wanted: list[str]) -> dict[str, list]:
    out: dict[str, list] = {name: [] for name in wanted}
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}, line {line_no}: not JSON ({error.msg})") from None
            lacking = [name for name in wanted if name not in row]
            if lacking:
                raise ValueError(f"{path}, line {line_no}: no column {lacking} (it has {sorted(row)})")
            for name in wanted:
                out[name].append(row[name])
    return out


def _read_parquet(path: str, wanted: list[str]) -> dict[str, list]:
    import pyarrow.parquet as pq  # pyarrow: with the Parquet extra, imported when a Parquet file is read

    schema = pq.read_schema(path)
    lacking = [name for name in wanted if name not in schema.names]
    if lacking:
        raise ValueError(f"{path}: no column {lacking} (it has {schema.names})")
    table = pq.read_table(path, columns=wanted)
    return {name: table.column(name).to_pylist() for name in wanted}


def read_rollouts(path, columns: dict, *, clip: float = 2.0) -> Rollouts:
    """RL rollouts from ``path`` (.parquet, or .jsonl / .ndjson: one row per rollout). ``columns`` maps our
    names to the file's, e.g. ``{"token_ids": "response_ids", "logprobs_a": "rollout_logprobs",
    "logprobs_b": "old_logprobs", "rewards": "score"}``."""
    columns = _check_columns(columns)
    path = os.fspath(path)
    wanted = list(dict.fromkeys(columns.values()))
    suffix = os.path.splitext(path)[1].lower()
    if suffix in (".parquet", ".pq"):
        data = _read_parquet(path, wanted)
    elif suffix in (".jsonl", ".ndjson", ".json"):
        data = _read_jsonl(path, wanted)
    else:
        raise ValueError(f"{path}: read_rollouts reads .parquet and .jsonl files; name the file by its format")
    given = {ours: data[theirs] for ours, theirs in columns.items()}
    return Rollouts(given["token_ids"], given["logprobs_a"], given["logprobs_b"], labels=given.get("labels"),
                    rewards=given.get("rewards"), entropy=given.get("entropy"), clip=clip)
