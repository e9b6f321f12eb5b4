"""The byte-level BPE decoding of token strings (the vocabulary's byte table every local trace reads),
checked against GPT-2's bytes_to_unicode written out here, independently of records/tokens.py."""

import random

from logprob_viz.records.tokens import byte_level_bytes, token_bytes_table


def gpt2_byte_decoder() -> dict[str, int]:
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + len(cs) - 188)
    return {chr(c): b for b, c in zip(bs, cs, strict=True)}


def reference(raw: str, decoder: dict[str, int]) -> bytes | None:
    if any(c not in decoder for c in raw):
        return None  # a character that stands for no byte: not a byte-level string
    return bytes(decoder[c] for c in raw)


def test_random_strings_decode_as_the_per_character_table_says():
    decoder = gpt2_byte_decoder()
    rnd = random.Random(0)
    alphabet = [chr(i) for i in range(700)] + ["€", "😀", "\uffff"]
    for _ in range(5000):
        raw = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 8)))
        assert byte_level_bytes(raw) == reference(raw, decoder), repr(raw)
    assert byte_level_bytes(" a") is None  # a plain space is no stand-in (Ġ is)
    assert byte_level_bytes("Ġa") == b" a"


def test_the_default_models_table_matches_its_tokenizer(runner):
    tokenizer = runner.tokenizer
    decoder = gpt2_byte_decoder()
    table = token_bytes_table(tokenizer)
    pieces = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    special = set(tokenizer.all_special_tokens) | set(tokenizer.get_added_vocab())
    assert len(table) == len(tokenizer) == len(pieces)
    for token_id, piece in enumerate(pieces):
        expected = piece.encode() if piece in special else reference(piece, decoder)
        assert table[token_id] == expected, (token_id, piece)
    # the bytes of a few whole-character tokens are what the tokenizer itself decodes them to
    for token_id in tokenizer.convert_tokens_to_ids(["Ġthe", "Ġplanet", "Ċ", "Ġ<"]):
        assert table[token_id].decode() == tokenizer.decode([token_id])
