"""The open conversation's group: companions (mute, add, edit, remove, cards), speaking policy
and speaker cap. Character Cards can be dropped here (or anywhere on the window)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QSize, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListView,
    QMenu,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine.card_files import export_card
from engine.errors import MascotError
from engine.models.registry import BUNDLED_NAME
from engine.persona_files import list_sets, save_user_set
from engine.personas import PersonaSet

from . import icons, theme
from .item_models import ROW
from .persona_editor import CARD_FILTERS, PersonaEditor
from .session import ChatSession
from .widgets import CardDropTarget

POLICIES = (
    ("director", "Director decides", "A Director model picks who speaks next and tells them why."),
    ("round-robin", "Take turns", "Companions answer in a fixed rotation."),
    ("random", "Random", "A random companion answers each turn."),
    ("all", "Everyone answers", "Every companion answers once, in order."),
)


class GroupPanel(CardDropTarget, QWidget):
    def __init__(self, session: ChatSession, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.setAcceptDrops(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(16, 14, 16, 12)
        lay.setSpacing(8)

        head = QHBoxLayout()
        title = QLabel("Group")
        title.setObjectName("PanelTitle")
        self.count = QLabel()
        self.count.setObjectName("Subtle")
        head.addWidget(title)
        head.addStretch(1)
        head.addWidget(self.count)
        lay.addLayout(head)

        self.list = QListView()
        self.list.setObjectName("MemberList")
        self.list.setModel(session.members)
        self.list.setIconSize(QSize(32, 32))
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setWordWrap(False)
        self.list.setSpacing(1)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.doubleClicked.connect(lambda idx: self.edit_member(idx.data(ROW)["name"]))
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.list.setToolTip("Untick a companion to mute them")
        lay.addWidget(self.list, 1)

        buttons = QHBoxLayout()
        buttons.setSpacing(6)
        self.add_button = QPushButton("Add")
        self.add_button.setObjectName("PlainMenu")
        self.add_button.setIcon(icons.icon("plus", theme.TEXT))
        self.add_button.setToolTip("Add a companion from your personas, a new one, or a card")
        self.add_menu = QMenu(self)
        self.add_menu.aboutToShow.connect(self._fill_add_menu)
        self.add_button.setMenu(self.add_menu)
        self.edit_button = QPushButton("Edit")
        self.edit_button.setIcon(icons.icon("edit", theme.TEXT))
        self.edit_button.setToolTip("Edit the selected companion")
        self.edit_button.clicked.connect(lambda: self.edit_member(self.selected()))
        self.remove_button = QPushButton()
        self.remove_button.setIcon(icons.icon("trash", theme.TEXT))
        self.remove_button.setToolTip("Remove the selected companion from this conversation")
        self.remove_button.setAccessibleName("Remove")
        self.remove_button.clicked.connect(lambda: self.remove_member(self.selected()))
        self.card_button = QPushButton()
        self.card_button.setObjectName("MenuButton")
        self.card_button.setIcon(icons.icon("import", theme.TEXT))
        self.card_button.setToolTip("Import or export a Character Card")
        card_menu = QMenu(self)
        card_menu.addAction("Import Character Card…", self.import_dialog)
        self.export_action = card_menu.addAction("Export selected as card…", self.export_dialog)
        self.card_button.setMenu(card_menu)
        for b in (self.add_button, self.edit_button, self.remove_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(self.card_button)
        lay.addLayout(buttons)
        hint = QLabel("Drop a Character Card (.png or .json) here to add it.")
        hint.setObjectName("Hint")
        hint.setWordWrap(True)
        lay.addWidget(hint)

        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        form.setContentsMargins(0, 8, 0, 0)
        form.setVerticalSpacing(8)
        self.policy = QComboBox()
        for key, label, tip in POLICIES:
            self.policy.addItem(label, key)
            self.policy.setItemData(self.policy.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.policy.currentIndexChanged.connect(self._policy_changed)
        self.cap = QSpinBox()
        self.cap.setRange(1, 8)
        self.cap.setSuffix(" per round")
        self.cap.setToolTip("At most this many companions answer each message")
        self.cap.valueChanged.connect(lambda n: self.session.set_max_speakers(n))
        self.policy_hint = QLabel()
        self.policy_hint.setObjectName("Hint")
        self.policy_hint.setWordWrap(True)
        form.addRow("Who speaks", self.policy)
        form.addRow("Replies", self.cap)
        lay.addLayout(form)
        lay.addWidget(self.policy_hint)

        session.members.modelReset.connect(self._update_count)
        session.members.dataChanged.connect(self._update_count)
        session.opened.connect(self.sync)
        session.members_changed.connect(self.sync)
        session.busy_changed.connect(self._busy)
        self.list.selectionModel().selectionChanged.connect(
            lambda *_: self._busy(self.session.busy)
        )
        self.sync()

    # -- sync with the session -------------------------------------------------------------------
    def sync(self, *_: Any) -> None:
        chat = self.session.chat
        if chat is None:
            return
        for w, value in (
            (self.policy, self.policy.findData(chat.settings.policy)),
            (self.cap, chat.settings.max_speakers),
        ):
            w.blockSignals(True)
            (w.setCurrentIndex if w is self.policy else w.setValue)(value)
            w.blockSignals(False)
        self.policy_hint.setText(POLICIES[max(0, self.policy.currentIndex())][2])
        self._update_count()
        self._busy(self.session.busy)

    def _update_count(self, *_: Any) -> None:
        rows = self.session.members.rows
        speaking = sum(not r["muted"] for r in rows)
        self.count.setText(
            f"{speaking} of {len(rows)} speaking"
            if speaking != len(rows)
            else f"{len(rows)} companions"
        )

    def _busy(self, busy: bool) -> None:
        has = self.selected() is not None
        for w in (self.add_button, self.card_button):
            w.setEnabled(not busy)
        self.edit_button.setEnabled(not busy and has)
        self.remove_button.setEnabled(not busy and has and len(self.session.members.rows) > 1)
        self.export_action.setEnabled(has)

    def _policy_changed(self, i: int) -> None:
        self.session.set_policy(self.policy.itemData(i))
        self.policy_hint.setText(POLICIES[i][2])

    def selected(self) -> str | None:
        idx = self.list.currentIndex()
        row = idx.data(ROW) if idx.isValid() else None
        return row["name"] if row else None

    # -- members -----------------------------------------------------------------------------------
    def _model_names(self) -> list[str]:
        return [BUNDLED_NAME] + [m["name"] for m in self.session.store.models()]

    def _fill_add_menu(self) -> None:
        self.add_menu.clear()
        present = {n.lower() for n in self.session.members.names()}
        for s in list_sets():
            sub = self.add_menu.addMenu(s.title)
            for p in s.members:
                act = sub.addAction(f"{p.name} — {p.role}")
                act.setEnabled(p.name.lower() not in present)
                act.triggered.connect(lambda _c=False, p=p: self.session.add_member(p))
        self.add_menu.addSeparator()
        self.add_menu.addAction("New persona…", self.new_member)
        self.add_menu.addAction("Import Character Card…", self.import_dialog)

    def new_member(self) -> None:
        dlg = PersonaEditor(None, self._model_names(), self)
        if dlg.exec() and dlg.persona is not None:
            p = dlg.persona
            if self.session.add_member(p):
                save_user_set(
                    PersonaSet(name=p.name, title=p.name, description=p.role, members=[p])
                )

    def edit_member(self, name: str | None) -> None:
        p = self.session.persona(name) if name else None
        if p is None or self.session.busy:
            return
        dlg = PersonaEditor(p, self._model_names(), self)
        if dlg.exec() and dlg.persona is not None:
            self.session.replace_member(name, dlg.persona)

    def remove_member(self, name: str | None) -> None:
        if name:
            self.session.remove_member(name)

    def _menu(self, pos: Any) -> None:
        idx: QModelIndex = self.list.indexAt(pos)
        if not idx.isValid():
            return
        row = idx.data(ROW)
        menu = QMenu(self)
        menu.addAction(
            "Unmute" if row["muted"] else "Mute",
            lambda: self.session.members.setData(
                idx,
                Qt.CheckState.Checked if row["muted"] else Qt.CheckState.Unchecked,
                Qt.ItemDataRole.CheckStateRole,
            ),
        )
        menu.addAction("Edit…", lambda: self.edit_member(row["name"])).setEnabled(
            not self.session.busy
        )
        menu.addAction("Export as card…", self.export_dialog)
        menu.addSeparator()
        menu.addAction("Remove", lambda: self.remove_member(row["name"])).setEnabled(
            not self.session.busy
        )
        menu.exec(self.list.viewport().mapToGlobal(pos))

    # -- cards ---------------------------------------------------------------------------------------
    def import_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Import Character Card", "", "Character cards and personas (*.png *.json)"
        )
        if path:
            self.import_file(path)

    def import_file(self, path: str) -> bool:
        return self.session.import_file(path)

    def export_dialog(self) -> None:
        name = self.selected()
        if name is None:
            return
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export Character Card", f"{name}.png", ";;".join(CARD_FILTERS)
        )
        if path:
            self.export_member(name, path, CARD_FILTERS.get(chosen, "chara_card_v2"))

    def export_member(self, name: str, path: str, spec: str = "chara_card_v2") -> bool:
        p = self.session.persona(name)
        if p is None:
            return False
        try:
            export_card(p, path, spec=spec)
        except MascotError as e:
            self.session.error.emit(str(e))
            return False
        self.session.info.emit(f"Saved {name}'s card to {path}.")
        return True
