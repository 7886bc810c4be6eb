"""Long-conversation memory benchmark on the bundled model: facts stated early, asked 40+ turns later.

Script: two opening rounds, then six facts stated by the user one round each (turns 3-8, the
companions answer), then ``--fillers`` scripted exchanges (a user line and a canned companion
reply, stored as if said, not generated: they only push the facts out of the companions'
window), then one question per fact and questions about facts never stated. Each question is a
real round (one companion, round-robin). Run twice, memory off and on, in fresh data folders.

Reported per condition:

* retrieval hit rate: the answer reached the prompt of the companion who answered (in its window,
  its note of facts, lorebook entries or recalled messages);
* answer accuracy: the reply contains the answer (the bundled 135M model may ignore a fact it
  was given, hence both numbers);
* invented facts: on never-stated questions, notes with a line about the asked topic (a wrong
  answer handed to the companion), notes with any fact or recalled line (noise), and replies that
  state a specific value (a capitalised word that is not a member's name, "User" or a sentence
  start; a heuristic);
* with ``--minilm`` (needs the ``eval`` extra): hit@2 of MiniLM vs the app's word-overlap
  scoring at ranking the user's earlier messages for each question (retrieval only).

Usage::

    python -m evaluation.memory_bench [--fillers 40] [--minilm] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

FACTS = [  # (statement, question, answer)
    ("My dog is called Rex.", "What is my dog called?", "rex"),
    ("I live in Leeds.", "Which city do I live in?", "leeds"),
    ("I work as a night nurse.", "What is my job?", "nurse"),
    ("I'm allergic to peanuts.", "Remind me, what am I allergic to?", "peanut"),
    ("My sister's name is Hannah.", "What is my sister's name?", "hannah"),
    ("My favourite food is lasagne.", "What is my favourite food?", "lasagne"),
]
NEVER = [("What is my cat called?", "cat"), ("What is my brother's name?", "brother"),
         ("Which car do I drive?", "car"), ("What is my middle name?", "middle")]
OPENING = ["Hi everyone, long day today.", "I just got home and made tea."]
FILLER_USER = [
    "The weather was grey again today.", "I watched a film about trains.", "Lunch was soup and bread.",
    "I cleaned the kitchen this evening.", "The bus was late this morning.", "I read two chapters of a novel.",
    "I tried a new coffee place.", "My phone battery died at noon.", "I went for a short walk.",
    "The neighbours were noisy last night.",
]
FILLER_REPLY = ("That sounds like a fairly ordinary day, and ordinary days count too. Tell me what "
                "stood out most, even if it was something small, and how you felt about it afterwards.")


def _recording(runtime: Any) -> Any:
    class Recording:
        """The runtime, keeping the last request of each companion."""
        def __init__(self) -> None:
            self.last: dict[str, Any] = {}

        def __getattr__(self, name: str) -> Any:
            return getattr(runtime, name)

        def generate(self, req: Any, cancel: Any = None) -> Any:
            self.last[req.slot] = req
            return runtime.generate(req, cancel)
    return Recording()


def _invents(reply: str, names: list[str]) -> bool:
    allowed = {n.lower() for n in names} | {"user", "i", "i'm", "i'll", "i've", "i'd"}
    for sentence in re.split(r"(?<=[.!?])\s+", reply.strip()):
        for word in re.findall(r"[A-Za-z']+", sentence)[1:]:
            if word[:1].isupper() and len(word) > 2 and word.lower() not in allowed:
                return True
    return False


def run_condition(memory: bool, fillers: int, pool: Any, seed: int = 7) -> dict[str, Any]:
    from engine.chat.group import GroupChat
    from engine.chat.settings import ChatSettings
    from engine.reply.prompts import TranscriptItem, note_of
    from engine.models.registry import bundled_model_path
    from engine.personas import load_set
    from engine.storage import Store
    home = tempfile.mkdtemp(prefix="mascot-membench-")
    os.environ["MASCOT_HOME"] = home
    store = Store(Path(home) / "mascot.db")
    rec = _recording(pool.get(bundled_model_path()))
    chat = GroupChat(load_set("support"), store=store, backend_for=lambda m: rec,
                     settings=ChatSettings(policy="round-robin", max_speakers=1, seed=seed,
                                           max_tokens=40, memory=memory))
    cancel = threading.Event()

    def ask(text: str) -> tuple[str, str, str]:
        reply, speaker = "", ""
        for ev in chat.send(text, cancel):
            if ev.type == "message":
                reply, speaker = ev.data["text"], ev.data["speaker"]
        req = rec.last.get(speaker)
        prompt = "\n".join(m["content"] for m in req.messages[:-1]) if req else ""
        note = note_of(speaker, req.messages) if req else ""
        return reply, prompt, note

    for line in OPENING:
        ask(line)
    for statement, _q, _a in FACTS:
        ask(statement)
    member = chat.members[0].name
    for i in range(fillers):  # scripted exchanges: stored as said, not generated
        user = FILLER_USER[i % len(FILLER_USER)]
        chat.round += 1
        for role, speaker, text in (("user", chat.settings.user_name, user), ("companion", member, FILLER_REPLY)):
            mid = store.add_message(chat.conversation_id, round=chat.round, role=role, speaker=speaker, text=text)
            chat.transcript.append(TranscriptItem(role, speaker, text, mid))
    rows = []
    for _s, question, answer in FACTS:
        reply, prompt, note = ask(question)
        rows.append({"question": question, "answer": answer, "reply": reply,
                     "retrieved": answer in prompt.lower(), "in_note": answer in note.lower(),
                     "correct": answer in reply.lower()})
    never = []
    for question, topic in NEVER:
        reply, prompt, note = ask(question)
        lines = [x for x in note.split("\n")[1:] if "said" in x or "About" in x]
        never.append({"question": question, "reply": reply, "note_fact_lines": lines,
                      "wrong_fact_in_note": any(topic in x.lower() for x in lines),
                      "reply_states_value": _invents(reply, chat.names)})
    store.close()
    n, m = len(rows), len(never)
    return {
        "memory": memory, "fillers": fillers, "facts": rows, "never_stated": never,
        "facts_remembered": [f["text"] for f in Store(Path(home) / "mascot.db").memories()],
        "retrieval_hit_rate": sum(r["retrieved"] for r in rows) / n,
        "answer_accuracy": sum(r["correct"] for r in rows) / n,
        "wrong_fact_in_notes": sum(x["wrong_fact_in_note"] for x in never) / m,
        "unrelated_lines_in_notes": sum(bool(x["note_fact_lines"]) for x in never) / m,
        "invented_in_replies": sum(x["reply_states_value"] for x in never) / m,
    }


def minilm_vs_words() -> dict[str, Any]:
    """Retrieval only: rank the user's earlier messages (the statements among the opening and
    filler lines) for each question. Words: the app's IDF-weighted overlap with its threshold
    (engine.recall). MiniLM: cosine similarity, with the lowest threshold that still finds
    every stated fact it ranks first; false hits: never-stated questions that then retrieve a
    message anyway (e.g. the dog's name for "What is my cat called?")."""
    from engine.memory import words
    from engine.recall import RECALL_MIN_SCORE, Candidate, score
    from evaluation.embed import Embedder
    pool = OPENING + [s for s, _q, _a in FACTS] + FILLER_USER
    cands = [(Candidate(str(i), t), words(t)) for i, t in enumerate(pool)]
    emb = Embedder()
    vecs = emb(pool)

    def word_top(q: str) -> list[str]:
        return [c.text for sc, c in score(words(q), cands) if sc >= RECALL_MIN_SCORE][:2]

    def minilm_top(q: str) -> list[tuple[float, str]]:
        sims = vecs @ emb([q])[0]
        return [(float(sims[i]), pool[i]) for i in sims.argsort()[::-1][:2]]

    stated = [(st, q, word_top(q), minilm_top(q)) for st, q, _a in FACTS]
    firsts = [m[0][0] for st, _q, _w, m in stated if m[0][1] == st]
    threshold = min(firsts) if firsts else 1.0
    never = [(q, word_top(q), minilm_top(q)) for q, _topic in NEVER]
    return {
        "words_hit_at_2": sum(st in w for st, _q, w, _m in stated) / len(FACTS),
        "minilm_hit_at_2": sum(st in [t for _s, t in m] for st, _q, _w, m in stated) / len(FACTS),
        "minilm_threshold": threshold,
        "words_false_hits": sum(bool(w) for _q, w, _m in never) / len(NEVER),
        "minilm_false_hits": sum(m[0][0] >= threshold for _q, _w, m in never) / len(NEVER),
        "per_question": [{"question": q, "words": w, "minilm": m} for _st, q, w, m in stated]
                        + [{"question": q, "words": w, "minilm": m, "never_stated": True} for q, w, m in never],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="memory_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--fillers", type=int, default=40, help="scripted exchanges between the facts and the questions")
    p.add_argument("--minilm", action="store_true", help="also compare MiniLM and word-overlap retrieval")
    p.add_argument("--json", type=Path, default=None, help="write every reply and figure here")
    args = p.parse_args(argv)
    from engine.llm.runtime import RuntimePool
    pool = RuntimePool(n_ctx=4096)
    result: dict[str, Any] = {}
    for memory in (False, True):
        key = "memory_on" if memory else "memory_off"
        print(f"memory_bench: {key}", file=sys.stderr)
        result[key] = run_condition(memory, args.fillers, pool)
        pool.clear_slots()
    if args.minilm:
        result["retrieval_minilm_vs_words"] = minilm_vs_words()
    print(f"{'':24} {'memory off':>11} {'memory on':>10}")
    for k in ("retrieval_hit_rate", "answer_accuracy", "wrong_fact_in_notes", "unrelated_lines_in_notes",
              "invented_in_replies"):
        print(f"{k:24} {result['memory_off'][k]:11.2f} {result['memory_on'][k]:10.2f}")
    if "retrieval_minilm_vs_words" in result:
        r = result["retrieval_minilm_vs_words"]
        print(f"ranking earlier messages, hit@2: words {r['words_hit_at_2']:.2f}, MiniLM "
              f"{r['minilm_hit_at_2']:.2f}; never-stated questions that retrieve something: words "
              f"{r['words_false_hits']:.2f}, MiniLM {r['minilm_false_hits']:.2f} (cosine >= {r['minilm_threshold']:.2f})")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
