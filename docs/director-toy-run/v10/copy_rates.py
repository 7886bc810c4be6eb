"""Copies of a recent reply among v9's saved rollouts, by kind of state (0: round start, 1: after one
reply) and directive (empty and copy rates). Usage: python copy_rates.py (from the repository root)."""
import json, collections
from training.director_config import DirectorConfig
from training.director_rollouts import Rollouts, load_states
from engine.models.registry import bundled_model_path
from engine.reply.copyguard import DEFAULT_RULE
copies = DEFAULT_RULE.copies
cfg = DirectorConfig()
st = json.load(open("runs/director-v9/states/states.json"))
states = {s.id: s for s in load_states(cfg, st["train"] + st["heldout"])}
ro = Rollouts(bundled_model_path(), 40)
rows = json.load(open("runs/director-v9/states/rollouts.json"))["rollouts"]
by = collections.defaultdict(lambda: [0, 0, 0])
chats = {}
for sid, sp, d, k, text in rows:
    s = states[sid]
    if sid not in chats:
        chats[sid] = ro._chat(s)
    chat = chats[sid]
    kind = sid.split("/")[1]
    key = (kind, d if d in ("", ) else ("goal" if d not in ("Respond to what User just said", "Add a point nobody has made yet", "Ask User one gentle question", "Build on the previous reply without repeating it", "Give User room to say more at their own pace") else d))
    b = by[key]; b[0] += 1
    if not text.strip(): b[1] += 1
    elif copies(text, chat.recent_replies(), chat.names): b[2] += 1
for k, (n, e, c) in sorted(by.items()):
    print(k, n, f"empty {e/n:.2%} copy {c/n:.2%}")
