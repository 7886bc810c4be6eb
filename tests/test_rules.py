"""Orchestration rules on a fake backend (fast). The same rules run on llama.cpp in test_round_model."""

import json
import re
import threading

import pytest
from helpers import events_of, make_group, run_round, varied

from engine.chat.group import GroupChat
from engine.chat.settings import ChatSettings
from engine.director.policies import Director, RoundState, find_addressed
from engine.errors import InputError
from engine.llm.backend import FakeBackend
from engine.reply.cleanup import clean_reply
from engine.reply.prompts import note_of
from engine.user_text import sanitize_user_text


def director_fake(choices):
    """A fake backend whose Director answers come from `choices`, speakers say 'hello'."""
    queue = list(choices)

    def reply(req):
        if req.json_schema is not None:
            allowed = req.json_schema["properties"]["speaker"]["enum"]
            pick = queue.pop(0) if queue else allowed[0]
            return json.dumps({"speaker": pick, "directive": f"add something as {pick}"})
        return f"#{len(fake.requests)} hello from {req.slot}"  # new words every turn

    fake = FakeBackend(reply)
    return fake


def chat_with(fake, **kw):
    settings = ChatSettings(**{"min_speakers": 1, **kw})
    return GroupChat(make_group(), settings=settings, backend_for=lambda m: fake)


def test_cap_and_distinct_speakers():
    fake = director_fake(["Mia", "Mia", "Theo", "Ada"])  # asks for Mia twice: not allowed
    chat = chat_with(fake, max_speakers=2)
    ev = run_round(chat, "I had a rough day")
    speakers = [e.data["speaker"] for e in events_of(ev, "message")]
    assert len(speakers) == 2 and len(set(speakers)) == 2
    # The second Director call was offered only the companions who had not spoken.
    second = [r for r in fake.requests if r.json_schema][1]
    assert "Mia" not in second.json_schema["properties"]["speaker"]["enum"]


def test_addressed_companion_answers_first():
    fake = director_fake(["Mia", "Theo", "Ada"])
    chat = chat_with(fake)
    ev = run_round(chat, "Ada, what do you think about this?")
    speakers = [e.data["speaker"] for e in events_of(ev, "message")]
    assert speakers[0] == "Ada"
    assert events_of(ev, "director")[0].data["source"] == "addressed"


def test_last_speaker_does_not_open_next_round_unless_addressed():
    fake = director_fake([])  # Director always takes its first allowed option
    chat = chat_with(fake, max_speakers=1)
    first = events_of(run_round(chat, "hi"), "message")[0].data["speaker"]
    second = events_of(run_round(chat, "and then?"), "message")[0].data["speaker"]
    assert second != first
    third = events_of(run_round(chat, f"{second}, say more"), "message")[0].data["speaker"]
    assert third == second


def test_end_only_after_min_speakers():
    state = RoundState(members=make_group().members, user_name="U", user_text="x", min_speakers=2)
    assert (
        "END"
        not in Director.free_schema(state.allowed(), state.may_end())["properties"]["speaker"][
            "enum"
        ]
    )
    state.spoken = ["Mia", "Theo"]
    assert (
        "END"
        in Director.free_schema(state.allowed(), state.may_end())["properties"]["speaker"]["enum"]
    )


def test_director_end_stops_round():
    fake = director_fake(["Theo", "END"])
    chat = chat_with(fake, max_speakers=3)
    ev = run_round(chat, "hello")
    assert [e.data["speaker"] for e in events_of(ev, "message")] == ["Theo"]
    assert events_of(ev, "director")[-1].data["speaker"] is None


def test_invalid_director_output_falls_back_and_is_reported():
    fake = FakeBackend(lambda req: '{"speaker": "Nob' if req.json_schema else "ok then")
    chat = chat_with(fake, max_speakers=1)
    ev = run_round(chat, "hello")
    d = events_of(ev, "director")[0].data
    assert d["valid"] is False and d["speaker"] in ("Mia", "Theo", "Ada")
    assert events_of(ev, "message")[0].data["text"] == "ok then"


@pytest.mark.parametrize("policy", ["round-robin", "random", "all"])
def test_baseline_policies_never_repeat_a_speaker(policy):
    fake = FakeBackend(varied("fine"))
    chat = GroupChat(
        make_group(("A1", "B2", "C3", "D4")),
        settings=ChatSettings(policy=policy, max_speakers=3, min_speakers=1, seed=3),
        backend_for=lambda m: fake,
    )
    for _ in range(4):
        speakers = [e.data["speaker"] for e in events_of(run_round(chat, "next"), "message")]
        assert len(speakers) == len(set(speakers)) >= 1
        assert len(speakers) == (4 if policy == "all" else len(speakers))
        assert policy == "all" or len(speakers) <= 3


def test_round_robin_continues_where_it_stopped():
    fake = FakeBackend(varied("fine"))
    chat = GroupChat(
        make_group(),
        settings=ChatSettings(policy="round-robin", max_speakers=2, min_speakers=1),
        backend_for=lambda m: fake,
    )
    r1 = [e.data["speaker"] for e in events_of(run_round(chat, "one"), "message")]
    r2 = [e.data["speaker"] for e in events_of(run_round(chat, "two"), "message")]
    assert r1 == ["Mia", "Theo"] and r2 == ["Ada", "Mia"]


def test_muted_companion_never_speaks():
    fake = FakeBackend(varied("fine"))
    chat = GroupChat(make_group(), settings=ChatSettings(policy="all"), backend_for=lambda m: fake)
    chat.mute("theo")
    speakers = [e.data["speaker"] for e in events_of(run_round(chat, "hey"), "message")]
    assert "Theo" not in speakers and len(speakers) == 2


def test_cleanup_cuts_lines_written_as_others():
    text, confused = clean_reply(
        "Mia: I hear you.\nTheo: Let's plan!\nUser: ok", "Mia", ["Theo", "Ada"], "Sam"
    )
    assert text == "I hear you." and confused
    text, confused = clean_reply("That sounds hard. Ada: haha", "Mia", ["Theo", "Ada"], "Sam")
    assert text == "That sounds hard." and confused
    text, confused = clean_reply("Totally fine<|im_end|>", "Mia", ["Theo"], "Sam")
    assert text == "Totally fine" and not confused


