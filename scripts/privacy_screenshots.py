"""Save the unlock dialog (after a wrong passphrase) and the "Encrypt my history" dialog as
docs/unlock-dialog.png and docs/encrypt-dialog.png, on a throwaway encrypted history.

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/privacy_screenshots.py [OUT_FOLDER]
"""

import os
import sys
import tempfile
from pathlib import Path


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs")
    os.environ["MASCOT_HOME"] = tempfile.mkdtemp(prefix="mascot-shot-")
    os.environ.pop("MASCOT_PASSPHRASE", None)
    from PySide6.QtWidgets import QApplication

    from app import theme
    from app.privacy import PassphraseDialog, UnlockDialog
    from engine.storage import Store, forget_passphrases

    app = QApplication(sys.argv[:1])
    theme.apply(app)
    store = Store()
    store.encrypt("the real passphrase")
    path = store.path
    store.close()
    forget_passphrases()

    unlock = UnlockDialog(path)
    unlock.show()
    unlock.passphrase.setText("a wrong guess")
    unlock.try_unlock()  # shows the one line a wrong passphrase gets
    app.processEvents()
    unlock.grab().save(str(out / "unlock-dialog.png"))
    print(f"saved {out / 'unlock-dialog.png'}")

    encrypt = PassphraseDialog("encrypt", lambda old, new: None)
    encrypt.show()
    encrypt.new.setText("three small words")
    encrypt.again.setText("three small words")
    app.processEvents()
    encrypt.grab().save(str(out / "encrypt-dialog.png"))
    print(f"saved {out / 'encrypt-dialog.png'}")


if __name__ == "__main__":
    main()
