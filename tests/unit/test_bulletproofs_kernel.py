"""The Bulletproof verification-setup kernel: the native entries against their pure-Python twin
(``ctplugin.bulletproofs._reference``), bit for bit, hostile inputs included; both batch
square-root backends; the C transcript against the vectors' trace."""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctplugin.bulletproofs import _reference as ref
from ctplugin.bulletproofs import generator_set, prove
from ctplugin.bulletproofs.kernel import IS_NATIVE, record_scalars
from ctplugin.bulletproofs.transcript import Transcript
from ctplugin.errors import EncodingError
from ctplugin.pedersen import H_GENERATOR, commit, generator_generate
from ctplugin.secp256k1 import N, P, kernel
from ctplugin.secp256k1 import _reference as secp_ref
from tests.conftest import SLOW_SCALE, load_json, shared_path

pytestmark = pytest.mark.skipif(not IS_NATIVE, reason="native kernel not built")


def _native_builds() -> list[Any]:
    """The portable native build, and the ADX one where it runs (both carry the entries)."""
    builds: list[Any] = []
    for name in ("_native", "_native_adx"):
        try:
            module = __import__(f"ctplugin.secp256k1.{name}", fromlist=[name])
        except ImportError:
            continue
        if getattr(module, "cpu_supported", lambda: True)():
            builds.append(module)
    return builds


NATIVES = _native_builds()
native = NATIVES[0] if NATIVES else None  # the portable build (fixed-input tests run all)

GENS = generator_set(256)
OTHER = generator_generate(b"\x24" * 32)
_OFF_CURVE_X = next(x for x in range(1, 100) if secp_ref.sqrt_mod_p(x ** 3 + 7) is None)
# two good generators, then one with a bad prefix, one with x >= p and one off the curve
GEN_ENCODINGS = (H_GENERATOR.serialize() + OTHER.serialize() + b"\x08" + OTHER.serialize()[1:]
                 + b"\x0a" + (P + 3).to_bytes(32, "big")
                 + b"\x0b" + _OFF_CURVE_X.to_bytes(32, "big"))
SHAPES = [(4, 1), (8, 1), (4, 2), (64, 1), (16, 4)]


def _pool(nbits: int, m: int, count: int) -> list[tuple[bytes, bytes, int, bytes | None]]:
    """Valid proofs: (proof, joined commitments, generator index, extra commit)."""
    out = []
    for i in range(count):
        gen, gi = (H_GENERATOR, 0) if i % 2 == 0 else (OTHER, 1)
        extra = (None, b"", b"script" * i)[i % 3]
        values = [(7 * i + 3 * j + 1) % (1 << nbits) for j in range(m)]
        blinds = [1000 + 31 * i + j for j in range(m)]
        proof = prove(values, blinds, gen, bytes([i + 1]) * 32, extra_commit=extra,
                      nbits=nbits, gens=GENS)
        comms = b"".join(commit(v, b, gen).serialize() for v, b in zip(values, blinds))
        out.append((proof, comms, gi, extra))
    return out


POOLS = {shape: _pool(*shape, 3) for shape in SHAPES}


def _outcome(fn: Callable[[], Any]) -> tuple[Any, ...]:
    """A comparable outcome: the result, or the error (type, and reason + message for
    EncodingError)."""
    try:
        return ("ok", fn())
    except EncodingError as exc:
        return ("encoding", exc.reason, str(exc))
    except TypeError:
        return ("type",)


_SPECIAL_32 = [bytes(32), b"\xff" * 32, P.to_bytes(32, "big"), (P + 1).to_bytes(32, "big"),
               (P - 1).to_bytes(32, "big"), N.to_bytes(32, "big"), (N - 1).to_bytes(32, "big"),
               (7).to_bytes(32, "big")]