def test_streamed_tokens_never_show_other_speakers_lines():
    fake = FakeBackend(
        lambda req: (
            "Sure thing. Theo: I will take over now"
            if req.json_schema is None
            else json.dumps({"speaker": "Mia", "directive": "x"})
        )
    )
    chat = chat_with(fake, max_speakers=1)
    ev = run_round(chat, "hello")
    streamed = "".join(e.data["text"] for e in events_of(ev, "token"))
    assert "Theo:" not in streamed and streamed.strip() == "Sure thing."
    msg = events_of(ev, "message")[0].data
    assert msg["text"] == "Sure thing." and msg["role_confusion"] is True


def test_speaker_prompt_keeps_a_stable_prefix_with_directive_last():
    fake = director_fake([])
    chat = chat_with(fake, max_speakers=1, policy="round-robin")
    run_round(chat, "first message")
    run_round(chat, "second message")
    run_round(chat, "third message")
    mia = [r for r in fake.requests if r.slot == "Mia"]
    assert len(mia) >= 1
    req_a = chat.speaker_request(chat.member("Mia"), "be kind")
    req_b = chat.speaker_request(chat.member("Mia"), "be brief")
    assert req_a.messages[:-1] == req_b.messages[:-1]  # only the directive differs
    assert "be kind" in req_a.messages[-1]["content"]
    assert req_a.messages[0]["role"] == "system" and "You are Mia" in req_a.messages[0]["content"]


def test_cancel_stops_round_quickly():
    fake = FakeBackend(lambda req: "word " * 500, delay=0.01)
    chat = chat_with(fake, policy="all")
    cancel = threading.Event()
    events = []
    for ev in chat.send("go", cancel):
        events.append(ev)
        if ev.type == "token" and len(events) > 5:
            cancel.set()
    end = events_of(events, "round_end")[0].data
    assert end["cancelled"] is True
    assert len(events_of(events, "message")) <= 1


def test_find_addressed_order_and_word_boundaries():
    assert find_addressed("hey @ada and mia!", ["Mia", "Theo", "Ada"]) == ["Ada", "Mia"]
    assert find_addressed("Amiable people", ["Mia"]) == []


@pytest.mark.parametrize("bad", ["", "   ", "\x00\x01\x02", "\n\t\n"])
def test_empty_or_binary_message_is_refused(bad):
    with pytest.raises(InputError):
        sanitize_user_text(bad)


def test_mixed_script_and_emoji_are_kept():
    text = "Привет 你好 مرحبا 👋 hello"
    assert sanitize_user_text(text + "\x00") == text


def test_long_conversation_is_trimmed_not_crashed():
    fake = FakeBackend(lambda req: "short reply " * 20, n_ctx=512)
    chat = GroupChat(
        make_group(),
        settings=ChatSettings(policy="round-robin", max_speakers=1, min_speakers=1),
        backend_for=lambda m: fake,
    )
    for i in range(60):
        ev = run_round(chat, f"message number {i} " * 10)
        assert not events_of(ev, "error")
    req = chat.speaker_request(chat.members[0], "go on")
    total = sum(fake.count_tokens(m["content"]) + 6 for m in req.messages)
    assert total <= 512 - req.max_tokens
    # the newest message is the last the companion reads, before its note and turn note
    read = req.messages[1:-2] if note_of(chat.members[0].name, req.messages) else req.messages[1:-1]
    assert read[-1]["content"].startswith("User: message number 59 ")


def test_companions_read_a_window_of_recent_history_and_the_window_is_a_setting():
    """The context policy: a companion reads at most ``history_tokens`` of recent transcript
    (dropped in one block at the oldest end, so its cached prefix stays stable), always the
    newest turns; 0 reads all that fits; a bad value is one clear line."""

    def transcript_tokens(chat, fake):
        """Tokens of the transcript a companion reads, and those messages: between the system
        prompt and the turn note, less this turn's memory note (recalled older messages and
        facts come on top of the window)."""
        req = chat.speaker_request(chat.members[0], "go on")
        read = (
            req.messages[1:-2]
            if note_of(chat.members[0].name, req.messages)
            else req.messages[1:-1]
        )
        return sum(fake.count_tokens(m["content"]) + 6 for m in read), read

    fake = FakeBackend(varied("a short reply about the river walk"), n_ctx=8192)
    settings = ChatSettings(
        policy="round-robin", max_speakers=1, min_speakers=1, history_tokens=300
    )
    chat = GroupChat(make_group(), settings=settings, backend_for=lambda m: fake)
    starts = []
    for i in range(40):
        run_round(chat, f"message number {i}: " + "words " * 8)
        used, read = transcript_tokens(chat, fake)
        assert used <= 300
        assert f"message number {i}:" in str(read)  # the newest turn is always read
        starts.append(read[0]["content"])  # the oldest message it reads
    assert "message number 0:" not in str(read)
    assert (
        len(set(starts)) < len(starts) // 3
    )  # trims come in blocks: the prefix stays put between them
    whole = GroupChat(
        make_group(),
        settings=ChatSettings(policy="round-robin", history_tokens=0),
        backend_for=lambda m: fake,
    )
    whole.transcript = chat.transcript
    used_all, read = transcript_tokens(whole, fake)
    assert used_all > 1000 and "message number 0:" in str(read)
    with pytest.raises(InputError, match="history-tokens must be 0"):
        GroupChat(
            make_group(), settings=ChatSettings(history_tokens=12), backend_for=lambda m: fake
        )


def test_backend_failure_becomes_one_error_event_and_message_is_kept(store):
    class Broken(FakeBackend):
        def generate(self, req, cancel=None):
            raise RuntimeError("llama_decode returned -1")

    chat = GroupChat(
        make_group(),
        settings=ChatSettings(policy="all"),
        store=store,
        backend_for=lambda m: Broken(),
    )
    ev = run_round(chat, "hello there")
    err = events_of(ev, "error")[0].data["message"]
    assert "llama_decode returned -1" in err and "\n" not in err
    assert ev[-1].type == "round_end"
    assert [m["text"] for m in store.messages(chat.conversation_id)] == ["hello there"]


