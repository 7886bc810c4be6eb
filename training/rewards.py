"""Reward functions for policy optimisation, in one registry addressable by name.

Each entry is a factory ``make(resources) -> fn``; ``fn(prompts, completions, **columns)``
returns one float per completion, the signature trl's GRPO/RLOO trainers call. Dataset columns
(``stop``, ``others``, ``persona``, ``recent``) arrive as keyword lists. Completions are first kept
as the app keeps a reply (``training.contexts.keep_as_app``: stop strings, one paragraph, lines
written as others cut, a copy of a recent reply dropped), so the policy is rewarded for what the
user would actually see.
"""

from __future__ import annotations

from typing import Any, Callable

from training.contexts import keep_as_app

RewardFn = Callable[..., list[float]]
REWARDS: dict[str, Callable[[dict[str, Any]], RewardFn]] = {}


def register(
    name: str,
) -> Callable[[Callable[[dict[str, Any]], RewardFn]], Callable[[dict[str, Any]], RewardFn]]:
    def deco(factory: Callable[[dict[str, Any]], RewardFn]) -> Callable[[dict[str, Any]], RewardFn]:
        REWARDS[name] = factory
        return factory

    return deco


def _cleaned(completions: list[str], kw: dict[str, Any]) -> list[tuple[str, bool]]:
    n = len(completions)
    personas = kw.get("persona") or [""] * n
    stops = kw.get("stop") or [[]] * n
    others = kw.get("others") or [[]] * n
    recent = kw.get("recent") or [[]] * n
    return [
        keep_as_app(c, p, s, o, r)
        for c, p, s, o, r in zip(completions, personas, stops, others, recent)
    ]


@register("reward_model")
def make_reward_model(res: dict[str, Any]) -> RewardFn:
    """The trained Bradley-Terry reward model on (its compact context view ``rm_prompt``, the
    cleaned reply); an empty reply scores ``empty_reward`` (the reward model never saw one)."""
    scorer = res["scorer"]
    empty = float(res.get("empty_reward", -5.0))

    def reward_model(prompts: list[str], completions: list[str], **kw: Any) -> list[float]:
        cleaned = _cleaned(completions, kw)
        rm_prompts = kw.get("rm_prompt") or prompts
        idx = [i for i, (t, _) in enumerate(cleaned) if t.strip()]
        scores = scorer([rm_prompts[i] for i in idx], [cleaned[i][0] for i in idx]) if idx else []
        out = [empty] * len(completions)
        for i, s in zip(idx, scores):
            out[i] = float(s)
        return out

    return reward_model


@register("judge")
def make_judge_reward(res: dict[str, Any]) -> RewardFn:
    """The teacher itself: the judge's mean score (1-5) of the cleaned reply minus 3, for the
    training context named by the ``context`` column; an empty reply scores ``empty_reward``."""
    judge, contexts = res["judge"], res["contexts"]
    empty = float(res.get("empty_reward", -2.0))

    def judge_reward(prompts: list[str], completions: list[str], **kw: Any) -> list[float]:
        cleaned = _cleaned(completions, kw)
        if hasattr(judge, "warm"):
            judge.warm([t for t, _ in cleaned if t.strip()])
        out = []
        for (text, _), cid in zip(cleaned, kw["context"]):
            ctx = contexts[cid]
            out.append(
                judge.score(ctx.scenario, ctx.persona, text).mean - 3.0 if text.strip() else empty
            )
        return out

    return judge_reward


@register("role_confusion")
def make_role_confusion(res: dict[str, Any]) -> RewardFn:
    """-1 when the model wrote lines for the user or another companion (the app cuts them)."""

    def role_confusion(prompts: list[str], completions: list[str], **kw: Any) -> list[float]:
        return [-1.0 if confused else 0.0 for _, confused in _cleaned(completions, kw)]

    return role_confusion


@register("length")
def make_length(res: dict[str, Any]) -> RewardFn:
    """Minus the fraction of the token budget used (weight it with ``policy.length_penalty``)."""
    budget = max(1, int(res.get("max_completion_length", 64)))

    def length(
        prompts: list[str],
        completions: list[str],
        completion_ids: list[list[int]] | None = None,
        **kw: Any,
    ) -> list[float]:
        if completion_ids is None:
            return [-min(1.0, len(c.split()) / budget) for c in completions]
        return [-min(1.0, len(ids) / budget) for ids in completion_ids]

    return length


def make_rewards(
    names_weights: dict[str, float], resources: dict[str, Any]
) -> tuple[list[RewardFn], list[float]]:
    """Reward functions and weights for the trainer, skipping zero weights."""
    fns, weights = [], []
    for name, w in names_weights.items():
        if w == 0:
            continue
        if name not in REWARDS:
            raise KeyError(f"Unknown reward '{name}'; known: {', '.join(REWARDS)}")
        fns.append(REWARDS[name](resources))
        weights.append(float(w))
    return fns, weights
