"""One trace of a column-backed corpus read from its own row group, not from whole columns.

A part's token texts, ids and alternatives are read when first needed (`parquet.LaterColumns`),
whole: right for the surprise index or a scan, but the first ``corpus[i]`` of a 1M-trace file then
read every trace's tokens to build one (3.2 s in the corpus view's open, where it shows the first
trace). `row_block(block, r)` gives a small block over the row group that holds row `r` (~10,000
rows, its columns read once and kept for the next row of that group), where the block has columns
not read yet; else the block itself.
"""

from __future__ import annotations

__all__ = ["row_block"]


def row_block(block, r: int):
    """(a block holding row `r`, `r`'s row in it): see the module docstring."""
    later = block.later
    unread = [] if later is None else sorted(n for n in later.names if n not in block.table.column_names)
    if not unread:
        return block, r
    cached = getattr(block, "_one_group", None)
    if cached is None or not cached[1] <= r < cached[1] + cached[0].table.num_rows:
        read, first = later.read_group(r, unread)  # (`parquet.LaterColumns`: checked as a whole column is)
        table = block.table.slice(first, read.num_rows).combine_chunks()
        for name in read.column_names:
            table = table.append_column(name, read.column(name))
        cached = (type(block)(table, block.vocabs, block.path), first)
        block._one_group = cached
    return cached[0], r - cached[1]
