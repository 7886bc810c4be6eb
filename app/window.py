"""The main window: sidebar | chat (header, banners, bubbles, composer) | group and Director panels.

The window only composes views and routes signals; conversation logic lives in
:class:`app.session.ChatSession`, engine work in its workers.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from engine.data import check_plain_export
from engine.errors import MascotError
from engine.models.registry import BUNDLED_NAME
from engine.persona_files import list_sets
from engine.safety import DISCLOSURE, SCREENING_NOTE, SCREENING_NOTE_BY_LANG
from engine.storage import Store

from . import avatars, icons, theme, widgets
from .chat_view import ChatView
from .composer import Composer
from .config import AppSettings
from .diagnostics_dialog import DiagnosticsDialog
from .director_panel import DirectorPanel
from .group_panel import POLICIES, GroupPanel
from .lorebook_dialog import LorebookDialog
from .memory_panel import MemoryPanel
from .models_dialog import ModelsDialog
from .notify import Notifier
from .session import ChatSession
from .settings_dialog import SettingsDialog
from .sidebar import Sidebar
from .widgets import Banner, CardDropTarget, icon_button, resources_html

# The crisis banner's own words, in the language the user wrote in (the number, resources and
# disclosure come with the safety event).
CRISIS_TEXT = {
    "en": {
        "emergency": "This is an emergency.",
        "support": "You deserve support right now. Real people can help:",
        "call_first": "Call before anything else, or ask someone near you to call. If someone else is in "
        "danger, call for them.",
    },
    "de": {
        "emergency": "Das ist ein Notfall.",
        "support": "Du verdienst jetzt Unterstützung. Echte Menschen können helfen:",
        "call_first": "Ruf an, bevor du irgendetwas anderes tust, oder bitte jemanden in deiner Nähe "
        "anzurufen. Wenn jemand anderes in Gefahr ist, ruf für diese Person an.",
    },
    "fr": {
        "emergency": "C'est une urgence.",
        "support": "Tu mérites du soutien maintenant. De vraies personnes peuvent t'aider :",
        "call_first": "Appelle avant toute autre chose, ou demande à quelqu'un près de toi d'appeler. Si "
        "quelqu'un d'autre est en danger, appelle pour cette personne.",
    },
}

# The first-run choice (docs/models.md): the bundled model now, or a model that fits this computer.
FIRST_RUN_MODELS = (
    "Mascot starts on its small bundled model (SmolLM2 135M): it runs on any computer, but "
    'its replies are often generic. <a href="get">Get a model that fits this computer</a> '
    'for real conversations, or <a href="try">try the bundled one now</a>. '
    "(Later: Tools → Models → Get models.)"
)


class ChatHeader(QFrame):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("ChatHeader")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        row = QHBoxLayout(self)
        row.setContentsMargins(24, 10, 14, 10)
        row.setSpacing(10)
        self.faces = QHBoxLayout()
        self.faces.setSpacing(-8)
        col = QVBoxLayout()
        col.setSpacing(0)
        self.title = QLabel()
        self.title.setObjectName("HeaderTitle")
        self.subtitle = QLabel()
        self.subtitle.setObjectName("HeaderSubtitle")
        col.addWidget(self.title)
        col.addWidget(self.subtitle)
        row.addLayout(self.faces)
        row.addSpacing(4)
        row.addLayout(col, 1)
        self.group_toggle = icon_button("users", "Show the group panel", checkable=True, size=19)
        self.director_toggle = icon_button(
            "director", "Show the Director panel: why each companion spoke", checkable=True, size=19
        )
        row.addWidget(self.group_toggle)
        row.addWidget(self.director_toggle)

    def set_group(self, title: str, personas: list[Any], muted: set[str], policy: str) -> None:
        while self.faces.count():
            w = self.faces.takeAt(0).widget()
            if w is not None:
                w.deleteLater()
        for p in personas[:6]:
            face = QLabel()
            face.setPixmap(avatars.pixmap(p.avatar, p.name, p.color, 28))
            face.setToolTip(p.name)
            self.faces.addWidget(face)
        self.title.setText(title)
        names = ", ".join(p.name + (" (muted)" if p.name in muted else "") for p in personas)
        label = next((lbl for key, lbl, _ in POLICIES if key == policy), policy)
        self.subtitle.setText(f"{names}  ·  {label}")


class MainWindow(CardDropTarget, QMainWindow):
    def __init__(
        self,
        settings: AppSettings | None = None,
        *,
        notifier: Notifier | None = None,
        store: Store | None = None,
    ):
        super().__init__()
        self.setWindowTitle("Mascot")
        self.setWindowIcon(icons.app_icon())
        self.setAcceptDrops(True)
        self.notifier = notifier or Notifier(self)
        self.session = ChatSession(settings or AppSettings.load(), store, self)
        self._models_dialog: Any = None
        self._closed = False
        self._build()
        self._build_menus()
        self._connect()
        self._restore()
        self.session.start()
        self.session.prepare_voices()  # first run: the voices model is built in the background
        if not self.session.settings.disclosure_seen:
            self.disclosure.show_message(
                "Before you start", html.escape(f"{DISCLOSURE} {SCREENING_NOTE}")
            )
            self.models_banner.show_message("Choose a model", FIRST_RUN_MODELS)

    # -- building ---------------------------------------------------------------------------------
    def _build(self) -> None:
        self.sidebar = Sidebar(self.session.conversations)
        self.sidebar.setMinimumWidth(220)

        center = QWidget()
        center.setObjectName("ChatArea")
        center.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        col = QVBoxLayout(center)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(0)
        self.header = ChatHeader()
        col.addWidget(self.header)
        banners = QVBoxLayout()
        banners.setContentsMargins(24, 10, 24, 0)
        banners.setSpacing(8)
        self.disclosure = Banner("info")
        self.models_banner = Banner("info")
        self.crisis = Banner("danger")
        self.error_banner = Banner("warning")
        for b in (self.disclosure, self.models_banner, self.crisis, self.error_banner):
            banners.addWidget(b)
        col.addLayout(banners)
        self.chat_view = ChatView()
        self.chat_view.set_model(self.session.messages)
        col.addWidget(self.chat_view, 1)
        self.composer = Composer()
        col.addWidget(self.composer)

        self.side = QWidget()
        self.side.setObjectName("SidePanel")
        self.side.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        side = QVBoxLayout(self.side)
        side.setContentsMargins(0, 0, 0, 0)
        side.setSpacing(0)
        self.group_panel = GroupPanel(self.session)
        self.director_panel = DirectorPanel(self.session.director_log)
        self.side_split = QSplitter(Qt.Orientation.Vertical)
        self.side_split.addWidget(self.group_panel)
        self.side_split.addWidget(self.director_panel)
        self.memory_panel = MemoryPanel(self.session)
        self.side_split.addWidget(self.memory_panel)
        self.side_split.setHandleWidth(1)
        self.side_split.setChildrenCollapsible(False)
        side.addWidget(self.side_split)
        self.side.setMinimumWidth(260)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(center)
        self.splitter.addWidget(self.side)
        self.splitter.setHandleWidth(1)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setStretchFactor(1, 1)
        self.setCentralWidget(self.splitter)

        self.model_label = QLabel()
        self.model_label.setObjectName("Subtle")
        self.statusBar().addPermanentWidget(self.model_label)
        self.statusBar().setSizeGripEnabled(False)
        self._error_timer = QTimer(self)
        self._error_timer.setSingleShot(True)
        self._error_timer.setInterval(15_000)
        self._error_timer.timeout.connect(self.error_banner.hide)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self._action(file_menu, "New conversation", "Ctrl+N", self.new_conversation)
        self._action(file_menu, "Import Character Card…", "Ctrl+I", self.group_panel.import_dialog)
        self._action(
            file_menu,
            "Export conversation…",
            "Ctrl+E",
            lambda: self.export_conversation(self.session.cid),
        )
        file_menu.addSeparator()
        self._action(file_menu, "Quit", QKeySequence.StandardKey.Quit, self.close)
        view = bar.addMenu("&View")
        self.group_action = self._action(view, "Group panel", "Ctrl+G", None, checkable=True)
        self.director_action = self._action(view, "Director panel", "Ctrl+D", None, checkable=True)
        self.memory_action = self._action(
            view, "Memory: what they know about you", "Ctrl+Shift+M", None, checkable=True
        )
        self._action(
            view,
            "Search conversations",
            QKeySequence.StandardKey.Find,
            lambda: self.sidebar.search.setFocus(),
        )
        tools = bar.addMenu("&Tools")
        self._action(tools, "Models…", "Ctrl+M", self.open_models)
        self.lorebook_action = self._action(
            tools, "Group lorebook…", "Ctrl+Shift+L", self.open_lorebook
        )
        self._action(tools, "Settings…", "Ctrl+,", self.open_settings)
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "Diagnostics…", None, self.open_diagnostics)
        self._action(help_menu, "About Mascot", None, self.about)
        self.stop_shortcut = QShortcut(QKeySequence("Esc"), self, activated=self.session.stop)
        self.stop_shortcut.setEnabled(False)  # only while a round runs (Esc also cancels an edit)

    def _action(
        self, menu: Any, text: str, shortcut: Any, slot: Any, checkable: bool = False
    ) -> QAction:
        act = menu.addAction(text)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        act.setCheckable(checkable)
        if slot is not None:
            act.triggered.connect(lambda _checked=False: slot())
        return act

    def _connect(self) -> None:
        s = self.session
        s.error.connect(self.notifier.error)
        s.info.connect(self.notifier.info)
        self.notifier.posted.connect(self.notify)
        s.opened.connect(self._on_opened)
        s.members_changed.connect(self._update_header)
        s.busy_changed.connect(self._on_busy)
        s.typing_changed.connect(self.composer.typing.set_text)
        s.safety_raised.connect(self.show_crisis)
        self.composer.send_requested.connect(self.send)
        self.composer.stop_requested.connect(s.stop)
        self.chat_view.regenerate_requested.connect(s.regenerate)
        self.chat_view.edit_requested.connect(s.edit_message)
        self.chat_view.delete_requested.connect(s.delete_message)
        self.chat_view.variant_requested.connect(s.select_variant)
        self.chat_view.remember_requested.connect(s.remember_message)
        self.memory_action.toggled.connect(lambda on: self._show_panel(self.memory_panel, on))
        self.sidebar.new_requested.connect(s.new_conversation)
        self.sidebar.open_requested.connect(s.open_conversation)
        self.sidebar.delete_requested.connect(s.delete_conversation)
        self.sidebar.export_requested.connect(self.export_conversation)
        self.sidebar.models_requested.connect(self.open_models)
        self.sidebar.settings_requested.connect(self.open_settings)
        self.disclosure.closed.connect(self._disclosure_seen)
        self.models_banner.body.setOpenExternalLinks(False)
        self.models_banner.body.linkActivated.connect(self.first_run_choice)
        for toggle, action, panel in (
            (self.header.group_toggle, self.group_action, self.group_panel),
            (self.header.director_toggle, self.director_action, self.director_panel),
        ):
            toggle.toggled.connect(action.setChecked)
            action.toggled.connect(toggle.setChecked)
            action.toggled.connect(lambda on, p=panel: self._show_panel(p, on))

    def _restore(self) -> None:
        st = self.session.settings
        self.resize(1280, 820)
        if st.geometry:
            self.restoreGeometry(QByteArray.fromBase64(st.geometry.encode()))
        self.splitter.setSizes([250, 730, 300])
        if st.splitter:
            self.splitter.restoreState(QByteArray.fromBase64(st.splitter.encode()))
        group, director, memory = st.show_group, st.show_director, st.show_memory
        self.group_action.setChecked(group)
        self.director_action.setChecked(director)
        self._show_panel(self.group_panel, group)
        self._show_panel(self.director_panel, director)
        self.memory_action.setChecked(memory)
        self._show_panel(self.memory_panel, memory)

    # -- reacting to the session -------------------------------------------------------------------
    def _on_opened(self, cid: int) -> None:
        self.sidebar.select(cid)
        self.crisis.hide()
        self._update_header()
        title = self.session.conversation.get("title", "")
        self.setWindowTitle(f"{title} — Mascot" if title else "Mascot")

    def _update_header(self) -> None:
        chat = self.session.chat
        if chat is None:
            return
        conv = self.session.conversation
        self.header.set_group(conv.get("title", ""), chat.members, chat.muted, chat.settings.policy)
        title, description = _group_info(chat.group.name, conv.get("title", ""))
        self.chat_view.empty.set_group(title, description, chat.members)
        self.composer.set_placeholder(
            f"Message {', '.join(chat.names[:3])}{'…' if len(chat.names) > 3 else ''}"
        )
        models = sorted({p.model or chat.settings.model or BUNDLED_NAME for p in chat.members})
        self.model_label.setText(f"Model: {', '.join(models)}  ·  runs on this computer")

    def _on_busy(self, busy: bool) -> None:
        self.stop_shortcut.setEnabled(busy)
        self.composer.set_busy(busy)
        self.chat_view.set_busy(busy)

    def _show_panel(self, panel: QWidget, on: bool) -> None:
        panel.setVisible(on)
        self.side.setVisible(
            self.group_action.isChecked()
            or self.director_action.isChecked()
            or self.memory_action.isChecked()
        )
        st = self.session.settings
        st.show_group, st.show_director = (
            self.group_action.isChecked(),
            self.director_action.isChecked(),
        )
        st.show_memory = self.memory_action.isChecked()

    def _disclosure_seen(self) -> None:
        self.session.settings.disclosure_seen = True
        self.session.settings.save()

    # -- user actions -------------------------------------------------------------------------------
    def send(self, text: str) -> bool:
        if self.session.send(text):
            self.composer.clear()
            return True
        return False

    def new_conversation(self) -> None:
        group = self.session.conversation.get("group_name") or "support"
        self.session.new_conversation(group)

    def show_crisis(self, event: dict[str, Any]) -> None:
        resources = event.get("resources") or []
        call = event.get("emergency")
        if call:  # behaviour in progress: the emergency number first, in large type
            resources = sorted(resources, key=lambda r: not r.get("emergency"))
        lang = event.get("lang") if event.get("lang") in CRISIS_TEXT else "en"
        words = CRISIS_TEXT[lang]
        body = resources_html(resources, lang)
        note = f"{event.get('disclosure') or DISCLOSURE} {SCREENING_NOTE_BY_LANG.get(lang, SCREENING_NOTE)}"
        body += f"<br><span style='color:{theme.MUTED}'>{html.escape(note)}</span>"
        self.disclosure.hide()  # the crisis banner repeats it
        if call:
            first = (
                f"<span style='font-size:16pt; font-weight:700; color:{theme.DANGER}'>"
                f"{html.escape(call['text'])}</span><br>{html.escape(words['call_first'])}<br><br>"
            )
            self.crisis.show_message(words["emergency"], first + body)
        else:
            self.crisis.show_message(words["support"], body)

    def notify(self, level: str, text: str) -> None:
        self.statusBar().showMessage(text, 15_000 if level == "error" else 6_000)
        if level == "error":
            self.error_banner.show_message("", html.escape(text))
            self._error_timer.start()

    def open_models(self) -> Any:
        """Show the (single, non-modal) models window; a download goes on while it is hidden."""
        if self._models_dialog is None:
            self._models_dialog = ModelsDialog(self.session, self)
        else:
            self._models_dialog.refresh()
        self._models_dialog.show()
        self._models_dialog.raise_()
        return self._models_dialog

    def open_lorebook(self) -> Any:
        """Show the (single, non-modal) editor of the open group's lorebook."""
        dlg = getattr(self, "_lorebook_dialog", None)
        if dlg is None:
            dlg = self._lorebook_dialog = LorebookDialog(self.session, self)
        else:
            dlg.refresh()
        dlg.show()
        dlg.raise_()
        return dlg

    def first_run_choice(self, link: str) -> None:
        """The first-run banner's links: "get" opens the Get models page, "try" keeps the
        bundled model; either way the banner goes."""
        self.models_banner.hide()
        if link == "get":
            dlg = self.open_models()
            dlg.tabs.setCurrentWidget(dlg.get_page)

    def open_settings(self) -> None:
        SettingsDialog(self.session, self).exec()

    def export_conversation(self, cid: int | None) -> None:
        if cid is None:
            return
        title = self.session.store.conversation(cid)["title"]
        plain = self.session.store.encrypted
        if plain and not widgets.ask(
            self,
            "Export as a plain file",
            "Your history is encrypted, but the exported conversation is a plain file that "
            "anyone who has it can read. Export it anyway?",
            "Export as a plain file",
        ):
            return
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export conversation", f"{title}.md", "Markdown (*.md);;JSON (*.json)"
        )
        if path:
            self.export_conversation_to(cid, path, plain=plain)

    def export_conversation_to(self, cid: int, path: str, plain: bool = False) -> None:
        import json

        store = self.session.store
        try:
            check_plain_export(store, plain)
            text = (
                json.dumps(store.export_json(cid), indent=2, ensure_ascii=False, default=str)
                if path.lower().endswith(".json")
                else store.export_markdown(cid)
            )
            Path(path).write_text(text, encoding="utf-8")
        except (OSError, MascotError) as e:
            self.notifier.error(f"Could not export the conversation: {e}")
            return
        self.notifier.info(f"Saved the conversation to {path}.")

    def open_diagnostics(self) -> None:
        self.diagnostics = DiagnosticsDialog(self)
        self.diagnostics.show()

    def about(self) -> None:
        QMessageBox.about(
            self,
            "About Mascot",
            "<b>Mascot</b> — a private group chat with AI companions, running entirely on "
            f"this computer.<br><br>{html.escape(DISCLOSURE)}",
        )

    # -- closing --------------------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if not self._closed:
            self._closed = True
            st = self.session.settings
            st.geometry = bytes(self.saveGeometry().toBase64()).decode()
            st.splitter = bytes(self.splitter.saveState().toBase64()).decode()
            if self._models_dialog is not None:
                self._models_dialog.shutdown()
                self._models_dialog.close()
            self.sidebar.shutdown()
            self._error_timer.stop()
            self.session.shutdown()
            st.save()
            self.session.store.close()
        super().closeEvent(event)


def _group_info(group_name: str, fallback_title: str) -> tuple[str, str]:
    """The persona set's title and description (for the empty conversation view)."""
    for s in list_sets():
        if s.name == group_name:
            return s.title, s.description
    return fallback_title, ""
