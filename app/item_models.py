"""Qt item models that adapt engine state for the views.

The views never reach into the engine: they read these models, and the session updates them
from engine events and store rows.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable

from PySide6.QtCore import (
    QAbstractListModel,
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QColor, QFont, QIcon

from . import avatars, theme

ROW = Qt.ItemDataRole.UserRole + 1  # the whole row as a dict
Index = QModelIndex | QPersistentModelIndex


def local_time(iso: str | None) -> datetime:
    """An engine timestamp (UTC ISO) as local time."""
    try:
        dt = datetime.fromisoformat(iso) if iso else datetime.now(timezone.utc)
    except ValueError:
        dt = datetime.now(timezone.utc)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone()


def when(iso: str | None) -> str:
    """'14:02' today, 'Mon' this week, '3 Mar' otherwise."""
    dt, now = local_time(iso), datetime.now().astimezone()
    if dt.date() == now.date():
        return dt.strftime("%H:%M")
    if (now - dt).days < 6:
        return dt.strftime("%a")
    return f"{dt.day} {dt.strftime('%b')}"


class RowListModel(QAbstractListModel):
    """A list of dict rows; ``ROW`` returns the dict, subclasses render the display roles."""

    def __init__(self, parent: Any = None):
        super().__init__(parent)
        self.rows: list[dict[str, Any]] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row = self.rows[index.row()]
        if role == ROW:
            return row
        return self.render(row, role)

    def render(self, row: dict[str, Any], role: int) -> Any:
        return row.get("text") if role == Qt.ItemDataRole.DisplayRole else None

    def reset(self, rows: list[dict[str, Any]]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def append(self, row: dict[str, Any]) -> int:
        n = len(self.rows)
        self.beginInsertRows(QModelIndex(), n, n)
        self.rows.append(row)
        self.endInsertRows()
        return n

    def update(self, i: int, **fields: Any) -> None:
        self.rows[i].update(fields)
        idx = self.index(i)
        self.dataChanged.emit(idx, idx)

    def remove(self, i: int) -> None:
        self.beginRemoveRows(QModelIndex(), i, i)
        del self.rows[i]
        self.endRemoveRows()

    def find(self, pred: Callable[[dict[str, Any]], bool], last: bool = False) -> int:
        order = range(len(self.rows) - 1, -1, -1) if last else range(len(self.rows))
        return next((i for i in order if pred(self.rows[i])), -1)


class MessageListModel(RowListModel):
    """Rows: id, role (user | companion | safety | notice), speaker, text, created, color,
    avatar, directive, status, variant, variants, streaming, edited."""

    def find_id(self, mid: int | None) -> int:
        return -1 if mid is None else self.find(lambda r: r.get("id") == mid)

    def find_streaming(self, speaker: str) -> int:
        return self.find(
            lambda r: r.get("streaming") and r.get("id") is None and r.get("speaker") == speaker,
            last=True,
        )


class ConversationListModel(RowListModel):
    """The stored conversations (newest first); renaming through the view renames in the store."""

    def __init__(self, store: Any, parent: Any = None):
        super().__init__(parent)
        self.store = store
        self.search = ""
        self.rename: Callable[[int, str], None] | None = None

    def refresh(self, search: str | None = None) -> None:
        if search is not None:
            self.search = search
        self.reset(self.store.conversations(self.search.strip()))

    def row_of(self, cid: int | None) -> int:
        return self.find(lambda r: r["id"] == cid)

    def flags(self, index: Index) -> Qt.ItemFlag:
        return super().flags(index) | Qt.ItemFlag.ItemIsEditable

    def render(self, row: dict[str, Any], role: int) -> Any:
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return (
                row["title"]
                if role == Qt.ItemDataRole.EditRole
                else f"{row['title']}\n{row['group_name']} · {when(row['updated'])}"
            )
        if role == Qt.ItemDataRole.ToolTipRole:
            n = row.get("n_messages", 0)
            last = f"{local_time(row['updated']):%d %b %Y, %H:%M}"
            return f"{row['title']}\n{n} message{'s' * (n != 1)} · last active {last}"
        return None

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid() or not str(value).strip():
            return False
        row = self.rows[index.row()]
        if self.rename is not None:
            self.rename(row["id"], str(value))
        row["title"] = str(value).strip()[:200]
        self.dataChanged.emit(index, index)
        return True


class MemberListModel(RowListModel):
    """A conversation's companions. Checked = takes part; unchecked = muted."""

    def __init__(self, parent: Any = None):
        super().__init__(parent)
        self.set_muted: Callable[[str, bool], None] | None = None

    def set_members(self, personas: list[Any], muted: set[str]) -> None:
        self.reset([{"persona": p, "name": p.name, "muted": p.name in muted} for p in personas])

    def flags(self, index: Index) -> Qt.ItemFlag:
        return super().flags(index) | Qt.ItemFlag.ItemIsUserCheckable

    def render(self, row: dict[str, Any], role: int) -> Any:
        p = row["persona"]
        if role == Qt.ItemDataRole.DisplayRole:
            role_text = p.role if len(p.role) <= 38 else p.role[:37].rstrip() + "…"
            return f"{p.name}{'  (muted)' if row['muted'] else ''}\n{role_text}"
        if role == Qt.ItemDataRole.DecorationRole:
            return QIcon(avatars.pixmap(p.avatar, p.name, p.color, 32))
        if role == Qt.ItemDataRole.CheckStateRole:
            return Qt.CheckState.Unchecked if row["muted"] else Qt.CheckState.Checked
        if role == Qt.ItemDataRole.ForegroundRole and row["muted"]:
            return QColor(theme.FAINT)
        if role == Qt.ItemDataRole.ToolTipRole:
            model = p.model or "group default model"
            return (
                f"{p.name}: {p.role}\nTraits: {', '.join(p.traits)}\nModel: {model}\n"
                f"{'Muted: tick to let them speak' if row['muted'] else 'Untick to mute'}"
            )
        return None

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.CheckStateRole or not index.isValid():
            return False
        muted = Qt.CheckState(value) != Qt.CheckState.Checked
        row = self.rows[index.row()]
        if self.set_muted is not None:
            self.set_muted(row["name"], muted)
        self.update(index.row(), muted=muted)
        return True

    def names(self) -> list[str]:
        return [r["name"] for r in self.rows]


