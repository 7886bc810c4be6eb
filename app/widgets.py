"""Small shared widgets: wrapping text, banners, icon buttons, the typing line."""

from __future__ import annotations

import html
import math
from typing import Any

from PySide6.QtCore import QMimeData, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListView,
    QMessageBox,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from engine.safety import localise_contact, localise_name

from . import icons, theme
from .item_models import ROW


def icon_button(
    name: str,
    tooltip: str,
    *,
    color: str = theme.MUTED,
    checkable: bool = False,
    object_name: str = "",
    size: int = 18,
    parent: QWidget | None = None,
) -> QToolButton:
    b = QToolButton(parent)
    b.setIcon(icons.icon(name, color, theme.ACCENT if checkable else None))
    b.setIconSize(QSize(size, size))
    b.setToolTip(tooltip)
    b.setAccessibleName(tooltip)
    b.setCheckable(checkable)
    b.setCursor(Qt.CursorShape.PointingHandCursor)
    b.setAutoRaise(True)
    if object_name:
        b.setObjectName(object_name)
    return b


class WrapLabel(QLabel):
    """Plain, selectable, word-wrapped text that is as wide as its longest line (up to a maximum)
    and exactly as tall as it needs, so chat bubbles hug their text and never clip it."""

    def __init__(self, text: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Minimum)
        self._max = 560
        self._ideal: int | None = None
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt naming
        self._ideal = None
        super().setText(text)
        self.updateGeometry()

    def set_max_width(self, width: int) -> None:
        if width != self._max:
            self._max = max(80, width)
            self.updateGeometry()

    def _ideal_width(self) -> int:
        if self._ideal is None:
            doc = QTextDocument()
            doc.setDocumentMargin(0)
            doc.setDefaultFont(self.font())
            doc.setPlainText(self.text() or " ")
            self._ideal = math.ceil(doc.idealWidth()) + 2
        return self._ideal

    def _hint_width(self) -> int:
        m = self.contentsMargins()
        return min(self._ideal_width() + m.left() + m.right(), self._max)

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        # Layouts may ask with more width than the label will take (it never grows past its
        # hint), so answer for the width it will really have: no clipped last line.
        return super().heightForWidth(min(width, self._hint_width()))

    def sizeHint(self) -> QSize:  # noqa: N802
        w = self._hint_width()
        return QSize(w, super().heightForWidth(w))

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return self.sizeHint()


class Banner(QFrame):
    """A strip with an icon, a bold title, rich text (links open in the browser) and a close
    button. ``kind`` is info, warning or danger."""

    closed = Signal()

    STYLES = {
        "info": (theme.INFO_SOFT, theme.INFO_BORDER, theme.ACCENT, "shield"),
        "warning": (theme.WARN_SOFT, theme.WARN_BORDER, "#b45309", "info"),
        "danger": (theme.DANGER_SOFT, theme.DANGER_BORDER, theme.DANGER, "alert"),
    }

    def __init__(self, kind: str = "info", parent: QWidget | None = None):
        super().__init__(parent)
        bg, border, accent, icon_name = self.STYLES[kind]
        self.kind = kind
        self.setObjectName(f"Banner_{kind}")
        self.setStyleSheet(
            f"#Banner_{kind} {{ background: {bg}; border: 1px solid {border}; border-radius: 12px; }}"
            f"#Banner_{kind} QLabel {{ background: transparent; border: none; }}"
        )
        row = QHBoxLayout(self)
        row.setContentsMargins(14, 10, 8, 10)
        row.setSpacing(12)
        self.icon = QLabel()
        self.icon.setPixmap(icons.pixmap(icon_name, accent, 20))
        self.icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.icon)
        col = QVBoxLayout()
        col.setSpacing(3)
        self.title = QLabel()
        self.title.setStyleSheet(f"color: {accent}; font-weight: 600;")
        self.title.setWordWrap(True)
        self.body = QLabel()
        self.body.setWordWrap(True)
        self.body.setTextFormat(Qt.TextFormat.RichText)
        self.body.setOpenExternalLinks(True)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        col.addWidget(self.title)
        col.addWidget(self.body)
        row.addLayout(col, 1)
        self.close_button = icon_button("x", "Dismiss", size=16)
        self.close_button.clicked.connect(self._close)
        row.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def show_message(self, title: str, body_html: str) -> None:
        self.title.setText(title)
        self.title.setVisible(bool(title))
        self.body.setText(body_html)
        self.show()

    def _close(self) -> None:
        self.hide()
        self.closed.emit()


