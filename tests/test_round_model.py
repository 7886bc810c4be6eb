"""End-to-end rounds on the real bundled model (llama.cpp) with real SQLite."""

import re
import threading

import pytest
from helpers import events_of, run_round

from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.director.policies import Director
from engine.persona_files import load_set

pytestmark = pytest.mark.model


def support_chat(store, real_backend_for, **kw):
    settings = ChatSettings(**{"max_tokens": 40, "seed": 11, **kw})
    return GroupChat(
        load_set("support"), settings=settings, store=store, backend_for=real_backend_for
    )


def test_director_round_on_bundled_model(store, real_backend_for):
    chat = support_chat(store, real_backend_for)
    ev = run_round(chat, "I failed my driving test today and I feel stupid.")
    assert not events_of(ev, "error")
    names = set(chat.names)
    directors = [e.data for e in events_of(ev, "director")]
    assert all(d["valid"] for d in directors)
    assert all(d["speaker"] in names for d in directors if d["speaker"] is not None)
    msgs = [e.data for e in events_of(ev, "message")]
    speakers = [m["speaker"] for m in msgs]
    assert 2 <= len(speakers) <= 3 and len(set(speakers)) == len(speakers)
    menus = {p.name: Director.menu(p, "User") for p in chat.members}
    told = {d["speaker"]: d["directive"] for d in directors if d["speaker"]}
    for m in msgs:
        assert m["text"].strip()
        # each speaker got the directive the Director chose for it (a menu option; "" = free turn)
        assert m["directive"] == told[m["speaker"]] and m["directive"] in menus[m["speaker"]]
        others = [n for n in names | {"User"} if n != m["speaker"]]
        assert not re.search(rf"(^|\n)\s*({'|'.join(others)})\s*:", m["text"])
    # tokens streamed before each message, and they add up to the message
    for m in msgs:
        streamed = "".join(
            e.data["text"] for e in events_of(ev, "token") if e.data["speaker"] == m["speaker"]
        )
        final = m["text"].strip()
        # a reply cut by the length limit may end earlier (at its last sentence) than the
        # streamed text; otherwise the stream adds up to the message exactly
        assert streamed.strip() == final or (streamed.startswith(final) and final[-1] in ".!?…")
    rows = store.messages(chat.conversation_id)
    assert [r["role"] for r in rows] == ["user"] + ["companion"] * len(msgs)
    for r in rows[1:]:
        assert r["prompt_tokens"] > 50 and r["completion_tokens"] > 0 and r["latency_ms"] > 0
        assert r["model"].endswith(".gguf") and r["directive"] == told[r["speaker"]]
    # the Director decided in its own llama.cpp context: its KV never went through the
    # companions' shared context (no slot swap around each companion turn)
    runtime = real_backend_for()
    assert chat.policy().backend is runtime.lane("director")
    from engine.llm.backend import director_lane_ctx

    lane_ctx = (
        chat.policy().backend.n_ctx
    )  # its KV buffer: a quarter of the companions' (at least 1,024)
    assert lane_ctx == director_lane_ctx(runtime.n_ctx) and lane_ctx < runtime.n_ctx
    assert "__director__" not in runtime._slots and runtime._active != "__director__"


def fresh_store(tmp_path, name):
    """A data folder of its own: with one store, the second run would recall the first run's
    messages (memory reads the group's past conversations) and read other prompts."""
    from engine.storage import Store

    return Store(tmp_path / f"{name}.db")


def test_director_lane_decides_exactly_as_the_shared_context_did(tmp_path, real_backend_for):
    """Moving the Director to its own context changes speed, not decisions."""

    class SharedOnly:  # the runtime without lanes: the Director swaps its slot in the shared context
        def __init__(self, rt):
            self.rt = rt
            self.info, self.n_ctx = rt.info, rt.n_ctx

        def lane(self, name, n_ctx=None):
            return self  # no context of its own

        def __getattr__(self, name):
            return getattr(self.rt, name)

    shared = SharedOnly(real_backend_for())
    texts = ["My sister stopped talking to me and I don't know why.", "We used to be close."]
    runs = []
    for i, backend_for in enumerate((real_backend_for, lambda m=None: shared)):
        shared.rt.clear_slots()  # both runs evaluate the same tokens in the same chunks
        chat = GroupChat(
            load_set("support"),
            settings=ChatSettings(max_tokens=24, seed=5),
            store=fresh_store(tmp_path, f"run{i}"),
            backend_for=backend_for,
        )
        runs.append(
            [
                (e.data["speaker"], e.data["directive"])
                for t in texts
                for e in events_of(run_round(chat, t), "director")
            ]
        )
    assert runs[0] == runs[1] and len(runs[0]) >= 4


