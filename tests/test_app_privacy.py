"""Settings → Privacy and the unlock dialog (real Qt offscreen, real SQLCipher files)."""

import hashlib
import zipfile

import pytest
from app_helpers import open_window

from app import theme
from app.main import open_history
from app.privacy import WRONG, UnlockDialog
from app.settings_dialog import SettingsDialog
from engine.cipher import WrongPassphrase, is_encrypted
from engine.data import PLAIN_EXPORT
from engine.storage import Store, forget_passphrases

PASS = "correct horse battery"


@pytest.fixture(scope="module", autouse=True)
def styled(qapp):
    theme.apply(qapp)


@pytest.fixture(autouse=True)
def forget_unlocked():
    forget_passphrases()
    yield
    forget_passphrases()


def file_digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_settings_encrypt_change_and_remove_the_passphrase(qtbot, tmp_path):
    window = open_window(qtbot)
    s = window.session
    s.store.add_message(s.cid, role="user", speaker="User", text="a private thought")
    path = s.store.path
    dlg = SettingsDialog(s, window)
    qtbot.addWidget(dlg)
    assert dlg.encrypt_button.isVisibleTo(dlg) and not dlg.change_button.isVisibleTo(dlg)
    assert "plain file" in dlg.privacy_note.text()

    enc = dlg.passphrase_dialog("encrypt")
    enc.new.setText("short")
    enc.again.setText("short")
    assert not enc.try_apply() and "at least 8 characters" in enc.error.text()
    enc.new.setText(PASS)
    enc.again.setText(PASS + "x")
    assert not enc.try_apply() and "differ" in enc.error.text()
    enc.again.setText(PASS)
    assert not enc.try_apply() and "cannot be recovered" in enc.error.text()
    assert not is_encrypted(path)
    enc.understood.setChecked(True)
    assert enc.try_apply()
    assert is_encrypted(path) and b"a private thought" not in path.read_bytes()
    assert dlg.change_button.isVisibleTo(dlg) and not dlg.encrypt_button.isVisibleTo(dlg)
    assert "encrypted on this computer" in dlg.privacy_note.text()
    # the open conversation goes on, on the encrypted file
    s.store.add_message(s.cid, role="user", speaker="User", text="after the switch")
    assert [m["text"] for m in s.store.messages(s.cid)][-2:] == [
        "a private thought",
        "after the switch",
    ]

    # an export of the encrypted history is plain only when the user says so
    assert dlg.export_to(str(tmp_path / "out")) is None
    assert dlg.status.text() == f"Export failed: {PLAIN_EXPORT}"
    zipped = dlg.export_to(str(tmp_path / "out"), plain=True)
    with zipfile.ZipFile(zipped) as z:
        assert any(
            "a private thought" in z.read(n).decode() for n in z.namelist() if n.endswith(".md")
        )

    one = tmp_path / "one.md"
    window.export_conversation_to(s.cid, str(one))
    assert not one.exists()
    window.export_conversation_to(s.cid, str(one), plain=True)
    assert "after the switch" in one.read_text(encoding="utf-8")

    change = dlg.passphrase_dialog("change")
    change.current.setText("not the passphrase")
    change.new.setText("a second passphrase")
    change.again.setText("a second passphrase")
    change.understood.setChecked(True)
    before = file_digest(path)
    assert not change.try_apply() and change.error.text() == (
        "The current passphrase is not right; nothing was changed."
    )
    assert file_digest(path) == before
    change.current.setText(PASS)
    assert change.try_apply()

    remove = dlg.passphrase_dialog("remove")
    remove.current.setText(PASS)  # the old one no longer works
    assert not remove.try_apply() and is_encrypted(path)
    remove.current.setText("a second passphrase")
    assert remove.try_apply() and not is_encrypted(path)
    assert b"a private thought" in path.read_bytes()
    assert dlg.encrypt_button.isVisibleTo(dlg)
    window.close()


def test_the_unlock_dialog_refuses_a_wrong_passphrase_and_opens_the_history(qtbot, mascot_home):
    store = Store()
    cid = store.create_conversation(
        title="Evening chat", group_name="support", policy="director", max_speakers=3, members=[]
    )
    store.add_message(cid, role="user", speaker="User", text="a private thought")
    store.encrypt(PASS)
    store.close()
    forget_passphrases()
    path = mascot_home / "mascot.db"
    before = file_digest(path)

    dlg = UnlockDialog(path)
    qtbot.addWidget(dlg)
    dlg.show()
    assert not dlg.try_unlock() and dlg.error.text() == "Type your passphrase first."
    dlg.passphrase.setText("not the passphrase")
    assert not dlg.try_unlock()
    assert dlg.error.isVisible() and dlg.error.text() == WRONG and "\n" not in WRONG
    assert dlg.isVisible() and dlg.store is None and file_digest(path) == before
    dlg.passphrase.setText(PASS)
    assert dlg.try_unlock() and dlg.result() == dlg.DialogCode.Accepted
    assert [m["text"] for m in dlg.store.messages(cid)] == ["a private thought"]
    dlg.store.close()


def test_the_app_takes_the_passphrase_from_the_environment(monkeypatch, mascot_home):
    store = Store()
    store.encrypt(PASS)
    store.close()
    forget_passphrases()
    monkeypatch.setenv("MASCOT_PASSPHRASE", "not the passphrase")
    with pytest.raises(WrongPassphrase):
        open_history(screenshot=True)
    monkeypatch.setenv("MASCOT_PASSPHRASE", PASS)
    opened = open_history(screenshot=True)
    assert opened.encrypted
    opened.close()
