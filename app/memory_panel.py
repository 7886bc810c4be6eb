"""What the companions know about you: the group's remembered facts, to add, edit, pin and forget."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QGridLayout, QInputDialog, QLabel, QPushButton, QVBoxLayout, QWidget

from .item_models import MemoryListModel
from .widgets import card_list, selected_row


class MemoryPanel(QWidget):
    def __init__(self, session: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.model: MemoryListModel = session.memory
        lay = QVBoxLayout(self)
        lay.setContentsMargins(16, 14, 16, 12)
        lay.setSpacing(6)
        title = QLabel("What they know about you")
        title.setObjectName("PanelTitle")
        hint = QLabel(
            "Facts this group's companions remember, kept only on this computer. Pinned "
            "facts are always in their notes; the others when the talk touches them."
        )
        hint.setObjectName("Hint")
        hint.setWordWrap(True)
        self.list = card_list(self.model, "MemoryList")
        self.list.doubleClicked.connect(lambda _i: self.edit())
        self.empty = QLabel(
            "Nothing yet. Tell them about yourself, pin a message "
            "(right-click → Remember this), or add a fact."
        )
        self.empty.setObjectName("Hint")
        self.empty.setWordWrap(True)
        buttons = QGridLayout()
        buttons.setSpacing(6)
        self.add_button = QPushButton("Add…")
        self.edit_button = QPushButton("Edit…")
        self.pin_button = QPushButton("Pin")
        self.forget_button = QPushButton("Forget this")
        self.forget_button.setObjectName("Danger")
        for i, (b, slot) in enumerate(
            (
                (self.add_button, self.add),
                (self.edit_button, self.edit),
                (self.pin_button, self.toggle_pin),
                (self.forget_button, self.forget),
            )
        ):
            b.clicked.connect(lambda _c=False, f=slot: f())
            buttons.addWidget(b, i // 2, i % 2)
        lay.addWidget(title)
        lay.addWidget(hint)
        lay.addWidget(self.empty)
        lay.addWidget(self.list, 1)
        lay.addLayout(buttons)
        self.model.modelReset.connect(self._update)
        self.list.selectionModel().selectionChanged.connect(self._update)
        self._update()

    def selected(self) -> dict[str, Any] | None:
        return selected_row(self.list)

    def _update(self, *_: object) -> None:
        self.empty.setVisible(self.model.rowCount() == 0)
        row = self.selected()
        for b in (self.edit_button, self.pin_button, self.forget_button):
            b.setEnabled(row is not None)
        self.pin_button.setText("Unpin" if row and row.get("pinned") else "Pin")

    def add(self) -> None:
        text, ok = QInputDialog.getMultiLineText(
            self, "Add a fact", "What should the companions remember about you?"
        )
        if ok and text.strip():
            self.session.add_fact(text)

    def edit(self) -> None:
        row = self.selected()
        if row is None:
            return
        text, ok = QInputDialog.getMultiLineText(self, "Edit a fact", "Remembered:", row["text"])
        if ok and text.strip() and text.strip() != row["text"]:
            self.session.edit_fact(row["id"], text)
            self._select(row["id"])

    def toggle_pin(self) -> None:
        row = self.selected()
        if row is not None:
            self.session.pin_fact(row["id"], not row.get("pinned"))
            self._select(row["id"])

    def _select(self, fid: int) -> None:
        i = self.model.row_of(fid)
        if i >= 0:
            self.list.setCurrentIndex(self.model.index(i))

    def forget(self) -> None:
        row = self.selected()
        if row is not None:
            self.session.forget_fact(row["id"])
