"""Before a QApplication exists: can Qt's window plugin load here? (No Qt import in this module.)

On Linux, Qt's xcb plugin needs X11 libraries that minimal systems lack; Qt then aborts the
process (SIGABRT) with a long message. This check names the missing libraries and the command
that installs them, so the user sees one line instead.
"""

from __future__ import annotations

import ctypes
import os
import sys

# The xcb platform plugin's system libraries (Qt 6.5+): soname -> (Debian/Ubuntu, Fedora) package.
XCB_LIBRARIES: dict[str, tuple[str, str]] = {
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
}


def platform_name() -> str:
    """The Qt platform plugin this process would use."""
    env = os.environ.get("QT_QPA_PLATFORM", "").split(":")[0].strip()
    if env:
        return env
    if sys.platform.startswith("linux"):
        if os.environ.get("WAYLAND_DISPLAY") and not os.environ.get("DISPLAY"):
            return "wayland"
        return "xcb"
    return "native"


def missing_libraries(libraries: dict[str, tuple[str, str]] | None = None) -> list[str]:
    """Sonames in ``libraries`` (default: the xcb plugin's) that cannot be loaded here."""
    missing = []
    for soname in XCB_LIBRARIES if libraries is None else libraries:
        try:
            ctypes.CDLL(soname)
        except OSError:
            missing.append(soname)
    return missing


def check_display(libraries: dict[str, tuple[str, str]] | None = None) -> str | None:
    """None when the window can open; otherwise one line saying what is missing and how to fix it."""
    platform = platform_name()
    if platform != "xcb":
        return None  # offscreen, minimal, wayland, Windows and macOS load without X11 libraries
    if not os.environ.get("DISPLAY"):
        return (
            "No display to open a window on (DISPLAY is not set). Run Mascot in a desktop "
            "session, or use the terminal chat: mascot chat"
        )
    table = XCB_LIBRARIES if libraries is None else libraries
    missing = missing_libraries(table)
    if not missing:
        return None
    deb = " ".join(dict.fromkeys(table[m][0] for m in missing))
    rpm = " ".join(dict.fromkeys(table[m][1] for m in missing))
    return (
        f"The window cannot open: Qt's X11 plugin needs {', '.join(missing)}. Install with "
        f"'sudo apt install {deb}' (Debian/Ubuntu) or 'sudo dnf install {rpm}' (Fedora), "
        "then start Mascot again."
    )


if __name__ == "__main__":  # `make run` asks first, with the system Python (no Qt needed)
    line = check_display()
    if line:
        print(line, file=sys.stderr)
    sys.exit(1 if line else 0)
