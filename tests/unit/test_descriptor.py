"""Output descriptors (ctplugin.script.descriptor): BIP380 checksums against Bitcoin Core's own
vectors (src/test/descriptor_tests.cpp, doc/descriptors.md), normal forms, expansion to scripts,
and Core's errors."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctplugin.elements.address import BITCOIN_MAIN, BITCOIN_TEST, encode_destination
from ctplugin.script.descriptor import (
    DescriptorError,
    descriptor_checksum,
    parse_descriptor,
    split_checksum,
    with_checksum,
)
from regtest.params import select_chain

ELEMENTS = select_chain("elementsregtest").addresses

# descriptor_tests.cpp: the private form, the public form and the normal form (h for ')
CORE_PRIVATE = ("sh(multi(2,[00000000/111'/222]xprvA1RpRA33e1JQ7ifknakTFpgNXPmW2YvmhqLQYMmrj4xJ"
                "XXWYpDPS3xz7iAxn8L39njGVyuoseXzU6rcxFLJ8HFsTjSyQbLYnMpCqE2VbFWc,xprv9uPDJpEQgRQf"
                "DcW7BkF7eTya6RPxXeJCqCJGHuCJ4GiRVLzkTXBAJMu2qaMWPrS7AANYqdq6vcBcBUdJCVVFceUvJFjaP"
                "dGZ2y9WACViL4L/0))")
CORE_PUBLIC = ("sh(multi(2,[00000000/111'/222]xpub6ERApfZwUNrhLCkDtcHTcxd75RbzS1ed54G1LkBUHQVHQKqh"
               "MkhgbmJbZRkrgZw4koxb5JaHWkY4ALHY2grBGRjaDMzQLcgJvLJuZZvRcEL,xpub68NZiKmJWnxxS6aaHmn"
               "81bvJeTESw724CRDs6HbuccFQN9Ku14VQrADWgqbhhTHBaohPX4CjNLf9fq9MYo6oDaPPLPxSb7gwQN3ih1"
               "9Zm4Y/0))")
CORE_NORMAL = CORE_PUBLIC.replace("111'", "111h")
CORE_SCRIPT = "a91445a9a622a8b0a1269944be477640eedc447bbd8487"

DOC_SORTEDMULTI = (
    "wsh(sortedmulti(2,[6f53d49c/44h/1h/0h]tpubDDjsCRDQ9YzyaAq9rspCfq8RZFrWoBpYnLxK6sS2hS2yukqSczg"
    "cYiur8Scx4Hd5AZatxTuzMtJQJhchufv1FRFanLqUP7JHwusSSpfcEp2/0/*,[e6807791/44h/1h/0h]tpubDDAfvog"
    "aaAxaFJ6c15ht7Tq6ZmiqFYfrSmZsHu7tHXBgnjMZSHAeHSwhvjARNA6Qybon4ksPksjRbPDVp7yXA1KjTjSd5x18KHq"
    "bppnXP1s/0/*,[367c9cfa/44h/1h/0h]tpubDDtPnSgWYk8dDnaDwnof4ehcnjuL5VoUt1eW2MoAed1grPHuXPDnkX1f"
    "WMvXfcz3NqFxPbhqNZ3QBdYjLz2hABeM9Z2oqMR1Gt2HHYDoCgh/0/*))")

# the framework's deterministic key 0 (test_node.py PRIV_KEYS) and its elementsregtest addresses
NODE0_WIF = "cQ1PxVTn5J3qCzUqXzpNeHiPVxZcwwaJkFmZcokescXwmHWAdBoe"
NODE0_P2PKH = "2doncj41FX6LahE2aspuLuQcnmgrLtfvvma"


@pytest.mark.parametrize(("descriptor", "checksum"), [
    (CORE_PRIVATE, "ggrsrxfy"), (CORE_PUBLIC, "tjg09x5t"), (CORE_NORMAL, "hgmsckna"),
    (DOC_SORTEDMULTI, "av0kxgw0"),
])
def test_checksums_are_core_s(descriptor: str, checksum: str) -> None:
    assert descriptor_checksum(descriptor) == checksum
    assert split_checksum(with_checksum(descriptor), require=True) == (descriptor, checksum)


@pytest.mark.parametrize(("text", "message"), [
    (CORE_PUBLIC + "#tjq09x4t", "Provided checksum 'tjq09x4t' does not match computed checksum "
                                "'tjg09x5t'"),
    (CORE_PUBLIC.replace("multi(2", "multi(3") + "#tjg09x5t",
     "Provided checksum 'tjg09x5t' does not match computed checksum 'd4x0uxyv'"),
    (CORE_PUBLIC + "#tjg09x5", "Expected 8 character checksum, not 7 characters"),
])
def test_bad_checksums_get_core_s_errors(text: str, message: str) -> None:
    with pytest.raises(DescriptorError, match=message.replace("(", r"\(")):
        parse_descriptor(text, BITCOIN_MAIN)


def test_a_missing_checksum_is_an_error_only_when_required() -> None:
    parse_descriptor(CORE_PUBLIC, BITCOIN_MAIN)
    with pytest.raises(DescriptorError, match="Missing checksum"):
        parse_descriptor(CORE_PUBLIC, BITCOIN_MAIN, require_checksum=True)


def test_core_vector_normal_form_and_script() -> None:
    for text in (CORE_PRIVATE, CORE_PUBLIC):
        desc = parse_descriptor(text, BITCOIN_MAIN)
        assert desc.to_string(BITCOIN_MAIN) == f"{CORE_NORMAL}#hgmsckna"
        assert [e.script_pubkey.hex() for e in desc.expand()] == [CORE_SCRIPT]
        assert not desc.is_range
    assert parse_descriptor(CORE_PRIVATE, BITCOIN_MAIN).has_private_keys
    assert not parse_descriptor(CORE_PUBLIC, BITCOIN_MAIN).has_private_keys


def test_ranged_descriptor_expands_per_position() -> None:
    desc = parse_descriptor(DOC_SORTEDMULTI, BITCOIN_TEST)
    assert desc.is_range
    first, second = desc.expand(0)[0], desc.expand(1)[0]
    assert first.script_pubkey != second.script_pubkey
    assert first.script_pubkey[:2] == b"\x00\x20" and first.witness_script is not None
    keys = [k.pubkey for k in first.keys]
    assert keys == sorted(keys)  # sortedmulti
    assert all(k.origin is not None and k.origin[1][-2:] == (0, 0) for k in first.keys)


def test_combo_of_a_wif_gives_core_s_four_scripts() -> None:
    desc = parse_descriptor(f"combo({NODE0_WIF})", ELEMENTS)
    kinds = [e.kind for e in desc.expand()]
    assert kinds == ["p2pk", "p2pkh", "p2wpkh", "p2sh-p2wpkh"]
    assert encode_destination(desc.expand()[1].script_pubkey, ELEMENTS) == NODE0_P2PKH
    assert desc.has_private_keys
    public = desc.to_string(ELEMENTS)
    assert NODE0_WIF not in public and desc.to_string(ELEMENTS, private=True).startswith(
        f"combo({NODE0_WIF})#")


@pytest.mark.parametrize(("text", "message"), [
    ("wpkh(02aa)", "Pubkey '02aa' is invalid"),
    ("sh(combo(" + NODE0_WIF + "))", "Can only have combo\\(\\) at top level"),
    ("wsh(wpkh(" + NODE0_WIF + "))", "wsh\\(\\) supports"),
    ("multi(3,02f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9)",
     "Multisig threshold cannot be 3"),
    ("foo(1)", "not a valid descriptor function"),
    ("raw(zz)", "Raw script is not hex"),
    ("addr(nonsense)", "Address is not valid"),
    ("wpkh([0000/1]02f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9)",
     "Fingerprint is not 4 bytes"),
])
def test_malformed_descriptors_are_typed_errors(text: str, message: str) -> None:
    with pytest.raises(DescriptorError, match=message):
        parse_descriptor(text, ELEMENTS)


def test_hardened_steps_from_a_public_key_are_refused() -> None:
    xpub = CORE_PUBLIC.split(",")[2].split("/")[0]
    with pytest.raises(DescriptorError, match="Hardened derivation"):
        parse_descriptor(f"wpkh({xpub}/1h/*)", BITCOIN_MAIN)


_TOKENS = ["wpkh(", "pkh(", "sh(", "wsh(", "tr(", "combo(", "multi(", "sortedmulti(", "addr(",
           "raw(", "pk(", ")", ",", "[", "]", "/", "*", "'", "h", "0", "1", "2", "#", "deadbeef",
           "00000000", NODE0_WIF, NODE0_P2PKH,
           "02f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9",
           CORE_PUBLIC.split(",")[2].split("/")[0]]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=12), st.sampled_from([ELEMENTS, BITCOIN_MAIN]))
def test_any_token_soup_parses_or_is_a_descriptor_error(tokens: list[str], params: Any) -> None:
    text = "".join(tokens)
    try:
        desc = parse_descriptor(text, params)
    except DescriptorError:
        return
    for position in (0, 1):
        desc.expand(position)
    assert desc.to_string(params).startswith(text.partition("#")[0].split("(")[0])
