"""Benchmarks: ``python -m bench NAME [--quick] [--json]``.

Each benchmark is a module ``bench/<name>.py`` exposing
``run(quick: bool, t_us: float) -> list[Row]``
(``t_us`` is the unit measured for this run; build rows with
``bench.common.make_row``). Figures are
per item and also given in **t**, one coincurve ``PublicKey.multiply`` timed in the same run, so
ratios stay comparable across noisy machines (see ``docs/design.md``).
"""
