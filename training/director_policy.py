"""The Director policy's training: GRPO with LoRA (trl), the reward table warm start, and the
constraint that keeps sampled decisions to the app's exact decision strings (``ChoiceConstraint``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from engine.director.policies import Director, RoundRobin, balance_bias
from engine.llm.choices import bias_potential, choice_tokens
from training.common import TrainError, grpo_history, write_json
from training.config import save_config
from training.director_config import DirectorConfig, log, reward_weights
from training.director_rewards import make_reward_funcs, total
from training.director_rollouts import director_prompt
from training.layout import METRICS, director_dir, hf_dir, mark_done
from training.lora import peft_config


def train(
    cfg: DirectorConfig, out: Path, states: list[Any], rewarder: Any, fmt: Any, mode: str
) -> Path:
    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    folder = director_dir(out)
    torch.manual_seed(cfg.seed)
    tok = AutoTokenizer.from_pretrained(str(hf_dir(out)))
    tok.padding_side = "left"
    model = policy_model(cfg, hf_dir(out))
    by_id = {s.id: s for s in states}
    if cfg.reward_table and mode == "menu":
        t_table = time.perf_counter()
        table = rewarder.table(states, decision_choices)
        summary = table_summary(table, states, reward_weights(cfg))
        summary["signal"] = rewarder.split_half_signal(
            states, decision_choices, reward_weights(cfg)
        )
        write_json(folder / "reward_table.json", summary)
        if summary["signal"]:
            sig = summary["signal"]
            log(
                f"reward table signal (picked on one reply, scored on another): best decision "
                f"{sig['split_oracle']}, round-robin {sig['round_robin']}, random {sig['random']} "
                f"(picked and scored on the same replies: {sig['in_sample_oracle']})"
            )
        log(
            f"reward table: {sum(map(len, table.values()))} decisions in "
            f"{time.perf_counter() - t_table:.0f} s"
        )
    warm: dict[str, Any] = {}
    if cfg.warm_start_epochs > 0 and cfg.reward_table and mode == "menu":
        items = []
        for s in states:
            row = table_rewards(table[s.id], reward_weights(cfg))
            items.append(
                (director_prompt(s, fmt), row, decision_bias(s, cfg.balance_prior, list(row)))
            )
        warm = table_warm_start(
            model, tok, items, epochs=cfg.warm_start_epochs, lr=cfg.warm_start_lr, seed=cfg.seed
        )
        write_json(folder / "warm_start.json", warm)
    fns, weights = make_reward_funcs(rewarder, by_id, reward_weights(cfg))
    rows = [{"prompt": director_prompt(s, fmt), "state_id": s.id} for s in states]
    ds = Dataset.from_list(rows)
    constraint = None
    max_len = cfg.max_completion_length
    if mode == "menu":
        constraint = ChoiceConstraint(
            tok,
            {r["prompt"]: decision_choices(by_id[r["state_id"]]) for r in rows},
            {r["prompt"]: decision_bias(by_id[r["state_id"]], cfg.balance_prior) for r in rows},
        )
        constraint.attach(model)
        # a decision cut short can never be valid: the limit must fit the longest menu decision
        longest = constraint.longest + 1
        if longest > max_len:
            log(f"max_completion_length {max_len} -> {longest} (the longest menu decision)")
            max_len = longest
    args = GRPOConfig(
        output_dir=str(folder / "checkpoints"),
        max_steps=cfg.steps,
        learning_rate=cfg.learning_rate,
        per_device_train_batch_size=cfg.prompts_per_step * cfg.num_generations,
        num_generations=cfg.num_generations,
        max_completion_length=max_len,
        temperature=cfg.temperature,
        top_p=1.0,
        beta=cfg.beta,
        reward_weights=weights,
        remove_unused_columns=False,
        report_to=[],
        save_strategy="no",
        seed=cfg.seed,
        bf16=False,
        fp16=False,
        dataloader_pin_memory=False,
        dataloader_num_workers=0,
        logging_steps=1,
        disable_tqdm=False,
        gradient_checkpointing=cfg.gradient_checkpointing,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=fns,
        args=args,
        train_dataset=ds,
        processing_class=tok,
        callbacks=[_TimeLimit(cfg.max_train_minutes)] if cfg.max_train_minutes > 0 else None,
    )
    t0 = time.perf_counter()
    trainer.train()
    history, summary = grpo_history(trainer.state.log_history)
    metrics: dict[str, Any] = {
        "mode": mode,
        "states": len(states),
        "history": history,
        "steps_done": int(trainer.state.global_step),
        "rollouts": rewarder.rollout_calls,
        "seconds": round(time.perf_counter() - t0, 1),
        "constrained_generations": constraint.constrained if constraint else 0,
        "unconstrained_generations": constraint.unconstrained if constraint else 0,
    }
    metrics.update(summary)
    if warm:
        metrics["warm_start"] = {k: v for k, v in warm.items() if k != "history"}
    trainer.model.save_pretrained(str(folder / "adapter"))
    tok.save_pretrained(str(folder / "adapter"))
    write_json(folder / METRICS, metrics)
    save_config(folder, cfg)
    mark_done(folder, {k: v for k, v in metrics.items() if k != "history"})
    return folder


def table_summary(
    table: dict[str, dict[str, dict[str, float]]], states: list[Any], weights: dict[str, float]
) -> dict[str, Any]:
    """Per state: the group reward of every allowed decision, the best one, the average (what a
    uniformly random valid decision scores) and round-robin's; and their means over states."""
    rows = []
    for s in states:
        rewards = {c: round(r, 4) for c, r in table_rewards(table[s.id], weights).items()}
        rr = RoundRobin().next(s.round_state(), s.transcript())
        rr_key = Director.decision_text(rr.speaker if rr.speaker else "END", rr.directive)
        best = max(rewards, key=rewards.get)
        rows.append(
            {
                "state": s.id,
                "best": best,
                "best_reward": rewards[best],
                "mean_reward": round(sum(rewards.values()) / len(rewards), 4),
                "round_robin_reward": rewards.get(rr_key),
                "rewards": rewards,
            }
        )
    n = max(1, len(rows))

    def mean(k: str) -> float:
        return round(sum(r[k] or 0.0 for r in rows) / n, 4)

    return {
        "states": len(rows),
        "decisions": sum(len(r["rewards"]) for r in rows),
        "oracle": mean("best_reward"),
        "random": mean("mean_reward"),
        "round_robin": mean("round_robin_reward"),
        "per_state": rows,
    }


