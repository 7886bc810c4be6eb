"""Colours, fonts and the application style sheet (one light theme)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

from engine.paths import assets_dir

TEXT = "#1f2430"
MUTED = "#667085"
FAINT = "#98a2b3"
DISABLED = "#c4c9d4"
BORDER = "#e4e7ec"
SURFACE = "#ffffff"
CANVAS = "#f7f8fa"
SIDEBAR = "#f2f4f7"
ACCENT = "#5b5bd6"
ACCENT_DARK = "#4646c0"
ACCENT_SOFT = "#ececfc"
BUBBLE = "#f2f4f7"
DANGER = "#c62f2f"
DANGER_SOFT = "#fdf0f0"
DANGER_BORDER = "#f5c2c2"
WARN_SOFT = "#fff8ec"
WARN_BORDER = "#f8d49b"
INFO_SOFT = "#f0f1fd"
INFO_BORDER = "#d3d5f7"
OK = "#1f8a4c"


def base_font() -> QFont:
    f = QApplication.font()
    if f.pointSizeF() < 10:
        f.setPointSizeF(10)
    return f


STYLE = f"""
QWidget {{ color: {TEXT}; }}
QMainWindow, QDialog {{ background: {CANVAS}; }}
QToolTip {{ color: {TEXT}; background: {SURFACE}; border: 1px solid {BORDER}; padding: 4px 6px; }}

#Sidebar {{ background: {SIDEBAR}; border-right: 1px solid {BORDER}; }}
#Brand {{ font-size: 15pt; font-weight: 600; }}
#SidePanel {{ background: {SURFACE}; border-left: 1px solid {BORDER}; }}
#ChatArea, #ChatCanvas {{ background: {SURFACE}; }}
#ChatHeader {{ background: {SURFACE}; border-bottom: 1px solid {BORDER}; }}
#HeaderTitle {{ font-size: 13pt; font-weight: 600; }}
#Subtle, #HeaderSubtitle, #Time, #Hint {{ color: {MUTED}; }}
#Time, #Hint {{ font-size: 8.5pt; }}
#SectionTitle {{ font-size: 8.5pt; font-weight: 700; color: {MUTED}; letter-spacing: 0.5px; }}
#PanelTitle {{ font-size: 11pt; font-weight: 600; }}

