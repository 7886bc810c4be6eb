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
* conditions: memory off; memory on with recall by word overlap (``MASCOT_RECALL=words``); memory
  on with recall by MiniLM embeddings (the app's default when its package is installed); each
  asked the questions as written and paraphrased (``PARAPHRASED``: other words than the
  statement, e.g. "What's my pet called?" for "My dog is called Rex.");
* ``--retrieval``: retrieval only, no model: word overlap vs MiniLM vs a hybrid (cosine plus a
  share of the word score) at ranking the user's earlier messages, on this script's messages
  alone and with the 218 distinct user messages of the scenario sets as the group's past
  conversations; the bench's questions (direct and paraphrased) and a held-out set
  (``HELDOUT``: facts and questions written apart, never used to choose a threshold);
* ``--summary``: what a rolling summary by the bundled model keeps of the six facts (and what it
  adds that nobody said), a design compared in docs/memory.md.

Usage::

    python -m evaluation.memory_bench [--fillers 40] [--retrieval] [--summary] [--json OUT.json]
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

from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.llm.backend import GenRequest
from engine.llm.runtime import RuntimePool
from engine.memory import words
from engine.models.registry import bundled_model_path
from engine.persona_files import load_set
from engine.recall import EMBED_MIN, RECALL_MIN_SCORE, Candidate, score
from engine.reply.prompts import TranscriptItem, note_of
from engine.safety.learned import embed
from engine.storage import Store
from training.scenarios import load_scenarios

FACTS = [  # (statement, question, answer)
    ("My dog is called Rex.", "What is my dog called?", "rex"),
    ("I live in Leeds.", "Which city do I live in?", "leeds"),
    ("I work as a night nurse.", "What is my job?", "nurse"),
    ("I'm allergic to peanuts.", "Remind me, what am I allergic to?", "peanut"),
    ("My sister's name is Hannah.", "What is my sister's name?", "hannah"),
    ("My favourite food is lasagne.", "What is my favourite food?", "lasagne"),
]
NEVER = [
    ("What is my cat called?", "cat"),
    ("What is my brother's name?", "brother"),
    ("Which car do I drive?", "car"),
    ("What is my middle name?", "middle"),
]
# the same facts asked in other words (the statement's content words avoided)
PARAPHRASED = [
    "What's my pet called?",
    "Where's home for me these days?",
    "What do I do for a living?",
    "Is there any food I have to stay away from?",
    "Do I have any siblings?",
    "What dish do I love most?",
]
NEVER_PARAPHRASED = [
    ("Do I have a cat?", "cat"),
    ("Have I got a brother?", "brother"),
    ("What do I drive?", "drive"),
    ("What instrument do I play?", "instrument"),
]
# written apart from the thresholds: other facts, asked in other words (retrieval only)
HELDOUT = [
    ("I've got a golden retriever, Biscuit, who steals socks.", "What's my pet called?"),
    ("We moved to Porto last spring for my partner's job.", "Which city is home for me now?"),
    ("I teach chemistry to teenagers at the local secondary school.", "What do I do for work?"),
    (
        "Shellfish makes my throat swell up, so I avoid prawns.",
        "Is there a food that makes me ill?",
    ),
    ("My twin brother Tomas lives in Madrid.", "Do I have any siblings?"),
    ("Every Saturday I play bass in a little jazz band.", "What instrument do I play?"),
    (
        "My mum turns seventy in March and we're planning a party.",
        "How old is my mother going to be?",
    ),
    (
        "I'm training for the Manchester half marathon in October.",
        "What race am I getting ready for?",
    ),
    ("Our flat has a tiny balcony where I grow tomatoes and basil.", "What do I grow at home?"),
    ("I drive an old blue Volvo that breaks down every winter.", "What kind of car do I have?"),
]
NEVER_HELDOUT = [
    "What's my sister's name?",
    "Where do my parents live?",
    "What's my favourite film?",
    "Which city was I born in?",
    "What's my cat called?",
    "What's my wife's name?",
]
OPENING = ["Hi everyone, long day today.", "I just got home and made tea."]
FILLER_USER = [
    "The weather was grey again today.",
    "I watched a film about trains.",
    "Lunch was soup and bread.",
    "I cleaned the kitchen this evening.",
    "The bus was late this morning.",
    "I read two chapters of a novel.",
    "I tried a new coffee place.",
    "My phone battery died at noon.",
    "I went for a short walk.",
    "The neighbours were noisy last night.",
]
FILLER_REPLY = (
    "That sounds like a fairly ordinary day, and ordinary days count too. Tell me what "
    "stood out most, even if it was something small, and how you felt about it afterwards."
)


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


def run_condition(
    memory: bool,
    fillers: int,
    pool: Any,
    seed: int = 7,
    recall: str = "minilm",
    paraphrased: bool = False,
    history_tokens: int | None = None,
) -> dict[str, Any]:
    home = tempfile.mkdtemp(prefix="mascot-membench-")
    os.environ["MASCOT_HOME"] = home
    os.environ["MASCOT_RECALL"] = recall
    store = Store(Path(home) / "mascot.db")
    rec = _recording(pool.get(bundled_model_path()))
    chat = GroupChat(
        load_set("support"),
        store=store,
        backend_for=lambda m: rec,
        settings=ChatSettings(
            policy="round-robin",
            max_speakers=1,
            seed=seed,
            max_tokens=40,
            memory=memory,
            **({"history_tokens": history_tokens} if history_tokens else {}),
        ),
    )
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
        for role, speaker, text in (
            ("user", chat.settings.user_name, user),
            ("companion", member, FILLER_REPLY),
        ):
            mid = store.add_message(
                chat.conversation_id, round=chat.round, role=role, speaker=speaker, text=text
            )
            chat.transcript.append(TranscriptItem(role, speaker, text, mid))
    rows = []
    questions = PARAPHRASED if paraphrased else [q for _s, q, _a in FACTS]
    for (_s, _q, answer), question in zip(FACTS, questions):
        reply, prompt, note = ask(question)
        rows.append(
            {
                "question": question,
                "answer": answer,
                "reply": reply,
                "retrieved": answer in prompt.lower(),
                "in_note": answer in note.lower(),
                "correct": answer in reply.lower(),
            }
        )
    never = []
    for question, topic in NEVER_PARAPHRASED if paraphrased else NEVER:
        reply, prompt, note = ask(question)
        lines = [x for x in note.split("\n")[1:] if "said" in x or "About" in x]
        never.append(
            {
                "question": question,
                "reply": reply,
                "note_fact_lines": lines,
                "wrong_fact_in_note": any(topic in x.lower() for x in lines),
                "reply_states_value": _invents(reply, chat.names),
            }
        )
    store.close()
    n, m = len(rows), len(never)
    return {
        "memory": memory,
        "recall": recall if memory else None,
        "paraphrased": paraphrased,
        "fillers": fillers,
        "history_tokens": history_tokens or "default",
        "facts": rows,
        "never_stated": never,
        "facts_remembered": [f["text"] for f in Store(Path(home) / "mascot.db").memories()],
        "retrieval_hit_rate": sum(r["retrieved"] for r in rows) / n,
        "answer_accuracy": sum(r["correct"] for r in rows) / n,
        "wrong_fact_in_notes": sum(x["wrong_fact_in_note"] for x in never) / m,
        "unrelated_lines_in_notes": sum(bool(x["note_fact_lines"]) for x in never) / m,
        "invented_in_replies": sum(x["reply_states_value"] for x in never) / m,
    }


HYBRID_WORDS = (
    0.04  # hybrid score: cosine + this x the IDF word score (fixed beforehand, not tuned)
)


def retrieval_compare() -> dict[str, Any]:
    """Retrieval only (no language model): for each question, which of the user's earlier
    messages each method would put in the note (at most 2, above its threshold). Pools: the
    bench script's user messages alone, and with the scenario sets' 218 distinct user messages as
    the group's past conversations. Hits: the statement of the asked fact among the recalled.
    Wrong facts: a never-stated question recalls one of the set's stated facts (a neighbour:
    the dog's name for "What is my cat called?"). Any: it recalls something at all."""
    import numpy as np

    past = sorted(
        {t["text"] for sc in load_scenarios() for t in sc.transcript() if t["speaker"] == "User"}
    )
    sets = {  # name: (statements, [(question, statement)], never-stated questions)
        "bench": (
            [s for s, _q, _a in FACTS],
            [(q, s) for s, q, _a in FACTS],
            [q for q, _t in NEVER],
        ),
        "bench_paraphrased": (
            [s for s, _q, _a in FACTS],
            [(q, s) for (s, _q, _a), q in zip(FACTS, PARAPHRASED)],
            [q for q, _t in NEVER_PARAPHRASED],
        ),
        "heldout": ([s for s, _q in HELDOUT], [(q, s) for s, q in HELDOUT], NEVER_HELDOUT),
    }
    thresholds = {
        "words": [RECALL_MIN_SCORE, 4.0, 5.0],
        "minilm": [0.30, 0.35, EMBED_MIN, 0.45, 0.50, 0.55],
        "hybrid": [0.40, 0.50, 0.60, 0.70],
    }
    out: dict[str, Any] = {
        "embed_min": EMBED_MIN,
        "words_min": RECALL_MIN_SCORE,
        "hybrid_words": HYBRID_WORDS,
        "past_messages": len(past),
        "results": [],
    }
    for with_past in (False, True):
        for name, (statements, asked, never) in sets.items():
            pool = OPENING + statements + FILLER_USER + (past if with_past else [])
            cands = [(Candidate(str(i), t), words(t)) for i, t in enumerate(pool)]
            vecs = embed(pool)

            def ranked(q: str) -> dict[str, list[tuple[float, str]]]:
                ws = {c.text: sc for sc, c in score(words(q), cands)}
                sims = vecs @ embed([q])[0]
                order = lambda xs: sorted(xs, key=lambda x: -x[0])  # noqa: E731
                return {
                    "words": order([(ws[t], t) for t in pool if t in ws]),
                    "minilm": order([(float(sims[i]), t) for i, t in enumerate(pool)]),
                    "hybrid": order(
                        [
                            (float(sims[i]) + HYBRID_WORDS * ws.get(t, 0.0), t)
                            for i, t in enumerate(pool)
                        ]
                    ),
                }

            got = [(st, ranked(q)) for q, st in asked]
            nev = [ranked(q) for q in never]
            for method, ts in thresholds.items():
                for t in ts:
                    top = lambda r: [x[1] for x in r[method][:2] if x[0] >= t]  # noqa: E731
                    out["results"].append(
                        {
                            "set": name,
                            "past_conversations": with_past,
                            "method": method,
                            "threshold": t,
                            "hits": sum(st in top(r) for st, r in got),
                            "of": len(got),
                            "never_wrong_fact": sum(
                                any(x in statements for x in top(r)) for r in nev
                            ),
                            "never_any": sum(bool(top(r)) for r in nev),
                            "never_of": len(nev),
                            "per_question": [
                                {"question": q, "recalled": top(r)}
                                for (q, _s), (_st, r) in zip(asked, got)
                            ]
                            + [
                                {"question": q, "recalled": top(r), "never_stated": True}
                                for q, r in zip(never, nev)
                            ],
                        }
                    )
    del np
    return out


def rolling_summary(pool: Any, seed: int = 7) -> dict[str, Any]:
    """A rolling summary by the bundled model: every 4 of the script's first user messages (the
    opening, the six facts, filler) it rewrites "what we know about the user" from the previous
    summary and the new messages (120 tokens at most). Reported: which facts survive to the
    end, and capitalised words in the summaries that appear in no user message (invented)."""
    rt = pool.get(bundled_model_path())
    said = OPENING + [s for s, _q, _a in FACTS] + FILLER_USER[:8]
    summary, steps = "", []
    for i in range(0, len(said), 4):
        new = "\n".join(f"- {t}" for t in said[i : i + 4])
        prompt = (
            f"Notes so far about the user:\n{summary or '(none)'}\n\nNew messages from the user:\n{new}\n\n"
            "Rewrite the notes: keep every fact the user stated about themselves (names, places, job, "
            "allergies, family, favourites) and add the new ones. Short lines, nothing else."
        )
        gen = rt.generate(
            GenRequest(
                slot="summary",
                messages=[{"role": "user", "content": prompt}],
                max_tokens=120,
                temperature=0.2,
                seed=seed,
            )
        )
        summary = "".join(gen).strip()
        steps.append(summary)
    source = " ".join(said).lower()
    invented = sorted(
        {
            w
            for st in steps
            for w in re.findall(r"\b[A-Z][a-z]{2,}\b", st)
            if w.lower() not in source
            and w.lower()
            not in {
                "user",
                "notes",
                "new",
                "the",
                "they",
                "she",
                "her",
                "his",
                "and",
                "name",
                "favorite",
            }
        }
    )
    kept = {a: a in summary.lower() for _s, _q, a in FACTS}
    return {
        "steps": steps,
        "final": summary,
        "facts_kept": kept,
        "kept": sum(kept.values()),
        "of": len(kept),
        "invented_words": invented,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="memory_bench", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--fillers",
        type=int,
        default=40,
        help="scripted exchanges between the facts and the questions",
    )
    p.add_argument(
        "--retrieval",
        action="store_true",
        help="retrieval only: words vs MiniLM vs hybrid (no model)",
    )
    p.add_argument(
        "--summary", action="store_true", help="only the rolling-summary probe on the bundled model"
    )
    p.add_argument(
        "--conditions",
        default="off,words,minilm,off_paraphrased,words_paraphrased,minilm_paraphrased",
        help="conditions to run, in order: off, words or minilm, each optionally _paraphrased",
    )
    p.add_argument(
        "--history-tokens",
        type=int,
        default=None,
        help="the companions' window (default: the app's 2,048); smaller runs faster",
    )
    p.add_argument("--json", type=Path, default=None, help="write every reply and figure here")
    args = p.parse_args(argv)
    result: dict[str, Any] = {}
    if args.retrieval:
        r = result["retrieval"] = retrieval_compare()
        print(f"{'set':18} {'past':5} {'method':7} {'thr':>5} {'hits':>6} {'wrong':>6} {'any':>6}")
        for x in r["results"]:
            print(
                f"{x['set']:18} {str(x['past_conversations']):5} {x['method']:7} {x['threshold']:5.2f} "
                f"{x['hits']:>3}/{x['of']:<2} {x['never_wrong_fact']:>3}/{x['never_of']:<2} "
                f"{x['never_any']:>3}/{x['never_of']:<2}"
            )
    else:
        pool = RuntimePool(n_ctx=4096)
        if args.summary:
            r = result["rolling_summary"] = rolling_summary(pool)
            print(
                f"rolling summary keeps {r['kept']}/{r['of']} facts; words in no user message: "
                f"{', '.join(r['invented_words']) or 'none'}\nfinal: {r['final']}"
            )
        else:
            keys = (
                "retrieval_hit_rate",
                "answer_accuracy",
                "wrong_fact_in_notes",
                "unrelated_lines_in_notes",
                "invented_in_replies",
            )
            runs = [
                c.strip() for c in args.conditions.split(",")
            ]  # e.g. minilm,minilm_paraphrased,off
            for key in runs:
                cond, paraphrased = key.removesuffix("_paraphrased"), key.endswith("_paraphrased")
                print(f"memory_bench: {key}", file=sys.stderr)
                result[key] = run_condition(
                    cond != "off",
                    args.fillers,
                    pool,
                    paraphrased=paraphrased,
                    recall="words" if cond == "off" else cond,
                    history_tokens=args.history_tokens,
                )
                pool.clear_slots()
                if (
                    args.json
                ):  # after each condition: a long run stopped early keeps what it measured
                    args.json.parent.mkdir(parents=True, exist_ok=True)
                    args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False))
            print(f"{'':26}" + "".join(f"{k:>22}" for k in runs))
            for k in keys:
                print(f"{k:26}" + "".join(f"{result[c][k]:22.2f}" for c in runs))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
