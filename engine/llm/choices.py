"""Constrained choice decoding: when a completion must be one of a known list of strings (the
Director's decisions), walk a token trie of the options, evaluating runs every option shares in
one batch and reading the model's scores only where options diverge (docs/performance.md)."""

from __future__ import annotations

import re
import threading
import time
from typing import Any, Callable, Iterator

from engine.llm.backend import GenRequest, GenStats


def bias_potential(
    trie: dict, token_lists: list[list[int]], bias: list[float], end: int
) -> dict[int, float]:
    """For a choice trie (token -> child node; key ``end`` where an option stops) and a prior
    ``bias`` per option (its tokens in ``token_lists``): the largest bias reachable below each
    node, by ``id(node)``; an option's end node holds its own bias. Adding
    ``phi[child] - phi[node]`` to each option's score at every branch point gives each option its
    bias along its path, so the choice becomes pi(option) * exp(bias), exactly where the bias is
    the same for every option below a branch (the runtime's ``choice_bias``; training's
    ``ChoiceConstraint``)."""
    phi: dict[int, float] = {}
    for ids, b in zip(token_lists, bias):
        node = trie
        for t in [*ids, end]:
            phi[id(node)] = max(phi.get(id(node), b), b)
            node = node[t]
        phi[id(node)] = b
    return phi


# A JSON value's opening quote is tokenized apart from the value (``choice_tokens``).
_VALUE_OPEN = re.compile(r'":\s?"')


def choice_tokens(choice: str, tokenize: Callable[[str], list[int]]) -> list[int]:
    """The tokens a constrained choice is decoded as: the text tokenized in pieces, split after
    each JSON key's ``":"`` (or ``": "``), so every value starts after the same opening-quote token. The
    canonical tokenization merges an empty value's two quotes into one token (``' ""'``), which
    makes "empty or not" a branch point of its own and costs a decision an extra model call;
    split, the empty value is one more option at the value's first token. For all other
    options the pieces give the canonical tokens. The runtime and training
    (``training.director_grpo``) both use this, so the policy trained is the one decoded."""
    pieces, rest = [], choice
    while m := _VALUE_OPEN.search(rest):
        pieces.append(rest[: m.end()])
        rest = rest[m.end() :]
    pieces.append(rest)
    return [t for piece in pieces if piece for t in tokenize(piece)]


# -- chat formatting: engine/llm/chat_format.py ----------------------------------------------------

# -- llama.cpp --------------------------------------------------------------------------------


class ChoiceDecoding:
    """The constrained-choice half of ``LlamaRuntime`` (it provides ``llm``, ``_tries``, ``_prefill``)."""

    llm: Any
    _tries: Any

    # constrained choice -------------------------------------------------------------------------
    _END = -1  # trie key marking "an option ends here"

    def _trie(self, choices: list[str]) -> dict:
        return self._choice_trie(choices)[0]

    def _choice_trie(self, choices: list[str]) -> tuple[dict, list[list[int]]]:
        """The options' token trie and each option's tokens (``choice_tokens``), cached by the
        options (a Director's menu repeats from decision to decision)."""
        key = tuple(choices)
        cached = self._tries.get(key)
        if cached is None:
            trie: dict = {}
            token_lists = []
            for c in choices:
                node = trie
                ids = choice_tokens(
                    c, lambda p: self.llm.tokenize(p.encode("utf-8"), add_bos=False, special=False)
                )
                token_lists.append(ids)
                for t in ids:
                    node = node.setdefault(t, {})
                node[self._END] = {}
            cached = self._tries[key] = (trie, token_lists)
            while len(self._tries) > 64:
                self._tries.popitem(last=False)
        return cached

    def _forced_run(self, node: dict) -> tuple[list[int], dict]:
        """The tokens every option below ``node`` shares next (no choice to make), and the node
        after them."""
        run = []
        while len(node) == 1 and self._END not in node:
            t = next(iter(node))
            run.append(t)
            node = node[t]
        return run, node

    def _bias_potential(self, req: GenRequest) -> dict[int, float]:
        """``bias_potential`` of ``req.choice_bias`` over this request's (cached) choice trie."""
        trie, token_lists = self._choice_trie(req.choices or [])
        return bias_potential(trie, token_lists, req.choice_bias or [], self._END)

    def _choose(
        self,
        node: dict,
        out: list[int],
        req: GenRequest,
        cancel: threading.Event | None,
        stats: GenStats,
        t0: float,
    ) -> Iterator[str]:
        """Pick one of ``req.choices`` token by token: greedy (temperature 0) or sampled from the
        model's distribution restricted to the tokens that keep the text a valid option.

        Tokens every remaining option shares are appended without consulting the model and
        evaluated in one batch with the next branch point, so the cost is one batched
        evaluation per real decision. Options are tokenized on their own (the canonical
        tokenization); the result equals grammar-constrained decoding restricted to that
        tokenization."""
        import numpy as np

        llm = self.llm
        rng = np.random.default_rng(req.seed)
        pending: list[int] = []  # the prompt and ``out`` (the forced start) are evaluated already
        phi = self._bias_potential(req) if req.choice_bias else {}
        out = list(out)
        n_vocab = llm.n_vocab()
        while True:
            run, node = self._forced_run(node)
            pending += run
            out += run
            if set(node) == {self._END}:
                break
            if cancel is not None and cancel.is_set():
                stats.stopped = "cancelled"
                llm.reset()
                return
            if pending:
                llm.eval(pending)
            logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(n_vocab,))
            options = [t for t in node if t != self._END]
            scores = np.array([logits[t] for t in options], dtype=np.float64)
            if self._END in node:  # an option may stop here: weigh "stop" by the end token
                options.append(self._END)
                scores = np.append(scores, logits[llm.token_eos()])
            if phi:  # the prior: each branch adds what it changes of the best bias still reachable
                scores = scores + np.array([phi[id(node[t])] - phi[id(node)] for t in options])
            if req.temperature <= 0:
                k = int(np.argmax(scores))
            else:
                p = np.exp((scores - scores.max()) / req.temperature)
                k = int(rng.choice(len(options), p=p / p.sum()))
            if options[k] == self._END:
                break
            pending = [options[k]]
            out.append(options[k])
            node = node[options[k]]
        text = llm.detokenize(out).decode("utf-8", "replace")
        stats.completion_tokens = len(out)
        stats.stopped = "stop"
        stats.ttft = time.perf_counter() - t0
        stats.seconds = stats.ttft
        yield text