QPushButton {{
    background: {SURFACE}; border: 1px solid {BORDER}; border-radius: 8px;
    padding: 6px 12px; min-height: 18px;
}}
QPushButton:hover {{ background: {CANVAS}; border-color: #d0d5dd; }}
QPushButton:pressed {{ background: {SIDEBAR}; }}
QPushButton:disabled {{ color: {DISABLED}; }}
QPushButton#Primary {{ background: {ACCENT}; color: white; border: 1px solid {ACCENT}; font-weight: 600; }}
QPushButton#Primary:hover {{ background: {ACCENT_DARK}; }}
QPushButton#Primary:disabled {{ background: #b9b9ee; border-color: #b9b9ee; color: white; }}
QPushButton#Danger {{ color: {DANGER}; }}
QPushButton#Danger:hover {{ background: {DANGER_SOFT}; border-color: {DANGER_BORDER}; }}
QPushButton#Danger:disabled {{ color: {MUTED}; }}
QPushButton#NewChat {{ background: {SURFACE}; font-weight: 600; text-align: left; padding: 8px 12px; }}
QPushButton#NewChat::menu-indicator {{ subcontrol-origin: padding; subcontrol-position: center right; right: 10px; }}

QToolButton {{ background: transparent; border: none; border-radius: 7px; padding: 5px; }}
QToolButton:hover {{ background: {SIDEBAR}; }}
QToolButton:checked {{ background: {ACCENT_SOFT}; }}
QToolButton#Flip {{ padding: 1px; color: {MUTED}; }}
QToolButton#Mini {{ padding: 3px; border-radius: 6px; }}
QToolButton#Mini:hover {{ background: #e8eaef; }}
QToolButton#SendButton {{ background: {ACCENT}; border-radius: 19px; }}
QToolButton#SendButton:hover {{ background: {ACCENT_DARK}; }}
QToolButton#SendButton:disabled {{ background: #c9c9f2; }}
QToolButton#StopButton {{ background: {TEXT}; border-radius: 19px; }}
QToolButton#StopButton:hover {{ background: #3a4152; }}
QToolButton#SideLink {{ text-align: left; padding: 7px 10px; color: {TEXT}; }}

QLineEdit, QPlainTextEdit, QTextEdit, QSpinBox, QDoubleSpinBox, QComboBox {{
    background: {SURFACE}; border: 1px solid {BORDER}; border-radius: 8px; padding: 5px 8px;
    selection-background-color: {ACCENT_SOFT}; selection-color: {TEXT};
}}
QLineEdit, QSpinBox, QDoubleSpinBox, QComboBox {{ min-height: 20px; }}
QLineEdit:focus, QPlainTextEdit:focus, QSpinBox:focus, QDoubleSpinBox:focus, QComboBox:focus {{
    border-color: {ACCENT};
}}
QLineEdit[invalid="true"], QPlainTextEdit[invalid="true"] {{ border: 1px solid {DANGER}; background: {DANGER_SOFT}; }}
QComboBox::drop-down {{ border: none; width: 22px; }}
QComboBox QAbstractItemView {{ background: {SURFACE}; border: 1px solid {BORDER}; selection-background-color: {ACCENT_SOFT}; selection-color: {TEXT}; }}
#Search {{ border-radius: 9px; padding: 6px 10px; background: {SURFACE}; }}

#Composer {{ background: {SURFACE}; border: 1px solid #d6dae1; border-radius: 22px; }}
#Composer[focused="true"] {{ border-color: {ACCENT}; }}
#ComposerEdit {{ background: transparent; border: none; padding: 6px 4px; }}

QListView, QTableView, QTreeView {{
    background: transparent; border: none; outline: none;
    selection-background-color: {ACCENT_SOFT}; selection-color: {TEXT};
}}
QListView::item {{ padding: 6px 8px; border-radius: 8px; }}
QListView::item:hover {{ background: #e9ecf1; }}
QListView::item:selected {{ background: {ACCENT_SOFT}; color: {TEXT}; }}
#MemberList::item {{ padding: 6px 4px; }}
#MemberList::item:hover {{ background: {CANVAS}; }}
#DirectorList::item {{ padding: 7px 2px; border-bottom: 1px solid {BORDER}; border-radius: 0; }}
#DirectorList::item:hover {{ background: transparent; }}
QTableView {{ background: {SURFACE}; border: 1px solid {BORDER}; border-radius: 8px; gridline-color: {BORDER}; }}
QTableView::item {{ padding: 4px 6px; }}
QHeaderView::section {{ background: {CANVAS}; color: {MUTED}; border: none; border-bottom: 1px solid {BORDER}; padding: 6px; font-weight: 600; }}

QGroupBox {{ background: {SURFACE}; border: 1px solid {BORDER}; border-radius: 10px; margin-top: 14px; padding: 14px 12px 10px 12px; }}
QGroupBox::title {{ subcontrol-origin: margin; left: 12px; padding: 0 4px; color: {MUTED}; font-weight: 600; }}

QProgressBar {{ background: {SIDEBAR}; border: none; border-radius: 5px; height: 10px; text-align: center; color: {MUTED}; }}
QProgressBar::chunk {{ background: {ACCENT}; border-radius: 5px; }}

QScrollBar:vertical {{ background: transparent; width: 10px; margin: 2px; }}
QScrollBar::handle:vertical {{ background: #d0d5dd; border-radius: 3px; min-height: 32px; }}
QScrollBar::handle:vertical:hover {{ background: #98a2b3; }}
QScrollBar::add-line, QScrollBar::sub-line {{ height: 0; width: 0; }}
QScrollBar::add-page, QScrollBar::sub-page {{ background: transparent; }}
QScrollBar:horizontal {{ background: transparent; height: 10px; margin: 2px; }}
QScrollBar::handle:horizontal {{ background: #d0d5dd; border-radius: 3px; min-width: 32px; }}

QSplitter::handle {{ background: {BORDER}; }}
QStatusBar {{ background: {CANVAS}; color: {MUTED}; border-top: 1px solid {BORDER}; }}
QStatusBar::item {{ border: none; }}
QMenuBar {{ background: {CANVAS}; border-bottom: 1px solid {BORDER}; }}
QMenuBar::item {{ padding: 4px 10px; background: transparent; }}
QMenuBar::item:selected {{ background: {SIDEBAR}; border-radius: 6px; }}
QMenu {{ background: {SURFACE}; border: 1px solid {BORDER}; padding: 4px; }}
QMenu::item {{ padding: 6px 22px 6px 12px; border-radius: 6px; }}
QMenu::item:selected {{ background: {ACCENT_SOFT}; color: {TEXT}; }}
QMenu::separator {{ height: 1px; background: {BORDER}; margin: 4px 8px; }}
QCheckBox {{ spacing: 8px; padding-right: 4px; }}
QPushButton#MenuButton {{ padding-right: 22px; }}
QPushButton#PlainMenu::menu-indicator {{ image: none; width: 0px; }}
QPushButton#MenuButton::menu-indicator {{ subcontrol-origin: padding; subcontrol-position: center right; right: 7px; }}
"""

# Indicators and arrows drawn from assets/icons (paths are filled in by ``style_sheet``).
ICON_STYLE = f"""
QListView::indicator, QCheckBox::indicator {{
    width: 15px; height: 15px; border: 1.5px solid #c4c9d4; border-radius: 4px; background: {SURFACE};
}}
QListView::indicator:checked, QCheckBox::indicator:checked {{
    background: {ACCENT}; border-color: {ACCENT}; image: url(@ICONS@/ui-check.svg);
}}
QCheckBox::indicator:disabled {{ background: {CANVAS}; border-color: {BORDER}; }}
QSpinBox, QDoubleSpinBox {{ padding-right: 20px; }}
QSpinBox::up-button, QDoubleSpinBox::up-button, QSpinBox::down-button, QDoubleSpinBox::down-button {{
    width: 18px; border: none; background: transparent; margin-right: 3px;
}}
QSpinBox::up-arrow, QDoubleSpinBox::up-arrow {{ image: url(@ICONS@/ui-chevron-up.svg); width: 11px; height: 11px; }}
QSpinBox::down-arrow, QDoubleSpinBox::down-arrow {{ image: url(@ICONS@/ui-chevron-down.svg); width: 11px; height: 11px; }}
QSpinBox::up-arrow:disabled, QSpinBox::down-arrow:disabled, QDoubleSpinBox::up-arrow:disabled,
QDoubleSpinBox::down-arrow:disabled {{ image: none; }}
QComboBox::down-arrow {{ image: url(@ICONS@/ui-chevron-down.svg); width: 12px; height: 12px; }}
"""


def style_sheet() -> str:
    return STYLE + ICON_STYLE.replace("@ICONS@", (assets_dir() / "icons").as_posix())


def apply(app: QApplication) -> None:
    """Fusion style, a light palette and the style sheet (same look on every platform)."""
    app.setStyle(QStyleFactory.create("Fusion"))
    pal = QPalette()
    for role, color in (
        (QPalette.ColorRole.Window, CANVAS),
        (QPalette.ColorRole.Base, SURFACE),
        (QPalette.ColorRole.AlternateBase, CANVAS),
        (QPalette.ColorRole.Text, TEXT),
        (QPalette.ColorRole.WindowText, TEXT),
        (QPalette.ColorRole.ButtonText, TEXT),
        (QPalette.ColorRole.Button, SURFACE),
        (QPalette.ColorRole.Highlight, ACCENT),
        (QPalette.ColorRole.HighlightedText, "#ffffff"),
        (QPalette.ColorRole.Link, ACCENT),
        (QPalette.ColorRole.ToolTipBase, SURFACE),
        (QPalette.ColorRole.ToolTipText, TEXT),
        (QPalette.ColorRole.PlaceholderText, FAINT),
    ):
        pal.setColor(role, QColor(color))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor(DISABLED))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText, QColor(DISABLED))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor(DISABLED))
    app.setPalette(pal)
    app.setFont(base_font())
    app.setStyleSheet(style_sheet())


def readable_on(color: str) -> str:
    """Black or white text, whichever reads better on ``color``."""
    c = QColor(color)
    lum = 0.2126 * c.redF() + 0.7152 * c.greenF() + 0.0722 * c.blueF()
    return TEXT if lum > 0.6 else "#ffffff"


def name_color(color: str) -> str:
    """A persona colour darkened enough to be readable as text on white."""
    c = QColor(color or MUTED)
    h, s, light, a = c.getHslF()
    if light > 0.42:
        c.setHslF(h, s, 0.42, a)
    return c.name()