@st.composite
def hostile_item(draw: st.DrawFn, nbits: int, m: int) -> dict[str, Any]:
    """A pool proof with optional mutations of its bytes, commitments, extra commit, min value
    and given commitment points."""
    proof, comms, gi, extra = draw(st.sampled_from(POOLS[(nbits, m)]))
    proof = bytearray(proof)
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["flip", "word", "special"]))
        at = draw(st.integers(0, len(proof) - 1))
        if kind == "flip":
            proof[at] ^= 1 << draw(st.integers(0, 7))
        else:
            word = (draw(st.binary(min_size=32, max_size=32)) if kind == "word"
                    else draw(st.sampled_from(_SPECIAL_32)))
            at = min(at, len(proof) - 32)
            proof[at: at + 32] = word
    if draw(st.integers(0, 9)) == 0:
        proof = proof[: draw(st.integers(0, len(proof)))] + draw(st.binary(max_size=3))
    comms_b = bytearray(comms)
    if draw(st.integers(0, 7)) == 0:
        j = draw(st.integers(0, m - 1))
        comms_b[33 * j] = draw(st.sampled_from([0x02, 0x08, 0x09, 0x0A, 0x00]))
    if draw(st.integers(0, 9)) == 0:
        j = draw(st.integers(0, m - 1))
        comms_b[33 * j + 1: 33 * j + 33] = draw(st.sampled_from(_SPECIAL_32))
    if draw(st.integers(0, 15)) == 0:
        comms_b = comms_b[:-1]
    points: bytes | None = None
    choice = draw(st.integers(0, 5))
    if choice == 1:  # the right decoding, when the encodings decode
        try:
            points = kernel.backend.decode_points_var(bytes(comms_b), kernel.KIND_PEDERSEN)
        except ValueError:
            points = bytes(64 * m)
    elif choice == 2:
        points = draw(st.binary(min_size=64 * m, max_size=64 * m))
    elif choice == 3:
        points = draw(st.binary(max_size=64 * m + 1))
    elif choice == 4:  # another valid point with the commitment's x
        points = bytes(comms_b[1:33]) + (1).to_bytes(32, "big") + bytes(64 * (m - 1))
    extra_v = draw(st.sampled_from([extra, None, b"", b"x" * 70, extra]))
    if draw(st.integers(0, 9)) == 0:
        gi = draw(st.integers(2, 4))  # a generator that does not decode
    min_v = None
    if m == 1 and draw(st.integers(0, 5)) == 0:
        min_v = draw(st.sampled_from([0, 1, 5, (1 << 32) + 1, (1 << 64) - 1]))
    return {"proof": bytes(proof), "comms": bytes(comms_b), "gi": gi, "extra": extra_v,
            "min": min_v, "points": points}


def _prepare(backend: Any, nbits: int, m: int, items: list[dict[str, Any]],
             with_mins: bool, with_points: bool) -> tuple[Any, ...]:
    return _outcome(lambda: backend.bulletproof_prepare_var(
        nbits, m, [it["proof"] for it in items], [it["comms"] for it in items], GEN_ENCODINGS,
        struct.pack(f"<{len(items)}I", *[it["gi"] for it in items]),
        [it["extra"] for it in items],
        [it["min"] for it in items] if with_mins else None,
        [it["points"] for it in items] if with_points else None))