def test_safety_round_still_ends_with_round_end():
    fake = FakeBackend(varied("fine"))
    chat = GroupChat(make_group(), settings=ChatSettings(policy="all"), backend_for=lambda m: fake)
    ev = run_round(chat, "i want to kill myself tonight")
    assert [e.type for e in ev][-1] == "round_end" and events_of(ev, "safety")
    assert fake.requests == []  # no companion generated anything


def test_cleanup_of_labels_and_cut_sentences():
    from engine.reply.cleanup import trim_to_sentence

    text, _ = clean_reply("Mia, Theo: (laughs) so glad you came.", "Ruth", ["Mia", "Theo"], "Sam")
    assert text == "(laughs) so glad you came."
    assert (
        trim_to_sentence(
            "That sounds really hard, and I am sorry. Tomorrow we could try a walk and"
        )
        == "That sounds really hard, and I am sorry."
    )
    assert trim_to_sentence("Short but cut and") == "Short but cut and…"


def test_a_counted_step_or_a_note_takers_opening_is_kept_not_cut_as_a_label():
    others = ["Mia", "Lena"]
    assert clean_reply("One: breathe. Two: write it down.", "Theo", others, "Sam")[0] == (
        "One: breathe. Two: write it down."
    )
    assert clean_reply("Noted: the launch moves to May.", "Lena", ["Ava"], "Sam")[0] == (
        "Noted: the launch moves to May."
    )
    assert clean_reply("Drama: This is the show.", "Theo", others, "Sam")[0] == "This is the show."


def test_director_reads_the_gist_of_replies_and_the_users_words_whole():
    """The Director's prompt shows each companion reply's first sentence (at most
    DIRECTOR_REPLY_CHARS characters) and every user message in full; companions still read
    each other's whole replies."""
    from engine.director.policies import DIRECTOR_REPLY_CHARS, reply_gist

    assert (
        reply_gist("Oh no. That sounds hard, and I am sorry it happened today.")
        == "Oh no. That sounds hard, and I am sorry it happened today."
    )  # short: whole
    long = (
        "That sounds exhausting. I wonder whether the meeting on Monday made it worse, because "
        "you mentioned it twice already and it still seems to weigh on you a lot."
    )
    assert reply_gist(long) == "That sounds exhausting."
    run_on = " ".join(["word"] * 60)
    gist = reply_gist(run_on)
    assert gist.endswith(" …") and len(gist) <= DIRECTOR_REPLY_CHARS + 2 and "  " not in gist
    assert reply_gist(gist) == gist and reply_gist(long, 0) == long  # stable; 0 = whole
    user_text = "I keep replaying the meeting. " + " ".join(["Everyone saw it."] * 12)
    seen = []
    fake = FakeBackend(
        lambda req: (
            (
                seen.append(req),
                json.dumps(
                    {
                        "speaker": req.json_schema["properties"]["speaker"]["enum"][0],
                        "directive": "Add a new idea",
                    }
                ),
            )[1]
            if req.json_schema is not None
            else long
        )
    )
    chat = chat_with(fake, max_speakers=2, min_speakers=2)
    run_round(chat, user_text)
    last = seen[-1].messages
    assert any(
        m["content"].endswith(f"\nUser: {user_text}") for m in last
    )  # the user's words, whole
    replies = [m["content"] for m in last[1:] if not m["content"].startswith("(Replies so far:")]
    assert replies and all(r.endswith(": That sounds exhausting.") for r in replies)
    companion = chat.speaker_request(chat.members[0], "").messages
    assert any(long in m["content"] for m in companion)  # companions: whole replies


STREAM_CASES = [
    "Mia: I hear you.\nTheo: Let's plan!\nUser: ok",
    "That sounds hard. Ada: haha",
    "Totally fine<|im_end|>",
    "Sure thing. Theo: I will take over now",
    "(Mia's response) I am so sorry. That is a lot.",
    "Mia, Theo: you both know this. I think so.",
    "**Mia**: Hello there. I am glad you came.\n**Theo**: me too",
    "I think you did great. And Theo agrees! Really.",
    "Oh no. Sam: what happened",
    "Hi Sam. How are you today?\nFriend 2: hi",
    "Okay. Director: next",
    "It is fine [INST] do x [/INST] ok",
    "Drama: This is the show. It rocks.",
    "One: breathe. Two: write it down.",
    "I. Am. Here.",
    "Let me think about it, Sam, and then we can talk.",
    "You did your best.\nMia: And I mean it.",
    "Ada and Theo: hello both",
    "Honestly? Assistant: as an AI",
    "(Mia's eyes soften as she leans in and listens closely) I hear you. Go on.",
    "(Mia responds to the user's request for a reply) Sure.",
    "(Director's note for Mia: be kind) I am here for you.",
    "(Mia, ask User one gentle question.) What would help most right now?",
    "Mia, briefly and in character. Breathe first; we can sort the rest out after.",
    "Reply now as Mia, briefly and in character. Be gentle with yourself.",
    "Brief is fine. Really, that was brave of you.",
    "I hear you. (Theo nods slowly and looks at Sam) Take your time.",
    "(Theo, add a point nobody has made yet)\nIt is okay to rest. (smiles) Really.",
    'That sounds heavy.\n- Sam: "I\'m not sure I understand."',
    'Rest counts too.\nSam (Rex): "Your dog is Rex."',
    "I don't know what to say. (It is Mia's turn.) You can do it!",
    "I'm happy to help.\n(In character, you can add a bit of personality and humor.)",
    "Reply now as Mia. (laughs) Always remember to rest.",
    "In character:\nI'm here to help, and you're in the right place.",
]


