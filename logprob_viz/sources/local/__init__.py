"""The local runner: a transformers causal LM in the kernel (`lv.load`, `lv.generate`, `lv.score`).

    runner.py         `TransformersRunner`: our own KV-cache loop, streaming, scoring
    distribution.py   per-position math over a [T, vocab] block (what a trace keeps of it)
    recording.py      the host-side record of one generation, filled chunk by chunk
    loading.py        `lv.load` and the default runner behind `lv.generate` / `lv.score`
    lens.py           the logit lens's forward pass (`runner.lens`)
    lens_readout.py   the lens's read-out of one block: norm, output embedding, the kept summary
    default_model.py  the default model: find the GGUF file, convert it once, cache it
"""
