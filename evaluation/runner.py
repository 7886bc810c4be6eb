"""Generating rounds: one configuration answering one scenario, through the engine's own code path.

Each round is ``engine.chat.group.GroupChat.send`` on a fresh chat whose transcript holds the scenario's
earlier turns; its events are reduced to a small JSON record and cached in the results database
under a key made of everything that shapes the round (configuration, scenario text, persona set,
seed, token limit, model files). A second run with the same settings generates nothing.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import engine.safety as safety
from engine import lorebook, memory, personas, recall
from engine.chat import companion_memory, group, settings
from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.director import policies, transcript
from engine.llm import backend, choices, runtime
from engine.personas import PersonaSet
from engine.reply import cleanup, copyguard, prompts, turn
from engine.reply.prompts import from_history
from engine.safety import (
    conversation,
    learned,
    message,
    resources,
    rules_de,
    rules_en,
    rules_fr,
    screen,
)
from evaluation.configs import EvalConfig
from evaluation.db import ResultsDB, code_fingerprint, digest
from training.scenarios import USER, Scenario


@dataclass
class GenSettings:
    seed: int = 7
    max_tokens: int = 48
    temperature: float | None = None  # None = each persona's own
    n_ctx: int = 2048


def round_key(
    config: EvalConfig,
    scenario: Scenario,
    pset: PersonaSet,
    gen: GenSettings,
    model_ids: dict[str, str],
) -> str:
    spec = {k: v for k, v in config.spec().items() if k != "label"}  # a relabel keeps the cache
    return digest(
        {
            "config": spec,
            "scenario": scenario.to_dict(),
            "group": config.group_for(pset).to_dict(),
            "gen": gen.__dict__,
            "models": model_ids,
            "code": engine_fingerprint(),
            "v": 1,
        }
    )


def engine_fingerprint() -> str:
    """The engine code that shapes a round (prompts, policies, cleanup, sampling, safety, memory)."""
    return code_fingerprint(
        group,
        settings,
        companion_memory,
        policies,
        transcript,
        backend,
        runtime,
        choices,
        cleanup,
        copyguard,
        prompts,
        turn,
        personas,
        lorebook,
        memory,
        recall,
        safety,
        screen,
        rules_en,
        rules_de,
        rules_fr,
        learned,
        conversation,
        message,
        resources,
    )


def model_identity(path: str | Path) -> str:
    """A cheap identity for a model file (name, size, mtime): a changed file invalidates the cache."""
    p = Path(path)
    try:
        st = p.stat()
        return f"{p.name}:{st.st_size}:{int(st.st_mtime)}"
    except OSError:
        return str(path)


def generate_round(
    config: EvalConfig,
    scenario: Scenario,
    pset: PersonaSet,
    gen: GenSettings,
    backend_for: Callable[[str | None], Any],
) -> dict[str, Any]:
    """Run one round and reduce its events to a record (messages, Director decisions, timing)."""
    group = config.group_for(pset)
    settings = ChatSettings(
        policy=config.policy,
        max_speakers=min(config.max_speakers, len(group.members)),
        min_speakers=None,
        user_name=USER,
        seed=gen.seed,
        model=config.model,
        director_model=config.director_model,
        max_tokens=gen.max_tokens,
        temperature=gen.temperature,
    )
    chat = GroupChat(group, settings=settings, store=None, backend_for=backend_for)
    chat.transcript = from_history(scenario.history, USER)
    record: dict[str, Any] = {
        "config": config.name,
        "scenario_id": scenario.id,
        "domain": scenario.domain,
        "group": pset.name,
        "members": group.names,
        "messages": [],
        "directors": [],
        "errors": [],
        "notices": [],
        "safety": None,
        "seconds": None,
    }
    t0 = time.perf_counter()
    for ev in chat.send(scenario.user_message, threading.Event()):
        d = ev.data
        if ev.type == "director":
            record["directors"].append(
                {k: d.get(k) for k in ("speaker", "directive", "valid", "source", "seconds")}
            )
        elif ev.type == "message":
            record["messages"].append(
                {
                    k: d.get(k)
                    for k in (
                        "speaker",
                        "text",
                        "directive",
                        "role_confusion",
                        "prompt_tokens",
                        "prefilled_tokens",
                        "completion_tokens",
                        "ttft_ms",
                        "latency_ms",
                        "model",
                    )
                }
                | {"safety": bool(d.get("safety"))}
            )
        elif ev.type == "safety":
            record["safety"] = {"category": d.get("category"), "level": d.get("level")}
        elif ev.type == "notice":
            record["notices"].append(d.get("text"))
        elif ev.type == "error":
            record["errors"].append(d.get("message"))
        elif ev.type == "round_end":
            record["seconds"] = d.get("seconds")
            record["speakers"] = d.get("speakers")
    if record["seconds"] is None:
        record["seconds"] = round(time.perf_counter() - t0, 3)
    return record


def generate_all(
    db: ResultsDB,
    run_id: str,
    configs: list[EvalConfig],
    scenarios: list[Scenario],
    sets: dict[str, PersonaSet],
    gen: GenSettings,
    backend_for: Callable[[str | None], Any],
    model_ids: dict[str, str],
    progress: Any = None,
) -> tuple[dict[tuple[str, str], dict], int]:
    """Every (configuration, scenario) round, from the cache where it is there.

    Returns ``({(config, scenario_id): record}, number_generated)``."""
    out: dict[tuple[str, str], dict] = {}
    made = 0
    for scenario in scenarios:
        pset = sets[scenario.group]
        for config in configs:
            used = set(config.persona_models.values()) | {config.director_model, config.model}
            ids = {k: v for k, v in model_ids.items() if k == "bundled" or k in used}  # a new model
            key = round_key(config, scenario, pset, gen, ids)  # keeps baselines
            record = db.get_round(key)
            if record is None:
                if progress is not None:
                    progress.set_postfix_str(f"{config.name} · {scenario.id}")
                record = generate_round(config, scenario, pset, gen, backend_for)
                db.put_round(key, config.name, scenario.id, scenario.domain, record, run_id)
                made += 1
            out[(config.name, scenario.id)] = record
            if progress is not None:
                progress.update(1)
    return out, made
