"""`lv.ray`: a corpus past one machine, through Ray Data (docs/scale.md). Imported on first use of
``lv.ray``, never by ``import logprob_viz``; needs ``pip install 'logprob-viz[ray]'``.

    ds = lv.ray.score(ray.data.read_parquet("texts/"), column="text", top_logprobs=5, concurrency=8)
    ds.write_parquet("scored/")
    corpus = lv.Corpus.read_parquet("scored/")

``score`` / ``generate`` run the local runner in actors; ``from_vllm_rows`` reads the rows of a
``ray.data.llm`` vLLM processor (``prompt_token_ids``, ``prompt_logprobs``) into the same schema.
"""

from __future__ import annotations

from .sources.ray_data import as_dataset, generate, score
from .sources.readers.vllm_rows import from_vllm_rows, vllm_rows_table

__all__ = ["score", "generate", "from_vllm_rows", "vllm_rows_table", "as_dataset"]