def policy_model(cfg: DirectorConfig, hf: Path) -> Any:
    """The Director's base weights with a trainable LoRA: fresh (``cfg.lora``), or the adapter
    saved at ``cfg.init_adapter`` to continue an earlier run."""
    import torch
    from peft import PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(hf), dtype=torch.float32)
    if cfg.init_adapter:
        path = Path(cfg.init_adapter).expanduser()
        if not (path / "adapter_config.json").is_file():
            raise TrainError(
                f"--init-adapter {path}: no LoRA adapter there (adapter_config.json is missing); "
                "point it at OUT/director/adapter of an earlier run."
            )
        return PeftModel.from_pretrained(model, str(path), is_trainable=True)
    return get_peft_model(model, peft_config(cfg.lora, "CAUSAL_LM", model.config.num_hidden_layers))


def decision_choices(state: Any) -> list[str]:
    """The exact decision strings the app's Director may produce in this state (menu mode)."""
    rs = state.round_state()
    return Director.choices(rs, rs.allowed(), rs.may_end())


def decision_bias(
    state: Any, strength: float, choices: list[str] | None = None
) -> list[float] | None:
    """The app's participation prior (``engine.director.policies.balance_bias``) for each of ``choices``
    (default ``decision_choices(state)``); None when it changes nothing (strength 0, or no one
    quieter)."""
    bias = balance_bias(state.round_state(), state.transcript(), strength)
    return Director.choice_bias(decision_choices(state) if choices is None else choices, bias)


def table_rewards(
    decisions: dict[str, dict[str, float]], weights: dict[str, float]
) -> dict[str, float]:
    """One state's row of the reward table as the group reward of each decision string."""
    return {c: total(comps, weights) for c, comps in decisions.items()}


