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
