"""`lv.Tree`: a tree of continuations that branch from the alternatives of a trace.

    tree = lv.Tree(trace, runner=runner)
    node = tree.branch(at=12, token=" robot", max_new_tokens=20)   # or token=<id>
    nodes, counts = tree.sample(8, at=12, seed=0, max_new_tokens=10)

Every node is a `Trace`. A branch is generated from token ids (``runner.generate(prompt_ids=
parent's first `at` ids + [token])``), so it is exact at the token level on the local runner
and on vLLM and llama.cpp alike: its first ``at`` tokens are the parent's, token ``at`` is the forced one with
the model's own logprob, rank, entropy and alternatives at that position (the numbers the parent
shows for that alternative), and the rest is what the runner generated from there. The first
``at`` rows are the parent's own (its numbers, its sampled-from distribution too), and so is the
prompt (``prompt_len``): the forced token and what follows are the branch's completion.
``node.meta["branch"]`` records the parent's index, the fork position and the forced token;
``node.meta["forced"]`` the positions of every token a person chose (this fork's and its parent's).
The runner is a `logprob_viz.sources.runner.Runner` (local or remote): a tree asks it
``can_continue_from_ids``, ``vocab_size`` and ``token_id(text)``, which every runner declares.
"""

from __future__ import annotations

import warnings
from collections import Counter

from .fork import checked_runner, fork, prefix_ids, with_prefix_of
from .trace import Trace
from .trace_fields import is_int

__all__ = ["Tree"]

FORMAT = "logprob_viz.tree"  # the saved format's name, not a module path