def constrained_logprobs(
    model: Any, tok: Any, prompt: str, choices: list[str], bias: list[float] | None = None
) -> Any:
    """log pi(choice | prompt) for every choice under the *constrained* policy the app decodes
    with: at each token, the model's distribution restricted to the tokens that keep the text one
    of ``choices`` (then EOS), as ``ChoiceConstraint`` samples during GRPO and the runtime picks
    greedily. The log-probabilities sum to 1 over the choices (a trie of normalised steps).
    ``bias``: the app's prior per choice (``decision_bias``): the policy becomes
    pi(c) * exp(bias(c)), renormalised over the choices (the runtime's ``choice_bias``).

    The prompt is run once; its KV cache is repeated for every choice, and each choice is only
    run up to its last branch point (after it every token is forced and adds log 1 = 0).
    Differentiable with respect to the LoRA weights."""
    import inspect

    import torch

    if bias is not None:
        lp = constrained_logprobs(model, tok, prompt, choices) + torch.tensor(
            bias, dtype=torch.float32
        )
        return lp - torch.logsumexp(lp, dim=0)
    eos = tok.eos_token_id
    ids = [
        choice_tokens(c, lambda piece: tok(piece, add_special_tokens=False)["input_ids"]) + [eos]
        for c in choices
    ]
    trie: dict = {}
    for seq in ids:
        node = trie
        for t in seq:
            node = node.setdefault(t, {})
    steps: list[list[tuple[int, int, list[int]]]] = []  # per choice: (position, token, allowed)
    for seq in ids:
        node, row = trie, []
        for j, t in enumerate(seq):
            if len(node) > 1:
                row.append((j, t, list(node)))
            node = node[t]
        steps.append(row)
    length = max((row[-1][0] + 1 for row in steps if row), default=0)
    if length == 0:  # a single choice: probability 1
        return torch.zeros(len(choices))
    p_ids = tok(text=prompt, return_tensors="pt")["input_ids"]
    # the decoder body and the LM head separately: logits are only needed at branch points
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    body, head = base.model, base.lm_head
    cache_key = (
        "cache" if "cache" in inspect.signature(body.forward).parameters else "past_key_values"
    )
    out = body(input_ids=p_ids, use_cache=True)
    last = out.last_hidden_state[:, -1:, :]
    n = len(choices)
    cont = torch.full((n, max(1, length - 1)), eos, dtype=torch.long)
    for i, seq in enumerate(ids):
        part = seq[: length - 1]
        cont[i, : len(part)] = torch.tensor(part, dtype=torch.long)
    if length > 1:
        cache = (
            out.cache if hasattr(out, "cache") else out.past_key_values
        )  # transformers 5 renamed it
        cache.batch_repeat_interleave(n)
        mask = torch.ones((n, p_ids.shape[1] + cont.shape[1]), dtype=torch.long)
        rest = body(
            input_ids=cont, attention_mask=mask, use_cache=False, **{cache_key: cache}
        ).last_hidden_state
        hidden = torch.cat([last.expand(n, 1, last.shape[-1]), rest], dim=1)
    else:
        hidden = last.expand(n, 1, last.shape[-1])
    # every branch point of every choice, gathered in one indexing op (a Python loop of
    # per-position indexing would build one full-size gradient tensor per position)
    flat = [(i, j, t, allowed) for i, row in enumerate(steps) for j, t, allowed in row]
    width = max(len(a) for *_, a in flat)
    rows = head(
        hidden[torch.tensor([f[0] for f in flat]), torch.tensor([f[1] for f in flat])]
    ).float()  # [m, V]
    pad = torch.tensor([a + [a[0]] * (width - len(a)) for *_, a in flat])
    valid = torch.tensor([[k < len(a) for k in range(width)] for *_, a in flat])
    allowed_logits = rows.gather(1, pad).masked_fill(~valid, float("-inf"))
    chosen = rows.gather(1, torch.tensor([[f[2]] for f in flat])).squeeze(1)
    step_lp = chosen - torch.logsumexp(allowed_logits, dim=1)
    return torch.zeros(n, dtype=step_lp.dtype).index_add(
        0, torch.tensor([f[0] for f in flat]), step_lp
    )


def greedy_index(token_ids: list[list[int]], probs: list[float]) -> int:
    """The choice that greedy constrained decoding picks (the app's Director at temperature 0):
    at every branch point the token whose options hold the most probability (a subtree's mass is
    its prefix's probability times the conditional one, so the largest mass is the argmax)."""
    alive = list(range(len(token_ids)))
    pos = 0
    while len(alive) > 1:
        groups: dict[int | None, list[int]] = {}
        for i in alive:
            groups.setdefault(token_ids[i][pos] if pos < len(token_ids[i]) else None, []).append(i)
        alive = max(groups.values(), key=lambda g: sum(probs[i] for i in g))
        pos += 1
    return alive[0]


