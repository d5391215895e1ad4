"""Addresses and keys per chain (``ctplugin.elements.address``, docs/elements-regtest.md §6).

- Elements' ``key_io_valid.json`` / ``key_io_invalid.json`` (``src/test/data`` at the commit in
  ``../shared/elements-vectors/script/README.md``), read as ``src/test/key_io_tests.cpp`` reads
  them: Elements mode off, each entry's chain one of Bitcoin's (main, test, signet, regtest with
  Bitcoin's prefixes and HRPs). A valid private key decodes to its 32 bytes and compression flag,
  re-encodes to the same string and is no destination; a valid destination decodes to the
  given scriptPubKey, re-encodes to the same string, decodes case-flipped exactly when the entry
  says ``tryCaseFlip`` (bech32) and is no private key. An invalid entry is refused as a
  destination AND as a private key on every one of the four chains.
- Elements' blech32 / blech32m string vectors (``src/test/blech32_tests.cpp``).
- elementsregtest: the functional framework's deterministic key (``TestNode.PRIV_KEYS[0]``),
  blinded base58 and blech32 forms, and the addresses our ctregtest wallet handed out before
  this module existed (byte-identical).
- Round trips of every address kind on every chain, and the refusals' reasons.

Without ``../shared`` the vector tests run on ``tests/fixtures/elements-script/key_io_*.json``
(every third entry of Elements' files, unmodified); with ``CI`` set a missing shared file fails.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctplugin.elements.address import (
    BITCOIN_MAIN,
    BITCOIN_REGTEST,
    BITCOIN_SIGNET,
    BITCOIN_TEST,
    BLECH32_CONST,
    BLECH32M_CONST,
    AddressError,
    Destination,
    blech32_join,
    blech32_split,
    decode_destination,
    decode_secret,
    encode_destination,
    encode_secret,
    p2pkh_script,
    p2sh_script,
)
from ctplugin.elements.chainparams import ELEMENTS_REGTEST_ADDRESSES, AddressParams
from ctplugin.hashes import hash160
from ctplugin.secp256k1 import ct
from ctplugin.secp256k1.params import N
from regtest.params import CHAIN_NAMES, REGTEST_SEED, select_chain
from regtest.wallet.keys import P2TR, P2WPKH, KeyChain
from tests.conftest import FIXTURES, load_json, shared_if_present

CHAINS = {"main": BITCOIN_MAIN, "test": BITCOIN_TEST, "signet": BITCOIN_SIGNET,
          "regtest": BITCOIN_REGTEST}
"""``ChainTypeMetaFrom`` of key_io_tests.cpp: the entries' chain names."""


def _vectors(name: str) -> list[Any]:
    path = shared_if_present("elements-vectors", "script", name)
    data = load_json(path if path is not None else FIXTURES / "elements-script" / name)
    assert isinstance(data, list)
    # Elements' files hold 70 entries each; the fixture copies every third.
    assert len(data) >= (70 if path is not None else 24), name
    return data


VALID = _vectors("key_io_valid.json")
INVALID = _vectors("key_io_invalid.json")


def _refused(decode: Any, text: str, params: AddressParams) -> bool:
    try:
        decode(text, params)
    except AddressError:
        return True
    return False


def _flip_case(text: str) -> str:
    """The unit test's flip: ASCII letters only."""
    return "".join(c.swapcase() if c.isascii() and c.isalpha() else c for c in text)


# --- Elements' key_io vectors ------------------------------------------------------------------


@pytest.mark.parametrize("entry", VALID, ids=[e[0][:24] for e in VALID])
def test_valid_entries_parse_and_regenerate(entry: list[Any]) -> None:
    text, payload_hex, meta = entry
    params = CHAINS[meta["chain"]]
    payload = bytes.fromhex(payload_hex)
    if meta["isPrivkey"]:
        assert decode_secret(text, params) == (payload, meta["isCompressed"])
        assert encode_secret(payload, params, compressed=meta["isCompressed"]) == text
        assert _refused(decode_destination, text, params)
        return
    assert decode_destination(text, params) == Destination(payload)
    assert encode_destination(payload, params) == text
    flipped = _flip_case(text)
    if meta.get("tryCaseFlip", False):
        assert decode_destination(flipped, params) == Destination(payload)
    else:
        assert _refused(decode_destination, flipped, params)
    assert _refused(decode_secret, text, params)


