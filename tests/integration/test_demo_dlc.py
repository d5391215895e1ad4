"""``ctplugin demo dlc``: a contract's life on a running node, printed in a few lines."""

from __future__ import annotations

import io

from apps.demo import main
from apps.demo_dlc import run


def test_the_dlc_demo_executes_one_contract_and_refunds_another() -> None:
    out = io.StringIO()
    assert run(outcome=900, out=out) == 0
    text = out.getvalue()
    # Past 800 the curve gives alice (the offerer) both collaterals.
    assert "mined: alice +2.00000000 BTC, bob +0.00000000 BTC" in text
    assert "refused (-26 non-final" in text
    assert text.count(": funded") == 2 and "closed" in text and "refunded" in text
    assert len(text.splitlines()) <= 20


def test_the_demo_command_rejects_an_outcome_off_the_curve(capsys: object) -> None:
    try:
        main(["dlc", "--outcome", "1024"])
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError("--outcome 1024 was accepted")