def table_warm_start(
    model: Any, tok: Any, items: list[tuple[Any, ...]], *, epochs: int, lr: float, seed: int = 0
) -> dict[str, Any]:
    """Exact policy gradient on the reward table before GRPO (menu mode).

    GRPO estimates, from a group of 6 sampled decisions, how to move probability towards the
    decisions that score above the group's mean. With the reward table every allowed decision of
    a state is scored already, so the group can be the whole menu and the expectation exact:
    maximise sum_c pi(c) * A(c), with A the table reward standardised over the state's decisions
    (GRPO's advantage) and pi the constrained policy (``constrained_logprobs``). One state per
    step, AdamW on the LoRA weights. ``items``: (prompt, {decision: table reward}) or (prompt,
    row, bias), ``bias`` the app's participation prior per decision (``decision_bias``; the
    policy is then the app's pi * exp(bias)). Returns per-epoch means: the expected table reward
    under the policy, and the table reward of its greedy decision."""
    import random as _random

    import torch

    params = [p for p in model.parameters() if p.requires_grad]
    optim = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    rng = _random.Random(seed)
    order = list(range(len(items)))
    history: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    tokens = [
        [choice_tokens(c, lambda p: tok(p, add_special_tokens=False)["input_ids"]) for c in it[1]]
        for it in items
    ]
    bias = [it[2] if len(it) > 2 else None for it in items]

    def measure(i: int, lp: Any) -> tuple[float, float]:
        rewards = list(items[i][1].values())
        pi = lp.detach().exp()
        return float((pi * torch.tensor(rewards)).sum()), rewards[
            greedy_index(tokens[i], pi.tolist())
        ]

    def evaluate_all() -> list[tuple[float, float]]:
        with torch.no_grad():
            return [
                measure(
                    i, constrained_logprobs(model, tok, items[i][0], list(items[i][1]), bias[i])
                )
                for i in range(len(items))
            ]

    n = max(1, len(items))
    model.eval()
    initial = evaluate_all()
    model.train()
    for epoch in range(epochs):
        rng.shuffle(order)
        exp_r, greedy_r = [], []
        for i in order:
            prompt, row = items[i][:2]
            choices, rewards = list(row), torch.tensor(list(row.values()), dtype=torch.float32)
            lp = constrained_logprobs(model, tok, prompt, choices, bias[i])
            e, g = measure(i, lp)
            exp_r.append(e)
            greedy_r.append(g)
            adv = (rewards - rewards.mean()) / (rewards.std() + 1e-6)
            loss = -(lp.exp() * adv).sum()
            optim.zero_grad()
            loss.backward()
            optim.step()
        history.append(
            {
                "epoch": epoch + 1,
                "expected_reward": round(sum(exp_r) / len(exp_r), 4),
                "greedy_reward": round(sum(greedy_r) / len(greedy_r), 4),
                "seconds": round(time.perf_counter() - t0, 1),
            }
        )
        log(
            f"warm start epoch {epoch + 1}: expected table reward {history[-1]['expected_reward']}, "
            f"greedy {history[-1]['greedy_reward']}"
        )
    model.eval()
    final = evaluate_all()
    return {
        "epochs": epochs,
        "lr": lr,
        "states": len(items),
        "history": history,
        "initial_expected_reward": round(sum(e for e, _ in initial) / n, 4),
        "initial_greedy_reward": round(sum(g for _, g in initial) / n, 4),
        "oracle": round(sum(max(it[1].values()) for it in items) / n, 4),
        "mean_decision": round(sum(sum(it[1].values()) / len(it[1]) for it in items) / n, 4),
        "final_expected_reward": round(sum(e for e, _ in final) / n, 4),
        "final_greedy_reward": round(sum(g for _, g in final) / n, 4),
        "seconds": round(time.perf_counter() - t0, 1),
    }


