"""The left column: brand, new conversation, search, the conversation list, models and settings."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPainterPath
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from engine.persona_files import list_sets

from . import icons, theme, widgets
from .item_models import ROW, ConversationListModel, when


class ConversationDelegate(QStyledItemDelegate):
    """Title on the first line, group and time below, a rounded highlight when selected."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:  # noqa: N802
        return QSize(200, 50)

    def paint(self, p: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        row = index.data(ROW)
        if row is None:
            return
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        r = option.rect.adjusted(4, 2, -4, -2)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        hover = bool(option.state & QStyle.StateFlag.State_MouseOver)
        if selected or hover:
            path = QPainterPath()
            path.addRoundedRect(r, 9, 9)
            p.fillPath(path, QColor(theme.ACCENT_SOFT if selected else "#e7eaef"))
        title_font = QFont(option.font)
        title_font.setWeight(QFont.Weight.DemiBold if selected else QFont.Weight.Medium)
        p.setFont(title_font)
        p.setPen(QColor(theme.TEXT))
        text_r = r.adjusted(12, 7, -10, -7)
        fm = p.fontMetrics()
        p.drawText(
            QRect(text_r.left(), text_r.top(), text_r.width(), fm.height()),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            fm.elidedText(row["title"], Qt.TextElideMode.ElideRight, text_r.width()),
        )
        sub_font = QFont(option.font)
        sub_font.setPointSizeF(max(7.5, option.font.pointSizeF() - 1.5))
        p.setFont(sub_font)
        p.setPen(QColor(theme.MUTED))
        n = row.get("n_messages", 0)
        sub = f"{row['group_name']} · {n} message{'s' * (n != 1)} · {when(row['updated'])}"
        fm2 = p.fontMetrics()
        p.drawText(
            QRect(text_r.left(), text_r.bottom() - fm2.height(), text_r.width(), fm2.height()),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            fm2.elidedText(sub, Qt.TextElideMode.ElideRight, text_r.width()),
        )
        p.restore()


class Sidebar(QWidget):
    new_requested = Signal(str)  # persona set name
    open_requested = Signal(int)  # conversation id
    delete_requested = Signal(int)
    export_requested = Signal(int)
    models_requested = Signal()
    settings_requested = Signal()

    def __init__(self, model: ConversationListModel, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("Sidebar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.model = model
        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 14, 12, 10)
        lay.setSpacing(10)

        brand = QHBoxLayout()
        logo = QLabel()
        logo.setPixmap(icons.app_icon().pixmap(26, 26))
        name = QLabel("Mascot")
        name.setObjectName("Brand")
        brand.addWidget(logo)
        brand.addWidget(name)
        brand.addStretch(1)
        brand.setContentsMargins(4, 0, 0, 4)
        lay.addLayout(brand)

        self.new_button = QPushButton("  New conversation")
        self.new_button.setObjectName("NewChat")
        self.new_button.setIcon(icons.icon("plus", theme.TEXT))
        self.new_button.setToolTip("Start a new conversation with a group (Ctrl+N)")
        self.groups_menu = QMenu(self)
        self.groups_menu.aboutToShow.connect(self._fill_groups)
        self.new_button.setMenu(self.groups_menu)
        lay.addWidget(self.new_button)

        self.search = QLineEdit()
        self.search.setObjectName("Search")
        self.search.setPlaceholderText("Search conversations")
        self.search.setClearButtonEnabled(True)
        self.search.addAction(
            icons.icon("search", theme.FAINT), QLineEdit.ActionPosition.LeadingPosition
        )
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(200)
        self._search_timer.timeout.connect(self.apply_search)
        self.search.textChanged.connect(lambda _t: self._search_timer.start())
        lay.addWidget(self.search)

        label = QLabel("CONVERSATIONS")
        label.setObjectName("SectionTitle")
        label.setContentsMargins(6, 6, 0, 0)
        lay.addWidget(label)

        self.list = QListView()
        self.list.setModel(model)
        self.list.setItemDelegate(ConversationDelegate(self.list))
        self.list.setMouseTracking(True)
        self.list.setUniformItemSizes(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.list.clicked.connect(self._activated)
        self.list.activated.connect(self._activated)
        lay.addWidget(self.list, 1)
        self.empty = QLabel("No conversation matches.")
        self.empty.setObjectName("Hint")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.hide()
        lay.addWidget(self.empty)

        for text, icon_name, signal in (
            ("Models", "cpu", self.models_requested),
            ("Settings", "settings", self.settings_requested),
        ):
            b = widgets.icon_button(icon_name, text, color=theme.TEXT, object_name="SideLink")
            b.setText(f"  {text}")
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            b.clicked.connect(signal)
            lay.addWidget(b)
        self.current: int | None = None
        model.modelReset.connect(self._restore_selection)

    # -- groups ---------------------------------------------------------------------------------
    def _fill_groups(self) -> None:
        self.groups_menu.clear()
        for s in list_sets():
            act = self.groups_menu.addAction(f"{s.title}  ·  {', '.join(s.names)}")
            act.setToolTip(s.description)
            act.setData(s.name)
            act.triggered.connect(lambda _c=False, n=s.name: self.new_requested.emit(n))
        self.groups_menu.setToolTipsVisible(True)

    # -- list -------------------------------------------------------------------------------------
    def apply_search(self) -> None:
        self.model.refresh(self.search.text())
        self.empty.setVisible(self.model.rowCount() == 0)

    def select(self, cid: int | None) -> None:
        self.current = cid
        if self.model.row_of(cid) < 0 and self.search.text():
            self.search.blockSignals(True)  # the open conversation is always listed
            self.search.clear()
            self.search.blockSignals(False)
            self._search_timer.stop()
            self.apply_search()
        self._restore_selection()

    def shutdown(self) -> None:
        self._search_timer.stop()

    def _restore_selection(self) -> None:
        row = self.model.row_of(self.current)
        sel = self.list.selectionModel()
        if row < 0:
            sel.clearSelection()
            return
        idx = self.model.index(row)
        if self.list.currentIndex() != idx or not sel.isSelected(idx):
            sel.setCurrentIndex(idx, sel.SelectionFlag.ClearAndSelect)

    def _activated(self, index: QModelIndex) -> None:
        row = index.data(ROW)
        if row and row["id"] != self.current:
            self.open_requested.emit(row["id"])

    def cid_at(self, index: QModelIndex) -> int | None:
        row = index.data(ROW)
        return row["id"] if row else None

    def rename(self, cid: int) -> None:
        row = self.model.row_of(cid)
        if row >= 0:
            self.list.edit(self.model.index(row))

    def confirm_delete(self, cid: int) -> None:
        row = self.model.rows[self.model.row_of(cid)] if self.model.row_of(cid) >= 0 else None
        title = row["title"] if row else "this conversation"
        if widgets.ask(
            self,
            "Delete conversation",
            f"Delete “{title}” and all its messages from this computer? This cannot be undone.",
            "Delete",
        ):
            self.delete_requested.emit(cid)

    def _menu(self, pos: Any) -> None:
        index = self.list.indexAt(pos)
        cid = self.cid_at(index)
        if cid is None:
            return
        menu = QMenu(self)
        menu.addAction("Rename", lambda: self.rename(cid))
        menu.addAction("Export…", lambda: self.export_requested.emit(cid))
        menu.addSeparator()
        menu.addAction("Delete…", lambda: self.confirm_delete(cid))
        menu.exec(self.list.viewport().mapToGlobal(pos))
