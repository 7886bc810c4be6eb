"""The desktop window, driven like a user would (pytest-qt, offscreen), with the real bundled model.

Every wait is on a Qt signal or a condition (``qtbot.waitSignal`` / ``waitUntil``), never a sleep.
Rounds use small reply lengths (the app's own "Longest reply" setting) to stay fast.
"""

import json
import shutil
import sys
import threading
import time
import zipfile
from dataclasses import replace

import pytest
from app_helpers import open_window
from PySide6.QtCore import QMimeData, QPointF, Qt, QTimer, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication
from test_hub import FILE, REPO, StandInHub, closed_port_endpoint

from app import theme, widgets
from app.config import AppSettings
from app.notify import install_excepthooks, log_path
from app.persona_editor import PersonaEditor
from app.window import MainWindow
from engine.card_files import export_card
from engine.models.hub import OFFLINE
from engine.models.registry import BUNDLED_NAME
from engine.persona_files import load_set
from engine.personas import persona_from_dict
from engine.safety import DISCLOSURE

ROUND_TIMEOUT = 180_000  # ms; the 2 shared cores can be busy with other work


@pytest.fixture(scope="session", autouse=True)
def styled(qapp):
    theme.apply(qapp)


@pytest.fixture
def settings():
    s = AppSettings(override_sampling=True, max_tokens=12, temperature=0.7, threads=1)
    s.save()
    return s


@pytest.fixture
def window(qtbot, settings):
    w = open_window(qtbot, settings)
    yield w
    w.close()


def use_round_robin(window, speakers):
    """Through the group panel, as a user would: fixed turns, a speaker cap."""
    panel = window.group_panel
    panel.policy.setCurrentIndex(panel.policy.findData("round-robin"))
    panel.cap.setValue(speakers)
    assert window.session.chat.settings.policy == "round-robin"
    assert window.session.chat.settings.max_speakers == speakers


def send(qtbot, window, text, timeout=ROUND_TIMEOUT):
    """Type the message and press Enter; wait for the round to finish."""
    edit = window.composer.edit
    edit.setFocus()
    if text.isascii():
        qtbot.keyClicks(edit, text)
    else:  # QTest key clicks abort on non-ASCII text here (offscreen): such text is pasted
        edit.insertPlainText(text)
    with qtbot.waitSignal(window.session.round_finished, timeout=timeout) as blocker:
        qtbot.keyClick(edit, Qt.Key.Key_Return)
    return blocker.args[0]


def rows(window, role=None):
    return [r for r in window.session.messages.rows if role is None or r["role"] == role]


# -- first run ------------------------------------------------------------------------------------


def test_first_run_opens_the_support_circle_with_the_disclosure(window, qtbot):
    s = window.session
    assert [c["group_name"] for c in s.conversations.rows] == ["support"]
    assert s.chat.names == load_set("support").names
    assert window.disclosure.isVisible() and DISCLOSURE in window.disclosure.body.text().replace(
        "&#x27;", "'"
    )
    assert BUNDLED_NAME in window.model_label.text()
    assert window.chat_view.empty.isVisible()
    qtbot.mouseClick(window.disclosure.close_button, Qt.MouseButton.LeftButton)
    assert not window.disclosure.isVisible()
    assert AppSettings.load().disclosure_seen
    window.close()
    again = MainWindow(AppSettings.load())
    qtbot.addWidget(again)
    assert not again.disclosure.isVisibleTo(again)
    assert again.session.cid == s.cid  # reopens the last conversation
    again.close()