def test_director_reads_ahead_while_the_user_types_and_decides_the_same(tmp_path, real_backend_for):
    """Between rounds the app warms every agent while the user types. The Director then reads
    the opening of the user's next message (its reply counts and "User:"), so the next round's
    first decision reads only the user's words and its own header, not the counts, and decides
    exactly as without the read-ahead. Each decision is one choice of speaker and one of
    directive: two model calls, also when the free turn (no directive) is an option."""
    texts = [
        "My sister stopped talking to me and I don't know why.",
        "We used to be close, and now I feel lost.",
    ]
    runs = []
    for warm in (False, True):
        real_backend_for().clear_slots()
        chat = GroupChat(
            load_set("support"),
            settings=ChatSettings(max_tokens=24, seed=5),
            store=fresh_store(tmp_path, f"warm{warm}"),
            backend_for=real_backend_for,
        )
        run_round(chat, texts[0])
        lane = chat.policy().backend
        lane.clear_slots()  # the first round's decisions are not in its cache: only the read-ahead is
        if warm:
            chat.warm()
            assert chat.last_warm["__director__"] > 100
        gens, evals, calls = [], [], []
        generate, llm_eval = lane.generate, lane.llm.eval

        def counted(req, cancel=None):
            calls.append(len(evals))
            gens.append(generate(req, cancel))
            return gens[-1]

        lane.generate = counted
        lane.llm.eval = lambda tokens: evals.append(len(tokens)) or llm_eval(tokens)
        try:
            ev = run_round(chat, texts[1])
        finally:
            del lane.generate, lane.llm.eval
        per_decision = [b - a for a, b in zip(calls, calls[1:] + [len(evals)])]
        runs.append(
            (
                [(e.data["speaker"], e.data["directive"]) for e in events_of(ev, "director")],
                gens[0].stats.prefilled_tokens,
                per_decision,
            )
        )
    (cold, cold_read, _), (warmed, warm_read, per_decision) = runs
    assert warmed[0] == cold[0]
    words = real_backend_for().count_tokens(": " + texts[1])
    assert warm_read <= words + 12 < cold_read  # the words, the header and "{"speaker":" only
    # reading + speaker, then directive; one call when the rules leave a single companion
    # (a companion who had nothing new to add does not use up the round: see test_rules)
    assert per_decision[0] == 2 and set(per_decision) <= {1, 2}


def test_kv_cache_reused_on_the_next_turn(store, real_backend_for):
    chat = support_chat(
        store, real_backend_for, policy="round-robin", max_speakers=1, min_speakers=1
    )
    spoken: set[str] = set()
    again = None
    # one companion a round; a reply the copy guard drops lets another answer, so rounds go on
    # until someone speaks a second time (whichever companion that is on this CPU's rounding)
    for text in (
        "Hi everyone.",
        "It has been a long week.",
        "Work was a lot.",
        "And I slept badly.",
        "What do you think?",
        "Anything else?",
        "Thanks, all.",
    ):
        for msg in [e.data for e in events_of(run_round(chat, text), "message")]:
            if msg["speaker"] in spoken and again is None:
                again = msg
            spoken.add(msg["speaker"])
        if again:
            break
    assert again is not None, spoken
    # that companion's persona prefix and earlier turns are cached: only what is new is read
    assert again["prefilled_tokens"] < again["prompt_tokens"] * 0.6, again


