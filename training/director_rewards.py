"""Group-level rewards for the Director, one component per function, each in [0, 1].

A *group state* is one moment of a round: the group, the scenario's transcript, the user's latest
message and the companions who already replied this round (with their replies). A Director
*decision* is the JSON the app's Director writes, ``{"speaker": NAME|"END", "directive": TEXT}``.

``GroupRewarder.evaluate(state, completion)`` parses the decision exactly as the app does
(``engine.director.policies``: speaker must be one of the allowed names, END only when the round may end;
the exact format also needs a menu directive in "menu" mode or the grammar's pattern in "free"
mode). An unparsable decision gets ``format = 0`` and is played out the way the app plays one
out: the first allowed speaker with no directive (see ``parse_decision`` for partial credit).
The chosen speaker's reply is rolled out with the frozen persona model through llama.cpp, with the
prompt built by ``GroupChat.speaker_request`` (so it is the app's prompt); rollouts are cached by
(state, speaker, directive). Components:

* ``relevance``       cosine(reply, user's message), MiniLM embeddings (judge's ``embed``), clamped;
* ``diversity``       1 - max cosine(reply, the other replies of this round); 1 when it is the
                      round's first reply (then it is the same for every sample of the state);
* ``non_redundancy``  1 - max cosine(reply, earlier companion turns in the transcript);
* ``social``          the judge's social_contribution score, mapped from 1-5 to 0-1;
* ``persona``         the judge's persona_consistency score of the speaker, 0-1;
* ``balance``         1 - the speaker's share of companion turns so far (history + this round);
* ``format``          1 for the exact app format, graded below that (``parse_decision``).

An empty reply scores 0 on relevance/diversity/non_redundancy. ``END`` (only possible when the
round may end) has no reply: it scores ``end_reward`` on every content component.

Simplification vs the paper: the reward is computed per decision (one step of the round, one
rolled-out reply), not over a whole rolled-out round, and the judge is the offline learned judge
(training/judges/learned.py, validated on length-matched pairs in docs/judge.md) rather than a
large LLM judge.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from engine.director.policies import (
    END,
    FREE_DIRECTIVE_PATTERN,
    NO_DIRECTIVE,
    Director,
    RoundRobin,
    RoundState,
    clean_directive,
)
from training.scenarios import USER

COMPONENTS = ("relevance", "diversity", "non_redundancy", "social", "persona", "balance", "format")
_FREE_DIRECTIVE = re.compile(FREE_DIRECTIVE_PATTERN)


@dataclass
class GroupState:
    """One decision point: everything the Director sees, plus the scenario for the judge."""

    id: str
    scenario: Any  # training.scenarios.Scenario
    group: Any  # engine.personas.PersonaSet
    round_replies: list[dict[str, str]] = field(
        default_factory=list
    )  # [{"speaker", "text"}] this round
    max_speakers: int = 3
    min_speakers: int = 3

    def round_state(self) -> RoundState:
        history = [
            ("user" if h["speaker"] == USER else "companion", h["speaker"])
            for h in self.scenario.history
        ]
        return RoundState.begin(
            self.group.members,
            USER,
            self.scenario.user_message,
            history,
            max_speakers=self.max_speakers,
            min_speakers=self.min_speakers,
            spoken=[r["speaker"] for r in self.round_replies],
        )

    def transcript(self) -> list[dict[str, str]]:
        """The Director's view: the scenario transcript, then this round's replies."""
        return self.scenario.transcript() + [dict(r) for r in self.round_replies]


def parse_decision(text: str, state: RoundState, mode: str) -> tuple[str | None, str, float]:
    """(speaker or None for END, directive, format score) for ``text``.

    The speaker is read as the app reads it (``Director.next``: JSON with an allowed speaker, else
    the first allowed speaker and no directive). The format score is graded so that GRPO has a
    signal before the model writes the exact format (the app's grammar enforces it at run time):
    1.0 the exact format (allowed speaker, and a menu directive in "menu" mode or the grammar's
    pattern in "free" mode); 0.5 JSON with an allowed speaker but another directive; 0.25 no valid
    JSON but a ``"speaker": "NAME"`` field naming an allowed companion (that speaker is played);
    0 otherwise (the app's fallback speaker is played)."""
    allowed = state.allowed()
    fallback = (allowed[0] if allowed else None), "", 0.0
    try:
        data = json.loads(text.strip())
        speaker, directive = data["speaker"], data.get("directive", "")
        if not isinstance(speaker, str) or not isinstance(directive, str):
            raise TypeError
    except (ValueError, KeyError, TypeError, AttributeError):
        m = re.search(r'"speaker"\s*:\s*"([^"]+)"', text)
        if m and m.group(1) in allowed:
            return m.group(1), "", 0.25
        return fallback
    if speaker == END and state.may_end():
        return None, "", 1.0
    if speaker not in allowed:
        return fallback
    if mode == "menu":
        by_name = {p.name: p for p in state.members}
        exact = directive in Director.menu(by_name[speaker], state.user_name)
    else:
        exact = bool(_FREE_DIRECTIVE.match(directive))
    return speaker, clean_directive(directive), (1.0 if exact else 0.5)


class GroupRewarder:
    """Rolls out decisions and scores the components; ``rollout(state, speaker, directive)`` is
    any function returning the speaker's cleaned reply (llama.cpp in training, fakes in tests).

    ``samples`` > 1 scores a decision on that many rolled-out replies (sample ``k`` > 0 is asked
    for as ``rollout(state, speaker, directive, sample=k)``: another seed) and averages the
    components: the reward then estimates the decision's *expected* group reward instead of one
    draw of the persona model. With a small persona model a single reply (an empty or off-topic
    one) can move a state's reward a lot (docs/director.md), so one draw ranks decisions mostly
    by luck."""

    def __init__(
        self,
        judge: Any,
        rollout: Callable[..., str],
        mode: str = "menu",
        end_reward: float = 0.5,
        samples: int = 1,
    ):
        self.judge = judge
        self.rollout_fn = rollout
        self.mode = mode
        self.end_reward = end_reward
        self.samples = max(1, int(samples))
        self._persist: Any = None
        self._rollouts: dict[tuple[str, str, str, int], str] = {}
        self._sample_scores: dict[tuple[str, str, str], list[dict[str, float]]] = {}
        self.rollout_calls = 0
        self.progress: Callable[[str], None] | None = None  # e.g. the run's log line

    PREFETCH_CHUNK = 128  # rollouts decoded (and saved) per batch call of ``prefetch``

    def with_samples(self, samples: int) -> "GroupRewarder":
        """The same rewarder scoring each decision on ``samples`` replies: it shares the rolled-out
        replies (and where they are saved), so samples it has in common are not rolled out again."""
        other = GroupRewarder(
            self.judge, self.rollout_fn, mode=self.mode, end_reward=self.end_reward, samples=samples
        )
        other._rollouts = self._rollouts
        other._persist = self._persist
        return other

    def _call(self, state: GroupState, speaker: str, directive: str, k: int) -> str:
        if k == 0:
            return self.rollout_fn(state, speaker, directive)
        return self.rollout_fn(state, speaker, directive, sample=k)

    def rollout(self, state: GroupState, speaker: str, directive: str, sample: int = 0) -> str:
        key = (state.id, speaker, directive, sample)
        if key not in self._rollouts:
            self.rollout_calls += 1
            self._rollouts[key] = self._call(state, speaker, directive, sample)
        return self._rollouts[key]

    def prefetch(self, items: list[tuple[GroupState, str | None, str]]) -> None:
        """Roll out every not yet cached (state, speaker, directive) (each of its ``samples``) at
        once when the rollout function can batch (``rollout_fn.many``, items of
        (state, speaker, directive, sample)); otherwise rollouts happen one by one later."""
        many = getattr(self.rollout_fn, "many", None)
        todo = list(
            dict.fromkeys(
                (s.id, sp, d, k)
                for s, sp, d in items
                if sp is not None
                for k in range(self.samples)
                if (s.id, sp, d, k) not in self._rollouts
            )
        )
        if many is None or len(todo) < 2:
            return
        by_id = {s.id: s for s, _, _ in items}
        t0 = time.perf_counter()
        # in chunks, each saved as it is done: a table of thousands of rollouts takes an hour on
        # a small CPU, and a stopped run then resumes from the last chunk (with a progress line)
        for a in range(0, len(todo), self.PREFETCH_CHUNK):
            chunk = todo[a : a + self.PREFETCH_CHUNK]
            texts = many([(by_id[i], sp, d, k) for i, sp, d, k in chunk])
            self.rollout_calls += len(chunk)
            for key, text in zip(chunk, texts):
                self._rollouts[key] = text
            if len(todo) > self.PREFETCH_CHUNK:
                self.save()
                if self.progress is not None:
                    done = a + len(chunk)
                    self.progress(
                        f"rollouts {done}/{len(todo)} ({(time.perf_counter() - t0) / 60:.1f} min)"
                    )

    def persist(self, path: Any, key: dict[str, Any]) -> int:
        """Keep the rolled-out replies in ``path`` (they cost most of a run's llama.cpp time):
        reuse the ones saved there under the same ``key`` (the settings they depend on) and
        save them again after every ``table``. Returns how many were reused."""
        from pathlib import Path

        self._persist = (Path(path), key)
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return 0
        if not isinstance(data, dict) or data.get("key") != key:
            return 0
        try:
            rows = {
                (str(sid), str(sp), str(d), int(k)): str(text)
                for sid, sp, d, k, text in data["rollouts"]
            }
        except (KeyError, TypeError, ValueError):  # a damaged file: roll out again, reuse nothing
            return 0
        for row, text in rows.items():
            self._rollouts.setdefault(row, text)
        return len(rows)

    def save(self) -> None:
        persist = self._persist
        if persist is None:
            return
        path, key = persist
        rows = [[sid, sp, d, k, text] for (sid, sp, d, k), text in self._rollouts.items()]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"key": key, "rollouts": rows}), encoding="utf-8")

    def evaluate(self, state: GroupState, completion: str) -> dict[str, float]:
        rs = state.round_state()
        speaker, directive, fmt = parse_decision(completion, rs, self.mode)
        out = self.decision_components(state, speaker, directive)
        out["format"] = fmt
        return out

    def decision_components(
        self, state: GroupState, speaker: str | None, directive: str
    ) -> dict[str, float]:
        """Every component but ``format`` for an already-parsed decision (also used for the
        round-robin and llama.cpp-driven Directors in the evaluation)."""
        if speaker is None:
            return {c: self.end_reward for c in COMPONENTS if c != "format"}
        each = self.sample_components(state, speaker, directive)  # cached per reply
        return {c: round(sum(e[c] for e in each) / len(each), 4) for c in each[0]}

    def sample_components(
        self, state: GroupState, speaker: str, directive: str
    ) -> list[dict[str, float]]:
        """The components of each of the decision's ``samples`` rolled-out replies, one dict per
        reply (``decision_components`` is their mean)."""
        key = (state.id, speaker, directive)
        cached = self._sample_scores.get(key)
        if cached is None:
            cached = [
                self.score_reply(state, speaker, self.rollout(state, speaker, directive, k).strip())
                for k in range(self.samples)
            ]
            self._sample_scores[key] = cached
        return [dict(c) for c in cached]

    def split_half_signal(
        self,
        states: list[GroupState],
        choices: Callable[[GroupState], list[str]],
        weights: dict[str, float],
    ) -> dict[str, Any] | None:
        """How much of a reward table's headroom a policy could actually win, rather than noise.

        The table's best decision per state ("oracle") is picked *and* scored on the same
        replies, so part of its lead is luck: the persona model happened to write a good reply
        that time. Here the best decision is picked on one reply per decision and scored on
        another (each of the ``samples`` in turn): what a policy that knew the table would
        score on fresh replies. Next to it, on the same held-back replies: the same oracle
        restricted to free turns (only the speaker chosen), round-robin, and a uniformly random
        valid decision. If the split oracle is no better than round-robin, the reward holds no
        state-dependent signal a Director could learn beyond what round-robin already does.
        None with fewer than 2 samples."""
        if self.samples < 2:
            return None
        sums: dict[str, list[float]] = {
            "split_oracle": [],
            "split_oracle_free_turns": [],
            "round_robin": [],
            "random": [],
            "in_sample_oracle": [],
        }
        for s in states:
            rs = s.round_state()
            rows = []
            for c in choices(s):
                sp, d, fmt = parse_decision(c, rs, self.mode)
                if sp is None:
                    continue
                per = [
                    total(dict(comps, format=fmt), weights)
                    for comps in self.sample_components(s, sp, d)
                ]
                rows.append((sp, d, per))
            if not rows:
                continue
            rr = RoundRobin().next(rs, s.transcript())
            for a in range(self.samples):
                b = (a + 1) % self.samples
                pick = max(rows, key=lambda r: r[2][a])
                free = [r for r in rows if r[1] == NO_DIRECTIVE] or rows
                sums["split_oracle"].append(pick[2][b])
                sums["split_oracle_free_turns"].append(max(free, key=lambda r: r[2][a])[2][b])
                sums["random"].append(sum(r[2][b] for r in rows) / len(rows))
                sums["in_sample_oracle"].append(max(r[2][b] for r in rows))
                rr_row = next(
                    (r for r in rows if r[0] == rr.speaker and r[1] == rr.directive), None
                )
                if rr_row is not None:
                    sums["round_robin"].append(rr_row[2][b])
        return {k: round(sum(v) / len(v), 4) if v else None for k, v in sums.items()}

    def table(
        self, states: list[GroupState], choices: Callable[[GroupState], list[str]]
    ) -> dict[str, dict[str, dict[str, float]]]:
        """Every decision's components for every state (``choices(state)``: the decision strings,
        e.g. ``Director.choices``), rolled out in one batched pass. Filled once before GRPO, it
        makes every training step a lookup (no rollouts while the policy trains) and shows the
        headroom: what the best decision per state would score against a baseline's."""
        parsed = {
            s.id: [(c, *parse_decision(c, s.round_state(), self.mode)) for c in choices(s)]
            for s in states
        }
        self.prefetch([(s, sp, d) for s in states for _, sp, d, _ in parsed[s.id]])
        out: dict[str, dict[str, dict[str, float]]] = {}
        for s in states:
            out[s.id] = {}
            for c, sp, d, fmt in parsed[s.id]:
                comps = self.decision_components(s, sp, d)
                comps["format"] = fmt
                out[s.id][c] = comps
        self.save()
        return out

    def score_reply(self, state: GroupState, speaker: str, reply: str) -> dict[str, float]:
        import numpy as np

        sc = state.scenario
        names = state.group.names
        history = [h["text"] for h in sc.history if h["speaker"] in names and h["text"].strip()]
        round_texts = [r["text"] for r in state.round_replies if r["text"].strip()]
        turns = [h["speaker"] for h in sc.history if h["speaker"] in names] + [
            r["speaker"] for r in state.round_replies
        ]
        balance = 1.0 - (turns.count(speaker) / len(turns)) if turns else 1.0
        if not reply:
            return {
                "relevance": 0.0,
                "diversity": 0.0,
                "non_redundancy": 0.0,
                "social": 0.0,
                "persona": 0.0,
                "balance": round(balance, 4),
            }
        e = self.judge.embed([reply, sc.user_message, *round_texts, *history])
        r = e[0]

        def clamp(x: float) -> float:
            return float(min(1.0, max(0.0, x)))

        relevance = clamp(float(r @ e[1]))
        k = len(round_texts)
        diversity = clamp(1.0 - float(np.max(e[2 : 2 + k] @ r))) if k else 1.0
        non_red = clamp(1.0 - float(np.max(e[2 + k :] @ r))) if history else 1.0
        persona = state.group.member(speaker)
        scores = self.judge.score(sc, persona, reply, others=list(state.round_replies))

        def to01(v: float) -> float:
            return clamp((float(v) - 1.0) / 4.0)

        return {
            "relevance": round(relevance, 4),
            "diversity": round(diversity, 4),
            "non_redundancy": round(non_red, 4),
            "social": round(to01(scores.values.get("social_contribution", 3.0)), 4),
            "persona": round(to01(scores.values.get("persona_consistency", 3.0)), 4),
            "balance": round(balance, 4),
        }