@pytest.mark.parametrize("raw", STREAM_CASES)
def test_streaming_shows_early_and_never_shows_what_cleanup_cuts(raw):
    """Fed character by character (the worst case for a label split across tokens), the text
    shown while streaming is always a start of the final cleaned reply, and the first words
    appear long before the old fixed 24-character holdback would have let them through."""
    from engine.reply.cleanup import stream_safe

    final, _ = clean_reply(raw, "Mia", ["Theo", "Ada"], "Sam")
    shown, first = "", None
    for i in range(1, len(raw) + 1):
        safe = stream_safe(clean_reply(raw[:i], "Mia", ["Theo", "Ada"], "Sam")[0])
        if safe.startswith(shown) and len(safe) > len(shown):
            shown = safe
            first = first or i
        assert final.startswith(shown), (raw[:i], shown, final)
    assert shown == final  # nothing is held back at the end either
    colon = raw.find(": ")
    lead = (
        colon + 2 if 0 < colon < 25 and not re.search(r"[.!?]", raw[:colon]) else 0
    )  # a leading label
    if not raw.startswith("(") and final.startswith(
        raw.split()[0]
    ):  # a plain start shows with its second word
        assert first is not None and first <= lead + 12, (first, lead)


def test_runtime_holds_back_only_what_may_still_become_a_stop_string():
    from engine.llm.runtime import stop_prefix_len

    stops = ["\nTheo:", "<|im_end|>", "\n**Theo"]
    assert stop_prefix_len("I hear you", stops) == 0  # shown at once
    assert stop_prefix_len("I hear you.\nThe", stops) == 4  # may become "\nTheo:"
    assert stop_prefix_len("I hear you.\n**T", stops) == 4
    assert stop_prefix_len("I hear you <|im", stops) == 4
    assert stop_prefix_len("I hear you.\n", stops) == 1
    assert stop_prefix_len("I hear you.\nThere", stops) == 0  # no stop starts like that
    assert stop_prefix_len("", stops) == 0 and stop_prefix_len("abc", []) == 0


def test_an_open_message_renders_as_a_prefix_of_the_finished_one():
    """The Director reads the opening of the user's next message ahead of time
    (``GenRequest(open_last=True)``): that rendering must be a prefix of what the finished
    message renders to, or the read-ahead is wasted."""
    from engine.llm.chat_format import ChatFormat

    fmt = ChatFormat(None)
    head = [
        {"role": "system", "content": "You are the Director."},
        {"role": "user", "content": "Mia: Hi."},
    ]
    opening = fmt.render_open(
        head + [{"role": "user", "content": "(Replies so far: Mia 1)\nUser:"}]
    )
    full = fmt.render(
        head + [{"role": "user", "content": "(Replies so far: Mia 1)\nUser: I feel lost."}]
    )
    assert full.startswith(opening) and opening.endswith("User:") and "assistant" not in opening


def test_a_directive_reaches_the_companion_addressed_by_name_and_an_echo_of_it_is_dropped():
    """The Director's directive is put to the companion as a plain request by name (measured on
    the bundled model: far fewer empty replies than a "Director's note"), a free turn says
    whose turn it is, and a reply that starts by repeating the note loses the echo."""
    from engine.reply.cleanup import clean_reply
    from engine.reply.prompts import turn_note

    names = ("Mia", "Theo", "User")
    assert (
        turn_note("Mia", "Ask User one gentle question", names)["content"]
        == "(Mia, ask User one gentle question.) Reply now as Mia, briefly and in character."
    )
    assert turn_note("Mia", "Theo already made the plan; add how it feels!", names)[
        "content"
    ].startswith(
        "(Mia, Theo already made the plan; add how it feels!) "
    )  # a name keeps its capital, no extra "."
    assert turn_note("Mia", "", names)["content"].startswith("(It is Mia's turn.) Reply now as Mia")
    text, confused = clean_reply(
        "(Mia, ask User one gentle question.) What would help most right now?",
        "Mia",
        ["Theo"],
        "User",
    )
    assert text == "What would help most right now?" and not confused
    assert (
        clean_reply("(Mia smiles softly) I hear you.", "Mia", ["Theo"], "User")[0]
        == "(Mia smiles softly) I hear you."
    )


def test_the_director_weighs_down_a_companion_who_has_replied_more_than_a_quieter_one():
    """The participation prior: a small-model (menu) Director's choice carries, per decision,
    minus BALANCE_PRIOR for every reply its companion gave beyond the quietest one the rules
    allow, counted over the whole conversation (this round included); none when all are even."""

    from engine.director.policies import BALANCE_PRIOR, balance_bias, replies_so_far

    talk = varied("hello there")
    fake = FakeBackend(lambda req: req.choices[0] if req.choices else talk(req))
    fake.parameters = 135_000_000  # a model under 1B: menu decisions
    chat = chat_with(fake, max_speakers=2, min_speakers=2)
    run_round(chat, "I had a rough day")  # the first two companions speak
    first = [r for r in fake.requests if r.choices]
    assert first and all(r.choice_bias is None for r in first)  # nobody had spoken yet
    spoke = [t.speaker for t in chat.transcript if t.role == "companion"]
    fake.requests.clear()
    run_round(chat, "and then it rained")
    opening = next(r for r in fake.requests if r.choices)
    speakers = [json.loads(c)["speaker"] for c in opening.choices]
    bias = dict(zip(speakers, opening.choice_bias))
    # the last speaker may not open the round; the other one who spoke is allowed, weighed down
    assert spoke[1] not in bias and bias[spoke[0]] == -BALANCE_PRIOR
    assert all(v == 0.0 for n, v in bias.items() if n not in spoke)

    # counted over the conversation even when the Director's transcript is trimmed
    state = RoundState(
        members=make_group().members,
        user_name="U",
        user_text="x",
        prior_replies={"Mia": 4, "Theo": 1},
        spoken=["Theo"],
    )
    assert replies_so_far(state, []) == {"Mia": 4, "Theo": 2, "Ada": 0}
    assert balance_bias(state, [], 2.0) == {"Mia": -8.0, "Ada": 0.0}
    state.prior_replies = None  # no counts given: the transcript's
    assert replies_so_far(
        state, [{"speaker": "Mia", "text": "a"}, {"speaker": "U", "text": "b"}]
    ) == {"Mia": 1, "Theo": 0, "Ada": 0}


