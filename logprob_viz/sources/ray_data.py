"""A corpus through Ray Data: actors that each load the runner once and score or generate batches
(`lv.ray.score`, `lv.ray.generate`); the rows come out in the corpus's Parquet schema.

``Dataset.map_batches`` with a callable class and ``compute=ray.data.ActorPoolStrategy(size=concurrency)``
(Ray 2.51 deprecated map_batches' own ``concurrency``): Ray starts that many actors, each builds its
runner in ``__init__`` (``lv.load(model)``) and turns every batch of rows into a table of traces
(`records.corpus.parquet.trace_table`). Ray does the rest: scheduling, back-pressure, and retries — an
actor that dies is restarted and the batch it held re-run (Ray Data's own actor defaults,
``max_restarts=-1`` and ``max_task_retries=-1``: without limit), so every row comes out once.
``dataset.write_parquet(folder)`` writes the parts as they are made, so an interrupted run leaves
the parts already written readable by `lv.Corpus.read_parquet`.

The other columns of an input row go into the trace's ``metadata`` (JSON); ``label`` comes from a
"label", "id" or "index" column, the first there is (a list of texts gets an "index" column). Ray
gives the rows back in the order its actors finish them, not the input's: every output row carries an
``id`` column to join it back to its input (`with_ids`: the ``id_column=`` given, else the input's
"id" or "index" column; a list of texts gets "index", each text's position).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..records.corpus.parquet import trace_table
from ..records.trace_fields import is_int
from .local.loading import load

__all__ = ["score", "generate", "as_dataset", "with_ids"]
LABEL_COLUMNS = ("label", "id", "index")
ID = "id"  # the output column that names each row's input


def import_ray():
    try:
        import ray
        import ray.data  # noqa: F401  (the Data library, installed by ray[data])
    except ImportError:
        raise ImportError("lv.ray needs Ray Data: pip install 'logprob-viz[ray]' (ray[data] and pyarrow)") from None
    return ray


def as_dataset(data, column: str):
    """`data` as a ray.data.Dataset: a Dataset as it is, a list of texts (with an "index" column), or a
    Parquet path (`ray.data.read_parquet`)."""
    ray = import_ray()
    if isinstance(data, ray.data.Dataset):
        dataset = data
    elif isinstance(data, (str, Path)):
        dataset = ray.data.read_parquet(str(data))
    elif isinstance(data, (list, tuple)):
        if not data or not all(isinstance(x, str) for x in data):
            raise TypeError(f"give a non-empty list of texts (str), a ray.data.Dataset or a Parquet path; got "
                            f"{type(data[0]).__name__ if data else 'an empty list'}")
        dataset = ray.data.from_items([{column: text, "index": i} for i, text in enumerate(data)])
    else:
        raise TypeError(f"give a ray.data.Dataset, a list of texts or a Parquet path, got {type(data).__name__}")
    names = dataset.schema().names
    if column not in names:
        raise ValueError(f"the dataset has no column {column!r} (it has {', '.join(names)}); pass column=")
    return dataset


def with_ids(dataset, id_column: str | None) -> str:
    """The column that identifies each input row: `id_column` when given, else an "id" or "index" column
    (a list of texts gets "index", its position). A Dataset with neither must name one: Ray Data keeps no
    row positions (its ``zip`` is deprecated in 2.60 for that reason: order is not guaranteed)."""
    names = dataset.schema().names
    if id_column is not None:
        if id_column not in names:
            raise ValueError(f"id_column={id_column!r} is not a column of the dataset (it has {', '.join(names)})")
        return id_column
    found = next((c for c in (ID, "index") if c in names), None)
    if found is None:
        raise ValueError(f"the rows come back in the order Ray finishes them, so each needs an id to join it back "
                         f"to its input: the dataset has no 'id' or 'index' column (it has {', '.join(names)}); pass "
                         "id_column= (a column that identifies a row), or add an 'id' column")
    return found


class _Actor:
    """One Ray actor: the runner, loaded once; each call turns a batch of rows into traces."""

    def __init__(self, mode: str, model, column: str, options: dict, load_options: dict, id_column: str = ID):
        self.mode, self.column, self.options, self.id_column = mode, column, options, id_column
        self.runner = load(model, **load_options) if model is not None else load(**load_options)

    def __call__(self, batch):
        rows = batch.to_pylist()  # a pyarrow Table: a few hundred rows at most
        inputs = [row[self.column] for row in rows]
        options = dict(self.options)
        if self.mode == "generate" and options.get("seed") is not None:
            if not all("index" in row for row in rows):
                raise ValueError("seed= needs an 'index' column (item i is sampled with seed + index)")
            options["seed"] = [options["seed"] + int(row["index"]) for row in rows]
        run = self.runner.score if self.mode == "score" else self.runner.generate
        corpus = run(inputs, progress=False, **options)
        if len(corpus) != len(rows):
            raise RuntimeError(f"the runner returned {len(corpus)} traces for {len(rows)} rows (interrupted?)")
        label_column = next((c for c in LABEL_COLUMNS if c in batch.column_names), None)
        labels = ["" if label_column is None else str(row[label_column]) for row in rows]
        metadata = [{k: _jsonable(v) for k, v in row.items() if k != self.column} for row in rows]
        table = trace_table(corpus.traces, labels, metadata)
        return table.append_column(ID, batch.column(self.id_column))  # (the runner keeps the rows' order)


def _jsonable(value):
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)


def _actors(concurrency):
    """Ray's actor pool for `concurrency`: an int (that many actors) or (min, max) (Ray scales between)."""
    ray = import_ray()
    if isinstance(concurrency, tuple) and len(concurrency) == 2:
        return ray.data.ActorPoolStrategy(min_size=concurrency[0], max_size=concurrency[1])
    if is_int(concurrency) and concurrency >= 1:
        return ray.data.ActorPoolStrategy(size=concurrency)
    raise ValueError(f"concurrency is how many actors run the runner: an int >= 1 or (min, max), got {concurrency!r}")