@settings(max_examples=int(60 * SLOW_SCALE), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_prepare_native_matches_reference(data: st.DataObject) -> None:
    nbits, m = data.draw(st.sampled_from(SHAPES))
    items = data.draw(st.lists(hostile_item(nbits, m), min_size=0, max_size=5))
    with_mins, with_points = data.draw(st.booleans()), data.draw(st.booleans())
    build = data.draw(st.sampled_from(NATIVES))
    want = _prepare(ref, nbits, m, items, with_mins, with_points)
    assert _prepare(build, nbits, m, items, with_mins, with_points) == want
    if want[0] == "ok":
        records, points, gen_points, failures = want[1]
        assert len(gen_points) == 64 * 5 and gen_points[128:] == bytes(192)
        ok = len(items) - len(failures)
        assert len(records) == 32 * record_scalars(nbits, m) * ok
        assert len(points) == 64 * (m + 4 + 2 * (nbits * m).bit_length() - 4) * ok


def test_prepare_valid_pool_has_no_failures_on_either_backend() -> None:
    for (nbits, m), pool in POOLS.items():
        items = [{"proof": p, "comms": c, "gi": g, "extra": e, "min": None, "points": None}
                 for p, c, g, e in pool]
        want = _prepare(ref, nbits, m, items, False, False)
        assert want[0] == "ok" and want[1][3] == []
        for build in NATIVES:
            assert _prepare(build, nbits, m, items, False, False) == want


@pytest.mark.parametrize("backend", ["scalar", "ifma"])
def test_square_root_backends_agree(backend: str) -> None:
    """Both batch square-root paths give the reference's results, for batch sizes around the
    16-lane blocks (the padded tail) and hostile x coordinates, in every native build."""
    pool = POOLS[(64, 1)]
    batches = []
    for count in (1, 2, 3, 5, 16, 17, 33):
        items = []
        for i in range(count):
            proof, comms, gi, extra = pool[i % len(pool)]
            if i % 4 == 3:  # points off the curve / x >= p somewhere in the batch
                at = 65 + 32 * (i % 4)
                proof = proof[:at] + _SPECIAL_32[i % len(_SPECIAL_32)] + proof[at + 32:]
            items.append({"proof": proof, "comms": comms, "gi": gi, "extra": extra,
                          "min": None, "points": None})
        batches.append((items, _prepare(ref, 64, 1, items, False, False)))
    for build in NATIVES:
        try:
            previous = build._sqrt_backend(backend)
        except RuntimeError:
            pytest.skip("no AVX-512 IFMA on this machine")
        try:
            for items, want in batches:
                assert _prepare(build, 64, 1, items, False, False) == want
        finally:
            build._sqrt_backend(previous)


def test_sqrt_backend_switch_rejects_unknown_names() -> None:
    with pytest.raises(ValueError):
        native._sqrt_backend("avx9000")
    assert native._sqrt_backend() in ("ifma", "scalar")


def _prepared(nbits: int, m: int) -> tuple[bytes, bytes, bytes]:
    pool = POOLS[(nbits, m)]
    records, points, _, failures = native.bulletproof_prepare_var(
        nbits, m, [p for p, *_ in pool], [c for _, c, *_ in pool], GEN_ENCODINGS,
        struct.pack(f"<{len(pool)}I", *[g for _, _, g, _ in pool]), [e for *_, e in pool])
    assert failures == []
    return records, points, struct.pack(f"<{len(pool)}I", *[g for _, _, g, _ in pool])


@settings(max_examples=int(60 * SLOW_SCALE), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_accumulate_native_matches_reference(data: st.DataObject) -> None:
    nbits, m = data.draw(st.sampled_from(SHAPES))
    records, points, gen_index = _prepared(nbits, m)
    count = len(POOLS[(nbits, m)])
    n = nbits * m
    size = 2 * GENS.capacity + 1
    members = data.draw(st.lists(st.integers(0, count + (data.draw(st.integers(0, 9)) == 0)),
                                 max_size=6))
    hostile_weight = data.draw(st.integers(0, 9)) == 0
    weights = [data.draw(st.integers(0, (1 << 256) - 1 if hostile_weight else N - 1))
               for _ in members]
    offsets = [0, 1, GENS.h_rev_start(n)]
    if data.draw(st.integers(0, 7)) == 0:
        offsets[data.draw(st.integers(0, 2))] = data.draw(st.sampled_from([-1, size, size - n + 1]))
    recs = records
    if data.draw(st.integers(0, 9)) == 0:  # a record scalar >= N, or a torn record
        at = 32 * data.draw(st.integers(0, len(records) // 32 - 1))
        recs = (records[:at] + b"\xff" * 32 + records[at + 32:] if data.draw(st.booleans())
                else records[:-1])
    n_gens = data.draw(st.sampled_from([2, 2, 1, 0]))
    build = data.draw(st.sampled_from(NATIVES))
    start = [data.draw(st.integers(0, N - 1)) for _ in range(4)]

    def run(backend: Any, acc_type: Any) -> tuple[Any, ...]:
        acc = acc_type(size)
        acc.axpy((1).to_bytes(32, "big"),
                 b"".join(v.to_bytes(32, "big") for v in start), 5)
        before = acc.to_bytes()
        got = _outcome(lambda: backend.bulletproof_accumulate_var(
            acc, nbits, m, *offsets, recs, points, gen_index, n_gens,
            struct.pack(f"<{len(members)}I", *members),
            b"".join(w.to_bytes(32, "big") for w in weights)))
        after = acc.to_bytes()
        if got[0] != "ok":
            assert after == before  # an error changes nothing
        return got, after

    assert run(build, build.ScalarAccumulator) == run(ref, secp_ref.ScalarAccumulator)


def test_accumulate_rejects_a_foreign_accumulator() -> None:
    records, points, gen_index = _prepared(64, 1)
    with pytest.raises(TypeError):
        native.bulletproof_accumulate_var(secp_ref.ScalarAccumulator(257), 64, 1, 0, 1, 129,
                                          records, points, gen_index, 2, b"", b"")


def test_prepare_argument_errors_agree() -> None:
    pool = POOLS[(64, 1)]
    proof, comms, _, extra = pool[0]
    one = struct.pack("<I", 0)
    cases: list[tuple[Any, ...]] = [
        (64, 3, [proof], [comms], GEN_ENCODINGS, one, [extra]),  # shape
        (64, 1, [proof], [comms, comms], GEN_ENCODINGS, one, [extra]),  # counts
        (64, 1, [proof], [comms], GEN_ENCODINGS[:-1], one, [extra]),  # generator length
        (64, 1, [proof], [comms], GEN_ENCODINGS, b"\x00" * 3, [extra]),  # index length
        (64, 1, [proof], [comms], GEN_ENCODINGS, struct.pack("<I", 5), [extra]),  # index range
        (64, 1, [5], [comms], GEN_ENCODINGS, one, [extra]),  # element type
        (64, 1, [proof], [comms], GEN_ENCODINGS, one, [extra], [-1]),  # min range
        (64, 1, [proof], [comms], GEN_ENCODINGS, one, [extra], ["1"]),  # min type
        (16, 4, [proof], [comms], GEN_ENCODINGS, one, [extra], [1]),  # min for m > 1
        (64, 1, 7, [comms], GEN_ENCODINGS, one, [extra]),  # not a sequence
    ]
    for args in cases:
        want = _outcome(functools.partial(ref.bulletproof_prepare_var, *args))
        assert want[0] != "ok", args
        for build in NATIVES:
            assert _outcome(functools.partial(build.bulletproof_prepare_var, *args)) == want, args


def test_failure_codes_name_the_check() -> None:
    """Each kind of defect gives its own code and detail, in the documented check order."""
    proof, comms, gi, extra = POOLS[(64, 1)][0]

    def code(p: bytes, c: bytes = comms, points: bytes | None = None,
             g: int = gi) -> tuple[int, int] | None:
        _, _, _, failures = native.bulletproof_prepare_var(
            64, 1, [p], [c], GEN_ENCODINGS, struct.pack("<I", g), [extra], None,
            None if points is None else [points])
        return None if not failures else failures[0][1:]

    assert code(proof) is None
    assert code(proof + b"\x00") == (ref.ERR_LENGTH, 676)
    assert code(proof, comms + b"\x00") == (ref.ERR_COMMITMENT_LENGTH, 34)
    assert code(proof, g=2) == (ref.ERR_VALUE_GENERATOR, ref.GEN_PREFIX)
    assert code(proof, g=3) == (ref.ERR_VALUE_GENERATOR, ref.GEN_RANGE)
    assert code(proof, g=4) == (ref.ERR_VALUE_GENERATOR, ref.GEN_CURVE)
    assert code(proof[:-1], g=4) == (ref.ERR_LENGTH, 674)  # length comes first
    assert code(proof, b"\x0a" + comms[1:]) == (ref.ERR_COMMITMENT_PREFIX, 0)
    assert code(proof[:64] + bytes([proof[64] | 0x20]) + proof[65:]) == (ref.ERR_FLAG_BITS, 64)
    assert code(proof[:354] + bytes([proof[354] | 0x80]) + proof[355:]) == (ref.ERR_FLAG_BITS,
                                                                            354)
    assert code(proof[:257] + bytes(32) + proof[289:]) == (ref.ERR_SCALAR, 257)
    assert code(proof, points=bytes(64)) == (ref.ERR_COMMITMENT_POINT, 0)
    assert code(proof[:129] + (P + 1).to_bytes(32, "big") + proof[161:]) == (
        ref.ERR_POINT_RANGE, 1 + 2)  # T1 is point 3 (V, A, S, T1, ...)
    assert code(proof[:65] + _OFF_CURVE_X.to_bytes(32, "big") + proof[97:]) == (
        ref.ERR_POINT_CURVE, 1)


def test_transcript_trace_python_and_native() -> None:
    """The vectors' transcript trace, through the Python transcript and the native setup (its
    records carry z, x and x_r², and Π x_r^{-1})."""
    vectors = load_json(shared_path("bulletproofs", "vectors.json"))
    trace = vectors["transcript_trace"]["values"]
    case = next(c for c in vectors["valid"] if c["id"] == trace_case(vectors))
    proof = bytes.fromhex(case["proof"])
    comms = [bytes.fromhex(c) for c in case["commitments"]]
    gen = bytes.fromhex(case["value_gen"])
    extra = None if case["extra_commit"] is None else bytes.fromhex(case["extra_commit"])
    tr = Transcript.for_statement(comms, gen, extra, case["min_value"])
    assert tr.state.hex() == trace["h_inputs (after commitment/value_gen)"]
    flags = proof[64]
    assert tr.absorb_points(flags & 1, flags >> 1 & 1, proof[65:129]).hex() == trace["y"]
    assert tr.absorb_points(flags & 1, flags >> 1 & 1, proof[65:129]).hex() == trace["z"]
    assert tr.absorb_points(flags >> 2 & 1, flags >> 3 & 1, proof[129:193]).hex() == trace["x"]
    assert tr.absorb(proof[:64]).hex() == trace["h_after_taux_mu"]
    weight = "randomizer61 (verifier-only weight of the t-equation)"
    assert tr.peek().hex() == trace[weight]
    assert tr.absorb(proof[193:225]).hex() == trace["ux (inner-product 'u' weight)"]
    lr = proof[355:]
    xr = []
    for r in range(5):
        pair = (int.from_bytes(proof[353:355], "little") >> (2 * r)) & 3
        xr.append(tr.absorb_points(pair & 1, pair >> 1, lr[64 * r: 64 * r + 64]))
        assert xr[-1].hex() == trace[f"x_ip[{r}]"]
    gens = generator_set(case["gens_n"])
    assert gens.n_gens == 256
    records, _, _, failures = native.bulletproof_prepare_var(
        64, 1, [proof], [comms[0]], gen, struct.pack("<I", 0), [extra])
    assert failures == []
    rec = [int.from_bytes(records[32 * i: 32 * i + 32], "big") for i in range(len(records) // 32)]
    z, x = int(trace["z"], 16), int(trace["x"], 16)
    xs = [int(v.hex(), 16) for v in xr]
    assert rec[5] == z
    free = rec[ref.HEAD + 5:]
    assert free[2] == x and [free[5 + 2 * r] for r in range(5)] == [v * v % N for v in xs]
    p0 = 1
    for v in xs:
        p0 = p0 * pow(v, -1, N) % N
    a1 = int.from_bytes(proof[225:257], "big")
    assert rec[0] == -a1 * p0 % N  # pg = −a1·Π x_r^{-1}


def trace_case(vectors: dict[str, Any]) -> str:
    return vectors["transcript_trace"]["case"]


def test_results_do_not_depend_on_the_thread_count() -> None:
    """prepare and accumulate give the same bytes on 1..5 threads, with malformed proofs, a
    bad generator and repeated members mixed in (shares cut through them)."""
    pool = POOLS[(16, 4)]
    items = []
    for i in range(70):
        proof, comms, gi, extra = pool[i % len(pool)]
        if i % 9 == 4:
            proof = proof[:65] + _OFF_CURVE_X.to_bytes(32, "big") + proof[97:]
        if i % 13 == 7:
            gi = 4
        items.append((proof, comms, gi, extra))
    args = ([p for p, *_ in items], [c for _, c, *_ in items], GEN_ENCODINGS,
            struct.pack(f"<{len(items)}I", *[g for _, _, g, _ in items]), [e for *_, e in items])
    outcomes = {(b.__name__, t): b.bulletproof_prepare_var(16, 4, *args, threads=t)
                for b in NATIVES for t in range(1, 6)}
    assert len({repr(v) for v in outcomes.values()}) == 1
    first = next(iter(outcomes.values()))
    assert first == ref.bulletproof_prepare_var(16, 4, *args)
    records, points, _, failures = first
    assert failures
    count = len(items) - len(failures)
    gi_ok = [g for k, (_, _, g, _) in enumerate(items) if k not in {f[0] for f in failures}]
    members = struct.pack(f"<{3 * count}I", *(list(range(count)) * 3))
    weights = b"".join((7 * k + 1).to_bytes(32, "big") for k in range(3 * count))
    results = set()
    for build in NATIVES:
        for t in range(1, 6):
            acc = build.ScalarAccumulator(2 * GENS.capacity + 1)
            out = build.bulletproof_accumulate_var(
                acc, 16, 4, 0, 1, GENS.h_rev_start(64), records, points,
                struct.pack(f"<{count}I", *gi_ok), 5, members, weights, threads=t)
            results.add((out, acc.to_bytes()))
    assert len(results) == 1
    with pytest.raises(EncodingError):
        native.bulletproof_prepare_var(16, 4, *args, threads=65)
