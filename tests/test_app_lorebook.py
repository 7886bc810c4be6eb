"""The group lorebook editor (Tools → Group lorebook…), driven like a user would (pytest-qt,
offscreen, real SQLite, the real bundled model for the round): entries are added, edited and
deleted with every V2 field, kept in the database, and a triggered entry reaches the note the
companion read before its reply. A screenshot of the editor is saved for the docs when
MASCOT_LOREBOOK_SHOT names a file (docs/lorebook-editor.png is made under xvfb-run)."""

from __future__ import annotations

import os

import pytest
from app_helpers import open_window
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app import theme

pytestmark = pytest.mark.model
ROUND_TIMEOUT = 180_000
LIGHTHOUSE = "The old lighthouse on the hill has been dark since 1998."


@pytest.fixture(scope="session", autouse=True)
def styled(qapp):
    theme.apply(qapp)


@pytest.fixture
def window(qtbot):
    w = open_window(qtbot)
    yield w
    w.close()


def fill(
    dlg,
    qtbot,
    *,
    keys="",
    secondary="",
    content="",
    selective=False,
    constant=False,
    case=False,
    enabled=True,
    order=100,
    priority=10,
    position="after_char",
    name="",
):
    dlg.name.setText(name)
    dlg.keys.clear()
    qtbot.keyClicks(dlg.keys, keys)
    dlg.selective.setChecked(selective)
    dlg.secondary.clear()
    qtbot.keyClicks(dlg.secondary, secondary)
    dlg.content.setPlainText(content)
    dlg.constant.setChecked(constant)
    dlg.case.setChecked(case)
    dlg.enabled.setChecked(enabled)
    dlg.order.setValue(order)
    dlg.priority.setValue(priority)
    dlg.position.setCurrentIndex(dlg.position.findData(position))


def test_lorebook_editor_adds_edits_deletes_and_the_entry_reaches_the_prompt(window, qtbot):
    s = window.session
    group = s.chat.group.name
    window.lorebook_action.trigger()
    dlg = window._lorebook_dialog
    assert dlg.isVisible() and dlg.empty.isVisible() and not dlg.delete_button.isEnabled()
    assert dlg.save_button.text() == "Add entry"

    # an entry that must fire, a selective one, a constant one, a disabled one, a case-sensitive one
    fill(dlg, qtbot, name="Lighthouse", keys="lighthouse, beacon", content=LIGHTHOUSE, order=20)
    dlg.save_button.click()
    fill(
        dlg,
        qtbot,
        keys="cove",
        secondary="night, boat",
        selective=True,
        content="Smugglers used the north cove.",
        order=30,
    )
    dlg.new_button.click()
    fill(
        dlg,
        qtbot,
        keys="cove",
        secondary="night, boat",
        selective=True,
        content="Smugglers used the north cove.",
        order=30,
    )
    dlg.save_button.click()
    dlg.new_button.click()
    fill(
        dlg,
        qtbot,
        constant=True,
        content="{{user}} likes short replies.",
        position="before_char",
        order=5,
    )
    dlg.save_button.click()
    dlg.new_button.click()
    fill(dlg, qtbot, keys="captain", content="Mara used to be called Captain Red.", enabled=False)
    dlg.save_button.click()
    dlg.new_button.click()
    fill(
        dlg, qtbot, keys="Ferry", case=True, content="The ferry leaves at 6:40 sharp.", priority=50
    )
    dlg.save_button.click()
    rows = s.store.lore_entries(group)
    assert [r["content"][:10] for r in rows] == [
        "The old li",
        "Smugglers ",
        "{{user}} l",
        "Mara used ",
        "The ferry ",
    ]
    light, cove, const, captain, ferry = rows
    assert (
        light["keys"] == ["lighthouse", "beacon"]
        and light["name"] == "Lighthouse"
        and light["insertion_order"] == 20
    )
    assert cove["selective"] and cove["secondary_keys"] == ["night", "boat"]
    assert const["constant"] and const["position"] == "before_char"
    assert not captain["enabled"] and ferry["case_sensitive"] and ferry["priority"] == 50
    assert s.lorebook.rowCount() == 5 and not dlg.empty.isVisible()
    assert "off" in s.lorebook.data(s.lorebook.index(3)).split("\n")[-1]

    # a keyless entry that is not constant could never fire: refused with one line, nothing stored
    errors = []
    s.error.connect(errors.append)
    dlg.new_button.click()
    fill(dlg, qtbot, content="No keys at all.")
    dlg.save_button.click()
    assert errors and "key" in errors[-1] and len(s.store.lore_entries(group)) == 5

    # edit: select the ferry entry, change its keys; delete the captain entry
    dlg.list.setCurrentIndex(s.lorebook.index(4))
    assert (
        dlg.save_button.text() == "Save entry"
        and dlg.keys.text() == "Ferry"
        and dlg.case.isChecked()
    )
    dlg.keys.clear()
    qtbot.keyClicks(dlg.keys, "Ferry, Harbour")
    dlg.save_button.click()
    assert s.store.lore_entry(ferry["id"])["keys"] == ["Ferry", "Harbour"]
    dlg.list.setCurrentIndex(s.lorebook.index(3))
    dlg.delete_button.click()
    assert [r["id"] for r in s.store.lore_entries(group)] == [
        light["id"],
        cove["id"],
        const["id"],
        ferry["id"],
    ]

    # the book's settings
    dlg.scan_depth.setValue(3)
    dlg.budget.setValue(300)
    dlg.settings_button.click()
    book = s.store.group_lorebook(group)
    assert (book["scan_depth"], book["token_budget"]) == (3, 300)
    shot = os.environ.get("MASCOT_LOREBOOK_SHOT")
    if shot:
        dlg.list.setCurrentIndex(s.lorebook.index(0))
        QApplication.processEvents()  # paint the selection before the screenshot
        assert dlg.grab().save(shot)
    dlg.close()

    # a round: the entries work in the real prompt (one companion, the bundled model)
    panel = window.group_panel
    panel.policy.setCurrentIndex(panel.policy.findData("round-robin"))
    panel.cap.setValue(1)
    edit = window.composer.edit
    edit.setFocus()
    qtbot.keyClicks(edit, "Is the lighthouse still dark? And the captain?")
    with qtbot.waitSignal(s.round_finished, timeout=ROUND_TIMEOUT):
        qtbot.keyClick(edit, Qt.Key.Key_Return)
    reply = [m for m in s.store.messages(s.cid) if m["role"] == "companion"][-1]
    context = reply["meta"].get("context", "")
    assert LIGHTHOUSE in context and "Captain Red" not in context and "Smugglers" not in context
    persona = s.chat.member(reply["speaker"])
    system = s.chat.speaker_request(persona, "").messages[0]["content"]
    assert system.startswith(
        f"{s.settings.user_name if hasattr(s.settings, 'user_name') else 'User'} likes short replies."
    ) or system.split("\n")[0].endswith("likes short replies.")

    # the book belongs to the group: a new conversation of the same group has it, another group not
    s.new_conversation(group)
    assert s.lorebook.rowCount() == 4
    s.new_conversation("workplace" if group != "workplace" else "support")
    assert s.lorebook.rowCount() == 0
