"""Settings: performance, the companions' model, replies, you, and your data (where it is,
export it, delete it)."""

from __future__ import annotations

import json
import os
from dataclasses import replace

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine.data import export_all
from engine.errors import MascotError
from engine.models.voices import PLAIN_LABEL, VOICES_LABEL
from engine.paths import assets_dir, user_dir

from . import widgets
from .config import CONTEXT_SIZES, HISTORY_SIZES, AppSettings
from .privacy import ENCRYPTED_NOTE, PLAIN_NOTE, PassphraseDialog
from .session import ChatSession


def _form(parent: QWidget) -> QFormLayout:
    form = QFormLayout(parent)
    form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    form.setHorizontalSpacing(12)
    return form


def regions() -> list[tuple[str, str]]:
    """(code, name) of the crisis-resource regions in the bundled resources file."""
    try:
        raw = json.loads((assets_dir() / "safety" / "resources.json").read_text(encoding="utf-8"))
        return [(code, r.get("name", code)) for code, r in raw.get("regions", {}).items()]
    except (OSError, ValueError, AttributeError):
        return []


class SettingsDialog(QDialog):
    exported = Signal(str)  # path of the zip
    deleted = Signal()

    def __init__(self, session: ChatSession, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        s = session.settings
        self.setWindowTitle("Settings")
        self.setMinimumWidth(560)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(18, 12, 18, 14)

        perf = QGroupBox("Performance")
        pf = _form(perf)
        self.threads = QSpinBox()
        self.threads.setRange(0, max(64, os.cpu_count() or 1))
        self.threads.setSpecialValueText(f"Automatic ({min(8, os.cpu_count() or 2)})")
        self.threads.setValue(s.threads)
        self.context = QComboBox()
        for n in CONTEXT_SIZES:
            self.context.addItem(f"{n:,} tokens", n)
        self.context.setCurrentIndex(self.context.findData(s.context_size))
        self.history = QComboBox()
        for n in HISTORY_SIZES:
            self.history.addItem(f"Last {n:,} tokens" if n else "All that fits the context", n)
        self.history.setCurrentIndex(max(0, self.history.findData(s.history_tokens)))
        self.history.setToolTip(
            "How much of the recent conversation each companion reads before it "
            "replies. Less is faster late in long conversations; 2,048 tokens is "
            "about the last dozen rounds."
        )
        pf.addRow("CPU threads", self.threads)
        pf.addRow("Context size", self.context)
        pf.addRow("", self._hint("Changing these reloads the model before the next message."))
        pf.addRow("Companions remember", self.history)
        self.memory = QCheckBox("Use memory: lorebooks, facts about you, earlier messages")
        self.memory.setChecked(s.memory)
        self.memory.setToolTip(
            "Companions read a short note before their turn with what their "
            "lorebooks, the remembered facts (View → Memory) and your earlier "
            "messages say about the conversation. Off: only the recent conversation."
        )
        pf.addRow("", self.memory)

        companions = QGroupBox("Companions")
        cf = _form(companions)
        self.companion_model = QComboBox()
        self.companion_model.addItem(VOICES_LABEL, "voices")
        self.companion_model.addItem(PLAIN_LABEL, "plain")
        # the long labels must not squeeze the row's name out of the form
        self.companion_model.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.companion_model.setMinimumContentsLength(24)
        self.companion_model.setToolTip(
            "The model every companion without one of its own runs on, the ones you import "
            "or write included. The voices model is the bundled SmolLM2-135M with Mascot's "
            "voices adapter merged in (built once, on the first run): companions sound more "
            "like their cards. The plain model is SmolLM2-135M as it ships."
        )
        self.companion_model.setCurrentIndex(
            max(0, self.companion_model.findData(s.companion_model))
        )
        cf.addRow("Companions run on", self.companion_model)
        self.voices_note = self._hint(session.voices_note())
        self.voices_note.setVisible(bool(self.voices_note.text()))
        cf.addRow("", self.voices_note)
        self.runs_on = self._hint(
            "\n".join(f"{who}: {what}" for who, what in session.model_summary())
        )
        cf.addRow("Now", self.runs_on)

        replies = QGroupBox("Replies")
        rf = _form(replies)
        self.override = QCheckBox("Use these instead of each companion's own settings")
        self.override.setChecked(s.override_sampling)
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.05)
        self.temperature.setValue(s.temperature)
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(8, 1024)
        self.max_tokens.setSuffix(" tokens")
        self.max_tokens.setValue(s.max_tokens)
        self.override.toggled.connect(self._toggle)
        rf.addRow(self.override)
        rf.addRow("Temperature", self.temperature)
        rf.addRow("Longest reply", self.max_tokens)
        self._toggle(s.override_sampling)

        you = QGroupBox("You")
        yf = _form(you)
        self.user_name = QLineEdit(s.user_name)
        self.user_name.setMaxLength(40)
        self.region = QComboBox()
        self.region.addItem("Automatic", "")
        for code, name in regions():
            self.region.addItem(f"{name} ({code})", code)
        self.region.setCurrentIndex(max(0, self.region.findData(s.region)))
        yf.addRow("Your name", self.user_name)
        yf.addRow("Crisis resources for", self.region)

        privacy = QGroupBox("Privacy")
        pv = QVBoxLayout(privacy)
        self.privacy_note = self._hint("")
        pv.addWidget(self.privacy_note)
        row = QHBoxLayout()
        self.encrypt_button = QPushButton("Encrypt my history…")
        self.encrypt_button.setObjectName("Primary")
        self.encrypt_button.clicked.connect(lambda: self.passphrase_dialog("encrypt"))
        self.change_button = QPushButton("Change passphrase…")
        self.change_button.clicked.connect(lambda: self.passphrase_dialog("change"))
        self.remove_button = QPushButton("Remove encryption…")
        self.remove_button.setObjectName("Danger")
        self.remove_button.clicked.connect(lambda: self.passphrase_dialog("remove"))
        for b in (self.encrypt_button, self.change_button, self.remove_button):
            row.addWidget(b)
        row.addStretch(1)
        pv.addLayout(row)
        self._show_privacy()

        box = QGroupBox("Your data")
        df = QVBoxLayout(box)
        where = QHBoxLayout()
        self.folder = QLabel(str(user_dir()))
        self.folder.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.folder.setWordWrap(True)
        open_button = QPushButton("Open folder")
        open_button.clicked.connect(
            lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(user_dir())))
        )
        where.addWidget(self.folder, 1)
        where.addWidget(open_button)
        df.addWidget(
            self._hint("Everything Mascot stores (conversations, personas, models you add) is in:")
        )
        df.addLayout(where)
        actions = QHBoxLayout()
        export_button = QPushButton("Export all data…")
        export_button.clicked.connect(self.export_dialog)
        self.delete_button = QPushButton("Delete all data…")
        self.delete_button.setObjectName("Danger")
        self.delete_button.clicked.connect(self.confirm_delete)
        self.delete_models = QCheckBox("also downloaded models")
        self.delete_models.setChecked(True)
        actions.addWidget(export_button)
        actions.addStretch(1)
        actions.addWidget(self.delete_models)
        actions.addWidget(self.delete_button)
        df.addLayout(actions)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setObjectName("Subtle")
        df.addWidget(self.status)

        for w in (perf, companions, replies, you, privacy, box):
            lay.addWidget(w)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Save).setObjectName("Primary")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    @staticmethod
    def _hint(text: str) -> QLabel:
        label = QLabel(text)
        label.setObjectName("Hint")
        label.setWordWrap(True)
        return label

    def _toggle(self, on: bool) -> None:
        self.temperature.setEnabled(on)
        self.max_tokens.setEnabled(on)

    def values(self) -> AppSettings:
        return replace(
            self.session.settings,
            threads=self.threads.value(),
            context_size=self.context.currentData(),
            history_tokens=self.history.currentData(),
            override_sampling=self.override.isChecked(),
            memory=self.memory.isChecked(),
            temperature=round(self.temperature.value(), 2),
            max_tokens=self.max_tokens.value(),
            user_name=self.user_name.text().strip() or "User",
            region=self.region.currentData(),
            companion_model=self.companion_model.currentData(),
        )

    def accept(self) -> None:
        self.session.apply_settings(self.values())
        super().accept()

    # -- privacy -----------------------------------------------------------------------------------
    def _show_privacy(self) -> None:
        on = self.session.store.encrypted
        self.privacy_note.setText(ENCRYPTED_NOTE if on else PLAIN_NOTE)
        self.encrypt_button.setVisible(not on)
        self.change_button.setVisible(on)
        self.remove_button.setVisible(on)

    def passphrase_dialog(self, mode: str) -> PassphraseDialog:
        """Open the passphrase dialog for ``mode`` ("encrypt", "change", "remove"); returns it
        (tests drive it)."""
        dialog = PassphraseDialog(mode, self.session.set_passphrase, self)
        dialog.finished.connect(lambda _result: self._show_privacy())
        dialog.open()
        return dialog

    # -- data --------------------------------------------------------------------------------------
    def export_dialog(self) -> None:
        plain = self.session.store.encrypted
        if plain and not widgets.ask(
            self,
            "Export as plain files",
            "Your history is encrypted, but the export is a plain zip that anyone who has it "
            "can read. Export it anyway?",
            "Export as plain files",
        ):
            return
        folder = QFileDialog.getExistingDirectory(self, "Export all data to folder")
        if folder:
            self.export_to(folder, plain=plain)

    def export_to(self, folder: str, plain: bool = False) -> str | None:
        """Export everything to a zip in ``folder``; from an encrypted history only when the
        user said a plain export is what they want (``plain``)."""
        try:
            path = export_all(self.session.store, folder, plain=plain)
        except (OSError, MascotError) as e:
            message = f"Export failed: {e}"
            self.status.setText(message)
            self.session.error.emit(message)
            return None
        self.status.setText(f"Exported to {path}")
        self.session.info.emit(f"Exported all data to {path}.")
        self.exported.emit(str(path))
        return str(path)

    def confirm_delete(self) -> None:
        extra = " and the models you downloaded" if self.delete_models.isChecked() else ""
        if widgets.ask(
            self,
            "Delete all data",
            "Delete every conversation, remembered fact, imported persona and "
            f"log{extra} from this computer? This cannot be undone.",
            "Delete everything",
        ):
            self.delete_all()

    def delete_all(self) -> None:
        self.session.delete_all_data(delete_models=self.delete_models.isChecked())
        self.status.setText("All data was deleted.")
        self.deleted.emit()