class Tree:
    """A root trace and the branches grown from it (each a `Trace`), with their parents."""

    def __init__(self, root: Trace, runner=None):
        if not isinstance(root, Trace):
            raise TypeError(f"a Tree grows from a Trace, got {type(root).__name__}")
        self.runner = runner
        self._nodes: list[Trace] = [root]
        self._parents: list[int | None] = [None]

    def __repr__(self) -> str:
        return f"<Tree of {len(self._nodes)} nodes, root {len(self.root)} tokens>"

    # -- structure ---------------------------------------------------------------------

    @property
    def root(self) -> Trace:
        return self._nodes[0]

    @property
    def nodes(self) -> list[Trace]:
        """Every node, root first, in the order they were added."""
        return list(self._nodes)

    def index(self, node) -> int:
        """A node's position in `nodes` (the node itself, or its index)."""
        if is_int(node):
            if not 0 <= node < len(self._nodes):
                raise ValueError(f"node index {node} is outside this tree's {len(self._nodes)} nodes")
            return int(node)
        for i, n in enumerate(self._nodes):
            if n is node:
                return i
        raise ValueError("that trace is not a node of this tree (pass one of tree.nodes, or its index)")

    def parent(self, node) -> Trace | None:
        """The node a node branched from (None for the root)."""
        p = self._parents[self.index(node)]
        return None if p is None else self._nodes[p]

    def children(self, node) -> list[Trace]:
        """The nodes that branched from `node`, oldest first."""
        i = self.index(node)
        return [n for n, p in zip(self._nodes, self._parents, strict=True) if p == i]

    # -- growing -------------------------------------------------------------------------

    def branch(self, at: int, token, max_new_tokens: int = 32, parent=None, top_logprobs: int | None = None,
               **sampling) -> Trace:
        """A new node: `parent`'s first `at` tokens, then `token`, then what the runner generates.

        Parameters
        ----------
        at : int
            The position to fork at, 1 <= at <= len(parent) (position 0 has no context).
        token : int or str
            A token id, or a token's text: one of the alternatives at `at`, or any text the
            tokenizer encodes as exactly one token.
        max_new_tokens : int
            Tokens generated after the forced one (0: just the forced token, scored).
        parent : a node or its index, optional
            Default: the root.
        top_logprobs : int, optional
            Default: the parent's K.
        **sampling
            As for ``runner.generate``: temperature, top_p, top_k, do_sample, seed, stop, progress.

        Bad input (a position outside the parent, a text that is not one token, a runner that
        cannot continue from token ids) raises ValueError and leaves the tree unchanged.
        """
        p = self.index(parent if parent is not None else 0)
        node = self._nodes[p]
        runner = self._runner()
        at = self._position(at, node)
        token_id = self._token_id(node, at, token)
        k = node.k if top_logprobs is None else top_logprobs
        out = fork(node, at, token_id, runner, max_new_tokens=max_new_tokens, top_logprobs=k, **sampling)
        out.meta["branch"] = {"parent": p, "at": at, "token_id": token_id, "token": out.tokens[at]}
        out.meta["forced"] = [*(i for i in node.meta.get("forced", ()) if i < at), at]
        self._nodes.append(out)
        self._parents.append(p)
        return out

    def sample(self, n: int, at: int, seed: int | None = None, max_new_tokens: int = 32, parent=None,
               top_logprobs: int | None = None, **sampling) -> tuple[list[Trace], Counter]:
        """`n` sampled continuations of `parent`'s first `at` tokens, added as nodes.

        Sample j uses ``seed + j`` (reproducible; None: unseeded). Sampling is on (temperature 1
        unless given). Returns the new nodes and a Counter of their first generated token
        (the token at position `at`): how often each was chosen. Bad input changes nothing; a
        server that fails part-way keeps the samples finished before (added to the tree; the
        error, or the cut-short last sample's ``meta["error"]``, says how many).
        """
        if not is_int(n) or n < 1:
            raise ValueError(f"n must be an int >= 1 (how many continuations), got {n!r}")
        if not is_int(max_new_tokens) or max_new_tokens < 1:
            raise ValueError(f"sampling needs max_new_tokens >= 1 (the first token is the sampled one), "
                             f"got {max_new_tokens!r}")
        if seed is not None and not is_int(seed):
            raise TypeError(f"seed must be an int or None, got {type(seed).__name__}")
        p = self.index(parent if parent is not None else 0)
        node = self._nodes[p]
        runner = self._runner()
        at = self._position(at, node)
        prefix = prefix_ids(node, at)
        k = node.k if top_logprobs is None else top_logprobs
        sampling.setdefault("do_sample", True)
        made = []
        for j in range(int(n)):
            s = None if seed is None else int(seed) + j
            try:
                out = runner.generate(prompt_ids=prefix, max_new_tokens=max_new_tokens, top_logprobs=k, seed=s,
                                      **sampling)
            except Exception:  # e.g. the server died: what was made before stays
                if made:
                    self._add(made, p)
                    warnings.warn(f"sample {j} of {n} failed (the error follows); the {j} samples made before it "
                                  f"were added to the tree (tree.nodes[-{j}:])", RuntimeWarning, stacklevel=2)
                raise
            out = with_prefix_of(node, out, at)
            out.meta["branch"] = {"parent": p, "at": at, "sample": j, "seed": s}
            out.meta["forced"] = [i for i in node.meta.get("forced", ()) if i < at]
            made.append(out)
            if out.meta.get("finish_reason") == "error":
                break  # the server broke it off (the warning says so): the rest would fail too
        counts = Counter(out.tokens[at] for out in made if len(out) > at)
        self._add(made, p)
        return made, counts

    def grow(self, node, longer: Trace) -> Trace:
        """Put `longer`, a trace that begins with `node`'s tokens (a token chosen by hand appended),
        in `node`'s place: one branch grows, its children stay where they fork. Returns `longer`."""
        i = self.index(node)
        old = self._nodes[i]
        if not isinstance(longer, Trace) or len(longer) < len(old) or \
                longer.token_ids[: len(old)].tolist() != old.token_ids.tolist():
            raise ValueError("grow() takes a trace that begins with the node's own tokens (the node, extended)")
        self._nodes[i] = longer
        return longer

    def remove(self, node) -> list[Trace]:
        """Take `node` and every node grown from it out of the tree (not the root); returns them.

        The nodes after it move up in `nodes`; `parent()` follows. (A node's ``meta["branch"]["parent"]``
        stays the index its parent had when the branch was made: the traces are not changed, so a
        `copy` taken before still holds the tree as it was.)"""
        i = self.index(node)
        if i == 0:
            raise ValueError("the root cannot be removed (it is what every branch grows from); start a new tree")
        gone = {i}
        for j in range(i + 1, len(self._nodes)):  # parents come before their children
            if self._parents[j] in gone:
                gone.add(j)
        kept = [j for j in range(len(self._nodes)) if j not in gone]
        new_index = {old: new for new, old in enumerate(kept)}
        removed = [self._nodes[j] for j in sorted(gone)]
        self._parents = [None if self._parents[j] is None else new_index[self._parents[j]] for j in kept]
        self._nodes = [self._nodes[j] for j in kept]
        return removed

    def copy(self) -> Tree:
        """A tree of the same nodes (the traces are shared, not copied): a state to go back to."""
        tree = Tree(self.root, runner=self.runner)
        tree._nodes, tree._parents = list(self._nodes), list(self._parents)
        return tree

    def _add(self, nodes: list[Trace], parent: int) -> None:
        self._nodes.extend(nodes)
        self._parents.extend([parent] * len(nodes))

    # -- saving --------------------------------------------------------------------------

    def to_dict(self) -> dict:
        """A JSON-safe dict from which `Tree.from_dict` rebuilds this tree exactly."""
        nodes = [n.to_dict() for n in self._nodes]
        return {"format": FORMAT, "version": 1, "nodes": nodes, "parents": list(self._parents)}

    @classmethod
    def from_dict(cls, d: dict, runner=None) -> Tree:
        """Rebuild a tree written by `to_dict` (give `runner` to keep branching)."""
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise ValueError(f"not a tree written by Tree.to_dict (expected format {FORMAT!r})")
        nodes, parents = d.get("nodes") or [], d.get("parents") or []
        if not nodes or len(nodes) != len(parents) or parents[0] is not None:
            raise ValueError("a tree dict needs one parent per node and the root (parent None) first")
        if any(not is_int(p) or not 0 <= p < i for i, p in enumerate(parents) if i):
            raise ValueError("each node's parent must be an earlier node's index")
        tree = cls(Trace.from_dict(nodes[0]), runner=runner)
        tree._nodes.extend(Trace.from_dict(n) for n in nodes[1:])
        tree._parents = list(parents)
        return tree

    # -- checks ----------------------------------------------------------------------------

    def _runner(self):
        return checked_runner(self.runner)

    @staticmethod
    def _position(at, node: Trace) -> int:
        if not is_int(at):
            raise ValueError(f"at must be a token position (an int), got {at!r}")
        if not 1 <= at <= len(node):
            raise ValueError(f"at={at} is outside the trace: branch at a position from 1 to {len(node)} "
                             "(position 0 has no context to choose from)")
        return int(at)

    def _token_id(self, node: Trace, at: int, token) -> int:
        """The id of `token` at position `at`: an id, an alternative's text there, or one token's text."""
        if is_int(token):
            size = self.runner.capabilities.vocab_size
            if token < 0 or (size is not None and token >= size):
                raise ValueError(f"token id {token} is outside the vocabulary (0 to {size - 1 if size else '?'})")
            return int(token)
        if not isinstance(token, str) or not token:
            raise ValueError(f"token must be a token id (int) or a token's text (str), got {token!r}")
        if at < len(node):
            if node.tokens[at] == token and node.token_ids[at] >= 0:
                return int(node.token_ids[at])
            row = list(node.top_tokens[at])
            if token in row:
                j = row.index(token)
                if j < node.k and node.top_ids[at, j] >= 0:
                    return int(node.top_ids[at, j])
        try:
            return self.runner.token_id(token)
        except ValueError as error:
            raise ValueError(f"{token!r} is neither an alternative at position {at} nor one token: {error}") from None