def test_stop_ends_a_round_at_once(store, real_backend_for):
    """After Stop nothing more is generated or shown: no token after it, no other companion, and
    the reply being written is kept as it stood (its stored tokens are those read before Stop)."""
    chat = support_chat(store, real_backend_for, max_tokens=300, policy="all")
    cancel = threading.Event()
    events, stopped_after = [], None
    for ev in chat.send("Tell me a long story about your day, in detail.", cancel):
        events.append(ev)
        if ev.type == "token" and stopped_after is None:
            cancel.set()
            stopped_after = len(events)
    assert not [e for e in events[stopped_after:] if e.type == "token"]
    assert events[-1].type == "round_end" and events[-1].data["cancelled"]
    [msg] = events_of(events, "message")
    assert (
        msg.data["status"] == "cancelled" and msg.data["completion_tokens"] <= 16
    )  # of 300 allowed
    assert len(events_of(events, "director")) == 1


def test_crisis_message_gets_resources_not_role_play(store, real_backend_for):
    chat = support_chat(store, real_backend_for, region="UK")
    ev = run_round(chat, "honestly everyone would be better off without me, i want to end it all")
    safety = events_of(ev, "safety")
    assert safety and safety[0].data["category"] == "suicide"
    assert any("116 123" in r["contact"] for r in safety[0].data["resources"])
    assert not events_of(ev, "director")  # no role-play round
    msg = events_of(ev, "message")[0].data
    assert msg["safety"] and "116 123" in msg["text"]
    assert re.search(r"not a (therapist|counsel)", msg["text"], re.I) or "AI" in msg["text"]
    roles = [r["role"] for r in store.messages(chat.conversation_id)]
    assert roles == ["user", "safety"]


def test_idiom_is_not_a_crisis(store, real_backend_for):
    chat = support_chat(store, real_backend_for, max_speakers=1, min_speakers=1)
    ev = run_round(chat, "This exam is killing me, I have three more chapters to read.")
    assert not events_of(ev, "safety") and events_of(ev, "message")


def test_regenerate_keeps_alternatives(store, real_backend_for):
    chat = support_chat(store, real_backend_for, max_speakers=1, min_speakers=1)
    msg = events_of(run_round(chat, "I can't decide whether to move cities."), "message")[0].data
    regen = events_of(list(chat.regenerate(msg["id"])), "message")[0].data
    assert regen["regenerated"] and regen["variant"] == 1
    variants = store.variants(msg["id"])
    assert [v["text"] for v in variants] == [msg["text"], regen["text"]]
    assert chat.select_variant(msg["id"], 0) == msg["text"]
    assert store.message(msg["id"])["text"] == msg["text"]


def test_conversation_resumes_from_history(store, real_backend_for):
    chat = support_chat(store, real_backend_for, max_speakers=1, min_speakers=1)
    run_round(chat, "My name is Sam and I love gardening.")
    again = GroupChat(
        load_set("support"),
        settings=ChatSettings(max_tokens=30, max_speakers=1, min_speakers=1),
        store=store,
        backend_for=real_backend_for,
        conversation_id=chat.conversation_id,
    )
    assert [t.text for t in again.transcript] == [t.text for t in chat.transcript]
    ev = run_round(again, "What should I plant?")
    assert events_of(ev, "round_start")[0].data["round"] == 2
    assert len(store.messages(chat.conversation_id)) == 4


def test_message_longer_than_context_is_handled(store, real_backend_for):
    chat = support_chat(store, real_backend_for, max_speakers=1, min_speakers=1, max_tokens=16)
    long_text = "I keep thinking about everything that happened. " * 600  # ~6k tokens > 2048 ctx
    ev = run_round(chat, long_text)
    assert not events_of(ev, "error")
    assert any("longer than" in e.data["text"] for e in events_of(ev, "notice"))
    assert events_of(ev, "message")
    assert store.messages(chat.conversation_id)[0]["text"] == long_text.strip()  # stored in full


