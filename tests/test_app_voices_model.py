"""The voices model in the window (real Qt offscreen, llama.cpp): the first run builds it behind
an open window, companions run on it and each reply says which model and adapter wrote it, and
Settings shows it and switches back to the plain model, a choice that persists. The stand-in
adapter is conftest.py's ``voices_adapter``."""

import html
import json

import pytest
from app_helpers import open_window
from PySide6.QtCore import Qt
from test_app import rows, send, use_round_robin

from app import theme
from app.config import AppSettings
from app.notify import Notifier
from app.settings_dialog import SettingsDialog
from app.window import MainWindow
from engine.models.registry import BUNDLED_FILE, BUNDLED_NAME
from engine.models.voices import ADAPTER_FILE, PLAIN_LABEL, VOICES_LABEL, VOICES_NAME

VOICES_FILE = f"{VOICES_NAME}.gguf"
MERGED = f"{ADAPTER_FILE} (merged)"
BUILD_TIMEOUT = 300_000  # ms; a merge of a few seconds, on 2 cores that may be busy


@pytest.fixture(scope="session", autouse=True)
def styled(qapp):
    theme.apply(qapp)


def app_settings():
    s = AppSettings(
        override_sampling=True, max_tokens=12, threads=1, disclosure_seen=True, show_director=True
    )
    s.save()
    return s


def window_with(qtbot, notifier):
    """A window built with ``notifier`` connected first, so no notice of its start is missed."""
    w = MainWindow(app_settings(), notifier=notifier)
    qtbot.addWidget(w)
    w.resize(1280, 820)
    w.show()
    return w


@pytest.mark.model
def test_companions_run_on_the_voices_model_and_each_reply_says_so(voices_ready, qtbot):
    w = open_window(qtbot, app_settings())
    s = w.session
    assert s.voices.status == "ready" and s.chat.settings.model == VOICES_NAME
    assert VOICES_NAME in w.model_label.text()
    use_round_robin(w, 2)
    send(qtbot, w, "Hello everyone, how was your day?")

    replies = rows(w, "companion")
    assert len(replies) == 2
    assert all((r["model"], r["adapter"]) == (VOICES_FILE, MERGED) for r in replies)
    written = f"Written by {VOICES_FILE} with {MERGED}"
    assert all(written in w.chat_view.row_for(r["id"]).bubble.toolTip() for r in replies)
    log = s.director_log
    turns = [i for i, r in enumerate(log.rows) if r.get("speaker")]
    tips = [log.data(log.index(i), Qt.ItemDataRole.ToolTipRole) for i in turns]
    assert len(tips) == 2 and all(written in tip for tip in tips)
    cid = s.cid
    w.close()

    again = open_window(qtbot, AppSettings.load())  # read back from the database
    again.session.open_conversation(cid)
    stored = rows(again, "companion")
    assert [(r["model"], r["adapter"]) for r in stored] == [(VOICES_FILE, MERGED)] * 2
    log = again.session.director_log
    assert all(
        written in log.data(log.index(i), Qt.ItemDataRole.ToolTipRole)
        for i, r in enumerate(log.rows)
        if r.get("speaker")
    )


@pytest.mark.model
def test_settings_show_the_voices_model_and_switch_back_to_the_plain_one(voices_ready, qtbot):
    w = open_window(qtbot, app_settings())
    dlg = SettingsDialog(w.session, w)
    qtbot.addWidget(dlg)
    assert dlg.companion_model.currentText() == VOICES_LABEL
    assert dlg.runs_on.text() == f"{', '.join(w.session.chat.names)}: {VOICES_LABEL}"
    assert dlg.voices_note.isHidden()  # nothing to explain: it is built and in use

    dlg.companion_model.setCurrentIndex(dlg.companion_model.findData("plain"))
    dlg.accept()
    assert w.session.chat.settings.model is None
    assert BUNDLED_NAME in w.model_label.text() and VOICES_NAME not in w.model_label.text()
    assert json.loads(AppSettings.path().read_text())["companion_model"] == "plain"
    w.close()

    again = open_window(qtbot, AppSettings.load())  # the choice outlives the window
    assert again.session.chat.settings.model is None
    dlg = SettingsDialog(again.session, again)
    qtbot.addWidget(dlg)
    assert dlg.companion_model.currentData() == "plain" and PLAIN_LABEL in dlg.runs_on.text()
    use_round_robin(again, 1)
    send(qtbot, again, "Hi there!")
    assert [(r["model"], r["adapter"]) for r in rows(again, "companion")] == [(BUNDLED_FILE, "")]


@pytest.mark.model
def test_the_first_run_builds_the_voices_model_behind_an_open_window(voices_home, qtbot):
    posted = []
    notifier = Notifier()
    notifier.posted.connect(lambda level, text: posted.append((level, text)))
    w = window_with(qtbot, notifier)
    s = w.session
    # the window is open at once, on the plain model, while the merge runs on a worker
    assert w.isVisible() and s.voices.status == "building" and s.chat.settings.model is None
    dlg = SettingsDialog(s, w)
    qtbot.addWidget(dlg)
    assert "being built" in dlg.voices_note.text()

    qtbot.waitUntil(lambda: s.voices.status == "built", timeout=BUILD_TIMEOUT)
    assert s.chat.settings.model == VOICES_NAME and VOICES_NAME in w.model_label.text()
    assert (voices_home / "models" / VOICES_FILE).is_file()
    infos = [text for level, text in posted if level == "info" and "voices model" in text]
    assert len(infos) == 1 and PLAIN_LABEL in infos[0]
    assert not [text for level, text in posted if level == "error"]


@pytest.mark.model
def test_a_damaged_adapter_is_one_line_and_the_window_stays_on_the_plain_model(
    voices_home, qtbot, tmp_path, monkeypatch, voices_adapter
):
    broken = tmp_path / ADAPTER_FILE
    broken.write_bytes(voices_adapter.read_bytes()[:4_000_000])
    monkeypatch.setenv("MASCOT_VOICES_ADAPTER", str(broken))
    posted = []
    notifier = Notifier()
    notifier.posted.connect(lambda level, text: posted.append((level, text)))
    w = window_with(qtbot, notifier)
    s = w.session

    qtbot.waitUntil(lambda: s.voices.status == "failed", timeout=BUILD_TIMEOUT)
    errors = [text for level, text in posted if level == "error"]
    assert len(errors) == 1 and "\n" not in errors[0]
    assert errors[0].startswith("Could not build the voices model") and "reinstall" in errors[0]
    assert w.error_banner.isVisible() and w.error_banner.body.text() == html.escape(errors[0])
    assert w.isVisible() and s.chat.settings.model is None
    dlg = SettingsDialog(s, w)
    qtbot.addWidget(dlg)
    assert dlg.voices_note.text() == errors[0]
    assert dlg.runs_on.text().endswith(PLAIN_LABEL)
