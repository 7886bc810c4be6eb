"""Why each companion spoke: the Director's decision and directive for every turn."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QAbstractItemView, QLabel, QListView, QVBoxLayout, QWidget

from .item_models import DirectorLogModel


class DirectorPanel(QWidget):
    def __init__(self, model: DirectorLogModel, parent: QWidget | None = None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(16, 14, 16, 12)
        lay.setSpacing(6)
        title = QLabel("Director")
        title.setObjectName("PanelTitle")
        hint = QLabel("Who was picked each turn, and the one-line directive they were given.")
        hint.setObjectName("Hint")
        hint.setWordWrap(True)
        self.list = QListView()
        self.list.setObjectName("DirectorList")
        self.list.setModel(model)
        self.list.setWordWrap(True)
        self.list.setIconSize(QSize(22, 22))
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.empty = QLabel("No turns yet.")
        self.empty.setObjectName("Hint")
        lay.addWidget(title)
        lay.addWidget(hint)
        lay.addWidget(self.empty)
        lay.addWidget(self.list, 1)
        model.rowsInserted.connect(self._update)
        model.modelReset.connect(self._update)
        self.model = model
        self._update()

    def _update(self, *_: object) -> None:
        self.empty.setVisible(self.model.rowCount() == 0)
        self.list.scrollToBottom()
