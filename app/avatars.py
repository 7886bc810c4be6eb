"""Round avatars: a persona's emoji on a soft tint of its colour, or its initial on the colour
when no installed font can draw the emoji (so a missing emoji font never shows empty boxes)."""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QFontMetrics, QPainter, QPixmap
from PySide6.QtWidgets import QApplication

from . import theme

_IGNORABLE = {0xFE0F, 0xFE0E, 0x200D}


@lru_cache(maxsize=1)
def _emoji_family() -> str:
    for family in QFontDatabase.families():
        if "emoji" in family.lower():
            return family
    return ""


@lru_cache(maxsize=256)
def drawable(text: str) -> bool:
    """Whether the avatar text can be drawn with the installed fonts."""
    if not text:
        return False
    if _emoji_family() and any(ord(ch) > 0x2000 for ch in text):
        return True
    fm = QFontMetrics(QApplication.font())
    return all(fm.inFontUcs4(ord(ch)) for ch in text if ord(ch) not in _IGNORABLE)


def glyph(avatar: str, name: str) -> tuple[str, bool]:
    """(text to draw, is_symbol): the avatar if drawable, else the name's initial."""
    avatar = (avatar or "").strip()
    if avatar and drawable(avatar):
        return avatar, not avatar[:1].isalnum()
    return (name[:1] or "?").upper(), False


@lru_cache(maxsize=512)
def pixmap(avatar: str, name: str, color: str, size: int = 36, ratio: float = 2.0) -> QPixmap:
    text, symbol = glyph(avatar, name)
    px = QPixmap(int(size * ratio), int(size * ratio))
    px.fill(Qt.GlobalColor.transparent)
    px.setDevicePixelRatio(ratio)
    p = QPainter(px)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    base = QColor(color or theme.MUTED)
    fill = QColor(base)
    if symbol:
        fill = QColor.fromHslF(base.hslHueF(), min(base.hslSaturationF(), 0.6), 0.93)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(fill)
    p.drawEllipse(QRectF(0, 0, size, size))
    font = QFont(QApplication.font())
    if symbol and _emoji_family():
        font.setFamilies([_emoji_family(), font.family()])
    font.setPixelSize(int(size * (0.5 if symbol else 0.44)))
    font.setBold(not symbol)
    p.setFont(font)
    p.setPen(QColor(theme.readable_on(fill.name())))
    p.drawText(QRectF(0, 0, size, size), Qt.AlignmentFlag.AlignCenter, text)
    p.end()
    return px