@pytest.mark.parametrize("entry", INVALID, ids=[repr(e[0][:24]) for e in INVALID])
def test_invalid_entries_are_refused_on_every_chain(entry: list[Any]) -> None:
    text = entry[0]
    for params in CHAINS.values():
        assert _refused(decode_destination, text, params), params
        assert _refused(decode_secret, text, params), params


def test_the_files_cover_every_kind() -> None:
    """Keys (compressed and not), base58 and segwit destinations, case-flip entries, on each
    chain: so a codec that ignored one kind would fail above."""
    kinds = {(m["chain"], m["isPrivkey"], m.get("isCompressed"), bool(m.get("tryCaseFlip")))
             for _, _, m in VALID}
    for chain in ("main", "test", "regtest"):
        assert {(chain, False, None, False), (chain, False, None, True)} <= kinds
    assert {c for c, private, _, _ in kinds if private} == set(CHAINS)
    assert {compressed for _, private, compressed, _ in kinds if private} == {True, False}


# --- blech32 (Elements src/test/blech32_tests.cpp) -----------------------------------------------

BLECH32_VALID = [
    "A133NZFWEYK7UT", "a133nzfweyk7ut",
    "an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio195jhgl"
    "dwsn5j",
    "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lgmcn7l7t7xve",
    "11qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq3xldwl"
    "utcw2l",
    "split1checkupstagehandshakeupstreamerranterredcaperredegneyqml9esp", "?19dv34t3p4s35",
]
BLECH32M_VALID = [
    "A1EYL4VXQ3HRPT", "a1eyl4vxq3hrpt",
    "an83characterlonghumanreadablepartthatcontainsthetheexcludedcharactersbioandnumber11yatn6"
    "l85muud",
    "abcdef1l7aum6echk45nj3s0wdvt2fg8x9yrzpqg8m5pqg67zq3",
    "11llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll09wxh8"
    "ajdvxv",
    "split1checkupstagehandshakeupstreamerranterredcaperred3alwpgz2yydp", "?1dcqxsrg55dv5",
]
BLECH32_INVALID = [
    " 1xj0phk", "\x7f1g6xzxy", "\x801vctc34",
    "an84characterslonghumanreadablepartthatcontainsthetheexcludedcharactersbioandnumber11d6pts4",
    "qyrz8wqd2c9m", "1qyrz8wqd2c9m", "y1b0jsk6g", "lt1igcx5c0", "in1muywd", "mm1crxm3i",
    "au1s5cgom", "M1VUXWEZ", "16plkw9", "1p2gdwpf",
    " 1nwldj5", "\x7f1axkwrx", "\x801eym55h",
    "an84characterslonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1569pvx",
    "pzry9x0s0muk", "1pzry9x0s0muk", "x1b4n0q5v", "li1dgmt3", "de1lg7wt\xff", "A1G7SGD8",
    "10a06t8", "1qzzfhee", "a12UEL5L", "A12uEL5L",
]


@pytest.mark.parametrize(("text", "const"), [(t, BLECH32_CONST) for t in BLECH32_VALID]
                         + [(t, BLECH32M_CONST) for t in BLECH32M_VALID])
def test_blech32_valid_strings_decode_and_recode(text: str, const: int) -> None:
    split = blech32_split(text)
    assert split is not None and split[0] == const
    assert blech32_join(split[1], split[2], const) == text.lower()


@pytest.mark.parametrize("text", BLECH32_INVALID)
def test_blech32_invalid_strings_are_refused(text: str) -> None:
    assert blech32_split(text) is None


