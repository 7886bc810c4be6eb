"""The Director's training states and the rollouts of its decisions: the frozen persona models
playing the companions through the app's own turn path (``engine.reply.turn``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.director.policies import Director, RoundRobin, directive_mode_for
from engine.llm.adapters import AdapterBackend
from engine.llm.batch import BatchGenerator
from engine.llm.runtime import RuntimePool
from engine.models.registry import close_reader, open_reader, reader_field
from engine.persona_files import load_set
from engine.reply.prompts import from_history
from engine.reply.turn import ReplyJob, batch_replies, generate_reply
from training.contexts import domain_for
from training.director_config import DirectorConfig
from training.director_rewards import GroupState
from training.scenarios import load_scenarios

# -- states and rollouts ----------------------------------------------------------------------------


class Rollouts:
    """The frozen persona models playing the companions, with the app's own prompt and cleanup:
    ``model_path`` for every companion but those in ``models`` (companion -> GGUF). A GGUF in
    ``models`` may be a LoRA adapter for ``model_path``: it then runs as the app serves it, on the
    shared base runtime with the adapter set (``AdapterBackend``, batched with the adapter on the
    batch context)."""

    def __init__(
        self,
        model_path: str | Path,
        max_tokens: int,
        n_threads: int | None = None,
        seed: int = 0,
        models: dict[str, str] | None = None,
    ):
        self.pool = RuntimePool(n_ctx=2048, n_threads=n_threads)
        self.path = str(model_path)
        self.models = dict(models or {})
        self.max_tokens = max_tokens
        self.seed = seed
        self.adapters = {name: p for name, p in self.models.items() if is_adapter(p)}

    SAMPLE_SEED_STEP = 7919  # sample k of a decision is rolled out with seed + k * this

    def path_for(self, speaker: str) -> str:
        return self.models.get(speaker, self.path)

    def backend(self, path: str) -> Any:
        """The runtime for ``path``; an adapter GGUF runs over the shared base runtime."""
        if path in self.adapters.values():
            return AdapterBackend(self.pool.get(self.path), path)
        return self.pool.get(path)

    def _chat(self, state: Any, sample: int = 0) -> Any:
        chat = GroupChat(
            state.group,
            settings=ChatSettings(
                policy="round-robin",
                seed=self.seed + sample * self.SAMPLE_SEED_STEP,
                max_tokens=self.max_tokens,
            ),
            backend_for=lambda m: self.backend(m or self.path),
        )
        # a companion with its own model: the persona's ``model`` routes it there
        chat.members = [
            replace(p, model=self.models[p.name]) if p.name in self.models else p
            for p in chat.members
        ]
        chat.transcript = from_history(state.transcript(), chat.settings.user_name)
        return chat

    def _job(self, state: Any, speaker: str, directive: str, sample: int = 0) -> Any:
        """The reply to roll out, as the app would ask for it (prompt, speaker, recent replies)."""
        chat = self._chat(state, sample)
        persona = chat.member(speaker)
        return ReplyJob(
            chat.speaker_request(persona, directive),
            chat.speaker(persona),
            chat.recent_replies(),
            free_retry=True,
        )

    def __call__(self, state: Any, speaker: str, directive: str, sample: int = 0) -> str:
        job = self._job(state, speaker, directive, sample)
        return generate_reply(
            self.backend(self.path_for(speaker)),
            job.req,
            job.who,
            recent=job.recent,
            free_retry=job.free_retry,
        ).text.strip()

    def many(self, items: list[tuple[Any, ...]]) -> list[str]:
        """Several rollouts decoded together (``engine.reply.turn.batch_replies``), kept and
        retried as the app keeps a reply. Items are (state, speaker, directive[, sample]); same
        prompts and settings as ``__call__``; the texts differ only in the random draws."""
        texts: list[str] = [""] * len(items)
        by_model: dict[str, list[int]] = {}
        for i, item in enumerate(items):
            by_model.setdefault(self.path_for(item[1]), []).append(i)
        for path, idx in by_model.items():  # one batch per persona model
            jobs = [self._job(*items[i]) for i in idx]
            adapter = path if path in self.adapters.values() else None
            with BatchGenerator(
                self.pool.get(self.path if adapter else path),
                n_seq=min(4, len(jobs)),
                n_ctx=2048,
                adapter=adapter,
            ) as gen:
                for i, res in zip(idx, batch_replies(gen, jobs)):
                    texts[i] = res.text
        return texts


def is_adapter(path: str | Path) -> bool:
    """Whether the GGUF at ``path`` is a LoRA adapter (``general.type = adapter``)."""
    try:
        reader = open_reader(Path(path))
    except Exception:  # noqa: BLE001 - not a readable GGUF: the runtime says why when it loads it
        return False
    try:
        return reader_field(reader, "general.type") == "adapter"
    finally:
        close_reader(reader)


def build_states(cfg: DirectorConfig, split: str, rollout: Any) -> list[Any]:
    group = load_set(cfg.group)
    scenarios = load_scenarios(domain_for(group.name, cfg.domain), split)
    limit = cfg.max_states if split == "train" else cfg.eval_states
    if limit:
        scenarios = scenarios[:limit]
    states = []
    for sc in scenarios:
        s0 = GroupState(id=f"{sc.id}/0", scenario=sc, group=group)
        states.append(s0)
        if cfg.states_per_scenario >= 2:
            first = RoundRobin().next(s0.round_state(), s0.transcript()).speaker
            if first:
                reply = rollout(s0, first, "")
                if reply:
                    states.append(
                        GroupState(
                            id=f"{sc.id}/1",
                            scenario=sc,
                            group=group,
                            round_replies=[{"speaker": first, "text": reply}],
                        )
                    )
    return states


def load_states(cfg: DirectorConfig, rows: list[dict[str, Any]]) -> list[Any]:
    """States saved in ``states/states.json`` (scenario id + this round's replies)."""
    group = load_set(cfg.group)
    domain = domain_for(group.name, cfg.domain)
    by_id = {sc.id: sc for split in ("train", "heldout") for sc in load_scenarios(domain, split)}
    return [
        GroupState(
            id=r["id"], scenario=by_id[r["scenario"]], group=group, round_replies=r["round_replies"]
        )
        for r in rows
    ]


def director_prompt(state: Any, fmt: Any) -> str:
    return fmt.render(Director.messages(state.round_state(), state.transcript()))


def directive_mode(cfg: DirectorConfig, n_params: int) -> str:
    if cfg.directive_mode != "auto":
        return cfg.directive_mode
    return directive_mode_for(n_params)


def state_rows(states: list[Any]) -> list[dict[str, Any]]:
    """States as ``states/states.json`` keeps them (scenario id + this round's replies)."""
    return [
        {"id": s.id, "scenario": s.scenario.id, "round_replies": s.round_replies} for s in states
    ]