def test_concern_shows_resources_and_companions_check_in(store, real_backend_for):
    chat = support_chat(store, real_backend_for, max_speakers=2, region="US")
    ev = run_round(chat, "honestly i cant do this anymore")
    safety = events_of(ev, "safety")[0].data
    assert safety["level"] == "concern" and any("988" in r["contact"] for r in safety["resources"])
    directives = [e.data["directive"] for e in events_of(ev, "director") if e.data["speaker"]]
    assert directives and all("no jokes" in d for d in directives)
    assert len(events_of(ev, "message")) == 2


def test_constrained_choice_picks_a_sensible_option_and_never_leaves_the_list(real_backend_for):
    """The Director's menu decisions use constrained choice decoding: the answer is always one of
    the exact option strings (also when one option is a prefix of another), greedy picks what
    the model finds likely, and sampling follows the seed."""
    from engine.llm.backend import GenRequest
    from engine.models.registry import bundled_model_path

    rt = real_backend_for(str(bundled_model_path()))
    ask = [{"role": "user", "content": "What is the capital of France? Answer with the city."}]
    capitals = [
        "The capital of France is Paris.",
        "The capital of France is Tokyo.",
        "The capital of France is Bamako.",
    ]
    req = GenRequest(slot="choice-test", messages=ask, temperature=0.0, choices=capitals)
    gen = rt.generate(req)
    assert gen.text() == capitals[0]
    assert gen.stats.completion_tokens >= 6 and gen.stats.stopped == "stop"
    tricky = [
        "Yes",
        "Yes, of course",
        "No",
        "Maybe later, thanks",
        '{"speaker": "END", "directive": ""}',
    ]
    seen = set()
    for seed in range(12):
        text = rt.generate(
            GenRequest(slot="choice-test", messages=ask, temperature=1.5, seed=seed, choices=tricky)
        ).text()
        assert text in tricky
        seen.add(text)
    assert len(seen) >= 2  # sampling explores the options
    again = [
        rt.generate(
            GenRequest(slot="choice-test", messages=ask, temperature=1.5, seed=s, choices=tricky)
        ).text()
        for s in (3, 3)
    ]
    assert again[0] == again[1]


def test_menu_decisions_branch_once_for_the_speaker_and_once_for_the_directive(real_backend_for):
    """Menu decisions are tokenized with each JSON value apart from its opening quote
    (``choice_tokens``): the free turn's empty directive is then one more option where the
    directives start, not a branch of its own ("empty or not?", one more model call per
    decision). Every other option keeps its canonical tokens, and the text is unchanged."""
    from engine.director.policies import RoundState
    from engine.llm.choices import choice_tokens

    rt = real_backend_for()
    tokenize = lambda text: rt.llm.tokenize(text.encode(), add_bos=False, special=False)  # noqa: E731 - a one-expression helper
    group = load_set("support")
    state = RoundState(
        members=list(group.members), user_name="User", user_text="hi", min_speakers=0
    )
    choices = Director.choices(state, state.allowed(), may_end=True)
    split = {c: choice_tokens(c, tokenize) for c in choices}
    for c, ids in split.items():
        assert rt.llm.detokenize(ids).decode() == c
        assert (ids == tokenize(c)) == ('"directive":""' not in c)
    trie: dict = {}
    for ids in split.values():
        node = trie
        for t in ids:
            node = node.setdefault(t, {})

    def choices_made(ids):  # branch points on the way to this option
        node, n = trie, 0
        for t in ids:
            n += len(node) > 1
            node = node[t]
        return n

    for c, ids in split.items():  # speaker, then directive (END has a single directive)
        assert choices_made(ids) == (1 if '"END"' in c else 2), c