def written_by(row: dict[str, Any]) -> str:
    """ "Written by MODEL with ADAPTER": which weights wrote a reply ("" when unknown)."""
    model, adapter = row.get("model") or "", row.get("adapter") or ""
    if not model:
        return ""
    return f"Written by {model}" + (f" with {adapter}" if adapter else "")


class DirectorLogModel(RowListModel):
    """Each turn's decision: round, speaker, directive, source, valid, seconds (+ color, avatar,
    and the model and adapter that wrote the reply)."""

    def note_reply(self, speaker: str, model: str, adapter: str) -> None:
        """The reply of the last turn given to ``speaker`` was written by ``model``/``adapter``."""
        i = self.find(lambda r: r.get("speaker") == speaker, last=True)
        if i >= 0:
            self.update(i, model=model, adapter=adapter)

    def render(self, row: dict[str, Any], role: int) -> Any:
        if role == Qt.ItemDataRole.DecorationRole and row.get("speaker"):
            return QIcon(
                avatars.pixmap(row.get("avatar", ""), row["speaker"], row.get("color", ""), 22)
            )
        if role == Qt.ItemDataRole.DisplayRole:
            who = row.get("speaker") or "ends the round"
            why = row.get("directive") or (
                "(free turn, no directive)" if row.get("speaker") else ""
            )
            src = row.get("source") or ""
            head = f"Round {row.get('round', '?')} · {who}"
            if src and src != "director":
                head += f"  ({src})"
            return f"{head}\n{why}" if why else head
        if role == Qt.ItemDataRole.ForegroundRole and not row.get("speaker"):
            return QColor(theme.MUTED)
        if role == Qt.ItemDataRole.ToolTipRole:
            secs = row.get("seconds")
            extra = f", decided in {secs:.1f} s" if isinstance(secs, (int, float)) and secs else ""
            valid = (
                ""
                if row.get("valid", True)
                else "; the Director's answer was unusable, so the rules chose"
            )
            by = written_by(row)
            return f"Chosen by: {row.get('source') or 'director'}{extra}{valid}" + (
                f"\n{by}" if by else ""
            )
        return None


