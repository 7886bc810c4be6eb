"""Icons from ``assets/icons`` (stroke SVGs drawn in ``currentColor``), tinted on load."""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QIcon, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

from engine.paths import assets_dir

from . import theme


def icons_dir():
    return assets_dir() / "icons"


@lru_cache(maxsize=None)
def _svg(name: str) -> str:
    path = icons_dir() / f"{name}.svg"
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def pixmap(name: str, color: str = theme.MUTED, size: int = 18, ratio: float = 2.0) -> QPixmap:
    """The icon ``name`` drawn in ``color`` (an empty pixmap if the file is missing)."""
    px = QPixmap(QSize(int(size * ratio), int(size * ratio)))
    px.fill(Qt.GlobalColor.transparent)
    svg = _svg(name)
    if svg:
        renderer = QSvgRenderer(QByteArray(svg.replace("currentColor", color).encode("utf-8")))
        painter = QPainter(px)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter, QRectF(0, 0, px.width(), px.height()))
        painter.end()
    px.setDevicePixelRatio(ratio)
    return px


@lru_cache(maxsize=None)
def icon(name: str, color: str = theme.MUTED, active: str | None = None) -> QIcon:
    """An icon in ``color``; ``active`` (optional) is used when the button is checked/hovered."""
    ic = QIcon()
    for size in (16, 18, 20, 24):
        ic.addPixmap(pixmap(name, color, size), QIcon.Mode.Normal, QIcon.State.Off)
        ic.addPixmap(pixmap(name, theme.DISABLED, size), QIcon.Mode.Disabled, QIcon.State.Off)
        if active:
            ic.addPixmap(pixmap(name, active, size), QIcon.Mode.Normal, QIcon.State.On)
            ic.addPixmap(pixmap(name, active, size), QIcon.Mode.Active, QIcon.State.Off)
    return ic


@lru_cache(maxsize=1)
def app_icon() -> QIcon:
    path = icons_dir() / "mascot.svg"
    return QIcon(str(path)) if path.is_file() else QIcon()