def test_a_free_text_director_weighs_down_a_companion_who_has_replied_more():
    """Free-text mode (Directors of 1B+) keeps the participation prior: with everyone even, one
    grammar-constrained request, as before; with someone ahead, the speaker is first chosen as a
    constrained choice carrying the prior (END too, once the round may end), and the directive
    is then written under a grammar that allows only that speaker."""
    from engine.director.policies import BALANCE_PRIOR, END, Director, RoundState

    seen = []

    def reply(req):
        seen.append(req)
        if req.choices:
            return req.choices[-1]  # the model's own preference here: the last option
        speaker = req.json_schema["properties"]["speaker"]["enum"][0]
        return json.dumps({"speaker": speaker, "directive": "Ask how the week went"})

    director = Director(FakeBackend(reply), directive_mode="free")
    state = RoundState(members=make_group().members, user_name="U", user_text="hi", min_speakers=1)
    d = director.next(state, [])
    assert (d.speaker, d.directive, d.valid) == ("Mia", "Ask how the week went", True)
    assert len(seen) == 1 and seen[0].choices is None

    seen.clear()
    state.prior_replies = {"Mia": 2, "Theo": 1}  # Ada the quietest
    d = director.next(state, [])
    assert (d.speaker, d.directive, d.valid) == ("Ada", "Ask how the week went", True)
    pick, write = seen
    assert pick.choices == [Director.speaker_text(n) for n in ("Mia", "Theo", "Ada")]
    assert pick.choice_bias == [-2 * BALANCE_PRIOR, -BALANCE_PRIOR, 0.0]
    assert write.json_schema["properties"]["speaker"]["enum"] == ["Ada"]

    state.spoken = ["Ada"]  # the round may end now: END is an option, without a prior
    seen.clear()
    d = director.next(state, [])
    assert (
        d.speaker is None and seen[0].choices[-1] == Director.speaker_text(END) and len(seen) == 1
    )


def test_a_reply_that_repeats_a_recent_one_is_generated_again_and_never_shown():
    """Small models often post the previous speaker's message again, word for word or nearly
    (docs/eval.md). While a reply is still nearly the start of a recent reply it is held back;
    once it is a copy (its first 12 words nearly those of a recent reply, or the same words, a
    leading "Name," aside) it is generated again with another seed; a second copy is dropped
    with a notice. A reply that only shares a common opening is kept and shown."""
    mia = "I'm so glad you're feeling better, it's completely normal to need a rest after a week like that."
    script = {
        "Mia": [mia, "#2 Mia again with something new to say."],
        "Theo": ["Mia, " + mia, "Getting out of bed is a real win, well done."],
        "Ada": [mia.upper(), mia],
    }

    def reply(req):
        if req.json_schema is not None:
            return json.dumps(
                {"speaker": req.json_schema["properties"]["speaker"]["enum"][0], "directive": ""}
            )
        return script[req.slot].pop(0)

    fake = FakeBackend(reply)
    chat = GroupChat(
        make_group(),
        settings=ChatSettings(policy="round-robin", max_speakers=3, min_speakers=1),
        backend_for=lambda m: fake,
    )
    ev = run_round(chat, "I finally got out of bed today.")
    messages = {e.data["speaker"]: e.data["text"] for e in events_of(ev, "message")}
    assert messages == {"Mia": mia, "Theo": "Getting out of bed is a real win, well done."}
    shown = {}
    for e in events_of(ev, "token"):
        shown[e.data["speaker"]] = shown.get(e.data["speaker"], "") + e.data["text"]
    assert shown["Theo"] == messages["Theo"] and "Ada" not in shown  # no copy was ever on screen
    assert [e.data["text"] for e in events_of(ev, "notice")] == ["Ada had nothing new to add."]

    # a shared opening alone is not a copy
    from engine.reply.copyguard import DEFAULT_RULE, copy_key

    copies = DEFAULT_RULE.copies
    recent = [copy_key(mia)]
    assert not copies("I'm so glad you told me. What helped you get up?", recent)
    assert copies("Theo, " + mia, recent, ["Mia", "Theo"]) and copies(mia[:70], recent)
    assert copies('(Theo, "' + mia + '")', recent, ["Mia", "Theo"])
    assert copies(
        "I'm so very glad you're feeling better, it's completely normal to need rest.", recent
    )  # nearly
    assert not copies(
        "I'm so glad you're feeling better. What would make the rest of the week easier?", recent
    )
    assert not copies("I'm so glad", recent)  # short and not the whole text
    assert not copies("I'm so glad you're here. Tell me what the doctor said, if you like.", recent)
    # short replies are compared whole, pronouns as one word (an echo chain seen in the app)
    short = [copy_key('"I\'m going to make it happen."'), copy_key("I'm glad I can help.")]
    assert copies("You're going to make it happen.", short) and copies(
        "She's going to make it happen.", short
    )
    assert copies("You're glad you can help.", short)
    assert not copies("I'm going to start tomorrow.", short) and not copies(
        "What will you make happen first?", short
    )
    # most of a reply inside a recent one, in runs of 3+ words: the end of a longer reply, or
    # the reply behind an opening of the recent one's own (both seen in rolled-out replies)
    longer = [
        copy_key("I'm so glad to hear that. I'll miss you, my friend."),
        copy_key(
            "I'll play my role. You're right, I'm really glad you told us. Your life matters."
        ),
    ]
    assert copies("(I'll miss you, my friend.)", longer)
    assert copies("You're right, I'm really glad you told us. Your life matters so much.", longer)
    assert not copies("I'll miss our walks by the river.", longer)  # shares a run of 3, not most
    assert not copies(
        "Glad you told us, what matters most to you?", longer
    )  # common words, scattered
    may_become_copy = DEFAULT_RULE.may_become_copy
    assert may_become_copy("You're right, I'm really", longer)  # inside a recent reply so far: held
    assert may_become_copy("I'll", longer) and not may_become_copy("Walks", longer)
    assert not may_become_copy("Walks by the river", longer)


