"""Sources: everything that produces a `Trace`.

    runner.py    a runner's user face (`Runner`): generate / stream / score, over ``runner.engine``
    engine.py    the engine under the face (`Engine`, its `Capabilities`) and the loop that drives it
    progress.py  the progress bar of a long call, and the interrupts that keep what was made
    request.py   what a call asks for (sampling, ids, top_logprobs) and its checks
    job_lock.py  one job at a time per runner: the lock a runner owns (its waits, its notices)
    choose.py    what every runner's ``choose`` shares: its arguments, lm-eval's prompt/option split
    errors.py    `ServerError` and `LogprobFormatError`, the two errors a user catches
    audit.py     `lv.audit`: a served trace re-scored teacher-forced by a local runner, or by llama-server (its top N)
    ray_data.py  `lv.ray`: the local runner in Ray Data actors, a corpus past one machine
    local/       a transformers model in the kernel (the only place torch is imported), the lens,
                 attribution, the default model
    remote/      `lv.connect`: a model behind a server (OpenAI-compatible, vLLM, llama.cpp)
    divergence/  `lv.divergence`: two engines over the same token ids, position by position
    readers/     `lv.read`: a server's response, as it came, into a trace
"""
