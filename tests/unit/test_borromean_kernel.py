"""The Borromean ring kernel ``borromean_verify_var``: native against the pure-Python reference
(verdicts, challenges, errors), on real proofs, random rings and hostile input; thread counts
never change results."""

from __future__ import annotations

import hashlib
import importlib
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctplugin import borromean
from ctplugin.errors import EncodingError
from ctplugin.pedersen import H_GENERATOR, commit
from ctplugin.secp256k1 import _reference, kernel
from ctplugin.secp256k1.params import N, P
from tests.conftest import FIXTURES, load_json

verify_module = importlib.import_module("ctplugin.borromean.verify")
native = pytest.importorskip("ctplugin.secp256k1._native")
VECTORS = load_json(FIXTURES / "borromean_vectors.json")


def _inputs(prepared: list[Any]) -> tuple[bytes, bytes, bytes, bytes]:
    return (b"".join(p.sizes for p in prepared), b"".join(p.pubs for p in prepared),
            b"".join(p.parsed.s for p in prepared),
            b"".join(p.parsed.e0 + p.message for p in prepared))


def _prepared(proof: bytes, c: bytes, gen: bytes = H_GENERATOR.serialize(),
              extra: bytes = b"") -> Any:
    prepared = verify_module.prepare(borromean.RangeProofClaim(proof, c, gen, extra))
    assert prepared is not None
    return prepared


def _small_proof(value: int, bits: int, seed: int) -> tuple[bytes, bytes]:
    blind = hashlib.sha256(b"blind" + bytes([seed])).digest()
    nonce = hashlib.sha256(b"nonce" + bytes([seed])).digest()
    proof = borromean.sign(value, blind, nonce, H_GENERATOR, min_bits=bits)
    return proof, commit(value, blind, H_GENERATOR).serialize()


def both(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
    return (native.borromean_verify_var(*args, **kwargs),
            _reference.borromean_verify_var(*args, **kwargs))


def test_backend_serves_the_native_entry() -> None:
    if kernel.IS_NATIVE:  # the fastest native build this CPU runs (_native_adx or _native)
        served = kernel.backend.borromean_verify_var
        assert type(served) is type(native.borromean_verify_var)  # a C function, not Python
        assert served.__self__ is kernel.backend


@pytest.mark.parametrize("threads", [1, 2, 3, 64])
def test_real_proofs_agree_with_the_reference(threads: int, dmult_path: str) -> None:
    prepared = [_prepared(bytes.fromhex(v["proof"]), bytes.fromhex(v["commitment"]))
                for v in VECTORS["zkp_fixed"]]
    prepared.append(_prepared(*_small_proof(5, 3, 1)))
    args = _inputs(prepared)
    got, want = both(*args, threads=threads, challenges=True)
    assert got == want
    assert got[0] == b"\x01" * len(prepared)
    # the same proofs with one s changed fail, the others still pass
    sizes, pubs, scalars, e0m = args
    bad = bytearray(scalars)
    bad[-1] ^= 1
    got, want = both(sizes, pubs, bytes(bad), e0m, threads=threads, challenges=True)
    assert got == want and got[0] == b"\x01" * (len(prepared) - 1) + b"\x00"


def _point(k: int) -> bytes:
    return _reference._pack_point(_reference.mul(k, (_reference._GX, _reference._GY)))


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.integers(1, 4), min_size=1, max_size=3), min_size=0, max_size=3),
       st.data())
def test_random_rings_agree_with_the_reference(dmult_path: str, layouts: list[list[int]],
                                               data: st.DataObject) -> None:
    """Random rings (almost all invalid) and edge members: s = 0, P = infinity."""
    sizes = b"".join(b"".join(v.to_bytes(2, "little") for v in (len(r), *r)) for r in layouts)
    members = sum(sum(r) for r in layouts)
    pubs = b"".join(data.draw(st.sampled_from([_point(k) for k in (1, 2, 3, N - 1)] +
                                              [bytes(64)])) for _ in range(members))
    scalars = b"".join(data.draw(st.sampled_from([0, 1, 2, N - 1, 2**255])).to_bytes(32, "big")
                       for _ in range(members))
    e0m = data.draw(st.binary(min_size=64 * len(layouts), max_size=64 * len(layouts)))
    threads = data.draw(st.integers(1, 4))
    got, want = both(sizes, pubs, scalars, e0m, threads=threads, challenges=True)
    assert got == want