class MemoryListModel(RowListModel):
    """What the companions remember (store.memories rows): text, pinned, source, the conversation
    it came from."""

    SOURCES = {"auto": "you said it", "pinned": "you pinned a message", "typed": "you added it"}

    def render(self, row: dict[str, Any], role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            pin = "Pinned · " if row.get("pinned") else ""
            where = row.get("conversation_title")
            origin = self.SOURCES.get(row.get("source", ""), row.get("source", ""))
            tail = f"{pin}{origin} · {when(row.get('created'))}" + (
                f" · in “{where}”" if where else ""
            )
            return f"{row.get('text', '')}\n{tail}"
        if role == Qt.ItemDataRole.FontRole and row.get("pinned"):
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                "Pinned: always in the companions' notes."
                if row.get("pinned")
                else "In the companions' notes when the conversation touches it."
            )
        return None

    def row_of(self, fid: int | None) -> int:
        return -1 if fid is None else self.find(lambda r: r.get("id") == fid)


class LoreListModel(RowListModel):
    """The group's lorebook entries (store.lore_entries rows): keys, text and flags."""

    def render(self, row: dict[str, Any], role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            head = (
                "Always in"
                if row.get("constant")
                else ", ".join(row.get("keys") or []) or "(no keys)"
            )
            if row.get("selective") and row.get("secondary_keys"):
                head += "  +  " + ", ".join(row["secondary_keys"])
            if row.get("name"):
                head = f"{row['name']} · {head}"
            text = " ".join(str(row.get("content", "")).split())
            text = text if len(text) <= 90 else text[:89].rsplit(" ", 1)[0] + "…"
            flags = [
                f
                for f, on in (
                    ("off", not row.get("enabled", True)),
                    ("case-sensitive", row.get("case_sensitive")),
                    ("before the character", row.get("position") == "before_char"),
                )
                if on
            ]
            order = f"order {row.get('insertion_order', 100):g}"
            return f"{head}\n{text}\n{' · '.join([order, *flags])}"
        if role == Qt.ItemDataRole.ForegroundRole and not row.get("enabled", True):
            return QColor(theme.FAINT)
        if role == Qt.ItemDataRole.ToolTipRole:
            return str(row.get("content", ""))
        return None

    def row_of(self, eid: int | None) -> int:
        return -1 if eid is None else self.find(lambda r: r.get("id") == eid)


class ListTableModel(QAbstractTableModel):
    """A table over a plain list of items, one per row, with fixed column titles."""

    COLUMNS: tuple[str, ...] = ()

    def __init__(self, parent: Any = None):
        super().__init__(parent)
        self.items: list[Any] = []

    def set_items(self, items: list[Any]) -> None:
        self.beginResetModel()
        self.items = list(items)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.items)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        return None


class ModelTableModel(ListTableModel):
    """Registered models (``engine.models.registry.ModelInfo``)."""

    COLUMNS = ("Name", "Size", "Quantization", "Context", "SHA-256")

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        m = self.items[index.row()]
        col = index.column()
        if role == ROW:
            return m
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                f"{m.name}{'  (bundled)' if m.bundled else ''}",
                f"{m.size / 1e6:,.0f} MB",
                m.quantization,
                f"{m.context_length:,}" if m.context_length else "?",
                f"{m.sha256[:12]}…" if m.sha256 else "",
            )[col]
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{m.path}\nsha256 {m.sha256}\n{m.architecture}, {m.parameters / 1e6:,.0f}M parameters"
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (1, 3):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def name_at(self, row: int) -> str | None:
        return self.items[row].name if 0 <= row < len(self.items) else None
