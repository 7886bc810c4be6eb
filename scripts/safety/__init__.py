"""The crisis screen's lab: the labelled sets' bookkeeping and the scripts that fit, tune and
measure the screen (docs/safety.md). Nothing in the product imports it (tests/test_architecture.py);
the runtime screen is engine/safety/, and the labelled sets' floors are tests/safety_lab/.

    .venv/bin/python -m scripts.safety.measure --split dev       # score the screen on a split
    .venv/bin/python -m scripts.safety.fit_classifier            # refit the learned layer's heads
    .venv/bin/python -m scripts.safety.tune_encoder              # tune its encoder (train extra)
    .venv/bin/python -m scripts.safety.real measure              # on real messages (a local copy)
"""