def test_a_companion_does_not_post_its_own_name_as_an_opening():
    """The turn note addresses the companion ("(Mia, ask ...)"); the small model often opens its
    reply with that address. Cleanup drops it; another member's name as an address stays."""
    assert (
        clean_reply("Mia, I'm so glad you came.", "Mia", ["Theo"], "User")[0]
        == "I'm so glad you came."
    )
    assert (
        clean_reply("Mia,\nI'm so glad you came.", "Mia", ["Theo"], "User")[0]
        == "I'm so glad you came."
    )
    assert (
        clean_reply("Theo, I agree with you.", "Mia", ["Theo"], "User")[0]
        == "Theo, I agree with you."
    )
    assert (
        clean_reply("Mia, Theo: you both know this.", "Mia", ["Theo"], "User")[0]
        == "you both know this."
    )
    # ... nor a turn note or a stage direction meant for someone else (role confusion)
    assert clean_reply(
        "(Mia, add a point nobody has made yet)\nYou can do it.", "Theo", ["Mia"], "User"
    ) == ("You can do it.", True)
    assert clean_reply(
        "So brave! (Ruth responds with a smile) Go on.", "Mia", ["Ruth"], "User"
    ) == ("So brave! Go on.", True)
    assert clean_reply("(Mia smiles softly) I hear you.", "Mia", ["Ruth"], "User") == (
        "(Mia smiles softly) I hear you.",
        False,
    )
    assert clean_reply(
        '(Mia, add a point)\nRuth: "That stays with me."', "Ruth", ["Mia"], "User"
    ) == ('"That stays with me."', True)
    # ... nor the turn note's own words ("Reply now as Mia, briefly and in character.")
    assert clean_reply("Theo, briefly and in character.", "Theo", ["Mia"], "User")[0] == ""
    assert (
        clean_reply("Reply to Ruth, briefly and in character.", "Theo", ["Ruth"], "User")[0] == ""
    )
    # lines written as the user in the notes' list style, or with an aside (seen in the memory bench)
    assert clean_reply('- User: "I\'m not sure I understand."', "Mia", ["Theo"], "User") == (
        "",
        True,
    )
    assert clean_reply('I hear you.\nUser (Rex): "Your dog is Rex."', "Mia", ["Theo"], "User") == (
        "I hear you.",
        True,
    )
    assert (
        clean_reply("Great idea - Theo: no rush.", "Mia", ["Theo"], "User")[0]
        == "Great idea - Theo: no rush."
    )
    assert (
        clean_reply("Mia, (Note to Theo): how are you doing?", "Mia", ["Theo"], "User")[0]
        == "how are you doing?"
    )
    assert (
        clean_reply("**Mia**\n(Note to Theo): how are you doing?", "Mia", ["Theo"], "User")[0]
        == "how are you doing?"
    )
    assert (
        clean_reply("Me: (Note to Theo): how are you doing?", "Mia", ["Theo"], "User")[0]
        == "how are you doing?"
    )
    assert (
        clean_reply("Theo, briefly and in character.\nYou did well.", "Mia", ["Theo"], "User")[0]
        == "You did well."
    )
    assert clean_reply(
        'You did well.\n- Later, User said: "I am afraid."', "Mia", ["Theo"], "User"
    ) == ("You did well.", True)
    assert (
        clean_reply("I said what I said: you did well.", "Mia", ["Theo"], "User")[0]
        == "I said what I said: you did well."
    )
    assert (
        clean_reply(
            "I hear you. Reply now as Theo, briefly and in character.", "Theo", ["Mia"], "User"
        )[0]
        == "I hear you."
    )
    assert (
        clean_reply("I can be brief, in character or not.", "Theo", ["Mia"], "User")[0]
        == "I can be brief, in character or not."
    )


def test_a_companion_with_nothing_new_does_not_use_up_the_round():
    """When the companion whose turn it is posts nothing (its reply and its retry both copy a
    recent reply), the round goes on to another companion within the same speaker cap, so the
    user's message is still answered; nobody is asked twice."""
    boats = "a thought about boats on the river today, and how slowly they all seem to drift past"
    said = {
        "Mia": [boats, boats, boats],  # one reply, then two copies of it
        "Theo": ["counting boats sounds calming, which one did you like best of them all?"],
    }
    fake = FakeBackend(lambda req: said[req.slot].pop(0))
    chat = GroupChat(
        make_group(),
        settings=ChatSettings(policy="round-robin", max_speakers=1, min_speakers=1),
        backend_for=lambda m: fake,
    )
    first = events_of(run_round(chat, "I walked by the river."), "message")
    assert [m.data["speaker"] for m in first] == ["Mia"]
    ev = run_round(chat, "Mia, I walked by the river again.")  # addressed: Mia answers first
    assert not events_of(ev, "error")
    assert [e.data["text"] for e in events_of(ev, "notice")] == ["Mia had nothing new to add."]
    assert [m.data["speaker"] for m in events_of(ev, "message")] == ["Theo"]
    assert events_of(ev, "round_end")[0].data["speakers"] == ["Mia", "Theo"]
    assert said == {"Mia": [], "Theo": []}


def test_regenerating_never_gives_the_same_reply_again(store):
    """Regenerate asks for a different alternative: a new reply that repeats an alternative so far
    is generated again, and if that repeats too the reply stays as it was, with a notice that
    says so (not "stopped")."""
    first = "that sounds like a long day, and it makes sense that you feel worn out by all of it"
    said = [
        first,
        first,
        "what part of the day took the most out of you, do you think, looking back?",
        first,
        first,
    ]
    fake = FakeBackend(lambda req: said.pop(0))
    chat = GroupChat(
        make_group(),
        settings=ChatSettings(policy="round-robin", max_speakers=1, min_speakers=1),
        store=store,
        backend_for=lambda m: fake,
    )
    mid = events_of(run_round(chat, "Long day."), "message")[0].data["id"]
    regen = events_of(list(chat.regenerate(mid)), "message")[0].data
    assert regen["text"].startswith("what part of the day")
    ev = list(chat.regenerate(mid))
    assert not events_of(ev, "message")
    assert [e.data["text"] for e in events_of(ev, "notice")] == [
        "Mia had nothing new to add; the reply is unchanged."
    ]
    assert [v["text"] for v in store.variants(mid)] == [first, regen["text"]]