class ChoiceConstraint:
    """Restricts transformers' sampling to one of the known decision strings per prompt.

    Each prompt's choices are tokenized with the training tokenizer into a trie; the wrapped
    ``generate`` looks up every row's prompt (left padding removed) and passes a
    ``prefix_allowed_tokens_fn`` that allows only tokens continuing some choice (and EOS once a
    choice is complete). Rows whose prompt is unknown are left unconstrained and counted.
    ``bias_by_prompt``: the app's participation prior per choice (``decision_bias``), added to the
    sampling scores at the branch points as the runtime's ``choice_bias`` is (a logits processor)."""

    END = -1

    def __init__(
        self,
        tok: Any,
        choices_by_prompt: dict[str, list[str]],
        bias_by_prompt: dict[str, list[float] | None] | None = None,
    ):
        self.eos = tok.eos_token_id
        self.tries: dict[tuple[int, ...], dict] = {}
        self.phi: dict[
            int, float
        ] = {}  # id(trie node) -> the largest bias below it (bias_potential)
        self.longest = 0  # tokens of the longest choice
        for prompt, choices in choices_by_prompt.items():
            trie: dict = {}
            token_lists = []
            for c in choices:
                node = trie
                ids = choice_tokens(
                    c, lambda piece: tok(piece, add_special_tokens=False)["input_ids"]
                )
                token_lists.append(ids)
                self.longest = max(self.longest, len(ids))
                for t in ids:
                    node = node.setdefault(t, {})
                node[self.END] = {}
            self.tries[tuple(tok(text=prompt)["input_ids"])] = trie
            bias = (bias_by_prompt or {}).get(prompt)
            if bias:
                self.phi.update(bias_potential(trie, token_lists, bias, self.END))
        self.constrained = 0
        self.unconstrained = 0

    def bias(self, trie: dict | None, generated: list[int]) -> dict[int, float]:
        """Token -> prior score to add at this point of ``trie`` (empty: nothing to add)."""
        if trie is None:
            return {}
        node = trie
        for t in generated:
            if t not in node:
                return {}
            node = node[t]
        here = self.phi.get(id(node), 0.0)
        out = {t: self.phi.get(id(child), 0.0) - here for t, child in node.items() if t != self.END}
        if self.END in node:
            out[self.eos] = self.phi.get(id(node[self.END]), 0.0) - here
        return {t: v for t, v in out.items() if v}

    def allowed(self, trie: dict | None, generated: list[int]) -> list[int] | None:
        if trie is None:
            return None
        node = trie
        for t in generated:
            if t not in node:
                return [self.eos]  # finished (EOS, then padding)
            node = node[t]
        out = [t for t in node if t != self.END]
        if self.END in node:
            out.append(self.eos)
        return out or [self.eos]

    def attach(self, model: Any) -> None:
        original = model.generate

        def generate(*args: Any, **kw: Any) -> Any:
            ids, mask = kw.get("input_ids"), kw.get("attention_mask")
            if ids is None:
                return original(*args, **kw)
            width = ids.shape[1]
            tries = []
            for r in range(ids.shape[0]):
                row = ids[r][mask[r].bool()] if mask is not None else ids[r]
                trie = self.tries.get(tuple(row.tolist()))
                tries.append(trie)
                if trie is None:
                    self.unconstrained += 1
                else:
                    self.constrained += 1
            vocab = list(range(model.config.vocab_size))

            def fn(batch_id: int, seq: Any) -> list[int]:
                out = self.allowed(tries[batch_id], seq[width:].tolist())
                return vocab if out is None else out

            def add_bias(input_ids: Any, scores: Any) -> Any:
                for r in range(input_ids.shape[0]):
                    for t, v in self.bias(tries[r], input_ids[r, width:].tolist()).items():
                        scores[r, t] += v
                return scores

            if any(self.phi.values()):
                from transformers import LogitsProcessorList

                kw["logits_processor"] = LogitsProcessorList(
                    [*(kw.get("logits_processor") or []), add_bias]
                )
            return original(*args, prefix_allowed_tokens_fn=fn, **kw)

        model.generate = generate


def _TimeLimit(minutes: float) -> Any:  # noqa: N802 - a class factory, named as its class
    from transformers import TrainerCallback

    class TimeLimit(TrainerCallback):
        def __init__(self) -> None:
            self.t0 = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
            if time.perf_counter() - self.t0 > minutes * 60:
                control.should_training_stop = True
            return control

    return TimeLimit()