def _error(fn: Any, *args: Any) -> tuple[str, str]:
    with pytest.raises(EncodingError) as exc:
        fn(*args)
    return exc.value.reason, str(exc.value)


@pytest.mark.parametrize("args", [
    (b"\x01\x00\x01\x00", bytes(64), bytes(32), bytes(63)),             # e0m length
    (b"\x01\x00", bytes(64), bytes(32), bytes(64)),                     # layout too short
    (b"\x00\x00", b"", b"", bytes(64)),                                 # no rings
    (b"\x01\x00\x00\x00", b"", b"", bytes(64)),                         # empty ring
    (b"\x01\x00\x01\x00\x00", bytes(64), bytes(32), bytes(64)),         # trailing layout byte
    (b"\x01\x00\x02\x00", bytes(64), bytes(32), bytes(64)),             # counts differ
    (b"\x01\x00\x01\x00", bytes(63), bytes(32), bytes(64)),             # point length
    (b"\x01\x00\x01\x00", P.to_bytes(32, "big") * 2, bytes(32), bytes(64)),  # x >= p
    (b"\x01\x00\x01\x00", (5).to_bytes(32, "big") * 2, bytes(32), bytes(64)),  # off curve
    (b"\x01\x00\x01\x00", bytes(64), N.to_bytes(32, "big"), bytes(64)),  # s >= n
])
def test_hostile_inputs_raise_the_same_errors(args: tuple[bytes, ...]) -> None:
    assert _error(native.borromean_verify_var, *args) == \
        _error(_reference.borromean_verify_var, *args)


def test_empty_batch() -> None:
    assert both(b"", b"", b"", b"") == ((b"", b""), (b"", b""))


def test_concurrent_calls_release_the_gil_safely(dmult_path: str) -> None:
    prepared = [_prepared(*_small_proof(v, 6, v)) for v in range(1, 9)]
    args = _inputs(prepared)
    want = native.borromean_verify_var(*args, threads=1, challenges=True)
    results: list[Any] = []
    workers = [threading.Thread(target=lambda: results.append(
        native.borromean_verify_var(*args, threads=2, challenges=True))) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert results == [want] * 4 and want[0] == b"\x01" * 8


# --- borromean_members_var: the ring members of range proofs ------------------------------------

MEMBER_MODULES = [native] + ([kernel.backend] if kernel.IS_NATIVE and kernel.backend is not native
                             else [])


def _members_args(claims: list[borromean.RangeProofClaim]) -> tuple[bytes, ...]:
    """The members kernel's inputs for real claims (what ``verify_many`` passes it)."""
    staged = [verify_module._stage(c) for c in claims]
    return (b"".join(verify_module._sizes(s.parsed.info.ring_sizes) for s in staged),
            b"".join(s.commit_packed for s in staged), b"".join(s.gen_packed for s in staged),
            b"".join(s.digits for s in staged),
            b"".join(verify_module.scalar_bytes(s.parsed.info.min_value) for s in staged),
            b"".join(verify_module.scalar_bytes(s.parsed.info.scale) for s in staged))


def test_members_of_real_proofs_agree_with_the_reference() -> None:
    claims = [borromean.RangeProofClaim(bytes.fromhex(v["proof"]), bytes.fromhex(v["commitment"]),
                                        H_GENERATOR.serialize())
              for v in VECTORS["zkp_fixed"]]
    proof, c = _small_proof(5, 3, 1)
    claims.append(borromean.RangeProofClaim(proof, c, H_GENERATOR.serialize()))
    args = _members_args(claims)
    want = _reference.borromean_members_var(*args)
    assert want[1] == b"\x01" * len(claims)
    for module in MEMBER_MODULES:
        assert module.borromean_members_var(*args) == want
    # the members are what the ring kernel verifies: every proof passes with them
    prepared = [verify_module.prepare(c) for c in claims]
    assert b"".join(p.pubs for p in prepared if p is not None) == want[0]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(1, 4), min_size=1, max_size=4), min_size=0, max_size=3),
       st.data())