def test_blech32_checksum_vector() -> None:
    """``blech32_checksum``: the 12 checksum symbols of fixed data under HRP ``lq``."""
    data = bytes([7, 2, 3, 4, 5, 6, 7, 8, 9, 234, 123, 213, 16])
    bits = int.from_bytes(data, "big") << 1  # 104 bits padded to 105 = 21 symbols
    symbols = [(bits >> (5 * (20 - i))) & 31 for i in range(21)]
    text = blech32_join("lq", symbols, BLECH32_CONST)
    checksum = ["qpzry9x8gf2tvdw0s3jn54khce6mua7l".index(c) for c in text[-12:]]
    assert checksum == [22, 13, 13, 5, 4, 4, 23, 7, 28, 21, 30, 12]


# --- elementsregtest -----------------------------------------------------------------------------

E = ELEMENTS_REGTEST_ADDRESSES


def test_elementsregtest_has_elements_encodings() -> None:
    params = select_chain("elementsregtest").addresses
    assert params == E
    assert (E.pubkey_prefix, E.script_prefix, E.secret_prefix, E.blinded_prefix) == (235, 75, 239,
                                                                                     4)
    assert (E.bech32_hrp, E.blech32_hrp) == ("ert", "el")


def test_the_frameworks_deterministic_key() -> None:
    """TestNode.PRIV_KEYS[0]: a compressed WIF whose P2PKH address has version 235."""
    secret, compressed = decode_secret("cQ1PxVTn5J3qCzUqXzpNeHiPVxZcwwaJkFmZcokescXwmHWAdBoe", E)
    assert compressed
    pubkey = ct.base_mul(int.from_bytes(secret, "big")).to_bytes()
    script = p2pkh_script(hash160(pubkey))
    assert encode_destination(script, E) == "2doncj41FX6LahE2aspuLuQcnmgrLtfvvma"
    assert decode_destination("2doncj41FX6LahE2aspuLuQcnmgrLtfvvma", E) == Destination(script)
    assert encode_secret(secret, E) == "cQ1PxVTn5J3qCzUqXzpNeHiPVxZcwwaJkFmZcokescXwmHWAdBoe"
    # blinded to the key itself: CTE… (P2PKH) and Azp… (P2SH), as in the note's table
    blinded = encode_destination(script, E, pubkey)
    assert blinded.startswith("CTE")
    assert decode_destination(blinded, E) == Destination(script, pubkey)
    p2sh = p2sh_script(hash160(script))
    assert encode_destination(p2sh, E).startswith("X")
    assert encode_destination(p2sh, E, pubkey).startswith("Azp")


def test_ctregtest_addresses_are_unchanged() -> None:
    """Our chains keep the strings the wallet handed out before (regtest key 0, made with the
    previous blech32 / bech32 code), so existing wallets and data stay valid."""
    assert all(select_chain(name).addresses == E for name in CHAIN_NAMES)
    keys = KeyChain(REGTEST_SEED)
    expected = {
        P2WPKH: ("ert1qq5e57l8gjlm8f5ug8q0y62tasa6tzfr3qlzdy3",
                 "el1qqde8f5gxx33j8568g68q3lxeyhc5p3lmdpr7jqygetnlntyxhqjkjpfnfa7w39lkwnfcswq7f"
                 "55hmpm5kyj8z36wmpk2nw889"),
        P2TR: ("ert1pz844cq8uue75suke608h7gz3azv7u5rwru3zfzcjdcx3f9qh5xwq2hs60q",
               "el1pqfshdcft0mveyudjfe3xxau7fka3dlm88578kxeg8wqptzmkv8s22y0ttsq0eenafpedn5700us9"
               "r6yeaegxu8ezyj93ymsdzj2p0gvuhegve23w7c6t"),
    }
    for kind, (plain, confidential) in expected.items():
        pair = keys.key(0, kind)
        assert encode_destination(pair.script_pubkey, E) == plain
        assert encode_destination(pair.script_pubkey, E, pair.blinding_pubkey) == confidential
        assert decode_destination(confidential, E) == Destination(pair.script_pubkey,
                                                                  pair.blinding_pubkey)


