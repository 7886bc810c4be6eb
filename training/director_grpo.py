"""``mascot-train director``: the Director trained with GRPO on group-level rewards.

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
judge (training/judges/learned.py). With a 135M model the Director runs in "menu" mode
(directive chosen from a list), as in the app.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from engine.llm.chat_format import ChatFormat
from engine.models.registry import bundled_model_path
from engine.reply.copyguard import DEFAULT_RULE
from engine.reply.prompts import turn_note
from training import base_model
from training.common import TrainError, convert_to_gguf, read_json, sha256_file, write_json
from training.config import BaseConfig, save_config
from training.contexts import chat_template_of
from training.director_config import DirectorConfig, companion_models, log
from training.director_eval import evaluate, export
from training.director_policy import train
from training.director_rewards import GroupRewarder
from training.director_rollouts import (
    Rollouts,
    build_states,
    directive_mode,
    load_states,
    state_rows,
)
from training.judges.factory import make_judge
from training.judges.heuristic import HeuristicJudge
from training.layout import (
    MANIFEST,
    METRICS,
    base_dir,
    base_gguf,
    director_dir,
    director_eval_dir,
    export_dir,
    hf_dir,
    is_done,
    mark_done,
    states_dir,
)

# -- the run -----------------------------------------------------------------------------------------


def run(cfg: DirectorConfig) -> dict[str, Any]:
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    save_config(out, cfg)
    t0 = time.perf_counter()
    base_cfg = cfg.base
    if cfg.tiny:
        base_cfg.tiny = True
    _prepare_base(base_cfg, out, cfg.seed)
    log("base done")

    persona_model = cfg.persona_model or str(bundled_model_path())
    rollout = Rollouts(
        persona_model,
        cfg.rollout_max_tokens,
        cfg.threads or None,
        cfg.seed,
        models=companion_models(cfg),
    )
    judge = make_judge(cfg.judge)
    if not hasattr(judge, "embed"):
        embedder = HeuristicJudge()
        judge.embed = embedder.embed  # type: ignore[attr-defined]
    fmt = ChatFormat(chat_template_of(base_gguf(out)) or None)
    states_key = {
        k: getattr(cfg, k)
        for k in (
            "group",
            "domain",
            "max_states",
            "eval_states",
            "states_per_scenario",
            "persona_model",
            "rollout_max_tokens",
            "seed",
        )
    }
    if cfg.persona_models.strip():  # (absent otherwise, so runs from before the option are reused)
        states_key["persona_models"] = {
            k: sha256_file(Path(v)) for k, v in sorted(rollout.models.items())
        }
    saved = states_dir(out) / "states.json"
    cached = read_json(saved) if saved.is_file() else {}
    if cached.get("key") == states_key:  # rolled-out states are reused (they cost many rollouts)
        train_states, held_states = (
            load_states(cfg, cached["train"]),
            load_states(cfg, cached["heldout"]),
        )
    else:
        train_states = build_states(cfg, "train", rollout)
        held_states = build_states(cfg, "heldout", rollout)
        write_json(
            saved,
            {
                "key": states_key,
                "train": state_rows(train_states),
                "heldout": state_rows(held_states),
            },
        )
    log(f"states: {len(train_states)} train, {len(held_states)} heldout")

    n_params = _count_params(hf_dir(out))
    mode = directive_mode(cfg, n_params)
    rewarder = GroupRewarder(
        judge, rollout, mode=mode, end_reward=cfg.end_reward, samples=cfg.rollout_samples
    )
    rewarder.progress = log
    # a restarted run reuses them; they also depend on how a directive reaches the companion and
    # on which replies count as a copy of a recent one (rolled out again, as in the app)
    rollouts_key = {
        **states_key,
        "turn_note": turn_note("Mia", "Ask User one gentle question")["content"],
        "copy_rule": DEFAULT_RULE.key(),
    }
    reused = rewarder.persist(states_dir(out) / "rollouts.json", rollouts_key)
    if reused:
        log(f"reusing {reused} saved rollouts")
    if not is_done(director_dir(out)):
        train(cfg, out, train_states, rewarder, fmt, mode)
    log("training done")
    if not is_done(export_dir(out)):
        export(cfg, out, held_states, fmt, mode)
    log("export done")
    result: dict[str, Any] = {
        "out": str(out),
        "mode": mode,
        "manifest": read_json(export_dir(out) / MANIFEST),
    }
    if cfg.evaluate:
        if not is_done(director_eval_dir(out)):
            evaluate(cfg, out, held_states, rewarder)
        result["eval"] = read_json(director_eval_dir(out) / METRICS)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    return result


def _prepare_base(base_cfg: BaseConfig, out: Path, seed: int) -> None:
    """training/base_model.py's stage; if its GGUF conversion fails because the dequantized
    config still carries ``quantization_config`` (quant_method gguf, which the converter refuses),
    drop that key and finish the stage here."""
    try:
        base_model.run(base_cfg, out, seed)
        return
    except TrainError as e:
        cfg_path = hf_dir(out) / "config.json"
        if "Quant method" not in str(e) or not cfg_path.is_file():
            raise
    data = read_json(cfg_path)
    data.pop("quantization_config", None)
    write_json(cfg_path, data)
    convert_to_gguf(hf_dir(out), base_gguf(out), "f16")
    save_config(
        base_dir(out),
        base_cfg,
        {
            "resolved_source": "bundled",
            "hf": str(hf_dir(out)),
            "gguf": str(base_gguf(out)),
            "note": "quantization_config dropped before conversion",
        },
    )
    mark_done(base_dir(out), {"source": "bundled"})


def _count_params(hf: Path) -> int:
    import torch
    from transformers import AutoModelForCausalLM

    m = AutoModelForCausalLM.from_pretrained(str(hf), dtype=torch.float32)
    return sum(p.numel() for p in m.parameters())


def summary_line(result: dict[str, Any]) -> str:
    ev = result.get("eval", {}).get("policies", {})
    return json.dumps({k: v["mean_reward"] for k, v in ev.items()})
