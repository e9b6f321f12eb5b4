"""lv.ray on a real local Ray cluster (ray.init(num_cpus=2), one per module): texts scored by
actors that run the default model, written with write_parquet, read back with lv.Corpus.read_parquet
and compared with runner.score of the same list; an actor killed by its pid mid-run (Ray re-runs
its batch: every text once); an interrupted run's parts readable; `import logprob_viz` without ray."""

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import psutil
import pytest

import logprob_viz as lv
from paths import ARTIFACTS, REPO

ray = pytest.importorskip("ray")

SENTENCES = ["A robot may not injure a human being", "The year 1984 had 366 days", "def square(x): return x * x",
             "Robots 🤖 say こんにちは"]
TEXTS = [f"Item {i}: " + " ".join(SENTENCES[i % 4 :]) for i in range(40)]
WORKER = "MapBatches(_Actor)"  # in the process title of the actors Ray Data starts for lv.ray.score


@pytest.fixture(scope="module")
def cluster():
    """A local Ray of 2 CPUs. On a machine this loaded, the raylet can miss Ray's fixed 30 s start-up
    deadline: try again (a fresh session each time) before giving up."""
    for attempt in range(4):
        try:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
            break
        except Exception:  # (Ray raises a bare Exception for a node that timed out during startup)
            ray.shutdown()
            if attempt == 3:
                raise
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def folder(name):
    path = ARTIFACTS / "ray" / name
    shutil.rmtree(path, ignore_errors=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def by_index(corpus):
    """{index: (trace, metadata)} of a corpus read from the parts (their order is Ray's)."""
    out = {}
    for i in range(len(corpus)):
        metadata = corpus.metadata[i]
        assert metadata["index"] not in out, f"text {metadata['index']} came out twice"
        out[metadata["index"]] = (corpus[i], metadata)
    return out


def assert_as_scored(traces_by_index, scored):
    for index, (trace, _) in traces_by_index.items():
        want = scored[index]
        assert trace.tokens == want.tokens and trace.token_ids.tolist() == want.token_ids.tolist()
        np.testing.assert_allclose(trace.logprobs, want.logprobs, atol=1e-4, equal_nan=True)
        np.testing.assert_allclose(trace.top_logprobs, want.top_logprobs, atol=1e-4)
        assert trace.k == 5 and trace.prompt_len == want.prompt_len


@pytest.fixture(scope="module")
def scored(runner):
    return runner.score(TEXTS * 3, top_logprobs=5, progress=False)


def test_import_does_not_import_ray():
    # lv.ray itself is light too: ray is imported when a Dataset is made
    code = ("import sys, logprob_viz as lv; lv.Corpus.read_parquet; lv.ray.score; lv.ray.from_vllm_rows; "
            "assert 'ray' not in sys.modules, 'ray imported'; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.stdout.strip() == "ok", done.stderr


def test_score_equals_the_runner(cluster, scored):
    rows = ray.data.from_items([{"text": t, "index": i, "source": "test"} for i, t in enumerate(TEXTS)])
    out = folder("score")
    lv.ray.score(rows, column="text", top_logprobs=5, concurrency=2).write_parquet(str(out))
    corpus = lv.Corpus.read_parquet(out)
    got = by_index(corpus)
    assert sorted(got) == list(range(len(TEXTS)))
    assert all(m == {"index": i, "source": "test"} for i, (_, m) in got.items())
    ids = pq_column(out, "id")  # every output row names its input: here the "index" column
    assert sorted(ids) == list(range(len(TEXTS)))
    assert [corpus.metadata[i]["index"] for i in range(len(corpus))] == ids
    assert_as_scored(got, scored)
    assert sorted(corpus.labels) == sorted(map(str, range(len(TEXTS))))  # the "index" column labels the rows
    from logprob_viz.records.corpus.stats import stored_summaries

    stored = stored_summaries(corpus)  # Ray's parts carry the per-trace summaries, as to_parquet's files do
    assert stored is not None
    np.testing.assert_allclose(stored["mean_logprob"], [np.nanmean(np.asarray(corpus[i].logprobs, np.float64))
                                                        for i in range(len(corpus))], rtol=1e-12)


def pq_column(folder_path, name):
    """One column of every part under a folder, in read_parquet's order (parts sorted by path)."""
    import pyarrow.parquet as pq

    return [v for part in sorted(folder_path.glob("*.parquet")) for v in pq.read_table(part, columns=[name])[name]
            .to_pylist()]


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def test_every_row_carries_its_input_id_and_ray_is_passed_nothing_deprecated(cluster, scored):
    # issue 48 item 9: map_batches gets compute=ActorPoolStrategy (no "concurrency is deprecated" line from
    # Ray's loggers, no DeprecationWarning from our code), and every output row names its input: a list's
    # position ("index"), or a user column (id_column=)
    texts = TEXTS[:6][::-1]
    heard = _Records()
    ray_logger = logging.getLogger("ray")  # Ray's loggers do not propagate to the root: listen on theirs
    ray_logger.addHandler(heard)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rows = lv.ray.score(texts, top_logprobs=5, batch_size=2, concurrency=2).take_all()
    finally:
        ray_logger.removeHandler(heard)
    assert not [line for line in heard.lines if "deprecated" in line], heard.lines
    ours = [str(w.message) for w in caught if "logprob_viz" in w.filename]
    assert not ours, ours
    assert sorted(row["id"] for row in rows) == list(range(len(texts)))
    for row in rows:
        assert row["text"] == texts[row["id"]]  # the id names the input row whose text was scored
        want = scored[TEXTS.index(texts[row["id"]])]
        np.testing.assert_allclose(row["logprobs"], want.logprobs, atol=1e-4, equal_nan=True)
    keyed = lv.ray.score(ray.data.from_items([{"text": t, "key": f"k{i}"} for i, t in enumerate(texts[:2])]),
                         top_logprobs=5, id_column="key").take_all()
    assert sorted((row["id"], row["text"]) for row in keyed) == [("k0", texts[0]), ("k1", texts[1])]
    with pytest.raises(ValueError, match=r"id_column='nope' is not a column of the dataset \(it has text, key\)"):
        lv.ray.score(ray.data.from_items([{"text": "a", "key": 1}]), id_column="nope")
    with pytest.raises(ValueError, match=r"no 'id' or 'index' column \(it has text, key\); pass id_column="):
        lv.ray.score(ray.data.from_items([{"text": "a", "key": 1}]))


def _workers():
    return [p for p in psutil.process_iter(["cmdline"]) if WORKER in " ".join(p.info["cmdline"] or [])]


def test_a_killed_actor_is_restarted_and_its_batch_rerun(cluster, scored):
    out = folder("killed")
    rows = ray.data.from_items([{"text": t, "index": i} for i, t in enumerate(TEXTS)])
    killed = []

    def kill_one_when_running():
        # after the first part is written (an actor has its model and has done a batch), kill an actor
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not killed:
            if out.exists() and any(out.iterdir()) and _workers():
                victim = _workers()[0]
                killed.append(victim.pid)
                os.kill(victim.pid, signal.SIGKILL)
            time.sleep(0.1)

    watcher = threading.Thread(target=kill_one_when_running, daemon=True)
    watcher.start()
    # half a CPU per actor: the other CPU writes each batch's part as it comes
    lv.ray.score(rows, top_logprobs=5, concurrency=2, batch_size=2, num_cpus=0.5).write_parquet(str(out))
    watcher.join(timeout=5)
    assert killed, "no actor was killed: the run ended before the first part was written"
    assert not psutil.pid_exists(killed[0]) or psutil.Process(killed[0]).status() == psutil.STATUS_ZOMBIE
    got = by_index(lv.Corpus.read_parquet(out))
    assert sorted(got) == list(range(len(TEXTS))), "every text exactly once"
    assert_as_scored(got, scored)


INTERRUPTED = """
import sys, ray, logprob_viz as lv
ray.init(address=sys.argv[1], log_to_driver=False, configure_logging=False)
rows = ray.data.from_items([{"text": t, "index": i} for i, t in enumerate(__import__("json").loads(sys.argv[3]))])
lv.ray.score(rows, top_logprobs=5, concurrency=1, batch_size=1).write_parquet(sys.argv[2])
"""


def test_an_interrupted_run_leaves_its_parts_readable(cluster, scored):
    out = folder("interrupted")
    texts = TEXTS * 3  # enough batches that the run is still going when it is stopped
    driver = subprocess.Popen([sys.executable, "-c", INTERRUPTED, cluster, str(out), json.dumps(texts)],
                              cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not (out.exists() and len(list(out.glob("*.parquet"))) >= 3):
            assert driver.poll() is None, "the run ended by itself"
            time.sleep(0.2)
        driver.send_signal(signal.SIGINT)  # Ctrl-C in the driver
        driver.wait(timeout=120)
    finally:
        if driver.poll() is None:
            driver.kill()
    corpus = lv.Corpus.read_parquet(out, on_error="skip")
    got = by_index(corpus)
    assert 3 <= len(got) < len(texts), f"{len(got)} of {len(texts)} written before the interrupt"
    assert_as_scored(got, scored)