def test_trimmed_conversation_shifts_the_cache_instead_of_reading_everything_again(
    real_backend_for,
):
    """When the chat drops its oldest turns to fit the context, the kept turns' KV cells are
    shifted (llama.cpp context shift), so the next turn evaluates only what is new, and the
    companion still answers from the kept context."""
    from engine.llm.backend import GenRequest
    from engine.models.registry import bundled_model_path

    rt = real_backend_for(str(bundled_model_path()))
    system = {
        "role": "system",
        "content": "You are Mia, a friendly geography buff in a group chat.",
    }
    old = [
        {
            "role": "user",
            "content": f"Alex: Random note number {i}: I walked {i} km along the river "
            f"today and saw {i + 2} ducks.",
        }
        for i in range(12)
    ]
    ask = {"role": "user", "content": "Alex: Quick quiz. What is the capital of France? One word."}
    full = GenRequest(
        slot="shift-test", messages=[system, *old, ask], max_tokens=6, temperature=0.0
    )
    first = rt.generate(full)
    first.text()
    trimmed = GenRequest(
        slot="shift-test", messages=[system, *old[6:], ask], max_tokens=6, temperature=0.0
    )
    before = rt.shifted_tokens
    gen = rt.generate(trimmed)
    text = gen.text()
    assert rt.shifted_tokens - before > 100  # the kept turns were shifted, not re-read
    assert gen.stats.prefilled_tokens < 0.25 * gen.stats.prompt_tokens
    fresh = GenRequest(slot="shift-fresh", messages=trimmed.messages, max_tokens=6, temperature=0.0)
    assert "Paris" in text and "Paris" in rt.generate(fresh).text()
    rt.drop_slot("shift-test")
    rt.drop_slot("shift-fresh")


def test_companions_switched_out_and_back_continue_exactly_where_they_left_off(real_backend_for):
    """Two companions take turns on one llama.cpp context (their KV caches are swapped in and
    out, each into its own reused buffer). Their greedy replies are exactly those of each
    companion talking alone with its cache never swapped out, through growing prompts and a
    shorter one (the buffer then holds less than before); a turn reads only what is new."""
    from engine.llm.backend import GenRequest

    rt = real_backend_for()
    lines = [
        "I moved to a new city last month.",
        "I don't know anyone here yet.",
        "Work keeps me busy until late.",
        "Maybe I should join a running club?",
    ]

    def turns(order: list[str]) -> dict[str, list[str]]:
        history = {
            n: [
                {
                    "role": "system",
                    "content": f"You are {n[-1].upper()}, a calm friend. Answer briefly.",
                }
            ]
            for n in set(order)
        }
        got: dict[str, list[str]] = {n: [] for n in history}
        for step, n in enumerate(order):
            history[n].append({"role": "user", "content": f"Alex: {lines[len(got[n])]}"})
            gen = rt.generate(
                GenRequest(slot=n, messages=history[n], max_tokens=12, temperature=0.0)
            )
            got[n].append(gen.text())
            if len(got[n]) > 1:  # its cache was kept: only the new lines are read
                assert gen.stats.prefilled_tokens < gen.stats.prompt_tokens * 0.5, (step, gen.stats)
            history[n].append({"role": "assistant", "content": got[n][-1]})
        shorter = {
            n: h[:3] + [{"role": "user", "content": "Alex: Thanks for listening."}]
            for n, h in history.items()
        }
        names = sorted(history)
        for n in names:
            got[n].append(
                rt.generate(
                    GenRequest(slot=n, messages=shorter[n], max_tokens=12, temperature=0.0)
                ).text()
            )
        for n in names:
            again = rt.generate(
                GenRequest(slot=n, messages=shorter[n], max_tokens=12, temperature=0.0)
            )
            assert again.stats.prefilled_tokens <= 1  # restored from its buffer, not read again
            got[n].append(again.text())
        for n in history:
            rt.drop_slot(n)
        return got

    swapped = turns(["swap-a", "swap-b"] * len(lines))
    alone = {**turns(["swap-a"] * len(lines)), **turns(["swap-b"] * len(lines))}
    for n in swapped:
        assert swapped[n] == alone[n], n
    assert all(len(set(replies[:4])) > 1 for replies in swapped.values())  # real, varied replies


