"""The group's lorebook: keyword-triggered notes every companion of this group reads before its turn
(the same rules as a Character Card's ``character_book``, engine.lorebook). Entries on the left;
the selected one's fields on the right: keys, secondary keys (selective), text, constant, case
sensitivity, insertion order, priority, position and enabled; the book's scan depth and token
budget below."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine.lorebook import DEFAULT_BUDGET, DEFAULT_SCAN_DEPTH, MAX_BUDGET, MAX_SCAN_DEPTH

from .widgets import card_list, selected_row

POSITIONS = (("after_char", "After the character"), ("before_char", "Before the character"))


def split_keys(text: str) -> list[str]:
    return [k.strip() for k in text.split(",") if k.strip()]


class LorebookDialog(QDialog):
    def __init__(self, session: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.model = session.lorebook
        self.setWindowTitle("Group lorebook")
        self.resize(860, 560)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(16, 14, 16, 12)
        self.title = QLabel()
        self.title.setObjectName("PanelTitle")
        hint = QLabel(
            "Notes every companion of this group reads before its turn when one of an "
            "entry's keys was said in the last few messages (constant entries: always). "
            "Kept only on this computer."
        )
        hint.setObjectName("Hint")
        hint.setWordWrap(True)
        lay.addWidget(self.title)
        lay.addWidget(hint)

        body = QHBoxLayout()
        left = QVBoxLayout()
        self.list = card_list(self.model, "LoreList")
        self.empty = QLabel("No entries yet. Fill in the fields and press Add entry.")
        self.empty.setObjectName("Hint")
        self.empty.setWordWrap(True)
        left.addWidget(self.empty)
        left.addWidget(self.list, 1)
        self.new_button = QPushButton("New entry")
        self.delete_button = QPushButton("Delete entry")
        self.delete_button.setObjectName("Danger")
        row = QHBoxLayout()
        row.addWidget(self.new_button)
        row.addWidget(self.delete_button)
        left.addLayout(row)
        body.addLayout(left, 1)

        form = QFormLayout()
        self.name = QLineEdit()
        self.name.setPlaceholderText("optional, for you")
        self.keys = QLineEdit()
        self.keys.setPlaceholderText("lighthouse, beacon")
        self.secondary = QLineEdit()
        self.secondary.setPlaceholderText("night, storm")
        self.selective = QCheckBox("Selective: also needs one of the secondary keys")
        self.content = QPlainTextEdit()
        self.content.setPlaceholderText(
            "What the companions should know, e.g. The lighthouse has "
            "been dark since 1998. {{user}} and {{char}} work."
        )
        self.constant = QCheckBox("Constant: always in (no keys needed)")
        self.case = QCheckBox("Case-sensitive keys")
        self.enabled = QCheckBox("Enabled")
        self.order = QSpinBox()
        self.order.setRange(-10000, 10000)
        self.order.setToolTip("Lower comes first in the note")
        self.priority = QSpinBox()
        self.priority.setRange(-10000, 10000)
        self.priority.setToolTip("When the budget is short, higher priority is kept first")
        self.position = QComboBox()
        for key, label in POSITIONS:
            self.position.addItem(label, key)
        form.addRow("Name", self.name)
        form.addRow("Keys", self.keys)
        form.addRow("Secondary keys", self.secondary)
        form.addRow("", self.selective)
        form.addRow("Text", self.content)
        form.addRow("", self.constant)
        form.addRow("", self.case)
        form.addRow("", self.enabled)
        form.addRow("Insertion order", self.order)
        form.addRow("Priority", self.priority)
        form.addRow("Position", self.position)
        self.save_button = QPushButton("Add entry")
        self.save_button.setDefault(True)
        form.addRow("", self.save_button)
        right = QWidget()
        right.setLayout(form)
        body.addWidget(right, 1)
        lay.addLayout(body, 1)

        book = QHBoxLayout()
        self.scan_depth = QSpinBox()
        self.scan_depth.setRange(0, MAX_SCAN_DEPTH)
        self.budget = QSpinBox()
        self.budget.setRange(0, MAX_BUDGET)
        self.budget.setSingleStep(32)
        self.settings_button = QPushButton("Save settings")
        book.addWidget(QLabel("Scan the last"))
        book.addWidget(self.scan_depth)
        book.addWidget(QLabel("messages · at most"))
        book.addWidget(self.budget)
        book.addWidget(QLabel("tokens of entries"))
        book.addWidget(self.settings_button)
        book.addStretch(1)
        self.close_button = QPushButton("Close")
        book.addWidget(self.close_button)
        lay.addLayout(book)

        self.new_button.clicked.connect(lambda _c=False: self.new_entry())
        self.delete_button.clicked.connect(lambda _c=False: self.delete())
        self.save_button.clicked.connect(lambda _c=False: self.save())
        self.settings_button.clicked.connect(lambda _c=False: self.save_settings())
        self.close_button.clicked.connect(self.close)
        self.list.selectionModel().selectionChanged.connect(self._load_selected)
        self.model.modelReset.connect(self._update)
        self.selective.toggled.connect(self._update_fields)
        self.constant.toggled.connect(self._update_fields)
        session.opened.connect(lambda _cid: self.refresh())
        self.refresh()

    # -- state -----------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Show the open group's book (call when the dialog opens)."""
        chat = self.session.chat
        self.title.setText(
            f"Lorebook of “{self.session.conversation.get('title', '')}”" if chat else "Lorebook"
        )
        book = (self.session.store.group_lorebook(chat.group.name) if chat else None) or {}
        self.scan_depth.setValue(int(book.get("scan_depth", DEFAULT_SCAN_DEPTH)))
        self.budget.setValue(int(book.get("token_budget", DEFAULT_BUDGET)))
        self.new_entry()
        self._update()

    def selected(self) -> dict[str, Any] | None:
        return selected_row(self.list)

    def _update(self, *_: object) -> None:
        self.empty.setVisible(self.model.rowCount() == 0)
        row = self.selected()
        self.delete_button.setEnabled(row is not None)
        self.save_button.setText("Save entry" if row is not None else "Add entry")
        enabled = self.session.chat is not None
        for w in (self.save_button, self.settings_button, self.new_button):
            w.setEnabled(enabled)

    def _update_fields(self, *_: object) -> None:
        self.secondary.setEnabled(self.selective.isChecked())
        self.keys.setEnabled(not self.constant.isChecked())

    def entry(self) -> dict[str, Any]:
        """The form's entry, as ``engine.lorebook.check_entry`` reads it."""
        return {
            "name": self.name.text().strip(),
            "keys": split_keys(self.keys.text()),
            "secondary_keys": split_keys(self.secondary.text()),
            "selective": self.selective.isChecked(),
            "content": self.content.toPlainText().strip(),
            "constant": self.constant.isChecked(),
            "case_sensitive": self.case.isChecked(),
            "enabled": self.enabled.isChecked(),
            "insertion_order": self.order.value(),
            "priority": self.priority.value(),
            "position": self.position.currentData(),
        }

    def _fill(self, e: dict[str, Any]) -> None:
        self.name.setText(e.get("name", ""))
        self.keys.setText(", ".join(e.get("keys", [])))
        self.secondary.setText(", ".join(e.get("secondary_keys", [])))
        self.selective.setChecked(bool(e.get("selective")))
        self.content.setPlainText(e.get("content", ""))
        self.constant.setChecked(bool(e.get("constant")))
        self.case.setChecked(bool(e.get("case_sensitive")))
        self.enabled.setChecked(bool(e.get("enabled", True)))
        self.order.setValue(int(e.get("insertion_order", 100)))
        self.priority.setValue(int(e.get("priority", 10)))
        self.position.setCurrentIndex(
            max(0, self.position.findData(e.get("position", "after_char")))
        )
        self._update_fields()

    def _load_selected(self, *_: object) -> None:
        row = self.selected()
        if row is not None:
            self._fill(row)
        self._update()

    def _select(self, eid: int | None) -> None:
        i = self.model.row_of(eid)
        if i >= 0:
            self.list.setCurrentIndex(self.model.index(i))
        else:
            self.list.clearSelection()
        self._update()

    # -- actions ---------------------------------------------------------------------------------
    def new_entry(self) -> None:
        self.list.clearSelection()
        self._fill({})
        self._update()

    def save(self) -> bool:
        row = self.selected()
        if row is None:
            eid = self.session.add_lore_entry(self.entry())
            if eid is None:
                return False
            self._select(eid)
            return True
        if not self.session.edit_lore_entry(row["id"], self.entry()):
            return False
        self._select(row["id"])
        return True

    def delete(self) -> bool:
        row = self.selected()
        if row is None or not self.session.delete_lore_entry(row["id"]):
            return False
        self.new_entry()
        return True

    def save_settings(self) -> bool:
        return self.session.set_lorebook_settings(self.scan_depth.value(), self.budget.value())