def _map(mode, data, model, column, options, *, batch_size, concurrency, num_cpus, num_gpus, max_restarts,
         max_task_retries, load_options, ray_remote_args, id_column=None):
    dataset = as_dataset(data, column)
    id_column = with_ids(dataset, id_column)
    # Ray 2.60 deprecates remote arguments passed loose (ray_remote_args); num_cpus, num_gpus and the
    # "advanced" ones (resources, runtime_env, ...) are named parameters of map_batches, and retries are
    # Ray Data's defaults unless asked for: only then do they go loose, as Ray still takes them.
    remote = {"num_cpus": num_cpus, **ray_remote_args}
    retries = {"max_restarts": max_restarts, "max_task_retries": max_task_retries}
    remote.update({name: value for name, value in retries.items() if value is not None})
    if num_gpus is not None:
        remote["num_gpus"] = num_gpus
    return dataset.map_batches(
        _Actor, fn_constructor_args=(mode, model, column, options, dict(load_options or {}), id_column),
        batch_size=batch_size, batch_format="pyarrow", compute=_actors(concurrency), **remote)


def score(data, model=None, *, column: str = "text", top_logprobs: int = 5, batch_size: int = 32,
          concurrency: int = 1, batch_tokens: int | None = None, num_cpus: float = 1, num_gpus: float | None = None,
          max_restarts: int | None = None, max_task_retries: int | None = None, load_options: dict | None = None,
          id_column: str | None = None, **ray_remote_args):
    """Score every text of `data` teacher-forced, in Ray actors; a Dataset of corpus rows.

    Parameters
    ----------
    data : ray.data.Dataset, list of str, or a Parquet path
        Rows with a `column` of texts.
    model : str, optional
        What ``lv.load(model)`` loads in each actor; None: the default model.
    top_logprobs : int
        Alternatives per token (K).
    batch_size : int
        Rows per actor call (the runner batches them again by length, ``batch_tokens``).
    concurrency : int or (int, int)
        Actors (each holds one runner: one model in memory per actor), given to Ray as
        ``compute=ray.data.ActorPoolStrategy(size=concurrency)``; (min, max) lets Ray scale between.
    num_cpus, num_gpus : float
        Per actor (``num_gpus=1`` puts each actor on a GPU; its runner then uses CUDA).
    max_restarts, max_task_retries : int, optional
        Ray's retries when an actor dies (e.g. its process is killed): restart it, re-run the batch.
        None: Ray Data's defaults for actors (-1 each: restart and retry without limit). Given,
        they go to Ray as loose remote arguments, which Ray 2.60 still takes with a deprecation
        warning (map_batches names no parameter for them).
    id_column : str, optional
        The input column that identifies a row, copied to each output row's ``id``. None: an "id" or
        "index" column of the input (a list of texts gets "index", each text's position); a Dataset
        with neither raises a ValueError that asks for one.

    Returns
    -------
    ray.data.Dataset
        A row per text in the corpus schema (docs/scale.md) plus ``id``, in the order Ray finishes
        them, not the input's (join on ``id``): ``.write_parquet(folder)``, then
        ``lv.Corpus.read_parquet(folder)``.
    """
    options = {"top_logprobs": top_logprobs, "batch_tokens": batch_tokens}
    return _map("score", data, model, column, options, batch_size=batch_size, concurrency=concurrency,
                num_cpus=num_cpus, num_gpus=num_gpus, max_restarts=max_restarts, max_task_retries=max_task_retries,
                load_options=load_options, ray_remote_args=ray_remote_args, id_column=id_column)


def generate(data, model=None, *, column: str = "text", max_new_tokens: int = 32, top_logprobs: int = 5,
             batch_size: int = 32, concurrency: int = 1, batch_tokens: int | None = None, num_cpus: float = 1,
             num_gpus: float | None = None, max_restarts: int | None = None, max_task_retries: int | None = None,
             load_options: dict | None = None, ray_remote_args: dict | None = None, id_column: str | None = None,
             **sampling):
    """Continue every prompt of `data` in Ray actors (see `score` for the parameters); a Dataset of rows.

    `sampling` (temperature, top_p, top_k, do_sample, seed) is ``runner.generate``'s; with ``seed=s``
    the row with index ``i`` is sampled with seed ``s + i``, as ``runner.generate([...], seed=s)``
    does, whichever actor and batch it lands in.
    """
    options = {"top_logprobs": top_logprobs, "max_new_tokens": max_new_tokens, "batch_tokens": batch_tokens,
               **sampling}
    return _map("generate", data, model, column, options, batch_size=batch_size, concurrency=concurrency,
                num_cpus=num_cpus, num_gpus=num_gpus, max_restarts=max_restarts, max_task_retries=max_task_retries,
                load_options=load_options, ray_remote_args=dict(ray_remote_args or {}), id_column=id_column)