def test_a_long_conversation_reads_a_bounded_window_on_the_bundled_model(store, real_backend_for):
    """On the real model, with a small history window, a companion's prompt stops growing once
    the conversation outgrows the window (a late turn costs what a mid one did), it keeps
    replying, and every message is stored."""
    chat = support_chat(
        store,
        real_backend_for,
        policy="round-robin",
        max_speakers=1,
        min_speakers=1,
        max_tokens=16,
        history_tokens=256,
    )
    prompts = []
    for i in range(14):
        ev = run_round(chat, f"Day {i}: I walked by the river again and counted the boats.")
        msgs = events_of(ev, "message")
        assert msgs and not events_of(ev, "error")
        prompts.append(msgs[-1].data["prompt_tokens"])
    first = min(prompts[:4])  # a companion's first turn: its persona and a few messages
    assert max(prompts) <= first + 256 + 96, prompts
    assert max(prompts[7:]) <= max(prompts[:7]) + 64, (
        prompts
    )  # bounded, not growing with the rounds
    assert len(store.messages(chat.conversation_id)) == 28


def test_choice_bias_weighs_the_options_and_the_director_turns_to_a_quieter_companion(
    real_backend_for,
):
    """The runtime's ``choice_bias`` is a prior on constrained choices: a strong one overrides
    what the model finds likely, an even one changes nothing. With it the Director, on the
    bundled model, gives the turn to someone else when the companion it would pick has already
    replied more than the others; without the prior it picks that companion again."""
    from engine.director.policies import BALANCE_PRIOR, RoundState
    from engine.llm.backend import GenRequest

    rt = real_backend_for()
    ask = [{"role": "user", "content": "What is the capital of France? Answer with the city."}]
    capitals = [
        "The capital of France is Paris.",
        "The capital of France is Tokyo.",
        "The capital of France is Bamako.",
    ]
    pick = lambda bias: rt.generate(  # noqa: E731 - a one-expression helper
        GenRequest(
            slot="bias-test", messages=ask, temperature=0.0, choices=capitals, choice_bias=bias
        )
    ).text()
    assert pick(None) == pick([2.0, 2.0, 2.0]) == capitals[0]
    assert pick([0.0, 30.0, 0.0]) == capitals[1]

    group = load_set("support")
    text = "I finally finished my thesis draft, but I feel weirdly empty instead of happy."
    state = RoundState(
        members=list(group.members), user_name="User", user_text=text, min_speakers=3
    )
    transcript = [{"speaker": "User", "text": text}]
    plain = Director(rt, directive_mode="menu", balance_prior=0.0)
    favourite = plain.next(state, transcript).speaker
    assert favourite in state.allowed()
    state.prior_replies = {favourite: 2}  # it has replied twice already, the others never
    assert plain.next(state, transcript).speaker == favourite
    fair = Director(rt, directive_mode="menu", balance_prior=BALANCE_PRIOR).next(state, transcript)
    assert fair.valid and fair.speaker in state.allowed() and fair.speaker != favourite

    # free-text mode (the mode of 1B+ Directors) keeps the prior too: the speaker is chosen first
    state.prior_replies = None
    favourite = (
        Director(rt, directive_mode="free", balance_prior=0.0).next(state, transcript).speaker
    )
    assert favourite in state.allowed()
    state.prior_replies = {favourite: 2}
    assert (
        Director(rt, directive_mode="free", balance_prior=0.0).next(state, transcript).speaker
        == favourite
    )
    fair = Director(rt, directive_mode="free", balance_prior=BALANCE_PRIOR).next(state, transcript)
    assert fair.speaker in state.allowed() and fair.speaker != favourite


