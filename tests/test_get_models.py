"""The "Get models" page of the Models dialog, driven like a user would (offscreen), with downloads
from the loopback stand-in Hub (never the internet)."""

import hashlib
import json

import pytest
from PySide6.QtCore import Qt
from test_hub import FILE, PATH, REPO, StandInHub

from app import theme
from app.config import AppSettings
from app.get_models import BUNDLED_ID
from app.window import MainWindow
from engine.models.catalog import FIT, NO_FIT, SLOW, catalog_path, entry_need, load_catalog

GB = 10**9


@pytest.fixture(scope="module", autouse=True)
def styled(qapp):
    theme.apply(qapp)


@pytest.fixture
def window(qtbot):
    AppSettings(threads=1).save()
    w = MainWindow(AppSettings.load())
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()


def open_page(window, qtbot):
    dlg = window.open_models()
    qtbot.waitUntil(lambda: dlg.model.rowCount() > 0, timeout=60_000)
    assert dlg.tabs.currentWidget() is dlg.get_page  # the first page a user sees
    return dlg, dlg.get_page


def test_the_page_labels_every_entry_for_this_computer_and_recommends_one(
    window, qtbot, monkeypatch
):
    monkeypatch.setattr("app.get_models.memory_info", lambda: (8 * GB, 4 * GB))
    dlg, page = open_page(window, qtbot)
    page.reload()
    offers = page.model.items
    assert offers[0].id == BUNDLED_ID and "try now, low quality" in offers[0].label
    entries = load_catalog()
    assert [o.id for o in offers[1:]] == [e.id for e in entries]
    labels = {o.id: o.fit.label for o in offers[1:]}
    # the labels follow the estimate for four companions at 4,096 tokens against 8 GB / 4 GB free
    for e in entries:
        need = entry_need(e, companions=4, n_ctx=4096).total
        assert labels[e.id] == (FIT if need <= 3.6 * GB else SLOW if need <= 7.2 * GB else NO_FIT)
    assert set(labels.values()) >= {FIT, SLOW}
    rec = [o for o in offers if o.recommended]
    assert len(rec) == 1 and rec[0].fit.label == FIT
    assert all(o.fit.label != FIT for o in offers[1 : offers.index(rec[0])])  # the best that fits
    assert page.selected() == rec[0].id and page.download_button.isEnabled()
    shown = page.model.data(page.model.index(offers.index(rec[0]), 0))
    assert (
        shown.startswith("★ ")
        and "For this computer: 8.0 GB of memory, 4.0 GB free" in page.header.text()
    )
    slow = next(o for o in offers if o.fit.label == SLOW)
    page.table.selectRow(offers.index(slow))
    assert "May be slow" in page.model.data(page.model.index(offers.index(slow), 3))
    page.table.selectRow(0)
    assert not page.download_button.isEnabled() and "bundled" in page.details.text()

    monkeypatch.setattr("app.get_models.memory_info", lambda: (2 * GB, GB))
    page.reload()  # a small computer: 3B models will not fit and cannot be downloaded
    big = next(o for o in page.model.items if o.id == "llama-3.2-3b-instruct")
    assert big.fit.label == NO_FIT
    page.table.selectRow(page.model.items.index(big))
    assert not page.download_button.isEnabled()


def one_entry_catalog(tmp_path, monkeypatch, bundled_path, **pins):
    """A catalog whose only entry is the bundled model's file on the stand-in Hub."""
    data = json.loads(catalog_path().read_text())
    entry = dict(
        data["models"][0],
        id="tiny-pick",
        name="Tiny Pick",
        repo=REPO,
        file=FILE,
        size_bytes=bundled_path.stat().st_size,
        parameters=134_515_008,
        layers=30,
        kv_heads=3,
        head_dim=64,
        vocab=49152,
        **{"sha256": None, "md5": None, **pins},
    )
    f = tmp_path / "catalog.json"
    f.write_text(json.dumps({**data, "models": [entry], "recommend_order": ["tiny-pick"]}))
    monkeypatch.setattr("engine.models.catalog.catalog_path", lambda: f)


