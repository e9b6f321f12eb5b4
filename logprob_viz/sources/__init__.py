"""Sources: everything that produces a `Trace`.

    base.py   the runner interface: generate / stream / score, progress, interrupts
    request.py  what a call asks for (sampling, ids, top_logprobs) and its checks; jobs.py one job at a time
    local/    a transformers model in the kernel (the only place torch is imported), the lens,
              the default model
    remote/   `lv.connect`: a model behind a server (OpenAI-compatible, vLLM, llama.cpp)
    readers/  `lv.read`: a server's response, as it came, into a trace
"""
