"""Create or edit one persona, validated live by the engine (``persona_from_dict``).

Every change re-validates the form; the first problem is shown in one line that names the field,
that field is outlined, and Save stays disabled until the persona is valid.
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QColorDialog,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine.card_files import export_card
from engine.errors import MascotError, PersonaError
from engine.personas import DEFAULT_SAMPLING, Persona, default_color, persona_from_dict

from . import avatars, theme

GROUP_DEFAULT = "Group default (bundled model)"
CARD_FILTERS = {
    "Character Card V2, PNG (*.png)": "chara_card_v2",
    "Character Card V2, JSON (*.json)": "chara_card_v2",
    "Character Card V3, PNG (*.png)": "chara_card_v3",
    "Character Card V3, JSON (*.json)": "chara_card_v3",
}


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _box(lines: int) -> QPlainTextEdit:
    box = QPlainTextEdit()
    box.setTabChangesFocus(True)
    box.setFixedHeight(box.fontMetrics().lineSpacing() * lines + 18)
    return box


class PersonaEditor(QDialog):
    def __init__(
        self,
        persona: Persona | None = None,
        model_names: list[str] | None = None,
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.setWindowTitle(f"Edit {persona.name}" if persona else "New persona")
        self.setMinimumWidth(660)
        self.original = persona
        self.persona: Persona | None = None
        self.error = ""

        self.name = QLineEdit()
        self.avatar = QLineEdit()
        self.avatar.setMaximumWidth(80)
        self.avatar.setPlaceholderText("🙂")
        self.color = QLineEdit()
        self.color.setMaximumWidth(100)
        self.color.setPlaceholderText("#3a7bd5")
        self.pick = QPushButton("Pick…")
        self.pick.clicked.connect(self._pick_color)
        self.preview = QLabel()
        self.role = QLineEdit()
        self.role.setPlaceholderText("a warm listener who helps people feel heard")
        self.traits = QLineEdit()
        self.traits.setPlaceholderText("warm, patient, curious (comma-separated)")
        self.style = _box(3)
        self.style.setPlaceholderText("How they talk: length, tone, quirks")
        self.goals = _box(3)
        self.goals.setPlaceholderText("One goal per line")
        self.boundaries = _box(3)
        self.boundaries.setPlaceholderText("One per line: things they never do")
        self.examples = _box(3)
        self.examples.setPlaceholderText("One example line per line")
        self.model = QComboBox()
        self.model.addItem(GROUP_DEFAULT, None)
        for name in model_names or []:
            self.model.addItem(name, name)
        self.own_sampling = QCheckBox("Own settings")
        self.own_sampling.setToolTip("Use this companion's own temperature and reply length")
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.05)
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(8, 1024)
        self.max_tokens.setSuffix(" tokens")

        look = QHBoxLayout()
        look.setSpacing(8)
        look.addWidget(self.preview)
        look.addWidget(self.avatar)
        look.addSpacing(10)
        look.addWidget(QLabel("Colour"))
        look.addWidget(self.color)
        look.addWidget(self.pick)
        look.addStretch(1)
        sampling = QHBoxLayout()
        sampling.setSpacing(8)
        sampling.addWidget(self.own_sampling)
        sampling.addSpacing(8)
        sampling.addWidget(QLabel("Temperature"))
        sampling.addWidget(self.temperature)
        sampling.addSpacing(8)
        sampling.addWidget(QLabel("Longest reply"))
        sampling.addWidget(self.max_tokens)
        sampling.addStretch(1)

        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        form.setVerticalSpacing(8)
        form.setHorizontalSpacing(12)
        form.addRow("Name", self.name)
        form.addRow("Avatar", look)
        form.addRow("Role", self.role)
        form.addRow("Traits", self.traits)
        form.addRow("Speaking style", self.style)
        form.addRow("Goals", self.goals)
        form.addRow("Never", self.boundaries)
        form.addRow("Example lines", self.examples)
        form.addRow("Model", self.model)
        form.addRow("Sampling", sampling)

        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {theme.DANGER};")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.export_button = self.buttons.addButton(
            "Export card…", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.export_button.clicked.connect(self.export_dialog)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setObjectName("Primary")

        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.error_label)
        lay.addWidget(self.buttons)

        self.fields: dict[str, QWidget] = {
            "name": self.name,
            "role": self.role,
            "traits": self.traits,
            "speaking_style": self.style,
            "goals": self.goals,
            "boundaries": self.boundaries,
            "example_lines": self.examples,
            "color": self.color,
            "avatar": self.avatar,
            "model": self.model,
            "sampling": self.temperature,
        }
        self._fill(persona)
        for w in (self.name, self.avatar, self.color, self.role, self.traits):
            w.textChanged.connect(self.validate)
        for w in (self.style, self.goals, self.boundaries, self.examples):
            w.textChanged.connect(self.validate)
        self.model.currentIndexChanged.connect(self.validate)
        self.own_sampling.toggled.connect(self.validate)
        self.temperature.valueChanged.connect(self.validate)
        self.max_tokens.valueChanged.connect(self.validate)
        self.validate()

    # -- form <-> persona -------------------------------------------------------------------------
    def _fill(self, p: Persona | None) -> None:
        if p is None:
            self.temperature.setValue(DEFAULT_SAMPLING["temperature"])
            self.max_tokens.setValue(int(DEFAULT_SAMPLING["max_tokens"]))
            return
        self.name.setText(p.name)
        self.avatar.setText(p.avatar)
        self.color.setText(p.color)
        self.role.setText(p.role)
        self.traits.setText(", ".join(p.traits))
        self.style.setPlainText(p.speaking_style)
        self.goals.setPlainText("\n".join(p.goals))
        self.boundaries.setPlainText("\n".join(p.boundaries))
        self.examples.setPlainText("\n".join(p.example_lines))
        if p.model:
            if self.model.findData(p.model) < 0:
                self.model.addItem(p.model, p.model)
            self.model.setCurrentIndex(self.model.findData(p.model))
        s = p.sampling_settings()
        self.own_sampling.setChecked(bool(p.sampling))
        self.temperature.setValue(float(s["temperature"]))
        self.max_tokens.setValue(int(s["max_tokens"]))

    def to_dict(self) -> dict[str, Any]:
        base = self.original.to_dict() if self.original else {}
        sampling = dict(base.get("sampling") or {})
        if self.own_sampling.isChecked():
            sampling["temperature"] = round(self.temperature.value(), 2)
            tokens = self.max_tokens.value()
            if "max_tokens" in sampling or tokens != DEFAULT_SAMPLING["max_tokens"]:
                sampling["max_tokens"] = tokens
        else:
            sampling.pop("temperature", None)
            sampling.pop("max_tokens", None)
        return {
            **base,
            "name": self.name.text(),
            "role": self.role.text(),
            "traits": [t.strip() for t in self.traits.text().split(",") if t.strip()],
            "speaking_style": self.style.toPlainText(),
            "goals": _lines(self.goals.toPlainText()),
            "boundaries": _lines(self.boundaries.toPlainText()),
            "example_lines": _lines(self.examples.toPlainText()),
            "color": self.color.text().strip(),
            "avatar": self.avatar.text().strip(),
            "model": self.model.currentData(),
            "sampling": sampling,
            "extensions": base.get("extensions") or {},
        }

    def validate(self) -> bool:
        for w in self.fields.values():
            if w.property("invalid"):
                w.setProperty("invalid", False)
                w.style().unpolish(w)
                w.style().polish(w)
        self.temperature.setEnabled(self.own_sampling.isChecked())
        self.max_tokens.setEnabled(self.own_sampling.isChecked())
        try:
            self.persona = persona_from_dict(self.to_dict())
            self.error = ""
        except PersonaError as e:
            self.persona = None
            self.error = re.sub(r"^persona(?: '[^']*')?: ", "", str(e))
            m = re.search(r"field '([a-z_]+)", self.error)
            w = self.fields.get(m.group(1)) if m else None
            if w is not None:
                w.setProperty("invalid", True)
                w.style().unpolish(w)
                w.style().polish(w)
        self.error_label.setText(self.error)
        self.error_label.setVisible(bool(self.error))
        self.save_button.setEnabled(self.persona is not None)
        self.export_button.setEnabled(self.persona is not None)
        name = self.name.text().strip() or "?"
        color = self.color.text().strip()
        if not QColor.isValidColorName(color) or not color.startswith("#"):
            color = default_color(name)
        self.preview.setPixmap(avatars.pixmap(self.avatar.text().strip(), name, color, 30))
        return self.persona is not None

    def _pick_color(self) -> None:
        start = (
            QColor(self.color.text())
            if QColor.isValidColorName(self.color.text())
            else QColor(theme.ACCENT)
        )
        chosen = QColorDialog.getColor(start, self, "Persona colour")
        if chosen.isValid():
            self.color.setText(chosen.name())

    def accept(self) -> None:
        if self.validate():
            super().accept()

    # -- cards --------------------------------------------------------------------------------------
    def export_dialog(self) -> None:
        if self.persona is None:
            return
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export Character Card", f"{self.persona.name}.png", ";;".join(CARD_FILTERS)
        )
        if path:
            self.export_to(path, CARD_FILTERS.get(chosen, "chara_card_v2"))

    def export_to(self, path: str, spec: str = "chara_card_v2") -> bool:
        try:
            export_card(self.persona, path, spec=spec)
        except MascotError as e:
            self.error_label.setText(str(e))
            self.error_label.show()
            return False
        return True
