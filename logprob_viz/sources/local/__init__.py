"""The local runner: a transformers causal LM in the kernel (`lv.load`, `lv.generate`, `lv.score`).

    runner.py         `TransformersRunner`: the user's face (generate, stream, score, choose, lens, attribute)
    engine.py         `TransformersEngine`: the model, our own KV-cache loop, scoring (``runner.engine``)
    distribution.py   per-position math over a [T, vocab] block (what a trace keeps of it)
    recording.py      the host-side record of one generation, filled chunk by chunk
    batch.py          many texts at once: batched forward passes (``runner.score([...])``)
    choose.py         ``runner.choose``: every option after its prompt in one packed row
    next_token.py     the whole next-token distribution after a prompt (the explorer's pinned panel)
    loading.py        `lv.load` and the default runner behind `lv.generate` / `lv.score`
    lens.py           the logit lens's forward pass (`runner.lens`)
    lens_readout.py   the lens's read-out of one block: norm, output embedding, the kept summary
    attribution.py    why a token: gradient x input, integrated gradients, occlusion (`runner.attribute`)
    default_model.py  the default model: find the GGUF file, convert it once, cache it
    second_model.py   a second, different model (another tokenizer), for comparisons across models
"""