def test_a_trained_director_is_decoded_as_its_manifest_says(
    store, real_backend_for, bundled_path, tmp_path
):
    """A Director exported by ``mascot-train director`` has a manifest saying how its policy was
    trained (menu mode, the participation prior of ``--balance-prior``). Chosen as the app's
    Director model it is decoded the same way: one trained without the prior gives the turn to
    the companion it favours even after that companion has talked the most, while the group's
    own model, the prompt-only Director, keeps the prior and turns to a quieter companion. The
    policy follows the setting from one decision to the next."""
    import json
    import shutil

    from engine.director.policies import BALANCE_PRIOR, RoundState

    export = tmp_path / "export"
    export.mkdir()
    trained = export / "director-support-grpo-q8_0.gguf"
    shutil.copyfile(bundled_path, trained)  # the same weights: only the manifest differs
    (export / "manifest.json").write_text(
        json.dumps(
            {
                "name": "director-support-grpo",
                "role": "director",
                "directive_mode": "menu",
                "config": {"balance_prior": 0.0},
            }
        )
    )
    chat = support_chat(store, real_backend_for)
    text = "I finally finished my thesis draft, but I feel weirdly empty instead of happy."
    state = RoundState(members=list(chat.members), user_name="User", user_text=text, min_speakers=3)
    transcript = [{"speaker": "User", "text": text}]

    prompt_only = chat.policy()
    assert prompt_only.balance_prior == BALANCE_PRIOR
    chat.settings.director_model = str(trained)
    director = chat.policy()
    assert director is not prompt_only and (director.balance_prior, director.directive_mode) == (
        0.0,
        "menu",
    )
    favourite = director.next(state, transcript).speaker
    state.prior_replies = {favourite: 2}  # it has replied twice already, the others never
    assert director.next(state, transcript).speaker == favourite
    chat.settings.director_model = None
    back = chat.policy()
    assert back.balance_prior == BALANCE_PRIOR
    assert back.next(state, transcript).speaker not in (favourite, None)


def test_a_director_trained_on_another_group_is_announced_once(
    store, real_backend_for, bundled_path, tmp_path
):
    """A trained Director's manifest names the persona group it was trained on; used in a
    conversation with another group, the round opens with a one-line notice (once for that
    model), and the Director still drives the round."""
    import json
    import shutil

    export = tmp_path / "export"
    export.mkdir()
    trained = export / "director-workplace-grpo-q8_0.gguf"
    shutil.copyfile(bundled_path, trained)
    (export / "manifest.json").write_text(
        json.dumps(
            {
                "name": "director-workplace-grpo",
                "role": "director",
                "group": "workplace",
                "directive_mode": "menu",
            }
        )
    )
    chat = support_chat(store, real_backend_for, max_speakers=1)
    chat.settings.director_model = str(trained)
    notice = (
        "The Director model director-workplace-grpo was trained on the 'workplace' group, not "
        "'support'; its choices may fit this group less well."
    )

    def trained_notices(events):  # other notices ("X had nothing to add.") depend on the replies
        return [
            e.data["text"]
            for e in events_of(events, "notice")
            if "was trained on" in e.data["text"]
        ]

    first = run_round(chat, "I keep putting off calling my mum back.")
    assert trained_notices(first) == [notice]
    assert events_of(first, "notice")[0].data["text"] == notice  # the round opens with it
    assert [e.data["source"] for e in events_of(first, "director")][0] == "director"
    assert not trained_notices(run_round(chat, "Maybe tonight."))
    (export / "manifest.json").write_text(
        json.dumps(
            {
                "name": "director-workplace-grpo",
                "role": "director",
                "group": "support",
                "directive_mode": "menu",
            }
        )
    )
    chat.settings.director_model = None
    chat.policy()
    chat.settings.director_model = str(trained)  # the same group now: nothing to say
    assert not trained_notices(run_round(chat, "Or tomorrow."))


def test_a_copy_of_a_recent_reply_is_generated_again_on_the_bundled_model(store, real_backend_for):
    """The copy guard on llama.cpp: asked twice with the same greedy request, the model would
    write the same reply again; with that reply among the recent ones, the second attempt is
    held back as soon as it is a copy, none of it is streamed, and the retry (another seed)
    gives a different reply, or, when it copies too (the 135M model often does), nothing."""
    from engine.reply.copyguard import DEFAULT_RULE, copy_key
    from engine.reply.turn import ReplyResult, stream_reply

    chat = support_chat(store, real_backend_for, temperature=0.0)
    run_round(chat, "My sister and I had a big fight and now she won't talk to me.")
    mia = chat.member("Mia")

    def attempt(recent, directive=""):
        req = chat.speaker_request(mia, directive)
        req.temperature, req.seed = 0.0, 5
        out = list(
            stream_reply(
                real_backend_for(None), req, chat.speaker(mia), recent=recent, free_retry=True
            )
        )
        result = out[-1]
        assert isinstance(result, ReplyResult) and all(isinstance(x, str) for x in out[:-1])
        return result, "".join(out[:-1]), req

    first, _, _ = attempt([])
    assert len(copy_key(first.text).split()) >= 12, (
        first.text
    )  # long enough to be recognised as a copy
    second, streamed, _ = attempt([copy_key(first.text)])
    assert streamed == second.text and not DEFAULT_RULE.copies(
        second.text, [copy_key(first.text)]
    )  # none shown
    assert second.copies >= 1  # the first attempt was caught (the retry's fate: the test below)

    # a directed copy is retried as a free turn
    ask = "Ask User one gentle question"
    directed, _, _ = attempt([], ask)
    again, streamed, req = attempt([copy_key(directed.text)], ask)
    assert streamed == again.text and not DEFAULT_RULE.copies(again.text, [copy_key(directed.text)])
    assert again.free_retry
    assert req.messages[-1]["content"].startswith("(It is Mia's turn.)")


