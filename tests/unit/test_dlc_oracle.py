"""Oracles: announcements (rust-dlc serialization), attestations, digit events, message hashes."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ctplugin.dlc import messages
from ctplugin.dlc.adaptor_points import DigitPoints, compute
from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.oracle import (
    DigitDecompositionEvent,
    EnumEvent,
    MessageHash,
    Oracle,
    OracleInfo,
    outcome_message,
    serialize_event,
)
from ctplugin.hashes import sha256, tagged_hash
from ctplugin.secp256k1 import bip340, ct
from ctplugin.secp256k1.params import N
from tests.conftest import FIXTURES, load_json


def _announcements():
    for name in ("dlc_three_of_three_oracle_numerical_test.json", "dlc_enum_3_of_3_test.json"):
        offer = messages.parse_offer(load_json(FIXTURES / name)["offer_message"])
        yield from offer.contract_info.items[0].oracles.announcements


def test_vector_announcements_verify_and_tampering_fails() -> None:
    for announcement in _announcements():
        assert announcement.verify()
        event = dataclasses.replace(announcement.event, event_id="other")
        assert not dataclasses.replace(announcement, event=event).verify()
        assert not announcement.verify(MessageHash.TAGGED)


def test_digit_event_serialization_layout() -> None:
    event = next(_announcements()).event
    raw = serialize_event(event)
    assert raw[:2] == (10).to_bytes(2, "big") and raw[2:34] == event.nonces[0]
    tail = raw[2 + 320 + 4:]
    assert tail[:3] == bytes.fromhex("fdd80a")  # 55306 as BigSize
    assert tail.endswith(b"\x04Test")


def test_bip340_sign_verify_and_vectors_style() -> None:
    secret, nonce, msg = 0x1234, 0x5678, sha256(b"m")
    sig = bip340.sign_with_nonce(secret, nonce, msg)
    pub = ct.base_mul(secret).xonly()
    assert bip340.verify(pub, msg, sig)
    assert sig[:32] == ct.base_mul(nonce).xonly()
    assert not bip340.verify(pub, sha256(b"n"), sig)
    assert not bip340.verify(pub, msg, sig[:32] + N.to_bytes(32, "big"))
    import coincurve

    assert coincurve.PublicKeyXOnly(pub).verify(sig, msg)


@pytest.mark.parametrize("scheme", list(MessageHash))
@pytest.mark.parametrize("base, nb_digits, value, signed", [
    (2, 10, 613, False), (10, 4, 1234, False), (10, 3, -42, True), (2, 5, 999, False)])
def test_attestation_opens_signature_points(scheme, base, nb_digits, value, signed) -> None:
    oracle = Oracle(sha256(b"oracle"), scheme)
    event = DigitDecompositionEvent(base, signed, "usd", 0, nb_digits)
    announcement = oracle.announce("e", event)
    assert announcement.verify(scheme)
    attestation = oracle.attest(announcement, value)
    assert attestation.verify(announcement.event.nonces, scheme)
    info = OracleInfo.from_announcement(announcement)
    for j, (sig, outcome) in enumerate(zip(attestation.signatures, attestation.outcomes)):
        point = info.signature_point(j, outcome_message(outcome, scheme))
        assert ct.base_mul(int.from_bytes(sig[32:], "big")) == point
    if not signed:
        digits = tuple(int(d) for d in attestation.outcomes)
        (point,) = compute(DigitPoints([info], base, scheme), [((0, digits),)])
        assert ct.base_mul(attestation.secret()) == point


def test_message_hash_schemes() -> None:
    assert outcome_message("1") == sha256(b"1")
    assert outcome_message("1", MessageHash.TAGGED) == tagged_hash("DLC/oracle/attestation/v0",
                                                                   b"1")


def test_enum_oracle() -> None:
    oracle = Oracle(sha256(b"enum-oracle"))
    announcement = oracle.announce("match", EnumEvent(("home", "draw", "away")))
    assert announcement.verify()
    attestation = oracle.attest(announcement, "draw")
    assert attestation.outcomes == ("draw",) and attestation.verify(announcement.event.nonces)
    with pytest.raises(Exception, match="unknown-outcome"):
        oracle.attest(announcement, "rain")
    forged = dataclasses.replace(attestation, outcomes=("home",))
    assert not forged.verify()
    # An outcome listed twice would make its attestation unlock two outcomes' CETs.
    with pytest.raises(DlcError, match="bad-event: duplicate outcome 'draw'"):
        oracle.announce("ambiguous", EnumEvent(("home", "draw", "draw")))
    twice = messages.announcement_json(announcement)
    twice["oracleEvent"]["eventDescriptor"]["enumEvent"]["outcomes"] = ["home", "home"]
    with pytest.raises(DlcError, match="bad-announcement"):
        messages.parse_announcement(twice)


def test_seeded_oracle_is_deterministic_and_stateless() -> None:
    event = DigitDecompositionEvent(2, False, "usd", 0, 6)
    first = Oracle.from_seed(b"demo oracle").announce("btcusd", event, 1_700_000_000)
    again = Oracle.from_seed(b"demo oracle").announce("btcusd", event, 1_700_000_000)
    assert first == again and first.verify()
    # Another event (id, descriptor or maturity) gets other nonces; another seed another key.
    assert Oracle.from_seed(b"demo oracle").announce("ethusd", event).event.nonces != \
        first.event.nonces
    assert Oracle.from_seed(b"demo oracle").announce(
        "btcusd", event, 1_700_000_001).event.nonces != first.event.nonces
    assert Oracle.from_seed(b"other").public_key != first.public_key
    # A fresh instance attests an announcement it never saw (nothing is stored).
    attestation = Oracle.from_seed(b"demo oracle").attest(first, 37)
    assert attestation.outcomes == ("1", "0", "0", "1", "0", "1")
    assert attestation.verify(first.event.nonces)
    with pytest.raises(DlcError, match="not-our-event"):
        Oracle.from_seed(b"other").attest(first, 37)
    with pytest.raises(DlcError, match="unknown-outcome"):
        Oracle.from_seed(b"demo oracle").attest(first, "many")
    forged = dataclasses.replace(first, event=dataclasses.replace(
        first.event, nonces=first.event.nonces[::-1]))
    with pytest.raises(DlcError, match="not-our-event"):
        Oracle.from_seed(b"demo oracle").attest(forged, 37)


def test_oracle_command(tmp_path, capsys) -> None:
    from apps.oracle import main
    from ctplugin.dlc.messages import parse_announcement, parse_attestation

    assert main(["--seed", "cli oracle", "announce", "ev", "--digits", "4",
                 "--maturity", "9"]) == 0
    text = capsys.readouterr().out
    announcement = parse_announcement(json.loads(text))
    assert announcement == Oracle.from_seed(b"cli oracle").announce(
        "ev", DigitDecompositionEvent(2, False, "", 0, 4), 9)
    path = tmp_path / "ann.json"
    path.write_text(text)
    assert main(["--seed", "cli oracle", "attest", "--announcement", str(path), "11"]) == 0
    by_file = parse_attestation(json.loads(capsys.readouterr().out))
    assert main(["--seed", "cli oracle", "attest", "ev", "11", "--digits", "4",
                 "--maturity", "9"]) == 0
    by_event = parse_attestation(json.loads(capsys.readouterr().out))
    assert by_file == by_event and by_file.verify(announcement.event.nonces)
    assert by_file.outcomes == ("1", "0", "1", "1")
    assert main(["--seed", "cli oracle", "announce", "m", "--outcomes", "a,b"]) == 0
    enum = parse_announcement(json.loads(capsys.readouterr().out))
    assert main(["--seed-hex", "00", "attest", "--announcement", str(path), "3"]) == 1
    assert "not-our-event" in capsys.readouterr().err
    assert main(["--seed", "cli oracle", "announce", "x"]) == 1  # neither --digits nor --outcomes
    assert enum.verify()
