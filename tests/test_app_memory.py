"""The memory panel, driven like a user would (pytest-qt, offscreen, the real bundled model): a fact
said in a round appears, a pinned message becomes a pinned fact, pin and "Forget this" work, and a
screenshot of the panel is saved for the docs."""

from __future__ import annotations

import os

import pytest
from app_helpers import open_window
from PySide6.QtCore import Qt

from app import theme

pytestmark = pytest.mark.model
ROUND_TIMEOUT = 180_000


@pytest.fixture(scope="session", autouse=True)
def styled(qapp):
    theme.apply(qapp)


@pytest.fixture
def window(qtbot):
    w = open_window(qtbot)
    yield w
    w.close()


def texts(window):
    return [r["text"] for r in window.session.memory.rows]


def test_memory_panel_lists_pins_and_forgets_facts(window, qtbot):
    s = window.session
    window.memory_action.trigger()
    assert window.memory_panel.isVisible() and s.settings.show_memory
    panel = window.memory_panel
    assert panel.empty.isVisible() and not panel.forget_button.isEnabled()
    # a fact the user states in a round is remembered and shown at once
    group = window.group_panel
    group.policy.setCurrentIndex(group.policy.findData("round-robin"))
    group.cap.setValue(1)
    edit = window.composer.edit
    edit.setFocus()
    qtbot.keyClicks(edit, "My dog is called Rex.")
    with qtbot.waitSignal(s.round_finished, timeout=ROUND_TIMEOUT):
        qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert texts(window) == ["My dog is called Rex"]
    assert "you said it" in s.memory.data(s.memory.index(0)) and s.conversation[
        "title"
    ] in s.memory.data(s.memory.index(0))
    # pinning a message (right-click → Remember this) makes a pinned fact
    uid = next(r["id"] for r in s.messages.rows if r["role"] == "user")
    window.chat_view.remember_requested.emit(uid)
    assert texts(window) == ["My dog is called Rex", "My dog is called Rex."]
    assert s.memory.rows[1]["pinned"] and s.memory.rows[1]["source"] == "pinned"
    # the user adds one, pins the first, then forgets the pinned message
    assert s.add_fact("Prefers tea over coffee")
    panel.list.setCurrentIndex(s.memory.index(0))
    assert panel.pin_button.text() == "Pin"
    panel.pin_button.click()
    assert s.store.memories(s.chat.group.name)[0]["pinned"] and panel.pin_button.text() == "Unpin"
    panel.list.setCurrentIndex(s.memory.index(1))
    panel.forget_button.click()
    assert texts(window) == ["My dog is called Rex", "Prefers tea over coffee"]
    assert not panel.empty.isVisible()
    shot = os.environ.get("MASCOT_MEMORY_SHOT")  # docs/memory-panel.png is made this way
    if shot:
        assert window.grab().save(shot)
    # facts are per group: another group's conversation shows none of them
    s.new_conversation("workplace")
    assert texts(window) == []
