"""The conversation as chat bubbles, bound to a ``MessageListModel``.

Each model row becomes a :class:`MessageRow` (avatar, name in the companion's colour, time,
bubble). Rows follow the model's signals, so streamed tokens, regenerated alternatives and edits
show up as the session updates the model. Hovering a message shows its actions (copy,
regenerate, edit, delete); the same actions are in its context menu. Alternatives of a
regenerated reply flip with ‹ 1/2 ›.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QContextMenuEvent, QGuiApplication
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from . import avatars, theme
from .item_models import ROW, MessageListModel, when, written_by
from .widgets import WrapLabel, icon_button

CARET = " ▍"
AVATAR = 34


def bubble_style(role: str) -> str:
    if role == "user":
        return (
            f"#Bubble {{ background: {theme.ACCENT}; border-radius: 16px; border-top-right-radius: 5px; }}"
            "#Bubble QLabel { color: white; background: transparent; }"
        )
    if role == "safety":
        return (
            f"#Bubble {{ background: {theme.WARN_SOFT}; border: 1px solid {theme.WARN_BORDER};"
            " border-radius: 16px; border-top-left-radius: 5px; } #Bubble QLabel { background: transparent; }"
        )
    return (
        f"#Bubble {{ background: {theme.BUBBLE}; border-radius: 16px; border-top-left-radius: 5px; }}"
        "#Bubble QLabel { background: transparent; }"
    )


class MessageRow(QWidget):
    """One message: avatar, header (name, time, alternatives, actions) and the bubble."""

    def __init__(self, row: dict[str, Any], view: "ChatView"):
        super().__init__()
        self.view = view
        self.row = dict(row)
        self.editor: QPlainTextEdit | None = None
        self.setAttribute(Qt.WidgetAttribute.WA_Hover)
        role = row.get("role")
        if role == "notice":
            self._build_notice()
        else:
            self._build_message(role == "user")
        self.refresh(row)

    # -- building -------------------------------------------------------------------------------
    def _build_notice(self) -> None:
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.label = WrapLabel()
        self.label.setObjectName("Subtle")
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.label.setStyleSheet(f"color: {theme.MUTED}; font-style: italic;")
        lay.addStretch(1)
        lay.addWidget(self.label)
        lay.addStretch(1)
        self.actions_box = None

    def _build_message(self, mine: bool) -> None:
        outer = QHBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(10)
        self.avatar = QLabel()
        self.avatar.setFixedSize(AVATAR, AVATAR)
        col = QVBoxLayout()
        col.setSpacing(4)

        header = QHBoxLayout()
        header.setSpacing(6)
        self.name = QLabel()
        self.name.setStyleSheet("font-weight: 600;")
        self.time = QLabel()
        self.time.setObjectName("Time")
        self.tags = QLabel()
        self.tags.setObjectName("Time")
        self.prev_button = icon_button(
            "chevron-left", "Previous alternative", size=14, object_name="Flip"
        )
        self.flip_label = QLabel()
        self.flip_label.setObjectName("Time")
        self.next_button = icon_button(
            "chevron-right", "Next alternative", size=14, object_name="Flip"
        )
        self.prev_button.clicked.connect(lambda: self._flip(-1))
        self.next_button.clicked.connect(lambda: self._flip(+1))

        self.actions_box = QWidget()
        acts = QHBoxLayout(self.actions_box)
        acts.setContentsMargins(0, 0, 0, 0)
        acts.setSpacing(0)
        self.copy_button = icon_button("copy", "Copy text", size=15, object_name="Mini")
        self.regenerate_button = icon_button(
            "refresh", "Regenerate this reply (keeps the old one)", size=15, object_name="Mini"
        )
        self.edit_button = icon_button("edit", "Edit", size=15, object_name="Mini")
        self.delete_button = icon_button("trash", "Delete", size=15, object_name="Mini")
        self.copy_button.clicked.connect(self.copy_text)
        self.regenerate_button.clicked.connect(self.request_regenerate)
        self.edit_button.clicked.connect(self.start_edit)
        self.delete_button.clicked.connect(self.request_delete)
        for b in (self.copy_button, self.regenerate_button, self.edit_button, self.delete_button):
            acts.addWidget(b)
        self.regenerate_button.setVisible(not mine)
        # Keep the space of the hidden actions so hovering never moves the text.
        sp = self.actions_box.sizePolicy()
        sp.setRetainSizeWhenHidden(True)
        self.actions_box.setSizePolicy(sp)
        self.actions_box.hide()

        flip = [self.prev_button, self.flip_label, self.next_button]
        if mine:
            header.addStretch(1)
            header.addWidget(self.actions_box)
            header.addWidget(self.tags)
            header.addWidget(self.time)
            header.addWidget(self.name)
        else:
            header.addWidget(self.name)
            header.addWidget(self.time)
            header.addWidget(self.tags)
            for w in flip:
                header.addWidget(w)
            header.addWidget(self.actions_box)
            header.addStretch(1)

        self.bubble = QFrame()
        self.bubble.setObjectName("Bubble")
        self.bubble.setStyleSheet(bubble_style(self.row.get("role", "companion")))
        self.bubble.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Minimum)
        self.bubble_layout = QVBoxLayout(self.bubble)
        self.bubble_layout.setContentsMargins(14, 9, 14, 10)
        self.label = WrapLabel()
        self.bubble_layout.addWidget(self.label)

        col.addLayout(header)
        align = Qt.AlignmentFlag.AlignRight if mine else Qt.AlignmentFlag.AlignLeft
        col.addWidget(self.bubble, 0, align)
        if mine:
            self.avatar.hide()
            outer.addStretch(1)
            outer.addLayout(col)
        else:
            outer.addWidget(self.avatar, 0, Qt.AlignmentFlag.AlignTop)
            outer.addLayout(col)
            outer.addStretch(1)

    # -- state -------------------------------------------------------------------------------------
    @property
    def mid(self) -> int | None:
        return self.row.get("id")

    @property
    def text(self) -> str:
        return self.row.get("text", "")

    def refresh(self, row: dict[str, Any]) -> None:
        self.row = dict(row)
        role = row.get("role")
        if role == "notice":
            self.label.setText(row.get("text", ""))
            return
        streaming = bool(row.get("streaming"))
        self.label.setText(row.get("text", "") + (CARET if streaming else ""))
        if role == "user":
            self.name.setText(row.get("speaker") or "You")
            self.name.setStyleSheet(f"font-weight: 600; color: {theme.TEXT};")
        else:
            name = row.get("speaker", "")
            self.avatar.setPixmap(
                avatars.pixmap(row.get("avatar", ""), name, row.get("color", ""), AVATAR)
            )
            self.name.setText(name)
            self.name.setStyleSheet(
                f"font-weight: 600; color: {theme.name_color(row.get('color', ''))};"
            )
            tip = [f"Director: {row['directive']}"] if row.get("directive") else []
            if written_by(row):
                tip.append(written_by(row))
            self.bubble.setToolTip("\n".join(tip))
        self.time.setText(when(row.get("created")))
        tags = []
        if role == "safety":
            tags.append("safety message")
        if row.get("edited"):
            tags.append("edited")
        if row.get("status") == "cancelled":
            tags.append("stopped")
        self.tags.setText(" · ".join(tags))
        self.tags.setVisible(bool(tags))
        n, k = int(row.get("variants") or 1), int(row.get("variant") or 0)
        for w in (self.prev_button, self.flip_label, self.next_button):
            w.setVisible(n > 1 and role == "companion")
        self.flip_label.setText(f"{k + 1}/{n}")
        self._update_actions()

    def _update_actions(self) -> None:
        if self.actions_box is None:
            return
        usable = self.mid is not None and not self.row.get("streaming") and not self.view.busy
        n, k = int(self.row.get("variants") or 1), int(self.row.get("variant") or 0)
        self.edit_button.setEnabled(usable)
        self.delete_button.setEnabled(usable)
        self.regenerate_button.setEnabled(usable and self.row.get("role") == "companion")
        self.prev_button.setEnabled(usable and k > 0)
        self.next_button.setEnabled(usable and k < n - 1)

    def set_max_width(self, width: int) -> None:
        self.label.set_max_width(width)
        if self.editor is not None:
            self.editor.setFixedWidth(min(max(width, 320), 640))

    # -- hover and actions ---------------------------------------------------------------------
    def enterEvent(self, event: Any) -> None:  # noqa: N802
        if self.actions_box is not None and self.mid is not None:
            self.actions_box.show()
        super().enterEvent(event)

    def leaveEvent(self, event: Any) -> None:  # noqa: N802
        if self.actions_box is not None:
            self.actions_box.hide()
        super().leaveEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802
        if self.row.get("role") == "notice":
            return
        menu = QMenu(self)
        menu.addAction("Copy text", self.copy_text)
        if self.actions_box is not None and self.mid is not None:
            busy = self.view.busy or bool(self.row.get("streaming"))
            if self.row.get("role") == "companion":
                menu.addAction("Regenerate", self.request_regenerate).setEnabled(not busy)
                n, k = int(self.row.get("variants") or 1), int(self.row.get("variant") or 0)
                if n > 1:
                    menu.addAction(
                        f"Previous alternative ({k}/{n})", lambda: self._flip(-1)
                    ).setEnabled(k > 0 and not busy)
                    menu.addAction(
                        f"Next alternative ({k + 2}/{n})", lambda: self._flip(+1)
                    ).setEnabled(k < n - 1 and not busy)
            menu.addAction("Edit…", self.start_edit).setEnabled(not busy)
            menu.addAction("Remember this", self.request_remember).setEnabled(
                not self.row.get("streaming")
            )
            menu.addSeparator()
            menu.addAction("Delete", self.request_delete).setEnabled(not busy)
        menu.exec(event.globalPos())

    def copy_text(self) -> None:
        QGuiApplication.clipboard().setText(self.text)

    def request_regenerate(self) -> None:
        if self.mid is not None:
            self.view.regenerate_requested.emit(self.mid)

    def request_remember(self) -> None:
        if self.mid is not None:
            self.view.remember_requested.emit(self.mid)

    def request_delete(self) -> None:
        if self.mid is not None:
            self.view.delete_requested.emit(self.mid)

    def _flip(self, step: int) -> None:
        n, k = int(self.row.get("variants") or 1), int(self.row.get("variant") or 0)
        if self.mid is not None and 0 <= k + step < n:
            self.view.variant_requested.emit(self.mid, k + step)

    # -- inline editing ------------------------------------------------------------------------
    def start_edit(self) -> None:
        if self.editor is not None or self.mid is None or self.view.busy:
            return
        self.editor = QPlainTextEdit(self.text)
        self.editor.setObjectName("EditBox")
        self.editor.setStyleSheet(
            f"background: {theme.SURFACE}; color: {theme.TEXT}; border-radius: 8px;"
        )
        self.editor.setFixedWidth(min(max(self.label.width(), 360), 640))
        lines = max(2, min(8, self.text.count("\n") + 1 + len(self.text) // 60))
        self.editor.setFixedHeight(self.editor.fontMetrics().lineSpacing() * lines + 18)
        save = QPushButton("Save")
        save.setObjectName("Primary")
        cancel = QPushButton("Cancel")
        save.clicked.connect(self.commit_edit)
        cancel.clicked.connect(self.cancel_edit)
        self._edit_buttons = QWidget()
        bl = QHBoxLayout(self._edit_buttons)
        bl.setContentsMargins(0, 4, 0, 0)
        bl.addStretch(1)
        bl.addWidget(cancel)
        bl.addWidget(save)
        self.editor.installEventFilter(self)
        self.label.hide()
        self.bubble_layout.addWidget(self.editor)
        self.bubble_layout.addWidget(self._edit_buttons)
        self.editor.setFocus()
        self.editor.selectAll()

    def eventFilter(self, obj: Any, event: Any) -> bool:  # noqa: N802
        if obj is self.editor and event.type() == event.Type.KeyPress:
            if event.key() == Qt.Key.Key_Escape:
                self.cancel_edit()
                return True
            if (
                event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
                and event.modifiers() & Qt.KeyboardModifier.ControlModifier
            ):
                self.commit_edit()
                return True
        return super().eventFilter(obj, event)

    def commit_edit(self) -> None:
        if self.editor is None:
            return
        text = self.editor.toPlainText()
        mid = self.mid
        self.cancel_edit()
        if mid is not None and text.strip() != self.text.strip():
            self.view.edit_requested.emit(mid, text)

    def cancel_edit(self) -> None:
        if self.editor is None:
            return
        editor, buttons = self.editor, self._edit_buttons
        self.editor = None
        editor.removeEventFilter(self)
        editor.deleteLater()
        buttons.deleteLater()
        self.label.show()


class EmptyState(QWidget):
    """Shown before the first message: who is in the group and how to start."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 48, 0, 0)
        lay.setSpacing(10)
        self.faces = QHBoxLayout()
        self.faces.setSpacing(-6)
        faces_box = QHBoxLayout()
        faces_box.addStretch(1)
        faces_box.addLayout(self.faces)
        faces_box.addStretch(1)
        self.title = QLabel()
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.title.setStyleSheet("font-size: 15pt; font-weight: 600;")
        self.body = WrapLabel()
        self.body.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.body.setObjectName("Subtle")
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self.body.set_max_width(520)
        self.hint = QLabel("Say hello below. The Director picks who answers, and why.")
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setObjectName("Hint")
        lay.addLayout(faces_box)
        lay.addWidget(self.title)
        lay.addWidget(self.body, 0, Qt.AlignmentFlag.AlignHCenter)
        lay.addWidget(self.hint)

    def set_group(self, title: str, description: str, personas: list[Any]) -> None:
        while self.faces.count():
            w = self.faces.takeAt(0).widget()
            if w is not None:
                w.deleteLater()
        for p in personas:
            face = QLabel()
            face.setPixmap(avatars.pixmap(p.avatar, p.name, p.color, 44))
            face.setToolTip(f"{p.name}: {p.role}")
            self.faces.addWidget(face)
        self.title.setText(title)
        self.body.setText(description)
        self.body.setVisible(bool(description))


