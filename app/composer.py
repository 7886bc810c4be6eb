"""The message box: Enter sends, Shift+Enter adds a line; the Send button turns into Stop while
a round runs."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from .widgets import TypingLine, card_paths, icon_button


class MessageEdit(QPlainTextEdit):
    submitted = Signal()

    MAX_LINES = 6

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("ComposerEdit")
        self.setTabChangesFocus(True)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.document().setDocumentMargin(2)
        self.textChanged.connect(self._fit)
        self._fit()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            mods = event.modifiers()
            if mods & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
                return
            if not mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier):
                self.submitted.emit()
                return
        super().keyPressEvent(event)

    def _fit(self) -> None:
        wanted = max(1, int(self.document().size().height()))
        lines = min(self.MAX_LINES, wanted)
        self.setVerticalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAsNeeded
            if wanted > self.MAX_LINES
            else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        )
        self.setFixedHeight(self.fontMetrics().lineSpacing() * lines + 22)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit()

    def dragEnterEvent(self, event: Any) -> None:  # noqa: N802
        # Card files dropped here go to the window (which imports them), not into the text.
        if card_paths(event.mimeData()):
            event.ignore()
            return
        super().dragEnterEvent(event)


class Composer(QWidget):
    send_requested = Signal(str)
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(24, 4, 24, 12)
        outer.setSpacing(6)
        self.typing = TypingLine()
        outer.addWidget(self.typing)

        self.frame = QFrame()
        self.frame.setObjectName("Composer")
        row = QHBoxLayout(self.frame)
        row.setContentsMargins(16, 5, 6, 5)
        row.setSpacing(8)
        self.edit = MessageEdit()
        self.edit.submitted.connect(self.submit)
        self.edit.installEventFilter(self)
        row.addWidget(self.edit, 1)
        self.send_button = icon_button(
            "send", "Send (Enter)", color="#ffffff", size=17, object_name="SendButton"
        )
        self.send_button.setFixedSize(QSize(38, 38))
        self.send_button.clicked.connect(self.submit)
        self.stop_button = icon_button(
            "stop", "Stop the round", color="#ffffff", size=16, object_name="StopButton"
        )
        self.stop_button.setFixedSize(QSize(38, 38))
        self.stop_button.clicked.connect(self.stop_requested)
        self.stop_button.hide()
        row.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        row.addWidget(self.stop_button, 0, Qt.AlignmentFlag.AlignBottom)
        outer.addWidget(self.frame)

        self.hint = QLabel(
            "Enter to send · Shift+Enter for a new line · everything stays on this computer"
        )
        self.hint.setObjectName("Hint")
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        outer.addWidget(self.hint)
        self.busy = False
        self.edit.textChanged.connect(self._update_send)
        self._update_send()

    def set_placeholder(self, text: str) -> None:
        self.edit.setPlaceholderText(text)

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.send_button.setVisible(not busy)
        self.stop_button.setVisible(busy)
        self._update_send()

    def _update_send(self) -> None:
        self.send_button.setEnabled(bool(self.edit.toPlainText().strip()) and not self.busy)

    def submit(self) -> None:
        text = self.edit.toPlainText()
        if self.busy or not text.strip():
            return
        self.send_requested.emit(text)

    def clear(self) -> None:
        self.edit.clear()

    def eventFilter(self, obj: Any, event: Any) -> bool:  # noqa: N802
        if obj is self.edit and event.type() in (event.Type.FocusIn, event.Type.FocusOut):
            self.frame.setProperty("focused", event.type() == event.Type.FocusIn)
            self.frame.style().unpolish(self.frame)
            self.frame.style().polish(self.frame)
        return super().eventFilter(obj, event)
