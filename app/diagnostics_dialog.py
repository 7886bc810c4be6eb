"""Help → Diagnostics: the same report as `mascot doctor`, with a Copy button for bug reports."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
)

from engine.doctor import text as doctor_text

from .workers import CallWorker, Runner


class DiagnosticsDialog(QDialog):
    def __init__(self, parent: Any = None):
        super().__init__(parent)
        self.setWindowTitle("Mascot diagnostics")
        self.resize(760, 460)
        self.runner = Runner(self)
        layout = QVBoxLayout(self)
        layout.addWidget(
            QLabel(
                "What to include in a bug report. Nothing here leaves this computer "
                "unless you copy it somewhere."
            )
        )
        self.view = QPlainTextEdit(readOnly=True)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.setPlainText("Collecting… (re-hashing the registered models takes a few seconds)")
        layout.addWidget(self.view)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setEnabled(False)
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.copy_button.clicked.connect(self.copy)
        layout.addWidget(buttons)
        self.job = CallWorker(lambda progress, cancel: doctor_text(), name="doctor")
        self.job.done.connect(self._show)
        self.runner.start(self.job, on_error=lambda line: self._show(f"The report failed: {line}"))

    def _show(self, report: str) -> None:
        self.view.setPlainText(report)
        self.copy_button.setEnabled(True)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.view.toPlainText())

    def done(self, result: int) -> None:  # noqa: D102 - wait for the report thread before closing
        self.runner.stop_all()
        super().done(result)
