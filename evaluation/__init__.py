"""Evaluation of Mascot (``mascot-eval``): MASCOT's metrics, baselines and ablations.

Modules, one topic each: ``configs`` (what is compared), ``runner`` (rounds through the engine),
``judging`` (judge scores via ``training.judges.rubric``), ``comparisons`` (position-debiased pairwise and
three-way picks), ``metrics`` (automatic metrics and confidence intervals), ``embed`` (offline
MiniLM), ``analysis`` (rows with 95% CIs), ``db`` (results database), ``plots`` and ``report``
(Markdown/HTML with PNGs), ``pipeline`` (one run end to end) and ``cli``.
"""
