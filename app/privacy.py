"""The encrypted history in the window: the unlock dialog at start, and the passphrase dialog
of Settings → Privacy (encrypt, change the passphrase, remove the encryption)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from engine.cipher import NO_RECOVERY, WrongPassphrase, check_passphrase
from engine.errors import MascotError
from engine.storage import Store

from . import theme

WRONG = "That passphrase does not open your history. Check it (is Caps Lock on?) and try again."
ENCRYPTED_NOTE = (
    "Your conversations, what the companions remember about you, your lorebooks and the "
    "message embeddings are encrypted on this computer (SQLCipher, AES-256). Mascot asks for "
    "the passphrase each time it starts."
)
PLAIN_NOTE = (
    "Your history is a plain file: anyone who can open this computer's files can read it. "
    "Encrypt it with a passphrase that only you know."
)


def _secret(placeholder: str = "") -> QLineEdit:
    edit = QLineEdit()
    edit.setEchoMode(QLineEdit.EchoMode.Password)
    edit.setPlaceholderText(placeholder)
    edit.setMinimumWidth(280)
    return edit


def _label(text: str, name: str = "Hint") -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setWordWrap(True)
    return label


def _busy(fn: Callable[[], None]) -> None:
    """Run ``fn`` with the wait cursor (a passphrase takes a moment to check: PBKDF2)."""
    QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        fn()
    finally:
        QGuiApplication.restoreOverrideCursor()


class UnlockDialog(QDialog):
    """At start, when the history is encrypted: its passphrase, or Quit. ``store`` is the
    opened history once accepted."""

    def __init__(self, path: Path, parent: QWidget | None = None):
        super().__init__(parent)
        self.path = path
        self.store: Store | None = None
        self.setWindowTitle("Unlock your history")
        self.setMinimumWidth(460)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(20, 16, 20, 14)
        title = QLabel("Your history is encrypted")
        title.setStyleSheet("font-size: 13pt; font-weight: 700;")
        lay.addWidget(title)
        lay.addWidget(_label("Type your passphrase to open your conversations.", "Body"))
        self.passphrase = _secret("Passphrase")
        lay.addWidget(self.passphrase)
        self.error = _label("", "Error")
        self.error.setStyleSheet(f"color: {theme.DANGER};")
        self.error.setVisible(False)
        lay.addWidget(self.error)
        lay.addWidget(_label(NO_RECOVERY))
        buttons = QDialogButtonBox()
        self.unlock_button = buttons.addButton("Unlock", QDialogButtonBox.ButtonRole.AcceptRole)
        self.unlock_button.setObjectName("Primary")
        self.unlock_button.setDefault(True)
        buttons.addButton("Quit", QDialogButtonBox.ButtonRole.RejectRole)
        buttons.accepted.connect(self.try_unlock)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    def try_unlock(self) -> bool:
        """Open the history with the typed passphrase; a wrong one is one line here, and the
        dialog stays open."""
        text = self.passphrase.text()
        if not text:
            return self._fail("Type your passphrase first.")
        try:
            _busy(lambda: setattr(self, "store", Store(self.path, passphrase=text)))
        except WrongPassphrase:
            return self._fail(WRONG)
        except MascotError as e:
            return self._fail(str(e))
        self.accept()
        return True

    def _fail(self, message: str) -> bool:
        self.error.setText(message)
        self.error.setVisible(True)
        self.passphrase.selectAll()
        self.passphrase.setFocus()
        return False


def unlock(path: Path) -> Store | None:
    """Ask for the passphrase of the encrypted history at ``path``; None when the user quits."""
    dialog = UnlockDialog(path)
    return dialog.store if dialog.exec() == QDialog.DialogCode.Accepted else None


class PassphraseDialog(QDialog):
    """Encrypt the history ("encrypt"), change its passphrase ("change") or remove the
    encryption ("remove"). ``apply(old, new)`` does it (None: no passphrase); an error it raises
    is shown here as one line and the dialog stays open."""

    def __init__(
        self,
        mode: str,
        apply: Callable[[str | None, str | None], object],
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.mode = mode
        self.apply = apply
        titles = {
            "encrypt": ("Encrypt my history", "Encrypt my history"),
            "change": ("Change the passphrase", "Change passphrase"),
            "remove": ("Remove the encryption", "Store as a plain file"),
        }
        title, ok_text = titles[mode]
        self.setWindowTitle(title)
        self.setMinimumWidth(480)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(20, 16, 20, 14)
        form = QFormLayout()
        self.current = _secret()
        self.new = _secret("At least 8 characters; a few words work well")
        self.again = _secret()
        if mode in ("change", "remove"):
            form.addRow("Current passphrase", self.current)
        if mode in ("encrypt", "change"):
            form.addRow("New passphrase", self.new)
            form.addRow("Type it again", self.again)
        if mode == "remove":
            lay.addWidget(
                _label(
                    "Your history will be stored as a plain file again, readable by anyone "
                    "who can open this computer's files.",
                    "Body",
                )
            )
        lay.addLayout(form)
        self.understood = QCheckBox("I understand: if I forget the passphrase, my history is lost.")
        if mode in ("encrypt", "change"):
            lay.addWidget(_label(NO_RECOVERY, "Body"))
            lay.addWidget(self.understood)
        self.error = _label("", "Error")
        self.error.setStyleSheet(f"color: {theme.DANGER};")
        self.error.setVisible(False)
        lay.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = buttons.addButton(ok_text, QDialogButtonBox.ButtonRole.AcceptRole)
        self.ok_button.setObjectName("Danger" if mode == "remove" else "Primary")
        buttons.accepted.connect(self.try_apply)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    def try_apply(self) -> bool:
        old = self.current.text() if self.mode in ("change", "remove") else None
        new = self.new.text() if self.mode in ("encrypt", "change") else None
        try:
            if old is not None and not old:
                return self._fail("Type the current passphrase first.")
            if new is not None:
                check_passphrase(new)
                if self.again.text() != new:
                    return self._fail("The two new passphrases differ; type them again.")
                if not self.understood.isChecked():
                    return self._fail(
                        "Tick the box to confirm that a forgotten passphrase cannot be recovered."
                    )
            _busy(lambda: self.apply(old, new))
        except WrongPassphrase:
            return self._fail("The current passphrase is not right; nothing was changed.")
        except MascotError as e:
            return self._fail(str(e))
        self.accept()
        return True

    def _fail(self, message: str) -> bool:
        self.error.setText(message)
        self.error.setVisible(True)
        return False