def resources_html(resources: list[dict], lang: str = "en") -> str:
    """Crisis resources as a short HTML list (name, contact in ``lang``, link)."""
    items = []
    for r in resources[:5]:
        contact = localise_contact(r.get("contact", ""), lang)
        line = (
            f"<b>{html.escape(localise_name(r.get('name', ''), lang))}</b> — {html.escape(contact)}"
        )
        url = r.get("url")
        if url and url.startswith(("https://", "http://")):
            line += f' · <a href="{html.escape(url)}">{html.escape(url.split("://", 1)[1].rstrip("/"))}</a>'
        items.append(line)
    return "<br>".join(items)


class TypingLine(QWidget):
    """'Mia is typing…' with a small dot in the speaker's colour and animated dots."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 0, 4, 0)
        row.setSpacing(8)
        self.dot = QLabel()
        self.dot.setFixedSize(8, 8)
        self.label = QLabel()
        self.label.setObjectName("Subtle")
        row.addWidget(self.dot)
        row.addWidget(self.label)
        row.addStretch(1)
        self._text = ""
        self._phase = 0
        self._timer = QTimer(self)
        self._timer.setInterval(450)
        self._timer.timeout.connect(self._tick)
        self.setFixedHeight(22)

    @property
    def text(self) -> str:
        return self._text

    def set_text(self, text: str, color: str = theme.MUTED) -> None:
        self._text = text
        if not text:
            self.label.clear()
            self.dot.setStyleSheet("background: transparent;")
            self._timer.stop()
            return
        self.dot.setStyleSheet(f"background: {color}; border-radius: 4px;")
        self._phase = 0
        self._render()
        self._timer.start()

    def _tick(self) -> None:
        self._phase = (self._phase + 1) % 3
        self._render()

    def _render(self) -> None:
        base = self._text.rstrip("…")
        self.label.setText(
            base + "." * (self._phase + 1) + " " * (2 - self._phase)
            if base != self._text
            else self._text
        )


def ask(parent: QWidget | None, title: str, text: str, ok_text: str) -> bool:
    """A yes/no question whose 'yes' is a destructive action; Cancel is the default."""
    box = QMessageBox(
        QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.NoButton, parent
    )
    ok = box.addButton(ok_text, QMessageBox.ButtonRole.DestructiveRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    return box.clickedButton() is ok


CARD_SUFFIXES = (".png", ".json")


def card_paths(mime: QMimeData) -> list[str]:
    """Local .png/.json files in a drag's data (Character Cards, personas, persona sets)."""
    if not mime.hasUrls():
        return []
    return [
        u.toLocalFile()
        for u in mime.urls()
        if u.isLocalFile() and u.toLocalFile().lower().endswith(CARD_SUFFIXES)
    ]


class CardDropTarget:
    """Mixin for widgets that take Character Cards (.png/.json) dropped on them; the host
    class has a ``session`` (app.session.ChatSession) that does the import."""

    session: Any

    def dragEnterEvent(self, event: Any) -> None:  # noqa: N802
        if card_paths(event.mimeData()) and not self.session.busy:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: Any) -> None:  # noqa: N802
        paths = card_paths(event.mimeData())
        if not paths:
            event.ignore()
            return
        event.acceptProposedAction()
        for path in paths:
            self.session.import_file(path)


def card_list(model: Any, name: str) -> QListView:
    """A list of wrapped cards (facts, lorebook entries) over ``model``: one selection, smooth scrolling."""
    view = QListView()
    view.setObjectName(name)
    view.setModel(model)
    view.setWordWrap(True)
    view.setIconSize(QSize(0, 0))
    view.setSpacing(3)
    view.setResizeMode(QListView.ResizeMode.Adjust)
    view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    return view


def selected_row(view: QListView) -> dict[str, Any] | None:
    """The row dict (``item_models.ROW``) of a single-selection list's selected item, or None."""
    rows = view.selectionModel().selectedRows()
    return rows[0].data(ROW) if rows else None
