"""Models: the registered GGUF files, add one, verify one, give one to a companion, and download
one from the Hugging Face Hub (only when the user clicks Download)."""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engine.models.hub import download_gguf
from engine.models.registry import ModelRegistry
from engine.paths import user_dir

from . import theme
from .get_models import GetModelsPage
from .item_models import ModelTableModel
from .session import ChatSession
from .workers import CallWorker, Runner, Worker

DIRECTOR = (
    ":director"  # the assign target that is not a companion (item data; names never start with ':')
)

EXAMPLE_REPO = "HuggingFaceTB/SmolLM2-360M-Instruct-GGUF"
EXAMPLE_FILE = "smollm2-360m-instruct-q8_0.gguf"


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


class ModelsDialog(QDialog):
    loaded = Signal()
    added = Signal(bool)
    verified = Signal(bool, str)
    download_finished = Signal(bool)

    def __init__(self, session: ChatSession, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.registry = ModelRegistry(session.store)
        self.runner = Runner(self)
        self.download_job: Worker | None = None
        self._download_ok = False
        self.setWindowTitle("Models")
        self.resize(980, 680)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(18, 16, 18, 14)
        lay.setSpacing(10)

        intro = QLabel(
            "Models run on this computer with llama.cpp. Every companion, and the Director, uses "
            "the group default (the bundled model) unless you give it its own."
        )
        intro.setObjectName("Subtle")
        intro.setWordWrap(True)
        lay.addWidget(intro)

        self.tabs = QTabWidget()
        lay.addWidget(self.tabs, 1)
        self.get_page = GetModelsPage(session, self.models_dir, self)
        self.get_page.registered.connect(lambda name: self.refresh(select=name))
        self.get_page.use_for_group.connect(self.use_for_group)
        self.tabs.addTab(self.get_page, "Get models")
        yours, root = QWidget(), lay
        lay = QVBoxLayout(yours)
        lay.setContentsMargins(0, 8, 0, 0)
        self.tabs.addTab(yours, "Your models")

        self.model = ModelTableModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.setShowGrid(False)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, 5):
            self.table.horizontalHeader().setSectionResizeMode(
                col, QHeaderView.ResizeMode.ResizeToContents
            )
        self.table.setMinimumHeight(170)
        lay.addWidget(self.table, 1)

        row = QHBoxLayout()
        self.add_button = QPushButton("Add GGUF file…")
        self.add_button.clicked.connect(self.add_dialog)
        self.verify_button = QPushButton("Verify")
        self.verify_button.setToolTip("Re-read the file and check its sha256")
        self.verify_button.clicked.connect(lambda: self.verify(self.selected()))
        folder = QPushButton("Open models folder")
        folder.clicked.connect(
            lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.models_dir())))
        )
        row.addWidget(self.add_button)
        row.addWidget(self.verify_button)
        row.addStretch(1)
        row.addWidget(folder)
        lay.addLayout(row)

        assign = QHBoxLayout()
        assign.addWidget(QLabel("Give the selected model to"))
        self.member = QComboBox()
        self.member.setMinimumWidth(140)
        self.assign_button = QPushButton("Assign")
        self.assign_button.clicked.connect(
            lambda: self.assign(self.member.currentData(), self.selected())
        )
        assign.addWidget(self.member)
        assign.addWidget(self.assign_button)
        assign.addStretch(1)
        self.director_label = QLabel()
        self.director_label.setObjectName("Hint")
        assign.addWidget(self.director_label)
        lay.addLayout(assign)

        box = QGroupBox("Download from the Hugging Face Hub")
        grid = QGridLayout(box)
        grid.setHorizontalSpacing(8)
        self.repo = QLineEdit()
        self.repo.setPlaceholderText(EXAMPLE_REPO)
        self.file = QLineEdit()
        self.file.setPlaceholderText(EXAMPLE_FILE)
        self.download_button = QPushButton("Download")
        self.download_button.setObjectName("Primary")
        self.download_button.clicked.connect(self.start_download)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_download)
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress.setTextVisible(False)
        self.progress_label = QLabel()
        self.progress_label.setObjectName("Hint")
        note = QLabel(
            f"Mascot connects to the internet only when you click Download. Files are saved in "
            f"{self.models_dir()}."
        )
        note.setObjectName("Hint")
        note.setWordWrap(True)
        grid.addWidget(QLabel("Repo"), 0, 0)
        grid.addWidget(self.repo, 0, 1)
        grid.addWidget(QLabel("File"), 1, 0)
        grid.addWidget(self.file, 1, 1)
        grid.addWidget(self.download_button, 0, 2)
        grid.addWidget(self.cancel_button, 1, 2)
        grid.addWidget(self.progress, 2, 1)
        grid.addWidget(self.progress_label, 2, 2)
        grid.addWidget(note, 3, 0, 1, 3)
        lay.addWidget(box)

        lay = root
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.status)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        session.members_changed.connect(self._fill_members)
        self._fill_members()
        self._update_buttons()
        self.refresh()

    @staticmethod
    def models_dir():
        d = user_dir() / "models"
        d.mkdir(parents=True, exist_ok=True)
        return d

    # -- helpers ----------------------------------------------------------------------------------
    def _run(
        self, fn: Callable[[], Any], on_done: Callable[[Any], None], on_error: Callable[[str], None]
    ) -> Worker:
        job = CallWorker(lambda progress, cancel: fn(), name=getattr(fn, "__name__", "models"))
        job.done.connect(on_done)
        return self.runner.start(job, on_error=on_error)

    def show_status(self, text: str, ok: bool = True) -> None:
        self.status.setStyleSheet(f"color: {theme.OK if ok else theme.DANGER};")
        self.status.setText(text)

    def selected(self) -> str | None:
        idx = self.table.currentIndex()
        return self.model.name_at(idx.row()) if idx.isValid() else None

    def _update_buttons(self) -> None:
        has = self.selected() is not None
        self.verify_button.setEnabled(has)
        self.assign_button.setEnabled(has and self.member.count() > 0)

    def _fill_members(self) -> None:
        current = self.member.currentData()
        self.member.clear()
        for name in self.session.members.names():
            self.member.addItem(name, name)
        self.member.addItem("the Director", DIRECTOR)
        self.member.setItemData(
            self.member.count() - 1,
            "The model that picks who speaks next and "
            "writes each directive (used when the group's turns are 'Director decides')",
            Qt.ItemDataRole.ToolTipRole,
        )
        i = self.member.findData(current)
        if i >= 0:
            self.member.setCurrentIndex(i)
        self._show_director()

    def _show_director(self) -> None:
        model = self.session.settings.director_model
        self.director_label.setText(
            f"Director: {model}" if model else "Director: the group's model"
        )

    def _report(self, message: str) -> None:
        self.show_status(message, ok=False)
        self.session.error.emit(message)

    # -- list, add, verify, assign --------------------------------------------------------------------
    def refresh(self, select: str | None = None) -> None:
        self.status.setText("Reading model files…")
        self.status.setStyleSheet(f"color: {theme.MUTED};")

        def loaded(items: list[Any]) -> None:
            self.model.set_items(items)
            self.get_page.set_installed(items)
            self.status.clear()
            if select:
                row = next((i for i, m in enumerate(items) if m.name == select), -1)
                if row >= 0:
                    self.table.selectRow(row)
            self._update_buttons()
            self.loaded.emit()

        def failed(message: str) -> None:
            self._report(message)
            self.loaded.emit()

        self._run(self.registry.list, loaded, failed)

    def add_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Add a GGUF model", str(self.models_dir()), "GGUF models (*.gguf);;All files (*)"
        )
        if path:
            self.add_file(path)

    def add_file(self, path: str) -> None:
        self.show_status("Checking the file and computing its sha256…")
        self.add_button.setEnabled(False)

        def done(info: Any) -> None:
            self.add_button.setEnabled(True)
            self.show_status(
                f"Added {info.name} ({info.architecture}, {info.quantization}, {_mb(info.size)})."
            )
            self.refresh(select=info.name)
            self.added.emit(True)

        def failed(message: str) -> None:
            self.add_button.setEnabled(True)
            self._report(message)
            self.added.emit(False)

        self._run(lambda: self.registry.add(path), done, failed)

    def verify(self, name: str | None) -> None:
        if not name:
            return
        self.show_status(f"Verifying {name}…")

        def done(result: tuple[bool, str]) -> None:
            ok, message = result
            self.show_status(("✓ " if ok else "✗ ") + message, ok)
            self.verified.emit(ok, message)

        def failed(message: str) -> None:
            self._report(message)
            self.verified.emit(False, message)

        self._run(lambda: self.registry.verify(name), done, failed)

    def assign(self, member: str | None, model: str | None) -> bool:
        """Give ``model`` to the companion ``member``, or to the Director (``DIRECTOR``)."""
        if not member or not model:
            return False
        if member == DIRECTOR:
            if not self.session.set_director_model(model):
                return False
            self._show_director()
            policy = (
                self.session.chat.settings.policy if self.session.chat is not None else "director"
            )
            later = (
                ""
                if policy == "director"
                else " (this conversation's turns are not 'Director decides')"
            )
            self.show_status(f"The Director now uses {model}{later}.")
            return True
        if self.session.assign_model(member, model):
            self.show_status(f"{member} now uses {model}.")
            return True
        return False

    # -- download ---------------------------------------------------------------------------------------
    def start_download(self) -> None:
        if self.download_job is not None:
            return
        repo, name = self.repo.text().strip(), self.file.text().strip()
        if not repo or not name:
            self.show_status(
                "Enter the repo id (owner/name) and the .gguf file name to download.", ok=False
            )
            return
        self.show_status(f"Connecting to the Hugging Face Hub for {repo}…")
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress_label.clear()
        job = CallWorker(
            download_gguf, repo, name, self.models_dir(), store=self.session.store, name="download"
        )
        job.item.connect(self._progress)
        job.done.connect(lambda path: self._download_done(path, None))
        job.finished.connect(self._download_finished)
        self.download_job = job
        self.download_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.runner.start(job, on_error=lambda msg: self._download_done(None, msg))

    def _progress(self, report: tuple[int, int, Any]) -> None:
        done, total, status = report
        if total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(done * 1000 / total))
            extra = status.describe(done, total)
            self.progress_label.setText(
                f"{_mb(done)} of {_mb(total)}" + (f" · {extra}" if extra else "")
            )
        else:
            self.progress.setRange(0, 0)
            self.progress_label.setText(_mb(done))

    def _download_done(self, path: Any, error: str | None) -> None:
        cancelled = self.download_job is not None and self.download_job.cancelled
        self.progress.setRange(0, 1000)
        if error is None:
            self.progress.setValue(1000)
            self.show_status(f"Downloaded {path.name} and added it to your models.")
            self.refresh()
        elif cancelled:
            self.progress.setValue(0)
            self.progress_label.clear()
            self.show_status(error, ok=True)
        else:
            self.progress.setValue(0)
            self._report(error)
        self._download_ok = error is None

    def _download_finished(self) -> None:
        self.download_job = None
        self.download_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.download_finished.emit(self._download_ok)

    def cancel_download(self) -> None:
        if self.download_job is not None:
            self.download_job.cancel()
            self.cancel_button.setEnabled(False)

    def use_for_group(self, model: str) -> bool:
        """Give ``model`` to every companion of the open group and to the Director."""
        names = self.session.members.names()
        ok = all([self.session.assign_model(n, model) for n in names])
        ok = self.session.set_director_model(model) and ok
        self._show_director()
        if ok:
            self.show_status(f"The group ({', '.join(names)}) and the Director now use {model}.")
        return ok

    def shutdown(self) -> None:
        self.get_page.shutdown()  # a running catalog download pauses: it resumes next time
        self.runner.stop_all()