def total(components: dict[str, float], weights: dict[str, float]) -> float:
    """The group reward: the weighted mean of the components (weights need not sum to 1)."""
    wsum = sum(abs(w) for w in weights.values()) or 1.0
    return sum(weights.get(c, 0.0) * components.get(c, 0.0) for c in COMPONENTS) / wsum


def make_reward_funcs(
    rewarder: GroupRewarder, states: dict[str, GroupState], weights: dict[str, float]
) -> tuple[list[Callable[..., list[float]]], list[float]]:
    """One trl reward function per component with a non-zero weight (so trl logs each as
    ``rewards/<name>/mean``), all sharing ``rewarder``'s rollout and score caches. The dataset
    column ``state_id`` says which state a prompt was built from."""
    fns, ws = [], []
    for comp in COMPONENTS:
        w = float(weights.get(comp, 0.0))
        if w == 0:
            continue

        def fn(
            prompts: list[str],
            completions: list[str],
            state_id: list[str] | None = None,
            _comp: str = comp,
            **kw: Any,
        ) -> list[float]:
            pending = []
            for s, c in zip(state_id or [], completions):
                speaker, directive, _ = parse_decision(c, states[s].round_state(), rewarder.mode)
                pending.append((states[s], speaker, clean_directive(directive)))
            rewarder.prefetch(pending)  # the group's rollouts decoded together
            return [
                rewarder.evaluate(states[s], c)[_comp] for s, c in zip(state_id or [], completions)
            ]

        fn.__name__ = comp
        fns.append(fn)
        ws.append(w)
    return fns, ws
