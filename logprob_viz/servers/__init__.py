"""Local inference servers that logprob_viz installs or builds, starts and stops on 127.0.0.1.

    vllm.py      vLLM's CPU build serving the default model's converted folder
    llamacpp.py  llama.cpp's llama-server, built from source, serving the default model's GGUF file
    llamacpp_tools.py  llama-quantize and llama-perplexity from the same build: llama.cpp's own KLD statistics
    process.py   what both share: pid/port/log files, install lock, launch, readiness, stop
"""