class ChatView(QScrollArea):
    regenerate_requested = Signal(int)
    edit_requested = Signal(int, str)
    delete_requested = Signal(int)
    remember_requested = Signal(int)
    variant_requested = Signal(int, int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("ChatArea")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        canvas = QWidget()
        canvas.setObjectName("ChatCanvas")
        self.vbox = QVBoxLayout(canvas)
        self.vbox.setContentsMargins(28, 20, 28, 24)
        self.vbox.setSpacing(16)
        self.empty = EmptyState()
        self.vbox.addWidget(self.empty)
        self.vbox.addStretch(1)
        self.setWidget(canvas)
        self.rows: list[MessageRow] = []
        self.model: MessageListModel | None = None
        self.busy = False
        self._stick = True
        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._on_range)
        bar.valueChanged.connect(self._on_scroll)

    # -- model binding --------------------------------------------------------------------------
    def set_model(self, model: MessageListModel) -> None:
        self.model = model
        model.modelReset.connect(self._rebuild)
        model.rowsInserted.connect(self._inserted)
        model.rowsRemoved.connect(self._removed)
        model.dataChanged.connect(self._changed)
        self._rebuild()

    def _make(self, i: int) -> MessageRow:
        row = MessageRow(self.model.data(self.model.index(i), ROW), self)
        row.set_max_width(self._bubble_width())
        return row

    def _rebuild(self) -> None:
        for r in self.rows:
            self.vbox.removeWidget(r)
            r.deleteLater()
        self.rows = []
        for i in range(self.model.rowCount()):
            r = self._make(i)
            self.rows.append(r)
            self.vbox.insertWidget(1 + i, r)
        self._stick = True
        self._update_empty()
        self.scroll_to_bottom()

    def _inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        for i in range(first, last + 1):
            r = self._make(i)
            self.rows.insert(i, r)
            self.vbox.insertWidget(1 + i, r)
        if self.model.rows[last].get("role") == "user":
            self._stick = True  # your own message always scrolls into view
        self._update_empty()

    def _removed(self, parent: QModelIndex, first: int, last: int) -> None:
        for r in self.rows[first : last + 1]:
            self.vbox.removeWidget(r)
            r.deleteLater()
        del self.rows[first : last + 1]
        self._update_empty()

    def _changed(self, top: QModelIndex, bottom: QModelIndex, roles: Any = ()) -> None:
        for i in range(top.row(), bottom.row() + 1):
            if 0 <= i < len(self.rows):
                self.rows[i].refresh(self.model.rows[i])

    def _update_empty(self) -> None:
        self.empty.setVisible(not self.rows)

    # -- lookups for the window and tests -----------------------------------------------------
    def row_for(self, mid: int) -> MessageRow | None:
        return next((r for r in self.rows if r.mid == mid), None)

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        for r in self.rows:
            r._update_actions()

    # -- layout and scrolling -------------------------------------------------------------------
    def _bubble_width(self) -> int:
        avail = self.viewport().width() - 56 - AVATAR - 10 - 28
        return max(200, min(620, int(avail * 0.86)))

    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        w = self._bubble_width()
        for r in self.rows:
            r.set_max_width(w)

    def _on_range(self, _lo: int, hi: int) -> None:
        if self._stick:
            self.verticalScrollBar().setValue(hi)

    def _on_scroll(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self._stick = value >= bar.maximum() - 48

    def scroll_to_bottom(self) -> None:
        QTimer.singleShot(0, self, self._scroll_end)

    def _scroll_end(self) -> None:
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())
