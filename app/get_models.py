"""The "Get models" page of the Models dialog: the curated catalog with a fit label for this
computer, a recommended pick, the bundled model as "try now, low quality", and downloads that
resume, verify and end by offering the model to the open group (docs/models.md)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from engine.errors import MascotError
from engine.models.catalog import (
    FIT,
    NO_FIT,
    SLOW,
    CatalogEntry,
    Fit,
    entry_need,
    file_need,
    fit,
    gb,
    load_catalog,
    memory_info,
    recommend,
)
from engine.models.hub import DownloadStatus, download_gguf
from engine.models.registry import BUNDLED_NAME, bundled_model_path

from . import theme
from .item_models import ListTableModel
from .workers import CallWorker, Runner, Worker

ROW = Qt.ItemDataRole.UserRole + 1
Index = QModelIndex | QPersistentModelIndex
BUNDLED_ID = "bundled"
INSTALLED = "installed"
MARK = {FIT: "✓ Fits", SLOW: "⚠ May be slow", NO_FIT: "✗ Won't fit"}


@dataclass
class Offer:
    """One row: a catalog entry (or the bundled model), its fit, and whether it is on disk."""

    id: str
    name: str
    size: int
    fit: Fit
    entry: CatalogEntry | None = None
    installed: str = ""  # registry name when downloaded already
    recommended: bool = False

    @property
    def label(self) -> str:
        if self.entry is None:
            return "Installed · try now, low quality"
        text = MARK[self.fit.label]
        if self.installed:
            text = "Installed · " + text
        return text + (" · recommended" if self.recommended else "")


class CatalogTableModel(ListTableModel):
    COLUMNS = ("Model", "Download", "Memory needed", "On this computer", "Licence")

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        o, col = self.items[index.row()], index.column()
        if role == ROW:
            return o
        if role == Qt.ItemDataRole.DisplayRole:
            e = o.entry
            name = o.name if e is None else f"{o.name} · {e.quantization}"
            size = f"{o.size / 1e9:.2f} GB" if o.size >= 1e9 else f"{o.size / 1e6:,.0f} MB"
            return (
                ("★ " if o.recommended else "") + name,
                size,
                gb(o.fit.need),
                o.label,
                e.licence if e else "Apache-2.0",
            )[col]
        if role == Qt.ItemDataRole.ToolTipRole:
            e = o.entry
            if col == 3:
                return o.fit.reason
            return (
                e.good_for
                if e
                else "The 135M model that ships with Mascot: it works everywhere, "
                "but replies are often generic."
            )
        if role == Qt.ItemDataRole.ForegroundRole and col == 3:
            colour = {FIT: theme.OK, SLOW: "#b26b00", NO_FIT: theme.DANGER}[o.fit.label]
            return QColor(theme.MUTED if o.entry is None else colour)
        if role == Qt.ItemDataRole.FontRole and o.recommended and col == 0:
            f = QFont()
            f.setBold(True)
            return f
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (1, 2):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def row_of(self, offer_id: str) -> int:
        return next((i for i, o in enumerate(self.items) if o.id == offer_id), -1)


def build_offers(
    entries: list[CatalogEntry],
    installed: dict[str, str],
    *,
    companions: int,
    n_ctx: int,
    history_tokens: int,
    memory: tuple[int, int],
) -> list[Offer]:
    """The page's rows: the bundled model first, then the catalog (best first) with fit labels
    for ``companions`` companions at ``n_ctx`` tokens; the first that fits is recommended."""
    total, available = memory
    kw = {"n_ctx": n_ctx, "companions": companions, "history_tokens": history_tokens}
    fits = {e.id: fit(entry_need(e, **kw), total, available) for e in entries}
    pick = recommend(entries, fits)
    offers = []
    try:
        path = bundled_model_path()
        offers.append(
            Offer(
                BUNDLED_ID,
                "SmolLM2 135M Instruct (bundled)",
                path.stat().st_size,
                fit(file_need(path, **kw), total, available),
                installed=BUNDLED_NAME,
            )
        )
    except (MascotError, OSError):
        pass
    for e in entries:
        offers.append(
            Offer(
                e.id,
                e.name,
                e.size_bytes,
                fits[e.id],
                e,
                installed.get(e.file, ""),
                recommended=e.id == pick,
            )
        )
    return offers


class GetModelsPage(QWidget):
    """Shows the catalog and downloads one entry at a time. ``registered(name)`` fires when a
    download is registered; ``use_for_group(name)`` when the user accepts it for the group."""

    download_finished = Signal(bool)
    registered = Signal(str)
    use_for_group = Signal(str)

    def __init__(
        self,
        session: Any,
        models_dir: Any,
        parent: QWidget | None = None,
        memory: tuple[int, int] | None = None,
    ):
        super().__init__(parent)
        self.session = session
        self.models_dir = models_dir
        self.memory = memory
        self.runner = Runner(self)
        self.job: Worker | None = None
        self.closing = False  # closing the dialog pauses (keeps the .part) instead of deleting
        self._ok = False
        self._last_name = ""
        self.entries: list[CatalogEntry] = []
        self.installed: dict[str, str] = {}
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 8, 0, 0)
        lay.setSpacing(8)
        self.header = QLabel()
        self.header.setObjectName("Subtle")
        self.header.setWordWrap(True)
        lay.addWidget(self.header)

        self.model = CatalogTableModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        head = self.table.horizontalHeader()
        head.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, 4):
            head.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        head.setSectionResizeMode(4, QHeaderView.ResizeMode.Interactive)
        head.resizeSection(4, 190)  # licence names are long; the full name is in the details below
        self.table.setMinimumHeight(250)
        lay.addWidget(self.table, 1)

        self.details = QLabel()
        self.details.setWordWrap(True)
        self.details.setOpenExternalLinks(True)
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setMinimumHeight(48)
        lay.addWidget(self.details)

        row = QHBoxLayout()
        self.download_button = QPushButton("Download")
        self.download_button.setObjectName("Primary")
        self.download_button.clicked.connect(lambda: self.download(self.selected()))
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.use_button = QPushButton("Use for this group")
        self.use_button.setToolTip(
            "Every companion of the open group, and the Director, use this model"
        )
        self.use_button.clicked.connect(self._use)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress_label = QLabel()
        self.progress_label.setObjectName("Hint")
        row.addWidget(self.download_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.progress, 1)
        row.addWidget(self.progress_label)
        row.addWidget(self.use_button)
        lay.addLayout(row)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.status)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._selected_changed())
        self.reload()

    # -- rows -------------------------------------------------------------------------------------
    def companions(self) -> int:
        return max(1, len(self.session.members.names()))

    def reload(self) -> None:
        """Recompute the rows (catalog, memory now, the open group's size, what is installed)."""
        current = self.selected()
        try:
            self.entries = load_catalog()
        except MascotError as e:
            self.entries = []
            self.show_status(str(e), ok=False)
        memory = self.memory or memory_info()
        s = self.session.settings
        n = self.companions()
        offers = build_offers(
            self.entries,
            self.installed,
            companions=n,
            n_ctx=s.context_size,
            history_tokens=s.history_tokens,
            memory=memory,
        )
        self.model.set_items(offers)
        total, available = memory
        self.header.setText(
            f"For this computer: {gb(total)} of memory, {gb(available)} free now · sized for "
            f"{n} companion{'s' if n != 1 else ''} and the Director with "
            f"{s.context_size:,} tokens of context. ★ marks the best model that fits."
        )
        pick = next((o.id for o in offers if o.recommended), None)
        i = self.model.row_of(current or pick or BUNDLED_ID)
        if i >= 0:
            self.table.selectRow(i)
        self._selected_changed()

    def set_installed(self, models: list[Any]) -> None:
        """Registered models (``ModelInfo``): catalog files among them show as installed."""
        from pathlib import Path

        self.installed = {Path(m.path).name: m.name for m in models if not m.bundled}
        self.reload()

    def selected(self) -> str | None:
        idx = self.table.currentIndex()
        return self.model.items[idx.row()].id if idx.isValid() else None

    def offer(self, offer_id: str | None) -> Offer | None:
        i = self.model.row_of(offer_id or "")
        return self.model.items[i] if i >= 0 else None

    def _selected_changed(self) -> None:
        o = self.offer(self.selected())
        busy = self.job is not None
        if o is None:
            self.details.clear()
        elif o.entry is None:
            self.details.setText(
                "<b>SmolLM2 135M Instruct</b>, bundled with Mascot: try now, low quality. "
                "It runs on any computer but its replies are often generic; pick a larger "
                "model below for real conversations."
            )
        else:
            e = o.entry
            sums = (
                f"sha256 {e.sha256[:12]}…"
                if e.sha256
                else (
                    "md5 " + e.md5[:12] + "…"
                    if e.md5
                    else "sha256 checked against the Hub at download"
                )
            )
            self.details.setText(
                f"<b>{e.name}</b> — {e.good_for}<br><span style='color:{theme.MUTED}'>{e.repo} · {e.file} · "
                f"{e.parameters / 1e9:.2f}B parameters · context {e.context_length:,} · {sums} · "
                f"<a href='{e.licence_url}'>{e.licence}</a> · {o.fit.reason}</span>"
            )
        self.download_button.setEnabled(
            not busy
            and o is not None
            and o.entry is not None
            and not o.installed
            and o.fit.label != NO_FIT
        )
        part = (
            self.models_dir() / (o.entry.file + ".part")
            if o is not None and o.entry is not None
            else None
        )
        done = part.stat().st_size if part is not None and part.is_file() else 0
        self.download_button.setText(
            f"Resume ({done / 1e6:,.0f} MB done)" if done and not busy else "Download"
        )
        self.use_button.setEnabled(not busy and o is not None and bool(o.installed))

    def show_status(self, text: str, ok: bool = True) -> None:
        self.status.setStyleSheet(f"color: {theme.OK if ok else theme.DANGER};")
        self.status.setText(text)

    # -- download ---------------------------------------------------------------------------------
    def download(self, offer_id: str | None) -> None:
        o = self.offer(offer_id)
        if self.job is not None or o is None or o.entry is None:
            return
        e = o.entry
        self._last_name = e.id
        self.show_status(f"Connecting to the Hugging Face Hub for {e.file}…")
        self.progress.setValue(0)
        self.progress_label.clear()
        fetch = partial(
            download_gguf,
            revision=e.revision,
            sha256=e.sha256,
            md5=e.md5,
            size=e.size_bytes,
            name=e.id,
            keep_partial=lambda: self.closing,
        )
        job = CallWorker(
            fetch,
            e.repo,
            e.file,
            self.models_dir(),
            store=self.session.store,
            name="catalog-download",
        )
        job.item.connect(self._progress)
        job.done.connect(lambda path: self._done(e, None))
        job.finished.connect(self._finished)
        self.job = job
        self.cancel_button.setEnabled(True)
        self._selected_changed()
        self.runner.start(job, on_error=lambda msg: self._done(e, msg))

    def _progress(self, report: tuple[int, int, DownloadStatus]) -> None:
        done, total, status = report
        if total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(done * 1000 / total))
        else:
            self.progress.setRange(0, 0)
        size = f"{done / 1e6:,.0f} of {total / 1e6:,.0f} MB" if total else f"{done / 1e6:,.0f} MB"
        extra = status.describe(done, total)
        resumed = (
            f" · resumed at {status.resumed_from / 1e6:,.0f} MB" if status.resumed_from else ""
        )
        self.progress_label.setText(size + (f" · {extra}" if extra else "") + resumed)

    def _done(self, e: CatalogEntry, error: str | None) -> None:
        cancelled = self.job is not None and self.job.cancelled
        self.progress.setRange(0, 1000)
        self._ok = error is None
        if error is None:
            self.progress.setValue(1000)
            self.installed[e.file] = e.id
            self.show_status(
                f"Downloaded and verified {e.name}; it is in your models. Click “Use for this "
                "group” to let the open group talk with it."
            )
            self.registered.emit(e.id)
        elif cancelled:
            self.progress.setValue(0)
            self.progress_label.clear()
            self.show_status(error, ok=True)
        else:
            self.progress.setValue(0)
            self.show_status(error, ok=False)
            self.session.error.emit(error)

    def _finished(self) -> None:
        self.job = None
        self.cancel_button.setEnabled(False)
        self.reload()
        if self._ok:
            i = self.model.row_of(self._last_name)
            if i >= 0:
                self.table.selectRow(i)
        self.download_finished.emit(self._ok)

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.cancel_button.setEnabled(False)

    def _use(self) -> None:
        o = self.offer(self.selected())
        if o is not None and o.installed:
            self.use_for_group.emit(o.installed)

    def shutdown(self) -> None:
        self.closing = True
        self.runner.stop_all()
