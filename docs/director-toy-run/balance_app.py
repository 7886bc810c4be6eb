"""The participation prior in the app (docs/director.md, "Why 6 nats"): the prompt-only Director
on the bundled model answers 10 held-out user messages in one conversation; turns per companion
and their balance (normalised entropy), for each prior strength.

    MAXS=1,2 PRIORS=0,3,6,10 .venv/bin/python docs/director-toy-run/balance_app.py
"""
import collections
import math
import os

from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.models.registry import bundled_model_path
from engine.persona_files import load_set
from engine.llm.runtime import RuntimePool
from training.scenarios import load_scenarios

MAXS = [int(x) for x in os.environ.get("MAXS", "1,2").split(",")]
PRIORS = [float(x) for x in os.environ.get("PRIORS", "0,3,6,10").split(",")]
pool = RuntimePool(n_threads=2)
path = str(bundled_model_path())
msgs = [sc.user_message for sc in load_scenarios("support", "heldout")][:10]
for max_sp in MAXS:
    for prior in PRIORS:
        chat = GroupChat(load_set("support"), settings=ChatSettings(max_speakers=max_sp, seed=7),
                         backend_for=lambda m=None: pool.get(m or path))
        chat.policy().balance_prior = prior
        for m in msgs:
            for _ in chat.send(m):
                pass
        turns = collections.Counter(t.speaker for t in chat.transcript if t.role == "companion")
        n = sum(turns.values())
        p = [turns.get(x, 0) / n for x in chat.names]
        ent = -sum(q * math.log(q) for q in p if q) / math.log(len(p))
        print(f"companions a message {max_sp}, prior {prior}: {dict(turns)}, balance {ent:.3f}", flush=True)