def test_a_sentence_echoing_a_recent_reply_or_the_card_is_dropped_on_the_bundled_model(
    store, real_backend_for
):
    """The echo filter on llama.cpp: the same greedy request gives the same reply; with one of its
    later sentences inside a recent reply (behind other words), or inside the companion's own
    card, the reply is posted without that sentence, nothing of it is streamed, and the rest
    stays word for word."""
    from engine.reply.copyguard import copy_key
    from engine.reply.turn import ReplyResult, Speaker, stream_reply

    chat = support_chat(store, real_backend_for, temperature=0.0)
    mia = chat.member("Mia")

    def attempt(recent, who):
        req = chat.speaker_request(mia, "")
        req.temperature, req.seed, req.max_tokens = 0.0, 5, 120
        out = list(stream_reply(real_backend_for(None), req, who, recent=recent))
        assert isinstance(out[-1], ReplyResult)
        return out[-1], "".join(out[:-1])

    import re

    for said in (
        "My sister and I had a big fight and now she won't talk to me.",
        "I failed my driving test again today and I feel stupid.",
        "My dog is sick and the vet bills are piling up.",
    ):
        chat.transcript.clear()
        run_round(chat, said)
        first, _ = attempt([], chat.speaker(mia))
        sentences = re.split(r"(?<=[.!?])\s+", first.text)
        later = [s for s in sentences[1:] if len(s.split()) >= 6]
        if later:
            break
    assert later, first.text  # one of three greedy replies has a later sentence of 6+ words
    echo = later[0]
    expected = " ".join(s for s in sentences if s != echo)
    for recent, who in (
        ([copy_key(f"Something else entirely first. {echo}")], chat.speaker(mia)),
        ([], Speaker("Mia", chat.names, "User", framing=f"You are Mia. {echo}")),
    ):
        result, streamed = attempt(recent, who)
        assert result.text == expected and result.echoes == 1
        assert streamed == result.text and echo not in streamed


COPIED = "It sounds like the fight left you both hurt, and the silence is the hardest part of it."


@pytest.mark.parametrize(
    ("retry", "kept", "copies"),
    [
        ("Has she ever gone quiet like this before, or is this new for the two of you?", True, 1),
        (COPIED, False, 2),
    ],
    ids=["a-new-retry-is-kept", "a-second-copy-is-dropped"],
)
def test_a_copy_is_retried_once_and_a_second_copy_is_dropped(retry, kept, copies):
    """The copy guard's retry, scripted: a copy of a recent reply is generated again; a new
    reply is kept, a second copy leaves nothing (and none of either copy is shown)."""
    from engine.llm.backend import FakeBackend
    from engine.reply.copyguard import copy_key
    from engine.reply.turn import stream_reply

    fake = FakeBackend([COPIED, retry])
    chat = GroupChat(load_set("support"), backend_for=lambda _model: fake)
    mia = chat.member("Mia")
    out = list(
        stream_reply(
            fake, chat.speaker_request(mia, ""), chat.speaker(mia), recent=[copy_key(COPIED)]
        )
    )
    result, streamed = out[-1], "".join(out[:-1])
    assert result.copies == copies
    assert result.text == (retry if kept else "")
    assert streamed == result.text