# --- round trips and refusals --------------------------------------------------------------------

_PARAMS = st.sampled_from([*CHAINS.values(), E])


@st.composite
def _scripts(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["pkh", "sh", "wpkh", "wsh", "tr", "future"]))
    if kind == "pkh":
        return p2pkh_script(draw(st.binary(min_size=20, max_size=20)))
    if kind == "sh":
        return p2sh_script(draw(st.binary(min_size=20, max_size=20)))
    if kind == "future":
        version = draw(st.integers(1, 16))
        program = draw(st.binary(min_size=2, max_size=40))
    else:
        version = 1 if kind == "tr" else 0
        program = draw(st.binary(min_size=20 if kind == "wpkh" else 32,
                                 max_size=20 if kind == "wpkh" else 32))
    return bytes((0 if version == 0 else 0x50 + version, len(program))) + program


@settings(max_examples=150, deadline=None)
@given(_scripts(), _PARAMS, st.one_of(st.none(), st.integers(1, N - 1)))
def test_every_address_kind_round_trips(script: bytes, params: AddressParams,
                                        blinding: int | None) -> None:
    pubkey = None if blinding is None else ct.base_mul(blinding).to_bytes()
    text = encode_destination(script, params, pubkey)
    assert decode_destination(text, params) == Destination(script, pubkey)
    assert _refused(decode_secret, text, params)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, N - 1), _PARAMS, st.booleans())
def test_secrets_round_trip(secret: int, params: AddressParams, compressed: bool) -> None:
    key = secret.to_bytes(32, "big")
    text = encode_secret(key, params, compressed=compressed)
    assert decode_secret(text, params) == (key, compressed)
    assert _refused(decode_destination, text, params)


def _wpkh() -> bytes:
    return b"\x00\x14" + bytes(range(20))


@pytest.mark.parametrize(("text", "params", "reason"), [
    # an elementsregtest address on Bitcoin's regtest: a bech32 string of another HRP
    (encode_destination(_wpkh(), E), BITCOIN_REGTEST, "prefix"),
    # and a Bitcoin regtest P2PKH on elementsregtest: another version byte
    (encode_destination(p2pkh_script(bytes(20)), BITCOIN_REGTEST), E, "prefix"),
    ("ERT1QQ5E57L8GJLM8F5UG8Q0Y62TASA6TZFR3QLZDY3".lower()[:-1] + "Q", E, "checksum"),
    ("el1" + "q" * 40, E, "checksum"),
    ("2doncj41FX6LahE2aspuLuQcnmgrLtfvvmb", E, "checksum"),
    ("2doncj41FX6LahE2aspuLuQcnmgrLtfvvm0", E, "character"),
    (encode_destination(_wpkh(), E).upper()[:5] + encode_destination(_wpkh(), E)[5:], E,
     "checksum"),  # mixed case is no bech32 string: refused under the chain's HRP
    (encode_secret(bytes(31) + b"\x01", BITCOIN_MAIN), E, "prefix"),
])
def test_refusals_carry_a_reason(text: str, params: AddressParams, reason: str) -> None:
    with pytest.raises(AddressError) as refused:
        decode_destination(text, params)
    assert refused.value.reason == reason


def test_secrets_out_of_range_are_refused() -> None:
    for bad in (bytes(32), N.to_bytes(32, "big")):
        with pytest.raises(AddressError) as refused:
            encode_secret(bad, E)
        assert refused.value.reason == "scalar-range"


def test_scripts_without_an_address_and_bad_blinding_keys_are_refused() -> None:
    for script in (b"\x6a", b"\x51", b"\x00\x15" + bytes(21), b"\x21" + bytes(33) + b"\xac"):
        with pytest.raises(AddressError):
            encode_destination(script, E)
    with pytest.raises(AddressError) as refused:
        encode_destination(_wpkh(), E, b"\x02" + bytes(32))  # x = 0 is not on the curve
    assert refused.value.reason == "off-curve"
