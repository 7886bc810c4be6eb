"""The configurations compared: baselines, the prompt-only Director and MASCOT's ablations.

===============  =============================================================================
name             what runs
===============  =============================================================================
single           one generic assistant answers alone (no group): the single-agent baseline
single-member    one member of the group answers alone (its persona, no group)
round-robin      every companion in turn, no Director (AutoGen / SillyTavern style), 3 per round
all              every companion answers once per round, in group order
director         the prompt-only Director on the chat model picks speakers and writes directives
mascot-p         MASCOT without persona alignment: the *trained* Director + base persona models
mascot-c         MASCOT without collaborative optimisation: *trained* persona models + the
                 prompt-only Director
mascot           full MASCOT: trained persona models + the trained Director
voices           round-robin with every companion on the voices model (the bundled model with the
                 shipped persona-following adapter merged, ``engine.models.voices``): what the app
                 runs by default
voices-director  the prompt-only Director on the voices model, companions on it too
mascot-sft       the SFT-only ablation: persona models fine-tuned on the judge's best replies
                 with no RL (``mascot-train policy --sft-warmstart --sft-only``) + the trained
                 Director, so RL's own effect is ``mascot`` minus ``mascot-sft``
===============  =============================================================================

The last four need models from ``mascot-train`` (registered in the model registry with a
``manifest.json`` beside the GGUF); without them they are skipped, and the report says so.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from engine.models.registry import manifest_role, read_manifest
from engine.personas import Persona, PersonaSet

ASSISTANT = Persona(
    name="Assistant",
    role="a helpful, friendly AI assistant",
    traits=["helpful", "friendly", "clear"],
    speaking_style="Plain, kind and to the point: one to three sentences.",
    goals=["answer what the user just said", "be supportive and useful"],
)


@dataclass
class EvalConfig:
    name: str
    label: str
    policy: str = "director"
    max_speakers: int = 3
    single: str = ""  # "" | "assistant" | "member": one agent answers alone
    # persona -> registered model; keys are "group:Name" (from a manifest naming its group) or "Name"
    persona_models: dict[str, str] = field(default_factory=dict)
    director_model: str | None = None
    model: str | None = None  # companions without a model of their own (None: the bundled model)

    def group_for(self, pset: PersonaSet) -> PersonaSet:
        """The persona set this configuration runs (a copy; the bundled set is not changed)."""
        if self.single == "assistant":
            members = [replace(ASSISTANT)]
        elif self.single == "member":
            members = [replace(pset.members[0])]
        else:
            members = [
                replace(
                    p,
                    model=self.persona_models.get(
                        f"{pset.name}:{p.name}", self.persona_models.get(p.name, p.model)
                    ),
                )
                for p in pset.members
            ]
        return PersonaSet(
            name=pset.name,
            title=pset.title,
            description=pset.description,
            members=members,
            domain=pset.domain,
        )

    def spec(self) -> dict[str, Any]:
        return asdict(self)

    def key(self) -> str:
        return hashlib.sha1(json.dumps(self.spec(), sort_keys=True).encode()).hexdigest()[:16]


BASELINES: dict[str, EvalConfig] = {
    c.name: c
    for c in (
        EvalConfig(
            "single", "Single agent", policy="round-robin", max_speakers=1, single="assistant"
        ),
        EvalConfig(
            "single-member", "Single member", policy="round-robin", max_speakers=1, single="member"
        ),
        EvalConfig("round-robin", "Round-robin (no Director)", policy="round-robin"),
        EvalConfig("all", "All respond", policy="all", max_speakers=8),
        EvalConfig("director", "Prompt-only Director", policy="director"),
    )
}
TRAINED = ("mascot-p", "mascot-c", "mascot", "mascot-sft")
VOICES = ("voices", "voices-director")
ALL_CONFIGS = tuple(BASELINES) + VOICES + TRAINED
DEFAULT_CONFIGS = ("single", "round-robin", "all", "director") + VOICES + TRAINED
QUICK_CONFIGS = ("single", "round-robin", "all", "director") + VOICES + TRAINED


@dataclass
class TrainedModels:
    """Models exported by ``mascot-train``, found through the registry and their manifests."""

    persona: dict[str, str] = field(
        default_factory=dict
    )  # "group:Name" or "Name" -> registered model
    persona_sft: dict[str, str] = field(
        default_factory=dict
    )  # the same for SFT-only (no RL) models
    director: str | None = None
    voices: str | None = None  # the voices model's registry name, when it is built
    notes: list[str] = field(default_factory=list)


def discover_trained(models: list[Any]) -> TrainedModels:
    """Look at every registered model (``ModelInfo``) for a training manifest. The newest
    registered model wins when several are for the same persona or for the Director."""
    found = TrainedModels()
    for info in sorted(models, key=lambda m: getattr(m, "added", "") or ""):
        if getattr(info, "bundled", False):
            continue
        manifest = read_manifest(info.path)
        if manifest is None:
            continue
        kind, persona = manifest_role(manifest)
        if kind == "director":
            found.director = info.name
        elif kind == "persona" and persona:
            group = manifest.get("group")
            target = found.persona_sft if _sft_only(manifest) else found.persona
            target[f"{group}:{persona}" if isinstance(group, str) and group else persona] = (
                info.name
            )
    return found


def _sft_only(manifest: dict[str, Any]) -> bool:
    """True for a persona model exported from ``--sft-only`` training (the no-RL ablation)."""
    policy = (
        (manifest.get("config") or {}).get("policy")
        if isinstance(manifest.get("config"), dict)
        else None
    )
    return isinstance(policy, dict) and bool(policy.get("sft_only"))


def resolve(names: list[str], trained: TrainedModels) -> tuple[list[EvalConfig], dict[str, str]]:
    """The configurations to run and, for each one that cannot run, why it is skipped."""
    out: list[EvalConfig] = []
    skipped: dict[str, str] = {}
    for name in names:
        if name in BASELINES:
            out.append(BASELINES[name])
            continue
        if name in VOICES:
            if not trained.voices:
                skipped[name] = "the voices model is not built (the shipped adapter is missing)"
                continue
            director = name == "voices-director"
            out.append(
                EvalConfig(
                    name,
                    "Prompt-only Director, voices model"
                    if director
                    else "Round-robin, voices model",
                    policy="director" if director else "round-robin",
                    model=trained.voices,
                )
            )
            continue
        need_p = name in ("mascot-c", "mascot", "mascot-sft")
        need_d = name in ("mascot-p", "mascot", "mascot-sft")
        personas = trained.persona_sft if name == "mascot-sft" else trained.persona
        missing = []
        if need_p and not personas:
            missing.append(
                "no SFT-only persona model (`mascot-train policy --sft-warmstart --sft-only`) is registered"
                if name == "mascot-sft"
                else "no persona model trained by `mascot-train` is registered"
            )
        if need_d and not trained.director:
            missing.append("no Director model trained by `mascot-train director` is registered")
        if missing:
            skipped[name] = "; ".join(missing)
            continue
        label = {
            "mascot-p": "MASCOT-P (no persona alignment)",
            "mascot-c": "MASCOT-C (no collaborative optimisation)",
            "mascot": "MASCOT (full)",
            "mascot-sft": "MASCOT, SFT-only personas (no RL)",
        }[name]
        out.append(
            EvalConfig(
                name,
                label,
                policy="director",
                persona_models=dict(personas) if need_p else {},
                director_model=trained.director if need_d else None,
            )
        )
    return out, skipped
