"""``mascot-train director``: the Director trained with GRPO on group-level rewards (issue 5).

    mascot-train director --tiny --out runs/dir-tiny      # tiny random Llama, minutes on CPU
    mascot-train director --out runs/dir --steps 20       # the bundled 135M model (CPU toy run)
    mascot-train director --config director.yaml

Steps (each writes a sub-folder of OUT with ``config.json`` and ``DONE``; finished ones are skipped):

1. ``base/``      HF weights of the Director model (training/base_model.py: the bundled GGUF
                  dequantized, or a tiny random Llama with ``--tiny``) and its f16 GGUF.
2. ``states/``    group states from the scenarios (train and heldout split): for each scenario,
                  the state at the start of the round and, with ``states_per_scenario`` 2, the
                  state after the round-robin first speaker replied (its reply rolled out with the
                  persona model). The prompt is ``Director.messages`` rendered with the model's chat
                  template, exactly what llama.cpp receives in the app.
3. ``director/``  trl GRPOTrainer with LoRA (training/lora.py). Rewards: training/director_rewards.py,
                  one trl reward function per component (logged separately, weights in
                  ``weights.*``); the chosen speaker is rolled out with the frozen persona model
                  (``persona_model``, default the bundled GGUF) through llama.cpp.
4. ``export/``    merge, GGUF f16 (llama.cpp converter), quantize, fidelity check (training/export.py),
                  ``manifest.json`` with ``"role": "director"``, registered as ``PREFIX-GROUP-grpo``.
5. ``eval/``      held-out states: mean group reward and each component for the trained Director,
                  the untrained Director (both run by ``engine.director.policies.Director`` in llama.cpp with
                  the app's grammar) and round-robin; ``eval/metrics.json``.

Decisions are sampled under the same constraint the app uses: in "menu" mode (models under 1B
parameters) generation is restricted to the exact decision strings of ``Director.choices``
(``ChoiceConstraint``: a token trie passed to transformers' ``generate`` as
``prefix_allowed_tokens_fn``, the counterpart of the runtime's constrained choice decoding), so
every sampled decision is valid and the GRPO group differs in *which* speaker and directive it
picks. The policy's log-probabilities in the loss are the model's unconstrained ones (as usual
for constrained sampling in GRPO). In "free" mode sampling is unconstrained and format validity
is rewarded.

Simplifications (honest list): The reward is per decision (one rolled-out reply), not over a
whole round. ``beta`` (KL to the base model) defaults to 0. The judge is the offline learned
judge (training/judges/learned.py). With a 135M model the Director runs in "menu" mode (directive chosen from a list), as in
the app.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.director.policies import BALANCE_PRIOR

from training.common import TrainError, grpo_history, is_done, mark_done, read_json, sha256_file, write_json
from training.config import BaseConfig, LoraSettings, from_dict, merge, opt, read_yaml, save_config, to_dict


@dataclass
class RewardWeights:
    relevance: float = opt(1.0, "Relevance of the speaker's reply to the user's message.")
    diversity: float = opt(1.0, "Distance of the reply from the other replies of the round.")
    non_redundancy: float = opt(1.0, "Distance of the reply from the earlier companion turns.")
    social: float = opt(1.0, "The judge's social contribution score.")
    persona: float = opt(1.0, "The judge's persona consistency score of the speaker.")
    balance: float = opt(1.0, "Balance of participation (speakers who spoke less score higher).")
    format: float = opt(2.0, "Valid decision in the app's format (1) or not (0).")


@dataclass
class DirectorConfig:
    out: str = opt("runs/director", "Output folder.")
    seed: int = opt(0, "Random seed.")
    threads: int = opt(0, "CPU threads for torch and llama.cpp (0 = library default).")
    tiny: bool = opt(False, "Tiny random Llama and minimal sizes (smoke tests).")
    group: str = opt("support", "Persona set the Director is trained for.")
    domain: str = opt("", "Scenario domain; empty = the group's own domain.")
    persona_model: str = opt("", "GGUF that plays the companions in rollouts (empty = the bundled model).")
    persona_models: str = opt("", "Companions with their own model in rollouts, as NAME=GGUF pairs separated by "
                                  "commas (e.g. Mia=runs/toy-mia/export/mia/...-q8_0.gguf, a persona model "
                                  "from `mascot-train pipeline`, as the paper rolls out its aligned persona "
                                  "models); the others use --persona-model.")
    judge: str = opt("learned", "Judge spec for the social and persona components (learned: the validated "
                                "teacher, docs/judge.md; or heuristic, local, openai:URL#MODEL, ...).")
    max_states: int = opt(0, "At most this many training scenarios (0 = all of the train split).")
    eval_states: int = opt(0, "At most this many held-out scenarios (0 = all).")
    states_per_scenario: int = opt(2, "1 = round start only; 2 = also after the first reply.")
    directive_mode: str = opt("auto", "auto (menu below 1B parameters, as the app), menu or free.")
    steps: int = opt(20, "GRPO optimiser steps.")
    num_generations: int = opt(6, "Decisions sampled per state (the GRPO group).")
    prompts_per_step: int = opt(1, "States per step.")
    learning_rate: float = opt(5e-5, "Learning rate (LoRA).")
    beta: float = opt(0.0, "KL anchor to the base model (0 = no reference model, cheaper).")
    temperature: float = opt(1.5, "Sampling temperature during training (above 1 so a small model's peaked "
                                  "choice still explores other speakers and directives; identical "
                                  "decisions in a GRPO group give no gradient).")
    max_completion_length: int = opt(40, "Longest decision, in tokens.")
    rollout_max_tokens: int = opt(48, "Longest rolled-out companion reply, in tokens.")
    end_reward: float = opt(0.5, "Content components of an END decision.")
    rollout_samples: int = opt(1, "Replies rolled out per decision (different seeds); its reward is their mean "
                                  "(an estimate of the expected reward; one 135M reply is a noisy draw).")
    reward_table: bool = opt(False, "Before GRPO, roll out and score every decision the rules allow in every "
                                    "training state (one batched pass): steps become lookups, and the table "
                                    "shows the headroom (best decision vs round-robin's) per state.")
    eval_samples: int = opt(0, "Replies rolled out per decision in the held-out comparison (0 = rollout_samples). "
                               "Each policy makes one decision per state there, so more samples are cheap "
                               "and make the comparison less noisy.")
    eval_table: bool = opt(False, "Also score every allowed decision on the held-out states, to report the "
                                  "best possible (oracle) and the average (random) decision next to the policies.")
    gradient_checkpointing: bool = opt(False, "Recompute activations in the backward pass (saves memory, "
                                              "costs a second forward; off for CPU toy runs).")
    warm_start_epochs: int = opt(0, "Before GRPO (menu mode, needs --reward-table): passes of the exact policy gradient over "
                                    "the table, i.e. every allowed decision of each training state weighed by its "
                                    "probability under the constrained policy (GRPO's group = all decisions). 0 = off.")
    warm_start_lr: float = opt(3e-4, "Learning rate of the table warm start (LoRA).")
    init_adapter: str = opt("", "Start GRPO from this saved LoRA adapter folder (e.g. OUT/director/adapter of an "
                                "earlier run on the same base) instead of a fresh LoRA: continue a run in parts.")
    balance_prior: float = opt(BALANCE_PRIOR, "The app's participation prior (engine.director.policies.BALANCE_PRIOR, nats per reply "
                                    "beyond the quietest allowed companion), applied to the Director's choice in "
                                    "training and evaluation as in the app. 0 = off. It is written to the export's "
                                    "manifest, and the app decodes the exported Director with it.")
    max_train_minutes: float = opt(0.0, "Stop GRPO after this many minutes even before 'steps' (0 = no limit; "
                                        "for CPU toy runs on shared machines).")
    quantize: list[str] = opt(["Q8_0"], "Quantized files besides the f16 GGUF.")
    min_fidelity: float = opt(0.99, "Fail the export below this next-token agreement with the HF model.")
    register: bool = opt(True, "Register the exported Director in the app's model registry.")
    name_prefix: str = opt("director", "Registered name: PREFIX-GROUP-grpo.")
    evaluate: bool = opt(True, "Run the held-out comparison after the export.")
    base: BaseConfig = field(default_factory=BaseConfig)
    # only the top layers adapt: the Director's choice is a late decision, and a CPU step is cheaper
    lora: LoraSettings = field(default_factory=lambda: LoraSettings(last_layers=8))
    weights: RewardWeights = field(default_factory=RewardWeights)


def tiny_preset() -> dict[str, Any]:
    return {"tiny": True, "base": {"tiny": True}, "max_states": 2, "eval_states": 2, "states_per_scenario": 1,
            "steps": 2, "num_generations": 2, "max_completion_length": 16, "rollout_max_tokens": 12,
            "lora": {"r": 4, "alpha": 8}}


def resolve_config(args: argparse.Namespace) -> DirectorConfig:
    """Defaults < --tiny < YAML < command line (the same precedence as the persona stages)."""
    from training.config import namespace_to_nested
    data = to_dict(DirectorConfig())
    if args.tiny:
        data = merge(data, tiny_preset())
    if args.config:
        raw = read_yaml(args.config)
        if raw.get("tiny"):
            data = merge(data, tiny_preset())
        data = merge(data, raw)
    data = merge(data, namespace_to_nested(args, skip=("command", "config", "tiny")))
    cfg = from_dict(DirectorConfig, data, "config")
    if cfg.balance_prior < 0:
        raise TrainError(f"--balance-prior must be 0 or more (nats per extra reply; 0 = off), not {cfg.balance_prior}.")
    companion_models(cfg)  # refused with one line before any work
    return cfg


def companion_models(cfg: DirectorConfig) -> dict[str, str]:
    """``--persona-models`` as {companion: GGUF path}; a pair that is malformed, names no
    companion of the group or a file that does not exist is refused with one line."""
    from engine.personas import load_set
    out: dict[str, str] = {}
    if not cfg.persona_models.strip():
        return out
    names = {p.name.lower(): p.name for p in load_set(cfg.group).members}
    for pair in cfg.persona_models.split(","):
        name, sep, path = (x.strip() for x in pair.partition("="))
        if not pair.strip():
            continue
        if not sep or not name or not path:
            raise TrainError(f"--persona-models: '{pair.strip()}' is not NAME=GGUF; separate pairs with commas.")
        if name.lower() not in names:
            raise TrainError(f"--persona-models: no companion named '{name}' in group '{cfg.group}'; "
                             f"members are: {', '.join(names.values())}.")
        if not Path(path).expanduser().is_file():
            raise TrainError(f"--persona-models: {path} (for {name}) is not a file; give the GGUF exported "
                             "by `mascot-train pipeline` (export/...-q8_0.gguf).")
        out[names[name.lower()]] = str(Path(path).expanduser().resolve())
    return out


# -- states and rollouts ----------------------------------------------------------------------------

class Rollouts:
    """The frozen persona models playing the companions, with the app's own prompt and cleanup:
    ``model_path`` for every companion but those in ``models`` (companion -> GGUF)."""

    def __init__(self, model_path: str | Path, max_tokens: int, n_threads: int | None = None, seed: int = 0,
                 models: dict[str, str] | None = None):
        from engine.llm.runtime import RuntimePool
        self.pool = RuntimePool(n_ctx=2048, n_threads=n_threads)
        self.path = str(model_path)
        self.models = dict(models or {})
        self.max_tokens = max_tokens
        self.seed = seed

    SAMPLE_SEED_STEP = 7919  # sample k of a decision is rolled out with seed + k * this

    def path_for(self, speaker: str) -> str:
        return self.models.get(speaker, self.path)

    def _chat(self, state: Any, sample: int = 0) -> Any:
        from engine.chat.group import GroupChat
        from engine.chat.settings import ChatSettings
        from engine.reply.prompts import from_history
        chat = GroupChat(state.group, settings=ChatSettings(policy="round-robin",
                                                            seed=self.seed + sample * self.SAMPLE_SEED_STEP,
                                                            max_tokens=self.max_tokens),
                         backend_for=lambda m: self.pool.get(m or self.path))
        # a companion with its own model: the persona's ``model`` routes it there
        chat.members = [replace(p, model=self.models[p.name]) if p.name in self.models else p for p in chat.members]
        chat.transcript = from_history(state.transcript(), chat.settings.user_name)
        return chat

    def _job(self, state: Any, speaker: str, directive: str, sample: int = 0) -> Any:
        """The reply to roll out, as the app would ask for it (prompt, speaker, recent replies)."""
        from engine.reply.turn import ReplyJob
        chat = self._chat(state, sample)
        persona = chat.member(speaker)
        return ReplyJob(chat.speaker_request(persona, directive), chat.speaker(persona), chat.recent_replies(),
                        free_retry=True)

    def __call__(self, state: Any, speaker: str, directive: str, sample: int = 0) -> str:
        from engine.reply.turn import generate_reply
        job = self._job(state, speaker, directive, sample)
        return generate_reply(self.pool.get(self.path_for(speaker)), job.req, job.who, recent=job.recent,
                              free_retry=job.free_retry).text.strip()

    def many(self, items: list[tuple[Any, ...]]) -> list[str]:
        """Several rollouts decoded together (``engine.reply.turn.batch_replies``), kept and
        retried as the app keeps a reply. Items are (state, speaker, directive[, sample]); same
        prompts and settings as ``__call__``; the texts differ only in the random draws."""
        from engine.llm.batch import BatchGenerator
        from engine.reply.turn import batch_replies
        texts: list[str] = [""] * len(items)
        by_model: dict[str, list[int]] = {}
        for i, item in enumerate(items):
            by_model.setdefault(self.path_for(item[1]), []).append(i)
        for path, idx in by_model.items():  # one batch per persona model
            jobs = [self._job(*items[i]) for i in idx]
            with BatchGenerator(self.pool.get(path), n_seq=min(4, len(jobs)), n_ctx=2048) as gen:
                for i, res in zip(idx, batch_replies(gen, jobs)):
                    texts[i] = res.text
        return texts


def build_states(cfg: DirectorConfig, split: str, rollout: Any) -> list[Any]:
    from engine.director.policies import RoundRobin
    from engine.personas import load_set
    from training.scenarios import load_scenarios

    from training.contexts import domain_for
    from training.director_rewards import GroupState
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
                    states.append(GroupState(id=f"{sc.id}/1", scenario=sc, group=group,
                                             round_replies=[{"speaker": first, "text": reply}]))
    return states


def load_states(cfg: DirectorConfig, rows: list[dict[str, Any]]) -> list[Any]:
    """States saved in ``states/states.json`` (scenario id + this round's replies)."""
    from engine.personas import load_set
    from training.scenarios import load_scenarios

    from training.contexts import domain_for
    from training.director_rewards import GroupState
    group = load_set(cfg.group)
    domain = domain_for(group.name, cfg.domain)
    by_id = {sc.id: sc for split in ("train", "heldout") for sc in load_scenarios(domain, split)}
    return [GroupState(id=r["id"], scenario=by_id[r["scenario"]], group=group, round_replies=r["round_replies"])
            for r in rows]


def director_prompt(state: Any, fmt: Any) -> str:
    from engine.director.policies import Director
    return fmt.render(Director.messages(state.round_state(), state.transcript()))


def directive_mode(cfg: DirectorConfig, n_params: int) -> str:
    from engine.director.policies import SMALL_MODEL_PARAMS
    if cfg.directive_mode != "auto":
        return cfg.directive_mode
    return "menu" if 0 < n_params < SMALL_MODEL_PARAMS else "free"


def _state_rows(states: list[Any]) -> list[dict[str, Any]]:
    return [{"id": s.id, "scenario": s.scenario.id, "round_replies": s.round_replies} for s in states]


# -- the run -----------------------------------------------------------------------------------------

def run(cfg: DirectorConfig) -> dict[str, Any]:
    from engine.models.registry import bundled_model_path
    from engine.llm.chat_format import ChatFormat

    from training import base_model
    from training.contexts import chat_template_of
    from training.director_rewards import GroupRewarder
    from training.judges.learned import make_judge
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    save_config(out, cfg)
    t0 = time.perf_counter()
    base_cfg = cfg.base
    if cfg.tiny:
        base_cfg.tiny = True
    _prepare_base(base_cfg, out, cfg.seed)
    _log("base done")

    persona_model = cfg.persona_model or str(bundled_model_path())
    rollout = Rollouts(persona_model, cfg.rollout_max_tokens, cfg.threads or None, cfg.seed,
                       models=companion_models(cfg))
    judge = make_judge(cfg.judge)
    if not hasattr(judge, "embed"):
        from training.judges.rubric import HeuristicJudge
        embedder = HeuristicJudge()
        judge.embed = embedder.embed  # type: ignore[attr-defined]
    fmt = ChatFormat(chat_template_of(base_model.base_gguf(out)) or None)
    states_key = {k: getattr(cfg, k) for k in ("group", "domain", "max_states", "eval_states",
                                                 "states_per_scenario", "persona_model", "rollout_max_tokens", "seed")}
    if cfg.persona_models.strip():  # (absent otherwise, so runs from before the option are reused)
        states_key["persona_models"] = {k: sha256_file(Path(v)) for k, v in sorted(rollout.models.items())}
    saved = out / "states" / "states.json"
    cached = read_json(saved) if saved.is_file() else {}
    if cached.get("key") == states_key:  # rolled-out states are reused (they cost many rollouts)
        train_states, held_states = load_states(cfg, cached["train"]), load_states(cfg, cached["heldout"])
    else:
        train_states = build_states(cfg, "train", rollout)
        held_states = build_states(cfg, "heldout", rollout)
        write_json(saved, {"key": states_key, "train": _state_rows(train_states),
                           "heldout": _state_rows(held_states)})
    _log(f"states: {len(train_states)} train, {len(held_states)} heldout")

    n_params = _count_params(base_model.hf_dir(out))
    mode = directive_mode(cfg, n_params)
    rewarder = GroupRewarder(judge, rollout, mode=mode, end_reward=cfg.end_reward, samples=cfg.rollout_samples)
    rewarder.progress = _log
    # a restarted run reuses them; they also depend on how a directive reaches the companion and
    # on which replies count as a copy of a recent one (rolled out again, as in the app)
    from engine.reply.copyguard import DEFAULT_RULE
    from engine.reply.prompts import turn_note
    rollouts_key = {**states_key, "turn_note": turn_note("Mia", "Ask User one gentle question")["content"],
                    "copy_rule": DEFAULT_RULE.key()}
    reused = rewarder.persist(out / "states" / "rollouts.json", rollouts_key)
    if reused:
        _log(f"reusing {reused} saved rollouts")
    train_dir = out / "director"
    if not is_done(train_dir):
        train(cfg, out, train_states, rewarder, fmt, mode)
    _log("training done")
    export_dir = out / "export"
    if not is_done(export_dir):
        export(cfg, out, held_states, fmt, mode)
    _log("export done")
    result: dict[str, Any] = {"out": str(out), "mode": mode,
                              "manifest": read_json(export_dir / "manifest.json")}
    if cfg.evaluate:
        eval_dir = out / "eval"
        if not is_done(eval_dir):
            evaluate(cfg, out, held_states, rewarder)
        result["eval"] = read_json(eval_dir / "metrics.json")
    result["seconds"] = round(time.perf_counter() - t0, 1)
    return result


def _prepare_base(base_cfg: BaseConfig, out: Path, seed: int) -> None:
    """training/base_model.py's stage; if its GGUF conversion fails because the dequantized
    config still carries ``quantization_config`` (quant_method gguf, which the converter refuses),
    drop that key and finish the stage here. (Workaround, reported to the owner of issue 4.)"""
    from training import base_model
    from training.export import convert_to_gguf
    try:
        base_model.run(base_cfg, out, seed)
        return
    except TrainError as e:
        cfg_path = base_model.hf_dir(out) / "config.json"
        if "Quant method" not in str(e) or not cfg_path.is_file():
            raise
    data = read_json(cfg_path)
    data.pop("quantization_config", None)
    write_json(cfg_path, data)
    convert_to_gguf(base_model.hf_dir(out), base_model.base_gguf(out), "f16")
    save_config(base_model.base_dir(out), base_cfg, {"resolved_source": "bundled", "hf": str(base_model.hf_dir(out)),
                                                     "gguf": str(base_model.base_gguf(out)),
                                                     "note": "quantization_config dropped before conversion"})
    mark_done(base_model.base_dir(out), {"source": "bundled"})


def _log(msg: str) -> None:
    print(f"[director] {time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)


def _count_params(hf: Path) -> int:
    import torch
    from transformers import AutoModelForCausalLM
    m = AutoModelForCausalLM.from_pretrained(str(hf), dtype=torch.float32)
    return sum(p.numel() for p in m.parameters())


def _weights(cfg: DirectorConfig) -> dict[str, float]:
    return {k: float(v) for k, v in to_dict(cfg.weights).items()}


def train(cfg: DirectorConfig, out: Path, states: list[Any], rewarder: Any, fmt: Any, mode: str) -> Path:
    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from training.base_model import hf_dir
    from training.director_rewards import make_reward_funcs
    folder = out / "director"
    torch.manual_seed(cfg.seed)
    tok = AutoTokenizer.from_pretrained(str(hf_dir(out)))
    tok.padding_side = "left"
    model = policy_model(cfg, hf_dir(out))
    by_id = {s.id: s for s in states}
    if cfg.reward_table and mode == "menu":
        t_table = time.perf_counter()
        table = rewarder.table(states, decision_choices)
        summary = table_summary(table, states, _weights(cfg))
        summary["signal"] = rewarder.split_half_signal(states, decision_choices, _weights(cfg))
        write_json(folder / "reward_table.json", summary)
        if summary["signal"]:
            sig = summary["signal"]
            _log(f"reward table signal (picked on one reply, scored on another): best decision "
                 f"{sig['split_oracle']}, round-robin {sig['round_robin']}, random {sig['random']} "
                 f"(picked and scored on the same replies: {sig['in_sample_oracle']})")
        _log(f"reward table: {sum(map(len, table.values()))} decisions in {time.perf_counter() - t_table:.0f} s")
    warm: dict[str, Any] = {}
    if cfg.warm_start_epochs > 0 and cfg.reward_table and mode == "menu":
        items = []
        for s in states:
            row = table_rewards(table[s.id], _weights(cfg))
            items.append((director_prompt(s, fmt), row, decision_bias(s, cfg.balance_prior, list(row))))
        warm = table_warm_start(model, tok, items,
                                epochs=cfg.warm_start_epochs, lr=cfg.warm_start_lr, seed=cfg.seed)
        write_json(folder / "warm_start.json", warm)
    fns, weights = make_reward_funcs(rewarder, by_id, _weights(cfg))
    rows = [{"prompt": director_prompt(s, fmt), "state_id": s.id} for s in states]
    ds = Dataset.from_list(rows)
    constraint = None
    max_len = cfg.max_completion_length
    if mode == "menu":
        constraint = ChoiceConstraint(tok, {r["prompt"]: decision_choices(by_id[r["state_id"]]) for r in rows},
                                      {r["prompt"]: decision_bias(by_id[r["state_id"]], cfg.balance_prior)
                                       for r in rows})
        constraint.attach(model)
        # a decision cut short can never be valid: the limit must fit the longest menu decision
        longest = constraint.longest + 1
        if longest > max_len:
            _log(f"max_completion_length {max_len} -> {longest} (the longest menu decision)")
            max_len = longest
    args = GRPOConfig(output_dir=str(folder / "checkpoints"), max_steps=cfg.steps, learning_rate=cfg.learning_rate,
                      per_device_train_batch_size=cfg.prompts_per_step * cfg.num_generations,
                      num_generations=cfg.num_generations, max_completion_length=max_len,
                      temperature=cfg.temperature, top_p=1.0, beta=cfg.beta, reward_weights=weights,
                      remove_unused_columns=False, report_to=[], save_strategy="no", seed=cfg.seed,
                      bf16=False, fp16=False, dataloader_pin_memory=False, dataloader_num_workers=0,
                      logging_steps=1, disable_tqdm=False,
                      gradient_checkpointing=cfg.gradient_checkpointing)
    trainer = GRPOTrainer(model=model, reward_funcs=fns, args=args, train_dataset=ds, processing_class=tok,
                          callbacks=[_TimeLimit(cfg.max_train_minutes)] if cfg.max_train_minutes > 0 else None)
    t0 = time.perf_counter()
    trainer.train()
    history, summary = grpo_history(trainer.state.log_history)
    metrics: dict[str, Any] = {"mode": mode, "states": len(states), "history": history,
                               "steps_done": int(trainer.state.global_step),
                               "rollouts": rewarder.rollout_calls, "seconds": round(time.perf_counter() - t0, 1),
                               "constrained_generations": constraint.constrained if constraint else 0,
                               "unconstrained_generations": constraint.unconstrained if constraint else 0}
    metrics.update(summary)
    if warm:
        metrics["warm_start"] = {k: v for k, v in warm.items() if k != "history"}
    trainer.model.save_pretrained(str(folder / "adapter"))
    tok.save_pretrained(str(folder / "adapter"))
    write_json(folder / "metrics.json", metrics)
    save_config(folder, cfg)
    mark_done(folder, {k: v for k, v in metrics.items() if k != "history"})
    return folder


def table_summary(table: dict[str, dict[str, dict[str, float]]], states: list[Any],
                  weights: dict[str, float]) -> dict[str, Any]:
    """Per state: the group reward of every allowed decision, the best one, the average (what a
    uniformly random valid decision scores) and round-robin's; and their means over states."""
    from engine.director.policies import Director, RoundRobin
    rows = []
    for s in states:
        rewards = {c: round(r, 4) for c, r in table_rewards(table[s.id], weights).items()}
        rr = RoundRobin().next(s.round_state(), s.transcript())
        rr_key = Director.decision_text(rr.speaker if rr.speaker else "END", rr.directive)
        best = max(rewards, key=rewards.get)
        rows.append({"state": s.id, "best": best, "best_reward": rewards[best],
                     "mean_reward": round(sum(rewards.values()) / len(rewards), 4),
                     "round_robin_reward": rewards.get(rr_key), "rewards": rewards})
    n = max(1, len(rows))
    mean = lambda k: round(sum(r[k] or 0.0 for r in rows) / n, 4)
    return {"states": len(rows), "decisions": sum(len(r["rewards"]) for r in rows),
            "oracle": mean("best_reward"), "random": mean("mean_reward"),
            "round_robin": mean("round_robin_reward"), "per_state": rows}


def policy_model(cfg: DirectorConfig, hf: Path) -> Any:
    """The Director's base weights with a trainable LoRA: fresh (``cfg.lora``), or the adapter
    saved at ``cfg.init_adapter`` to continue an earlier run."""
    import torch
    from peft import PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM

    from training.lora import peft_config
    model = AutoModelForCausalLM.from_pretrained(str(hf), dtype=torch.float32)
    if cfg.init_adapter:
        path = Path(cfg.init_adapter).expanduser()
        if not (path / "adapter_config.json").is_file():
            raise TrainError(f"--init-adapter {path}: no LoRA adapter there (adapter_config.json is missing); "
                             "point it at OUT/director/adapter of an earlier run.")
        return PeftModel.from_pretrained(model, str(path), is_trainable=True)
    return get_peft_model(model, peft_config(cfg.lora, "CAUSAL_LM", model.config.num_hidden_layers))


def decision_choices(state: Any) -> list[str]:
    """The exact decision strings the app's Director may produce in this state (menu mode)."""
    from engine.director.policies import Director
    rs = state.round_state()
    return Director.choices(rs, rs.allowed(), rs.may_end())


def decision_bias(state: Any, strength: float, choices: list[str] | None = None) -> list[float] | None:
    """The app's participation prior (``engine.director.policies.balance_bias``) for each of ``choices``
    (default ``decision_choices(state)``); None when it changes nothing (strength 0, or no one
    quieter)."""
    from engine.director.policies import Director, balance_bias
    bias = balance_bias(state.round_state(), state.transcript(), strength)
    return Director.choice_bias(decision_choices(state) if choices is None else choices, bias)


def table_rewards(decisions: dict[str, dict[str, float]], weights: dict[str, float]) -> dict[str, float]:
    """One state's row of the reward table as the group reward of each decision string."""
    from training.director_rewards import total
    return {c: total(comps, weights) for c, comps in decisions.items()}


def constrained_logprobs(model: Any, tok: Any, prompt: str, choices: list[str],
                         bias: list[float] | None = None) -> Any:
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

    from engine.llm.runtime import choice_tokens
    if bias is not None:
        lp = constrained_logprobs(model, tok, prompt, choices) + torch.tensor(bias, dtype=torch.float32)
        return lp - torch.logsumexp(lp, dim=0)
    eos = tok.eos_token_id
    ids = [choice_tokens(c, lambda piece: tok(piece, add_special_tokens=False)["input_ids"]) + [eos]
           for c in choices]
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
    cache_key = "cache" if "cache" in inspect.signature(body.forward).parameters else "past_key_values"
    out = body(input_ids=p_ids, use_cache=True)
    last = out.last_hidden_state[:, -1:, :]
    n = len(choices)
    cont = torch.full((n, max(1, length - 1)), eos, dtype=torch.long)
    for i, seq in enumerate(ids):
        part = seq[: length - 1]
        cont[i, : len(part)] = torch.tensor(part, dtype=torch.long)
    if length > 1:
        cache = out.cache if hasattr(out, "cache") else out.past_key_values  # transformers 5 renamed it
        cache.batch_repeat_interleave(n)
        mask = torch.ones((n, p_ids.shape[1] + cont.shape[1]), dtype=torch.long)
        rest = body(input_ids=cont, attention_mask=mask, use_cache=False, **{cache_key: cache}).last_hidden_state
        hidden = torch.cat([last.expand(n, 1, last.shape[-1]), rest], dim=1)
    else:
        hidden = last.expand(n, 1, last.shape[-1])
    # every branch point of every choice, gathered in one indexing op (a Python loop of
    # per-position indexing would build one full-size gradient tensor per position)
    flat = [(i, j, t, allowed) for i, row in enumerate(steps) for j, t, allowed in row]
    width = max(len(a) for *_, a in flat)
    rows = head(hidden[torch.tensor([f[0] for f in flat]), torch.tensor([f[1] for f in flat])]).float()  # [m, V]
    pad = torch.tensor([a + [a[0]] * (width - len(a)) for *_, a in flat])
    valid = torch.tensor([[k < len(a) for k in range(width)] for *_, a in flat])
    allowed_logits = rows.gather(1, pad).masked_fill(~valid, float("-inf"))
    chosen = rows.gather(1, torch.tensor([[f[2]] for f in flat])).squeeze(1)
    step_lp = chosen - torch.logsumexp(allowed_logits, dim=1)
    return torch.zeros(n, dtype=step_lp.dtype).index_add(0, torch.tensor([f[0] for f in flat]), step_lp)


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


def table_warm_start(model: Any, tok: Any, items: list[tuple[Any, ...]], *, epochs: int,
                     lr: float, seed: int = 0) -> dict[str, Any]:
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

    from engine.llm.runtime import choice_tokens
    tokens = [[choice_tokens(c, lambda p: tok(p, add_special_tokens=False)["input_ids"]) for c in it[1]]
              for it in items]
    bias = [it[2] if len(it) > 2 else None for it in items]

    def measure(i: int, lp: Any) -> tuple[float, float]:
        rewards = list(items[i][1].values())
        pi = lp.detach().exp()
        return float((pi * torch.tensor(rewards)).sum()), rewards[greedy_index(tokens[i], pi.tolist())]

    def evaluate_all() -> list[tuple[float, float]]:
        with torch.no_grad():
            return [measure(i, constrained_logprobs(model, tok, items[i][0], list(items[i][1]), bias[i]))
                    for i in range(len(items))]

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
        history.append({"epoch": epoch + 1, "expected_reward": round(sum(exp_r) / len(exp_r), 4),
                        "greedy_reward": round(sum(greedy_r) / len(greedy_r), 4),
                        "seconds": round(time.perf_counter() - t0, 1)})
        _log(f"warm start epoch {epoch + 1}: expected table reward {history[-1]['expected_reward']}, "
             f"greedy {history[-1]['greedy_reward']}")
    model.eval()
    final = evaluate_all()
    return {"epochs": epochs, "lr": lr, "states": len(items), "history": history,
            "initial_expected_reward": round(sum(e for e, _ in initial) / n, 4),
            "initial_greedy_reward": round(sum(g for _, g in initial) / n, 4),
            "oracle": round(sum(max(it[1].values()) for it in items) / n, 4),
            "mean_decision": round(sum(sum(it[1].values()) / len(it[1]) for it in items) / n, 4),
            "final_expected_reward": round(sum(e for e, _ in final) / n, 4),
            "final_greedy_reward": round(sum(g for _, g in final) / n, 4),
            "seconds": round(time.perf_counter() - t0, 1)}


class ChoiceConstraint:
    """Restricts transformers' sampling to one of the known decision strings per prompt.

    Each prompt's choices are tokenized with the training tokenizer into a trie; the wrapped
    ``generate`` looks up every row's prompt (left padding removed) and passes a
    ``prefix_allowed_tokens_fn`` that allows only tokens continuing some choice (and EOS once a
    choice is complete). Rows whose prompt is unknown are left unconstrained and counted.
    ``bias_by_prompt``: the app's participation prior per choice (``decision_bias``), added to the
    sampling scores at the branch points as the runtime's ``choice_bias`` is (a logits processor)."""

    END = -1

    def __init__(self, tok: Any, choices_by_prompt: dict[str, list[str]],
                 bias_by_prompt: dict[str, list[float] | None] | None = None):
        from engine.llm.runtime import bias_potential, choice_tokens
        self.eos = tok.eos_token_id
        self.tries: dict[tuple[int, ...], dict] = {}
        self.phi: dict[int, float] = {}  # id(trie node) -> the largest bias below it (bias_potential)
        self.longest = 0  # tokens of the longest choice
        for prompt, choices in choices_by_prompt.items():
            trie: dict = {}
            token_lists = []
            for c in choices:
                node = trie
                ids = choice_tokens(c, lambda piece: tok(piece, add_special_tokens=False)["input_ids"])
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
                kw["logits_processor"] = LogitsProcessorList([*(kw.get("logits_processor") or []), add_bias])
            return original(*args, prefix_allowed_tokens_fn=fn, **kw)

        model.generate = generate


def _TimeLimit(minutes: float) -> Any:
    from transformers import TrainerCallback

    class TimeLimit(TrainerCallback):
        def __init__(self) -> None:
            self.t0 = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
            if time.perf_counter() - self.t0 > minutes * 60:
                control.should_training_stop = True
            return control
    return TimeLimit()


def model_name(cfg: DirectorConfig) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", f"{cfg.name_prefix}-{Path(cfg.group).stem}-grpo".lower()).strip("-")


def export(cfg: DirectorConfig, out: Path, held_states: list[Any], fmt: Any, mode: str) -> Path:
    """Reuses training/export.py: merge, convert, quantize, next-token fidelity; then the manifest
    (``"role": "director"``) and registration."""
    import shutil

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from training.base_model import base_gguf, hf_dir
    from training.export import argmax_agreement, convert_to_gguf, merge_adapter, quantize, register
    folder = out / "export"
    folder.mkdir(parents=True, exist_ok=True)
    name = model_name(cfg)
    merged = folder / "hf"
    if merged.exists():
        shutil.rmtree(merged)
    merge_adapter(hf_dir(out), out / "director" / "adapter", merged)
    files = {"f16": convert_to_gguf(merged, folder / f"{name}-f16.gguf", "f16")}
    for q in cfg.quantize:
        files[q.lower()] = quantize(files["f16"], folder / f"{name}-{q.lower()}.gguf", q)
    tok = AutoTokenizer.from_pretrained(str(merged))
    model = AutoModelForCausalLM.from_pretrained(str(merged), dtype=torch.float32).eval()
    tokens = [tok(director_prompt(s, fmt), add_special_tokens=False)["input_ids"] for s in held_states[:4]]
    metrics: dict[str, Any] = {"fidelity": argmax_agreement(model, files["f16"], tokens),
                               "fidelity_positions": sum(len(t) for t in tokens)}
    if "q8_0" in files:
        metrics["fidelity_q8_0"] = argmax_agreement(model, files["q8_0"], tokens)
    if metrics["fidelity"] < cfg.min_fidelity:
        raise TrainError(f"Export fidelity {metrics['fidelity']:.4f} is below {cfg.min_fidelity}; see {folder}.")
    tm = read_json(out / "director" / "metrics.json")
    metrics["training"] = {k: v for k, v in tm.items() if k != "history"}
    registered = register(files, name) if cfg.register else None
    base_cfg = read_json(out / "base" / "config.json")
    manifest = {
        "name": name, "role": "director", "group": cfg.group, "directive_mode": mode,
        "base_model": base_cfg.get("resolved_source"), "base_gguf_sha256": sha256_file(base_gguf(out)),
        "states_sha256": sha256_file(out / "states" / "states.json"),
        "metrics": metrics,
        "files": {k: {"path": p.name, "sha256": sha256_file(p), "bytes": p.stat().st_size} for k, p in files.items()},
        "registered": registered, "config": to_dict(cfg),
    }
    write_json(folder / "manifest.json", manifest)
    mark_done(folder, {"fidelity": metrics["fidelity"], "registered": registered})
    return folder


# -- evaluation ---------------------------------------------------------------------------------------

def evaluate(cfg: DirectorConfig, out: Path, states: list[Any], rewarder: Any) -> Path:
    """Held-out states: the app's Director (grammar, greedy) on the base and on the trained GGUF,
    and round-robin, scored with the same components and weights."""
    from engine.director.policies import Director, RoundRobin
    from engine.llm.runtime import LlamaRuntime

    from training.base_model import base_gguf
    from training.director_rewards import COMPONENTS, total
    folder = out / "eval"
    manifest = read_json(out / "export" / "manifest.json")
    trained = out / "export" / next(v["path"] for k, v in manifest["files"].items() if k != "f16") \
        if len(manifest["files"]) > 1 else out / "export" / manifest["files"]["f16"]["path"]
    weights = _weights(cfg)
    policies: dict[str, Any] = {"round-robin": RoundRobin()}
    runtimes = []
    for label, path in (("untrained", base_gguf(out)), ("trained", trained)):
        rt = LlamaRuntime(path, n_ctx=2048, n_threads=cfg.threads or None)
        runtimes.append(rt)
        policies[label] = Director(rt, directive_mode=manifest.get("directive_mode", "auto"),
                                   balance_prior=cfg.balance_prior)
    samples = cfg.eval_samples or rewarder.samples
    scorer = rewarder.with_samples(samples) if samples != rewarder.samples else rewarder
    result: dict[str, Any] = {"states": len(states), "weights": weights, "samples": samples, "policies": {}}
    by_k: dict[str, float] = {}
    for label, policy in policies.items():
        rows = []
        decisions = [policy.next(s.round_state(), s.transcript()) for s in states]
        scorer.prefetch([(s, d.speaker, d.directive) for s, d in zip(states, decisions)])
        if scorer is not rewarder:  # the same decisions at the training's samples, for comparison
            by_k[label] = round(sum(total({**rewarder.decision_components(s, d.speaker, d.directive),
                                           "format": 1.0 if d.valid else 0.0}, weights)
                                    for s, d in zip(states, decisions)) / max(1, len(states)), 4)
        for s, d in zip(states, decisions):
            comps = scorer.decision_components(s, d.speaker, d.directive)
            comps["format"] = 1.0 if d.valid else 0.0
            rows.append({"state": s.id, "speaker": d.speaker, "directive": d.directive,
                         "reward": round(total(comps, weights), 4), **comps})
        n = max(1, len(rows))
        result["policies"][label] = {
            "mean_reward": round(sum(r["reward"] for r in rows) / n, 4),
            "components": {c: round(sum(r[c] for r in rows) / n, 4) for c in COMPONENTS},
            "speakers": {sp: sum(1 for r in rows if r["speaker"] == sp) for sp in {r["speaker"] for r in rows}},
            "decisions": rows}
    if by_k:
        result[f"mean_reward_at_{rewarder.samples}_samples"] = by_k
    for rt in runtimes:
        rt.llm.close()
    rewarder.save()
    if cfg.eval_table and manifest.get("directive_mode", "menu") == "menu":
        # the best and the average allowed decision per held-out state, for scale
        summary = table_summary(rewarder.table(states, decision_choices), states, weights)
        result["headroom"] = {k: summary[k] for k in ("oracle", "random", "round_robin", "decisions")}
        result["headroom"]["signal"] = summary["signal"] = rewarder.split_half_signal(states, decision_choices, weights)
        write_json(folder / "table.json", summary)
    p = result["policies"]
    result["trained_beats_untrained"] = p["trained"]["mean_reward"] > p["untrained"]["mean_reward"]
    result["trained_beats_round_robin"] = p["trained"]["mean_reward"] > p["round-robin"]["mean_reward"]
    write_json(folder / "metrics.json", result)
    save_config(folder, cfg)
    mark_done(folder, {k: v for k, v in result.items() if k != "policies"})
    return folder


def summary_line(result: dict[str, Any]) -> str:
    ev = result.get("eval", {}).get("policies", {})
    return json.dumps({k: v["mean_reward"] for k, v in ev.items()})
