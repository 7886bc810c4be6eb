"""Replies among v9's rolled-out ones that the containment rule of engine.reply.copyguard.CopyRule.copies flags beyond the
earlier rules, with a random sample of 25 to read. Usage: python contained_copies.py (repository root)."""
import json, random
from difflib import SequenceMatcher
from training.director_config import DirectorConfig
from training.director_rollouts import load_states
import engine.chat as ec
from engine.reply.copyguard import DEFAULT_RULE
copies = DEFAULT_RULE.copies
from engine.reply.copyguard import copy_key
CONTAINED = ec.COPY_CONTAINED
cfg = DirectorConfig()
st = json.load(open("runs/director-v9/states/states.json"))
states = {s.id: s for s in load_states(cfg, st["train"] + st["heldout"])}
rows = json.load(open("runs/director-v9/states/rollouts.json"))["rollouts"]
def recent_of(s):
    names = s.group.names
    items = [h for h in s.transcript()][-8:]
    return [copy_key(h["text"], names) for h in items if h["speaker"] in names], names
def contained(words, other, block=3):
    sm = SequenceMatcher(None, words, other, autojunk=False)
    return sum(b.size for b in sm.get_matching_blocks() if b.size >= block) / len(words)
new = []; n = 0
for sid, sp, d, k, text in rows:
    if not text.strip(): continue
    s = states[sid]; rec, names = recent_of(s); n += 1
    ec.COPY_CONTAINED = 2.0  # the earlier rules alone (the containment rule off)
    earlier = copies(text, rec, names)
    ec.COPY_CONTAINED = CONTAINED
    if earlier: continue
    w = copy_key(text, names).split()
    if len(w) >= 5:
        best = max((contained(w, r.split()), r) for r in rec) if rec else (0, "")
        if best[0] >= 0.8:
            new.append((round(best[0], 2), text, best[1]))
print(n, "replies;", len(new), "newly flagged")
random.seed(1)
for c, t, r in random.sample(new, min(25, len(new))):
    print(c, "|", t[:150], "\n      <<", r[:150])
