"""Save the Models dialog's "Get models" page as docs/get-models.png (fit labels as on this machine).

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/get_models_screenshot.py [OUT.png] [TOTAL_GB FREE_GB]

With TOTAL_GB FREE_GB the page is labelled for a simulated computer with that much memory.
"""

import os
import sys
import tempfile
from pathlib import Path


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/get-models.png")
    os.environ.setdefault("MASCOT_HOME", tempfile.mkdtemp(prefix="mascot-shot-"))
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app import theme
    from app.config import AppSettings
    from app.window import MainWindow

    app = QApplication(sys.argv[:1])
    theme.apply(app)
    window = MainWindow(AppSettings.load())
    window.resize(1280, 820)
    window.show()
    if len(sys.argv) > 3:
        import app.get_models as page_module

        memory = (int(float(sys.argv[2]) * 1e9), int(float(sys.argv[3]) * 1e9))
        page_module.memory_info = lambda: memory
    dlg = window.open_models()

    def shoot() -> None:
        if dlg.model.rowCount() == 0:  # still reading the GGUF headers
            QTimer.singleShot(200, shoot)
            return
        dlg.get_page.reload()
        dlg.grab().save(str(out))
        print(f"saved {out}")
        dlg.shutdown()
        window.close()
        app.quit()

    QTimer.singleShot(300, shoot)
    app.exec()


if __name__ == "__main__":
    main()