def test_a_copy_is_retried_as_a_free_turn_unless_the_directive_is_for_safety(store):
    """Directed turns copy the previous reply about twice as often as free turns on the bundled
    model (docs/director.md), so a copy's one retry goes without the Director's directive: the
    posted reply is saved with no directive and the dropped one in its meta. An empty reply's
    retry keeps the directive, and so does a copy's retry while the user may be at risk (the
    safety directive is never dropped)."""
    boats = "a thought about boats on the river today, and how slowly they all seem to drift past"
    sound = "what did the river sound like while you walked there, was it loud or gentle?"
    said = {
        "Mia": [boats, sound, "that sounds heavy; how are you really doing tonight, honestly?"],
        "Theo": [boats, sound, "", "Let us think about what would help with the heat."],
    }
    notes = []

    def reply(req):
        if (
            req.choices
        ):  # the Director's speaker, chosen first when someone is ahead: the first allowed
            return req.choices[0]
        if (
            req.json_schema is not None
        ):  # the Director: the first allowed companion, with a directive
            speaker = req.json_schema["properties"]["speaker"]["enum"][0]
            return json.dumps({"speaker": speaker, "directive": "Build on the previous reply"})
        notes.append(req.messages[-1]["content"])
        return said[req.slot].pop(0)

    chat = GroupChat(
        make_group(),
        settings=ChatSettings(policy="director", max_speakers=1, min_speakers=1),
        store=store,
        backend_for=lambda m: FakeBackend(reply),
    )
    run_round(chat, "I walked by the river.")  # Mia opens
    notes.clear()
    [msg] = events_of(
        run_round(chat, "It was quiet there."), "message"
    )  # Theo copies Mia, then not
    assert (msg.data["speaker"], msg.data["text"], msg.data["directive"]) == ("Theo", sound, "")
    assert notes == [
        "(Theo, build on the previous reply.) Reply now as Theo, briefly and in character.",
        "(It is Theo's turn.) Reply now as Theo, briefly and in character.",
    ]
    saved = store.message(msg.data["id"])
    assert (
        saved["directive"] == ""
        and saved["meta"]["directive_dropped"] == "Build on the previous reply"
    )

    notes.clear()
    ev = run_round(
        chat, "I can't take it anymore, everything is too much."
    )  # a concern: the safety directive
    assert events_of(ev, "safety")
    [msg] = events_of(ev, "message")  # Mia copied Theo, then checked in, still under the directive
    assert msg.data["speaker"] == "Mia" and msg.data["directive"].startswith("Take this seriously")
    assert (
        len(notes) == 2
        and notes[0] == notes[1]
        and notes[1].startswith("(Mia, take this seriously")
    )

    notes.clear()
    [msg] = events_of(run_round(chat, "Still hot."), "message")  # Theo's first reply is empty
    assert msg.data["directive"] == "Build on the previous reply"
    assert len(notes) == 2 and notes[0] == notes[1] and notes[1].startswith("(Theo, build on")


def test_a_reply_that_repeats_part_of_a_longer_recent_one_is_never_shown():
    """A short reply that is the end of a longer recent reply is held back from its first words
    (they occur in that reply, in order) and generated again; none of it reaches the screen."""
    mia = (
        "I'm so glad to hear that the move went well. I'll miss you, my friend, but this is right."
    )
    said = {
        "Mia": [mia],
        "Theo": [
            "I'll miss you, my friend, but this is right.",
            "What are you most looking forward to in the new place?",
        ],
    }
    fake = FakeBackend(lambda req: said[req.slot].pop(0))
    chat = GroupChat(
        make_group(),
        settings=ChatSettings(policy="round-robin", max_speakers=2, min_speakers=2),
        backend_for=lambda m: fake,
    )
    ev = run_round(chat, "I'm moving to Lisbon next month.")
    new = "What are you most looking forward to in the new place?"
    assert [m.data["text"] for m in events_of(ev, "message")] == [mia, new]
    assert (
        "".join(e.data["text"] for e in events_of(ev, "token") if e.data["speaker"] == "Theo")
        == new
    )
    assert said == {"Mia": [], "Theo": []}


@pytest.mark.parametrize("tps, mode", [(5.0, "menu"), (40.0, "free")])
def test_an_auto_director_that_writes_slowly_picks_directives_from_the_menu(tps, mode):
    """A 1B+ model writes its directives, unless it decodes so slowly (a 3B model on two CPU
    cores: ~6 tokens/s) that a written directive keeps the next companion waiting seconds: then
    the Director picks from the menu from the next decision on (docs/performance.md)."""
    from engine.llm.backend import Generation

    class Timed(FakeBackend):
        def generate(self, req, cancel=None):
            gen = super().generate(req, cancel)
            text = gen.text()
            # as the llama.cpp runtime reports a generation: 31 tokens, the first after 0.5 s
            gen.stats.completion_tokens, gen.stats.ttft = 31, 0.5
            gen.stats.seconds = 0.5 + 30 / tps
            return Generation(iter([text]), gen.stats)

    mia = make_group().members[0].name
    fake = Timed(
        lambda req: (
            req.choices[0]
            if req.choices
            else json.dumps({"speaker": mia, "directive": "Ask how the day went"})
        )
    )
    fake.parameters = 3_000_000_000
    director = Director(fake)
    assert director.directive_mode == "free"
    state = RoundState(members=make_group().members, user_name="U", user_text="hi", max_speakers=2)
    first = director.next(state, [])
    assert first.speaker == mia and first.directive == "Ask how the day went"
    assert director.directive_mode == mode
    fake.requests.clear()
    director.next(state, [])
    assert bool(fake.requests[-1].choices) == (mode == "menu")  # the menu is a constrained choice
    assert (
        Director(fake, directive_mode="free").directive_mode == "free"
    )  # a trained Director's mode stays