def test_download_resumes_verifies_registers_and_is_offered_to_the_group(
    window, qtbot, monkeypatch, tmp_path, bundled_path
):
    one_entry_catalog(
        tmp_path,
        monkeypatch,
        bundled_path,
        sha256=hashlib.sha256(bundled_path.read_bytes()).hexdigest(),
    )
    hub = StandInHub({PATH: bundled_path}, cut_after={PATH: 4 << 20}, cuts=1)
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    try:
        dlg, page = open_page(window, qtbot)
        page.reload()
        assert page.selected() == "tiny-pick" and page.download_button.isEnabled()
        labels = []
        page.progress.valueChanged.connect(lambda v: labels.append(page.progress_label.text()))
        with qtbot.waitSignal(page.download_finished, timeout=120_000) as finished:
            qtbot.mouseClick(page.download_button, Qt.MouseButton.LeftButton)
    finally:
        hub.close()
    assert finished.args == [True], page.status.text()
    assert hub.ranges == [
        None,
        f"bytes={4 << 20}-",
    ]  # the cut connection was resumed, not restarted
    assert any("MB/s" in t and "left" in t for t in labels)
    assert "verified" in page.status.text()
    qtbot.waitUntil(lambda: any(m.name == "tiny-pick" for m in dlg.model.items), timeout=60_000)
    offer = page.offer("tiny-pick")
    assert (
        offer.installed == "tiny-pick"
        and "Installed" in offer.label
        and not page.download_button.isEnabled()
    )
    assert page.use_button.isEnabled()
    qtbot.mouseClick(page.use_button, Qt.MouseButton.LeftButton)
    s = window.session
    assert all(s.persona(n).model == "tiny-pick" for n in s.members.names())
    assert s.settings.director_model == "tiny-pick" and "now use tiny-pick" in dlg.status.text()


def test_a_corrupted_download_is_reported_and_not_installed(
    window, qtbot, monkeypatch, tmp_path, bundled_path
):
    one_entry_catalog(tmp_path, monkeypatch, bundled_path)
    data = bytearray(bundled_path.read_bytes())
    data[-1000] ^= 0xFF
    hub = StandInHub(
        {PATH: bytes(data)}, advertise={PATH: hashlib.sha256(bundled_path.read_bytes()).hexdigest()}
    )
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    errors = []
    window.session.error.connect(errors.append)
    try:
        dlg, page = open_page(window, qtbot)
        page.reload()
        with qtbot.waitSignal(page.download_finished, timeout=120_000) as finished:
            page.download("tiny-pick")
    finally:
        hub.close()
    assert finished.args == [False]
    assert "corrupted" in page.status.text() and len(errors) == 1 and "\n" not in errors[0]
    assert not page.offer("tiny-pick").installed and not list(dlg.models_dir().glob("*.gguf*"))


def test_the_first_run_offers_a_model_that_fits_or_the_bundled_one(window, qtbot):
    banner = window.models_banner
    assert banner.isVisible() and "bundled model" in banner.body.text()
    banner.body.linkActivated.emit("get")  # "Get a model that fits this computer"
    dlg = window._models_dialog
    assert dlg is not None and dlg.isVisible() and dlg.tabs.currentWidget() is dlg.get_page
    assert not banner.isVisible()
    qtbot.waitUntil(lambda: dlg.model.rowCount() > 0, timeout=60_000)
    window.close()
    settings = AppSettings.load()
    settings.disclosure_seen = True  # a later start: no first-run choice
    settings.save()
    again = MainWindow(AppSettings.load())
    qtbot.addWidget(again)
    assert not again.models_banner.isVisibleTo(again)
    again.close()


def test_trying_the_bundled_model_first_just_closes_the_choice(window):
    window.models_banner.body.linkActivated.emit("try")
    assert not window.models_banner.isVisible() and window._models_dialog is None


def test_a_paused_download_is_offered_as_a_resume(
    window, qtbot, monkeypatch, tmp_path, bundled_path
):
    one_entry_catalog(tmp_path, monkeypatch, bundled_path)
    dlg, page = open_page(window, qtbot)
    (dlg.models_dir() / (FILE + ".part")).write_bytes(b"\0" * (3 << 20))  # left by a closed app
    page.reload()
    assert page.selected() == "tiny-pick" and page.download_button.text() == "Resume (3 MB done)"