def test_random_members_agree_with_the_reference(layouts: list[list[int]],
                                                 data: st.DataObject) -> None:
    """Random small points (infinity included), min_value and scale 0, 1 or any scalar, and
    commitments chosen so the last digit commitment is infinity."""
    sizes = b"".join(b"".join(v.to_bytes(2, "little") for v in (len(r), *r)) for r in layouts)
    small = st.sampled_from([1, 2, 3, 7, N - 1, N - 2])
    point = st.one_of(small.map(_point), st.just(bytes(64)))
    scalar = st.sampled_from([0, 1, 2, 10, 10**18, N - 1])
    cs, gens, digits, mins, scales = b"", b"", b"", b"", b""
    for ring in layouts:
        stored = [data.draw(small) for _ in range(len(ring) - 1)]
        g, m = data.draw(small), data.draw(scalar)
        # C = min·gen + Σ D_i makes D_{r-1} infinity (the proof then fails: ok = 0)
        c = (m * g + sum(stored)) % N if data.draw(st.booleans()) else data.draw(small)
        cs += _point(c) if c else bytes(64)
        gens += data.draw(st.one_of(st.just(_point(g)), point))
        digits += b"".join(_point(d) for d in stored)
        mins += m.to_bytes(32, "big")
        scales += data.draw(scalar).to_bytes(32, "big")
    args = (sizes, cs, gens, digits, mins, scales)
    want = _reference.borromean_members_var(*args)
    for module in MEMBER_MODULES:
        assert module.borromean_members_var(*args) == want


_G1 = _point(1)


@pytest.mark.parametrize("args", [
    (b"\x01\x00", _G1, _G1, b"", bytes(32), bytes(32)),                          # layout short
    (b"\x00\x00", _G1, _G1, b"", bytes(32), bytes(32)),                          # no rings
    (b"\x01\x00\x00\x00", _G1, _G1, b"", bytes(32), bytes(32)),                  # empty ring
    (b"\x01\x00\x01\x00\x00", _G1, _G1, b"", bytes(32), bytes(32)),              # trailing byte
    (b"\x01\x00\x05\x00", _G1, _G1, b"", bytes(32), bytes(32)),                  # ring of 5
    (b"\x01\x00\xff\xff", _G1, _G1, b"", bytes(32), bytes(32)),                  # ring of 65535
    (b"\x02\x00\x01\x00\x01\x00", _G1, _G1, b"", bytes(32), bytes(32)),          # digit missing
    (b"\x01\x00\x01\x00", _G1, _G1, _G1, bytes(32), bytes(32)),                  # digit extra
    (b"\x01\x00\x01\x00", _G1, b"", b"", bytes(32), bytes(32)),                  # gen missing
    (b"\x01\x00\x01\x00", _G1, _G1, b"", b"", bytes(32)),                        # min missing
    (b"\x01\x00\x01\x00", _G1, _G1, b"", bytes(32), bytes(64)),                  # scale extra
    (b"\x01\x00\x01\x00", _G1[:63], _G1, b"", bytes(32), bytes(32)),             # point length
    (b"\x01\x00\x01\x00", _G1, P.to_bytes(32, "big") * 2, b"", bytes(32), bytes(32)),  # x >= p
    (b"\x02\x00\x01\x00\x01\x00", _G1, _G1, (5).to_bytes(32, "big") * 2, bytes(32),
     bytes(32)),                                                                 # off curve
    (b"\x01\x00\x01\x00", _G1, _G1, b"", N.to_bytes(32, "big"), bytes(32)),      # min >= n
    (b"\x01\x00\x01\x00", _G1, _G1, b"", bytes(32), bytes(31)),                  # scalar length
])
def test_members_hostile_inputs_raise_the_same_errors(args: tuple[bytes, ...]) -> None:
    want = _error(_reference.borromean_members_var, *args)
    for module in MEMBER_MODULES:
        assert _error(module.borromean_members_var, *args) == want


def test_members_empty_batch() -> None:
    for module in [*MEMBER_MODULES, _reference]:
        assert module.borromean_members_var(b"", b"", b"", b"", b"", b"") == (b"", b"")
