"""Before a full run: does a trained persona model for Mia give the Director something to choose?

Scores every Mia decision of the held-out states (v9's states) on two replies with Mia played
by MODEL, next to the same decisions with the bundled model (v8's held-out table), and
the round-robin policy. Usage: python mia_check.py MODEL.gguf [runs/director-v9]
"""
import json
import statistics as st
import sys
from pathlib import Path

from engine.director.policies import Director
from engine.models.registry import bundled_model_path
from training.judges.heuristic import HeuristicJudge
from training.director_config import DirectorConfig, _weights
from training.director_rollouts import Rollouts, load_states
from training.director_rewards import GroupRewarder, parse_decision, total

model = sys.argv[1]
run = Path(sys.argv[2] if len(sys.argv) > 2 else "runs/director-v9")
cfg = DirectorConfig()
rows = json.loads((run / "states" / "states.json").read_text())["heldout"]
states = load_states(cfg, rows)
base_table = json.loads(Path("docs/director-toy-run/v8/eval_table.json").read_text())
base = {s["state"]: s for s in base_table["per_state"]}
rollout = Rollouts(bundled_model_path(), 40, 2, 0, models={"Mia": model})
rw = GroupRewarder(HeuristicJudge(), rollout, mode="menu", samples=2)
weights = _weights(cfg)
mia_rows = []
for s in states:
    rs = s.round_state()
    if "Mia" not in rs.allowed():
        continue
    choices = [c for c in Director.choices(rs, rs.allowed(), False) if json.loads(c)["speaker"] == "Mia"]
    mia_rows.append((s, choices))
rw.prefetch([(s, "Mia", json.loads(c)["directive"]) for s, cs in mia_rows for c in cs])
diff, free_diff = [], []
for s, cs in mia_rows:
    trained = {c: total({**rw.decision_components(s, "Mia", json.loads(c)["directive"]), "format": 1.0}, weights)
               for c in cs}
    old = base[s.id]["rewards"]
    diff += [trained[c] - old[c] for c in cs]
    free = Director.decision_text("Mia", "")
    free_diff.append(trained[free] - old[free])
    print(s.id, "RR", base[s.id]["round_robin_reward"], "Mia free base", round(old[free], 3), "trained",
          round(trained[free], 3), "best trained", round(max(trained.values()), 3), flush=True)
print(f"Mia allowed in {len(mia_rows)} of {len(states)} held-out states")
print(f"trained - base Mia, all decisions: {st.mean(diff):+.4f} (n={len(diff)}); free turn {st.mean(free_diff):+.4f}")
