"""The main window as the app tests open it (real Qt, offscreen; small replies on the bundled model)."""

from app.config import AppSettings
from app.window import MainWindow


def open_window(qtbot, settings=None):
    """A shown MainWindow at 1280x820; ``settings`` default: first-run notices dismissed, 12-token replies."""
    if settings is None:
        settings = AppSettings(
            override_sampling=True,
            max_tokens=12,
            threads=1,
            disclosure_seen=True,
            show_director=False,
        )
        settings.save()
    w = MainWindow(settings)
    qtbot.addWidget(w)
    w.resize(1280, 820)
    w.show()
    qtbot.waitExposed(w)
    return w