def test_shift_enter_adds_a_line_and_empty_text_is_not_sent(window, qtbot):
    edit = window.composer.edit
    qtbot.keyClicks(edit, "first line")
    qtbot.keyClick(edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(edit, "second")
    assert edit.toPlainText() == "first line\nsecond" and not window.session.busy
    edit.clear()
    assert not window.composer.send_button.isEnabled()
    assert window.send("  \u0007 ") is False  # the engine refuses it; the reason is shown
    assert "empty" in window.error_banner.body.text() and window.error_banner.isVisible()


# -- rounds ------------------------------------------------------------------------------------


@pytest.mark.model
def test_a_round_streams_bubbles_from_several_companions(window, qtbot):
    # Replies long enough to stream in several pieces (only text cleanup may still cut is held back).
    window.session.apply_settings(replace(window.session.settings, max_tokens=48))
    use_round_robin(window, 2)
    s = window.session
    tokens, typing, ticks = [], [], []
    s.token_received.connect(tokens.append)
    s.typing_changed.connect(lambda text, _color: typing.append(text))
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start(50)
    info = send(qtbot, window, "Hello everyone, how was your day?")
    timer.stop()

    companions = rows(window, "companion")
    speakers = [r["speaker"] for r in companions]
    assert len(set(speakers)) == 2 and all(r["text"] and r["id"] for r in companions)
    assert info["speakers"] == speakers and not info["cancelled"]
    assert {t for t in tokens} == set(speakers) and len(
        tokens
    ) >= 4  # streamed, several pieces each
    assert all(f"{name} is typing…" in typing for name in speakers)
    assert window.composer.typing.text == "" and window.composer.edit.toPlainText() == ""
    bubbles = [window.chat_view.row_for(r["id"]) for r in companions]
    assert all(b is not None and b.label.text() == r["text"] for b, r in zip(bubbles, companions))
    assert [r["speaker"] for r in window.session.director_log.rows if r.get("speaker")] == speakers
    # The window kept repainting while the model worked on another thread.
    assert (
        len(ticks) > 5
    )  # the event loop kept running during the round (it runs on a worker thread)
    stored = s.store.messages(s.cid)
    assert [m["role"] for m in stored] == ["user", "companion", "companion"]
    assert s.conversations.rows[0]["title"] == "Hello everyone, how was your day?"  # auto-title


@pytest.mark.model
def test_companions_read_the_round_while_the_user_types(window, qtbot):
    use_round_robin(window, 1)
    s = window.session
    send(qtbot, window, "Hi all, I moved to a new city last month.")
    first = rows(window, "companion")[-1]["speaker"]
    qtbot.waitUntil(lambda: not s.warming(), timeout=120_000)
    send(qtbot, window, "I don't know anyone here yet.")
    reply = s.store.messages(s.cid)[-1]
    assert reply["role"] == "companion" and reply["speaker"] != first and reply["text"]
    # This companion had not spoken yet, but it read the first round (and its own persona
    # prompt) while the user was typing: its turn read only the new message and its note.
    assert reply["prompt_tokens"] > 200 and reply["prefilled_tokens"] < 80, reply


@pytest.mark.model
def test_a_new_message_stops_the_read_ahead_before_its_round(window, qtbot, monkeypatch):
    """The read-ahead after a round runs on one of the session's workers; the next message
    cancels it and waits for it to end before its own round starts."""
    use_round_robin(window, 1)
    s = window.session
    ended = []

    def warm(cancel):  # the read-ahead, held until a job cancels it
        cancel.wait(ROUND_TIMEOUT / 1000)
        ended.append(cancel.is_set())

    monkeypatch.setattr(s.chat, "warm", warm)
    seen_at_start = []
    s.busy_changed.connect(lambda busy: busy and seen_at_start.append(list(ended)))
    send(qtbot, window, "Hi all, I moved to a new city last month.")
    assert s.warming() and "warm" in [w.name for w in s.runner.active]
    send(qtbot, window, "I don't know anyone here yet.")
    assert seen_at_start == [[], [True]]  # cancelled, and over before the second round began
    assert s.store.messages(s.cid)[-1]["role"] == "companion"


@pytest.mark.model
def test_stop_ends_the_round_within_a_second(window, qtbot):
    window.session.apply_settings(replace(window.session.settings, max_tokens=400))
    use_round_robin(window, 3)
    s = window.session
    qtbot.keyClicks(
        window.composer.edit, "Tell me a long story about the sea, with lots of detail."
    )
    with qtbot.waitSignal(s.token_received, timeout=ROUND_TIMEOUT):
        qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    assert window.composer.stop_button.isVisible() and s.busy
    with qtbot.waitSignal(s.round_finished, timeout=5_000) as blocker:
        qtbot.mouseClick(window.composer.stop_button, Qt.MouseButton.LeftButton)
    assert blocker.args[0]["cancelled"] and not s.busy
    assert window.composer.send_button.isVisible() and not window.composer.stop_button.isVisible()
    companions = rows(window, "companion")
    assert len(companions) < 3 and not any(r["streaming"] for r in window.session.messages.rows)
    stopped = [r for r in companions if r["status"] == "cancelled"]
    assert stopped, "the reply being written when Stop was pressed is kept, marked as stopped"
    assert "stopped" in window.chat_view.row_for(stopped[-1]["id"]).tags.text()


@pytest.mark.model
def test_regenerate_flips_alternatives_and_messages_can_be_edited_and_deleted(window, qtbot):
    use_round_robin(window, 1)
    s = window.session
    send(qtbot, window, "Hi there!")
    reply = rows(window, "companion")[0]
    mid, first = reply["id"], reply["text"]
    bubble = window.chat_view.row_for(mid)

    with qtbot.waitSignal(s.regenerate_finished, timeout=ROUND_TIMEOUT):
        bubble.regenerate_button.click()
    second = window.chat_view.row_for(mid).text
    assert bubble.flip_label.text() == "2/2" and bubble.prev_button.isVisibleTo(bubble)
    assert [v["text"] for v in s.store.variants(mid)] == [first, second]
    bubble.prev_button.click()
    assert bubble.label.text() == first and bubble.flip_label.text() == "1/2"
    assert s.store.message(mid)["text"] == first
    bubble.next_button.click()
    assert bubble.label.text() == second and s.store.message(mid)["variant"] == 1

    user = rows(window, "user")[0]
    row = window.chat_view.row_for(user["id"])
    row.start_edit()
    row.editor.setPlainText("Hi there, friends!")
    row.commit_edit()
    assert row.label.text() == "Hi there, friends!" and "edited" in row.tags.text()
    assert s.store.message(user["id"])["text"] == "Hi there, friends!"

    bubble.delete_button.click()
    assert window.chat_view.row_for(mid) is None
    assert [m["id"] for m in s.store.messages(s.cid)] == [user["id"]]


def test_a_crisis_message_shows_the_crisis_banner_with_resources(window, qtbot):
    assert not window.crisis.isVisible()
    send(qtbot, window, "I want to kill myself tonight", timeout=30_000)
    assert window.crisis.isVisible()
    text = window.crisis.body.text()
    assert "Emergency" in text or "emergency" in text
    safety = rows(window, "safety")
    assert len(safety) == 1 and "not a therapist" in safety[0]["text"]
    assert "safety message" in window.chat_view.row_for(safety[0]["id"]).tags.text()
    assert window.session.conversations.rows[0]["title"] == "Support circle"  # not titled after it


def test_an_emergency_banner_leads_with_the_number_to_call(window, qtbot, monkeypatch):
    monkeypatch.setenv("MASCOT_REGION", "UK")
    send(qtbot, window, "I took a whole bottle of sleeping pills an hour ago", timeout=30_000)
    assert window.crisis.isVisible() and window.crisis.title.text() == "This is an emergency."
    body = window.crisis.body.text()
    assert body.index("Call 999 now.") < body.index("Samaritans")  # the number comes first
    assert "English, German and French" in body
    safety = rows(window, "safety")
    assert len(safety) == 1 and safety[0]["text"].startswith("Please call 999 now")


def test_an_emergency_in_german_gets_a_german_banner(window, qtbot, monkeypatch):
    monkeypatch.setenv("MASCOT_REGION", "DE")
    send(
        qtbot,
        window,
        "sitze im Auto in der Garage, der Motor läuft, das Tor ist zu",
        timeout=30_000,
    )
    assert window.crisis.isVisible() and window.crisis.title.text() == "Das ist ein Notfall."
    body = window.crisis.body.text()
    assert body.index("Ruf jetzt 112 an.") < body.index("TelefonSeelsorge")
    assert "kostenlos" in body and "Englisch, Deutsch und Französisch" in body and "KI" in body
    safety = rows(window, "safety")
    assert len(safety) == 1 and safety[0]["text"].startswith("Bitte ruf jetzt 112 an")


def test_an_overdose_of_a_named_medicine_in_french_gets_a_french_emergency_banner(
    window, qtbot, monkeypatch
):
    monkeypatch.setenv("MASCOT_REGION", "FR")
    send(
        qtbot,
        window,
        "J'ai pris toute la boîte de Seroplex il y a une heure, je vois flou",
        timeout=30_000,
    )
    assert window.crisis.isVisible() and window.crisis.title.text() == "C'est une urgence."
    body = window.crisis.body.text()
    assert body.index("Appelle le 112 maintenant.") < body.index("3114")
    assert "Secours" in body and "Emergency services" not in body
    safety = rows(window, "safety")
    assert len(safety) == 1 and safety[0]["text"].startswith(
        "S'il te plaît, appelle le 112 maintenant"
    )
    assert "- Secours: Appelle le 112 maintenant" in safety[0]["text"]


# -- personas and cards ---------------------------------------------------------------------------


def test_persona_editor_validates_live_and_names_the_field(qtbot):
    mia = load_set("support").member("Mia")
    dlg = PersonaEditor(mia, [BUNDLED_NAME])
    qtbot.addWidget(dlg)
    assert dlg.persona == mia and dlg.save_button.isEnabled() and not dlg.error
    for widget, value, field in (
        (dlg.role, "", "'role'"),
        (dlg.traits, " , ", "'traits'"),
        (dlg.color, "blue", "'color'"),
        (dlg.name, "Mia: the first", "'name'"),
    ):
        old = widget.text()
        widget.setText(value)
        assert field in dlg.error_label.text() and not dlg.save_button.isEnabled()
        assert widget.property("invalid") is True
        widget.setText(old)
        assert dlg.save_button.isEnabled() and not dlg.error_label.text()
    dlg.style.setPlainText("x" * 401)
    assert "'speaking_style'" in dlg.error_label.text()
    dlg.style.setPlainText("Short and kind.")
    dlg.own_sampling.setChecked(True)
    dlg.temperature.setValue(1.25)
    assert (
        dlg.persona.speaking_style == "Short and kind."
        and dlg.persona.sampling["temperature"] == 1.25
    )

    blank = PersonaEditor(None, [])
    qtbot.addWidget(blank)
    assert "'name'" in blank.error_label.text() and not blank.save_button.isEnabled()


def card(tmp_path, name, suffix=".png"):
    p = persona_from_dict(
        {
            "name": name,
            "role": "a stargazer who notices small things",
            "traits": ["calm", "curious"],
            "speaking_style": "Quiet and precise.",
        }
    )
    return export_card(p, tmp_path / f"{name}{suffix}")


def drop(target, path):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    pos = QPointF(target.rect().center())
    enter = QDragEnterEvent(
        pos.toPoint(),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(target, enter)
    assert enter.isAccepted()
    ev = QDropEvent(
        pos,
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(target, ev)
    return ev


def test_character_cards_import_by_drop_and_by_the_file_dialog_path(window, qtbot, tmp_path):
    s = window.session
    assert drop(window.group_panel, card(tmp_path, "Luna")).isAccepted()
    assert "Luna" in s.members.names()
    assert drop(window, card(tmp_path, "Orion", ".json")).isAccepted()  # anywhere on the window
    assert "Orion" in s.members.names()
    assert window.group_panel.import_file(str(card(tmp_path, "Vega")))  # what the file dialog calls
    assert s.members.names()[-3:] == ["Luna", "Orion", "Vega"]
    assert [m["name"] for m in s.store.members(s.cid)][-3:] == ["Luna", "Orion", "Vega"]
    assert "Luna" in window.header.subtitle.text()

    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    with qtbot.waitSignal(window.notifier.posted) as blocker:
        window.group_panel.import_file(str(broken))
    level, message = blocker.args
    assert level == "error" and "broken.png" in message and "\n" not in message

    out = tmp_path / "out" / "luna-v3.json"
    out.parent.mkdir()
    assert window.group_panel.export_member("Luna", str(out), "chara_card_v3")
    assert json.loads(out.read_text())["spec"] == "chara_card_v3"


def test_group_panel_mutes_removes_and_sets_policy(window, qtbot):
    s = window.session
    model = s.members
    model.setData(model.index(0), Qt.CheckState.Unchecked, Qt.ItemDataRole.CheckStateRole)
    assert s.chat.muted == {"Mia"} and s.store.members(s.cid)[0]["muted"] == 1
    assert "3 of 4 speaking" == window.group_panel.count.text()
    assert "Mia (muted)" in window.header.subtitle.text()
    window.group_panel.list.setCurrentIndex(model.index(3))
    window.group_panel.remove_button.click()
    assert s.chat.names == ["Mia", "Theo", "Juno"] and s.chat.muted == {"Mia"}
    window.group_panel.policy.setCurrentIndex(window.group_panel.policy.findData("all"))
    assert s.store.conversation(s.cid)["policy"] == "all"


# -- models -----------------------------------------------------------------------------------------


@pytest.fixture
def models_dialog(window, qtbot):
    dlg = window.open_models()
    qtbot.waitUntil(lambda: dlg.model.rowCount() > 0, timeout=60_000)  # reading the GGUF headers
    return dlg


def test_model_manager_adds_verifies_and_assigns_a_model(
    window, models_dialog, qtbot, tmp_path, bundled_path
):
    dlg = models_dialog
    assert dlg.model.items[0].name == BUNDLED_NAME and dlg.model.items[0].quantization == "Q4_1"
    copy = tmp_path / "my-copy.gguf"
    shutil.copyfile(bundled_path, copy)
    with qtbot.waitSignal(dlg.added, timeout=60_000) as added:
        dlg.add_file(str(copy))
    assert added.args == [True]
    qtbot.waitUntil(lambda: dlg.model.rowCount() == 2, timeout=60_000)
    added_info = next(m for m in dlg.model.items if not m.bundled)
    assert added_info.path == str(copy.resolve()) and len(added_info.sha256) == 64
    with qtbot.waitSignal(dlg.verified, timeout=60_000) as verified:
        dlg.verify(added_info.name)
    assert verified.args[0] is True and "OK" in dlg.status.text()
    assert dlg.assign("Theo", added_info.name)
    assert window.session.persona("Theo").model == added_info.name
    assert window.session.store.members(window.session.cid)[1]["model"] == added_info.name


def test_model_manager_gives_a_model_to_the_director(
    window, models_dialog, qtbot, tmp_path, bundled_path
):
    """The Director's model is chosen where the companions' are: "the Director" is the last
    entry of the assign list. The choice holds for the open conversation from its next decision
    on, is kept in the app's settings (and so for the next conversation and the next start),
    and giving it the bundled model goes back to the group's model. An unknown name is refused
    with one line and changes nothing."""
    from app.config import AppSettings
    from app.models_dialog import DIRECTOR

    dlg = models_dialog
    assert dlg.member.itemText(dlg.member.count() - 1) == "the Director"
    assert dlg.director_label.text() == "Director: the group's model"
    copy = tmp_path / "director-copy.gguf"
    shutil.copyfile(bundled_path, copy)
    with qtbot.waitSignal(dlg.added, timeout=60_000):
        dlg.add_file(str(copy))
    qtbot.waitUntil(lambda: dlg.model.rowCount() == 2, timeout=60_000)
    name = next(m for m in dlg.model.items if not m.bundled).name
    dlg.table.selectRow(next(i for i, m in enumerate(dlg.model.items) if m.name == name))
    dlg.member.setCurrentIndex(dlg.member.findData(DIRECTOR))
    dlg.assign_button.click()
    s = window.session
    assert s.chat.settings.director_model == name and s.chat.policy().backend.path == str(
        copy.resolve()
    )
    assert (
        dlg.director_label.text() == f"Director: {name}"
        and "The Director now uses" in dlg.status.text()
    )
    assert AppSettings.load().director_model == name
    assert [m.name for m in s.chat.members if m.model] == []  # no companion got it
    errors = []
    s.error.connect(errors.append)
    assert not dlg.assign(DIRECTOR, "no-such-model")
    assert len(errors) == 1 and "no-such-model" in errors[0] and "\n" not in errors[0]
    assert s.chat.settings.director_model == name
    s.new_conversation("support")
    assert s.chat.settings.director_model == name
    assert dlg.assign(DIRECTOR, BUNDLED_NAME)
    assert s.chat.settings.director_model is None and AppSettings.load().director_model == ""
    assert dlg.director_label.text() == "Director: the group's model"


@pytest.fixture
def hub(bundled_path):
    server = StandInHub(
        {
            f"/{REPO}/resolve/main/{FILE}": bundled_path,
            f"/{REPO}/resolve/main/stuck.gguf": bundled_path,
        },
        stall_after={f"/{REPO}/resolve/main/stuck.gguf": 4 << 20},
    )
    yield server
    server.close()


def test_download_from_the_hub_with_progress_and_cancel(
    window, models_dialog, qtbot, hub, monkeypatch
):
    dlg = models_dialog
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)  # the loopback stand-in, never the internet
    values = []
    dlg.progress.valueChanged.connect(values.append)
    dlg.repo.setText(REPO)
    dlg.file.setText(FILE)
    with qtbot.waitSignal(dlg.download_finished, timeout=120_000) as finished:
        qtbot.mouseClick(dlg.download_button, Qt.MouseButton.LeftButton)
    assert finished.args == [True], dlg.status.text()
    assert values[-1] == 1000 and any(0 < v < 1000 for v in values)
    assert (dlg.models_dir() / FILE).is_file()
    qtbot.waitUntil(lambda: any(m.path.endswith(FILE) for m in dlg.model.items), timeout=60_000)

    dlg.file.setText("stuck.gguf")
    with qtbot.waitSignal(dlg.progress.valueChanged, timeout=30_000):
        qtbot.mouseClick(dlg.download_button, Qt.MouseButton.LeftButton)
    assert dlg.cancel_button.isEnabled()
    with qtbot.waitSignal(dlg.download_finished, timeout=5_000) as finished:
        qtbot.mouseClick(dlg.cancel_button, Qt.MouseButton.LeftButton)
    assert finished.args == [False] and "cancelled" in dlg.status.text()
    assert (
        not list(dlg.models_dir().glob("*.part")) and not (dlg.models_dir() / "stuck.gguf").exists()
    )

    monkeypatch.setenv("HF_ENDPOINT", closed_port_endpoint())
    with qtbot.waitSignal(dlg.download_finished, timeout=30_000) as finished:
        dlg.start_download()
    assert finished.args == [False] and dlg.status.text() == OFFLINE


# -- sidebar, settings, errors ----------------------------------------------------------------------


def test_sidebar_new_rename_search_and_delete(window, qtbot, monkeypatch):
    s, bar = window.session, window.sidebar
    first = s.cid
    bar.groups_menu.aboutToShow.emit()
    act = next(a for a in bar.groups_menu.actions() if a.data() == "workplace")
    act.trigger()
    assert s.cid != first and s.chat.group.name == "workplace"
    assert len(s.conversations.rows) == 2 and bar.current == s.cid

    index = s.conversations.index(s.conversations.row_of(s.cid))
    assert s.conversations.setData(index, "Project planning")  # what the inline editor does
    assert s.store.conversation(s.cid)["title"] == "Project planning"
    assert window.header.title.text() == "Project planning"

    bar.search.setText("planning")
    qtbot.waitUntil(lambda: s.conversations.rowCount() == 1, timeout=3_000)
    assert s.conversations.rows[0]["title"] == "Project planning"
    bar.search.setText("no such words")
    qtbot.waitUntil(lambda: bar.empty.isVisible(), timeout=3_000)
    bar.search.clear()
    qtbot.waitUntil(lambda: s.conversations.rowCount() == 2, timeout=3_000)

    bar.list.clicked.emit(s.conversations.index(s.conversations.row_of(first)))
    assert s.cid == first
    monkeypatch.setattr(widgets, "ask", lambda *a: True)
    bar.confirm_delete(first)
    assert [c["title"] for c in s.conversations.rows] == ["Project planning"] and s.cid != first


def test_settings_export_and_delete_all_data(window, qtbot, tmp_path, monkeypatch):
    from app.settings_dialog import SettingsDialog

    s = window.session
    s.store.add_message(s.cid, role="user", speaker="User", text="a private thought")
    imported = tmp_path / "mascot-home" / "personas" / "Luna.json"
    imported.parent.mkdir(exist_ok=True)
    imported.write_text("{}")
    dlg = SettingsDialog(s, window)
    qtbot.addWidget(dlg)
    assert dlg.folder.text() == str(tmp_path / "mascot-home")

    zipped = dlg.export_to(str(tmp_path / "export"))
    with zipfile.ZipFile(zipped) as z:
        names = z.namelist()
        md = next(n for n in names if n.endswith(".md"))
        assert "a private thought" in z.read(md).decode()
    assert "models.json" in names

    from engine.llm.backend import GenRequest

    rt = s.backend_for(None)  # the companions' KV caches hold conversation text too
    for slot in ("Mia", "Leo"):
        rt.prefill(
            GenRequest(slot=slot, messages=[{"role": "user", "content": "User: a private thought"}])
        )
    assert rt.slot_bytes() > 0 and rt.llm.n_tokens > 0

    monkeypatch.setattr(widgets, "ask", lambda *a: True)
    dlg.confirm_delete()
    assert rt.slot_bytes() == 0 and rt.llm.n_tokens == 0
    convs = s.store.conversations()
    assert len(convs) == 1 and convs[0]["n_messages"] == 0 and s.cid == convs[0]["id"]
    assert s.messages.rowCount() == 0 and window.chat_view.empty.isVisible()
    assert "a private thought" not in json.dumps(list(s.store.iter_all()))
    assert not imported.exists()
    # deleting everything is a first run again: the AI notice shows at the next start
    assert not s.settings.disclosure_seen and not AppSettings.load().disclosure_seen

    dlg2 = SettingsDialog(s, window)
    qtbot.addWidget(dlg2)
    dlg2.threads.setValue(2)
    dlg2.user_name.setText("Sam")
    assert dlg2.history.currentData() == 2048  # companions read the last 2,048 tokens by default
    dlg2.history.setCurrentIndex(dlg2.history.findData(0))
    before = s.backend_for
    dlg2.accept()
    saved = AppSettings.load()
    assert saved.threads == 2 and saved.user_name == "Sam" and saved.history_tokens == 0
    assert s.backend_for is not before and s.chat.settings.user_name == "Sam"
    assert s.chat.settings.history_tokens == 0  # the open conversation follows the setting


def test_unexpected_errors_reach_the_notification_path_and_the_log(window, qtbot):
    old_hook, old_thread_hook = sys.excepthook, threading.excepthook
    install_excepthooks(window.notifier)
    try:
        try:
            raise ZeroDivisionError("boom in a slot")
        except ZeroDivisionError:
            with qtbot.waitSignal(window.notifier.posted) as blocker:
                sys.excepthook(*sys.exc_info())
        level, message = blocker.args
        assert level == "error" and "ZeroDivisionError" in message and "\n" not in message
        assert window.error_banner.isVisible() and "boom" in window.statusBar().currentMessage()

        def fail():
            raise RuntimeError("boom in a thread")

        with qtbot.waitSignal(window.notifier.posted) as blocker:
            t = threading.Thread(target=fail)
            t.start()
            t.join()
        assert "RuntimeError" in blocker.args[1]
    finally:
        sys.excepthook, threading.excepthook = old_hook, old_thread_hook
    logged = log_path().read_text()
    assert "ZeroDivisionError: boom in a slot" in logged and "Traceback" in logged


def test_qt_calls_do_not_drain_pythons_none_and_booleans(qtbot):
    """PySide6 6.12.0 on Python 3.11 drops one reference to None on every call of a Qt method
    that returns nothing (``setText``, ``update``, ``processEvents``) and one to True/False on
    every ``emit``. None and the booleans are ordinary objects before Python 3.12, so after some
    tens of thousands of such calls Python aborts ("Fatal Python error: none_dealloc") and the
    app vanishes mid-conversation: measured with the real window and the bundled model, None
    lost 600-1,300 references a round, about 35,000 at start, so about fifty rounds. That
    release is excluded in pyproject.toml; this checks the PySide6 that is installed."""
    from PySide6.QtCore import QObject, Signal
    from PySide6.QtWidgets import QLabel

    class Source(QObject):
        said = Signal(str)

    label = QLabel("x")
    qtbot.addWidget(label)
    source = Source()
    source.said.connect(label.setText)
    none, true, false = sys.getrefcount(None), sys.getrefcount(True), sys.getrefcount(False)
    for i in range(3000):
        label.setText(str(i))
        label.update()
        source.said.emit("y")
    assert sys.getrefcount(None) - none > -100
    assert sys.getrefcount(True) - true > -100 and sys.getrefcount(False) - false > -100
    assert label.text() == "y"