def test_a_sentence_that_echoes_a_recent_reply_is_dropped_and_never_shown():
    """Small models often open with words of their own and then post a sentence of the previous
    reply again ("Mia, I'm so glad you're back home. How have ..."): the reply is posted without
    the echoed sentence, none of which is streamed; its own sentences stay."""
    mia = "I'm so glad to hear the move went well. I'll miss our walks by the river, my friend."
    theo = (
        "Lisbon, wow! I'll miss our walks by the river, my friend. "
        "Which neighbourhood will you live in?"
    )
    said = {"Mia": [mia], "Theo": [theo]}
    fake = FakeBackend(lambda req: said[req.slot].pop(0))
    chat = GroupChat(
        make_group(),
        settings=ChatSettings(policy="round-robin", max_speakers=2, min_speakers=2),
        backend_for=lambda m: fake,
    )
    ev = run_round(chat, "I'm moving to Lisbon next month.")
    kept = "Lisbon, wow! Which neighbourhood will you live in?"
    assert [m.data["text"] for m in events_of(ev, "message")] == [mia, kept]
    assert (
        "".join(e.data["text"] for e in events_of(ev, "token") if e.data["speaker"] == "Theo")
        == kept
    )


def test_a_reply_that_reads_back_its_own_instructions_loses_those_sentences():
    """A companion reciting its card ("I'm Theo, the planner of the group.") or the Director's
    directive is not talking to the user: those sentences go, its example lines may be said,
    and a reply of nothing but echoes counts as a copy (retried, then dropped)."""
    group = make_group()
    theo = group.member("Theo")
    theo.example_lines = ["One step at a time, and the first step is a small one."]
    said = {
        "Mia": ["That sounds like a big change for you, and a brave one too."],
        "Theo": [
            "I'm Theo, the planner of the group who talks like a planner. "
            "One step at a time, and the first step is a small one. What needs doing first?",
            "You are in a small group chat with User (a real person) and the companions Mia, Ada.",
            "You are in a small group chat with User (a real person) and the companions Mia and Ada.",
        ],
    }
    fake = FakeBackend(lambda req: said[req.slot].pop(0))
    chat = GroupChat(
        group,
        settings=ChatSettings(policy="round-robin", max_speakers=2, min_speakers=2),
        backend_for=lambda m: fake,
    )
    ev = run_round(chat, "I'm moving to Lisbon next month.")
    assert [m.data["text"] for m in events_of(ev, "message")][
        1
    ] == "One step at a time, and the first step is a small one. What needs doing first?"
    said["Mia"].append("What will you pack first, the books or the plants?")
    ev = run_round(chat, "Theo, what do you think?")
    assert [e.data["text"] for e in events_of(ev, "notice")][0] == "Theo had nothing new to add."
    assert said["Theo"] == []


@pytest.mark.parametrize(
    "raw, copy",
    [
        ("Oh! I'll miss our walks by the river, my friend. And you?", False),
        (
            "I'll miss our walks by the river, my friend, truly. What a year it was for both of us.",
            True,
        ),
        ("Lisbon! I'm so glad to hear the move went well, I really am. Tell me more.", False),
        (
            "So. I'm so glad to hear the move went well. I'll miss our walks by the river, my friend.",
            False,
        ),
    ],
)
def test_streaming_with_echoes_never_shows_what_is_dropped(raw, copy):
    """Whatever the model writes, the streamed pieces add up to the posted text: an echoed
    sentence is held while it may still become one, and one already on screen is kept. A reply
    that opens as a copy of a recent one is dropped whole (after its one retry); any other keeps
    what the copy guard keeps of it."""
    from engine.llm.backend import GenRequest
    from engine.reply.copyguard import DEFAULT_RULE, copy_key
    from engine.reply.turn import ReplyResult, Speaker, stream_reply

    recent = [
        copy_key(
            "I'm so glad to hear the move went well. I'll miss our walks by the river, my friend."
        )
    ]
    who = Speaker("Theo", ["Mia", "Theo"], "User", framing="You are Theo, the planner.")
    req = GenRequest(
        slot="Theo", messages=[{"role": "user", "content": "(It is Theo's turn.)"}], max_tokens=64
    )
    out = list(stream_reply(FakeBackend(lambda r: raw), req, who, recent=recent))
    result = out[-1]
    assert isinstance(result, ReplyResult)
    assert "".join(out[:-1]) == result.text
    kept = DEFAULT_RULE.drop_echoes(raw, recent, "", ["Mia", "Theo"])
    if copy:
        assert (result.text, result.copies, result.echoes) == ("", 2, 0)
    else:
        assert (result.text, result.copies, result.echoes) == (kept[0], 0, kept[1])


def test_pieces_of_the_turn_note_are_cut_from_a_reply():
    """The turn note echoed in pieces is not the companion talking: "(It is Mia's turn.)",
    "(In character, ...)", a leading "Reply now as Mia." or "In character:" (seen in the v12
    evaluation's replies); the rest stays, without stray punctuation, and an ellipsis stays."""
    cut = lambda raw: clean_reply(raw, "Mia", ["Theo"], "User")[0]  # noqa: E731
    assert (
        cut("I don't know what to say. (It is Mia's turn.) You can do it!")
        == "I don't know what to say. You can do it!"
    )
    assert (
        cut("I'm happy to help.\n(In character, you can add a bit of personality.)")
        == "I'm happy to help."
    )
    assert cut("Reply now as Mia. (laughs) Rest is allowed.") == "(laughs) Rest is allowed."
    assert cut("Reply now as Mia.") == ""
    assert cut("In character:\nYou're in the right place.") == "You're in the right place."
    assert cut("(I am Mia, briefly in character)…") == ""
    assert (
        cut("Well... I stayed in character all evening, as the play needed.")
        == "Well... I stayed in character all evening, as the play needed."
    )
