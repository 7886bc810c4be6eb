"""For every saved v9 rollout that is a copy of a recent reply: retry it as the app does (another
seed, temperature >= 0.8) with the directive kept, and with the directive dropped (a free turn).
Three retries each; counts copies, empty replies and the group reward of the kept reply."""
import json, collections, statistics as st, time
from training.director_config import DirectorConfig, _weights
from training.director_rollouts import Rollouts, load_states
from training.director_rewards import GroupRewarder, total
from training.judges.heuristic import HeuristicJudge
from engine.models.registry import bundled_model_path
from engine.reply.copyguard import DEFAULT_RULE
copies = DEFAULT_RULE.copies
from engine.reply.turn import retry_request
from engine.llm.batch import BatchGenerator
cfg = DirectorConfig()
stj = json.load(open("runs/director-v9/states/states.json"))
states = {s.id: s for s in load_states(cfg, stj["train"] + stj["heldout"])}
ro = Rollouts(bundled_model_path(), 40, 2)
rows = json.load(open("runs/director-v9/states/rollouts.json"))["rollouts"]
cases = []
for sid, sp, d, k, text in rows:
    if not text.strip() or not d:
        continue
    chat = ro._chat(states[sid], k)
    if copies(text, chat.recent_replies(), chat.names):
        cases.append((sid, sp, d, k))
print(len(cases), "copies among directed rollouts")
rw = GroupRewarder(HeuristicJudge(), ro)
W = _weights(cfg)
res = {}
t0 = time.time()
for mode in ("keep", "drop"):
    reqs, meta = [], []
    for sid, sp, d, k in cases:
        for r in range(3):
            chat = ro._chat(states[sid], k)
            p = chat.member(sp)
            req = chat.speaker_request(p, d if mode == "keep" else "")
            req.seed = (req.seed or 0) + 1000 * r
            reqs.append(retry_request(req)); meta.append((sid, sp, chat, p))
    with BatchGenerator(ro.pool.get(ro.path), n_seq=4, n_ctx=2048) as gen:
        outs = gen.generate(reqs)
    cp = em = 0; rewards = []
    for (sid, sp, chat, p), o in zip(meta, outs):
        text = chat.finish_reply(o.text, p, o.stopped)[0].strip()
        if text and copies(text, chat.recent_replies(), chat.names):
            cp += 1; text = ""
        elif not text:
            em += 1
        rewards.append(total({**rw.score_reply(states[sid], sp, text), "format": 1.0}, W))
    n = len(outs)
    print(mode, f"n={n} copies {cp/n:.1%} empty {em/n:.1%} reward {st.mean(rewards):.3f} ± {st.stdev(rewards)/n**.5:.3f}  ({time.time()-t0:.0f}s)", flush=True)
