"""The independent computation that choose tests check against: lm-eval's split of a prompt and an
option written here (trailing whitespace moved to the option, the whole tokenized, split at the
prompt's token count), and a plain unpadded forward pass of a separately loaded copy of the default
model, log_softmax in float64; and a softmax written out."""

import math

import torch


def independent_sum(model, tokenizer, prompt, option, chat=False):
    """(the option's logprob sum, its token count, the whole's ids) for `prompt` + `option`."""
    spaces = len(prompt) - len(prompt.rstrip())
    if spaces:
        prompt, option = prompt[:-spaces], prompt[-spaces:] + option
    encode = (lambda s: tokenizer(s, add_special_tokens=False)["input_ids"]) if chat else \
        (lambda s: tokenizer(s)["input_ids"])
    context, whole = encode(prompt), encode(prompt + option)
    ids = context + whole[len(context):]
    with torch.no_grad():
        logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), dim=-1)  # (T, V)
    return sum(logp[i - 1, ids[i]].item() for i in range(len(context), len(ids))), len(ids) - len(context), ids


def softmax(x):
    e = [math.exp(v - max(x)) for v in x]
    return [v / sum(e) for v in e]
