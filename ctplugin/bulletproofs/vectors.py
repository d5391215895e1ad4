"""Run a Bulletproof vectors document (schema: docs/bulletproofs-format.md §11), one
verdict line per case (the ``ctplugin bulletproofs check FILE`` command, ``apps.bulletproofs``).

Per case: the prover's bytes (cases with openings and a nonce), verify alone, verify in a batch
(the case's claim together with every valid case's claim; a failing batch must name exactly this
case), and rewind (cases with a ``rewind`` entry). Quirk cases check the reference's own verdicts
with and without min_value. The ``generators`` section and each ``batches`` entry are checked
too. Exit status 0 only if everything matches.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

from ctplugin.batch import BatchVerifier
from ctplugin.bulletproofs.generators import generator_set
from ctplugin.bulletproofs.prover import prove
from ctplugin.bulletproofs.rewind import rewind
from ctplugin.bulletproofs.verifier import RangeProofClaims, range_proof_claim
from ctplugin.errors import CtpluginError
from ctplugin.hashes import rfc6979_hmac_sha256
from ctplugin.pedersen import Generator, generator_generate, generator_generate_blinded
from ctplugin.secp256k1 import G

Case = dict[str, Any]


def _hex(value: str | None) -> bytes | None:
    return None if value is None else bytes.fromhex(value)


def _claim(case: Case, min_value: Any = "case", label: Any = None) -> RangeProofClaims:
    mins = case.get("min_value") if min_value == "case" else min_value
    return range_proof_claim(
        bytes.fromhex(case["proof"]), [bytes.fromhex(c) for c in case["commitments"]],
        bytes.fromhex(case["value_gen"]), _hex(case.get("extra_commit")), case["nbits"],
        generator_set(case["gens_n"]), min_value=mins, label=label if label else case["id"])


def _verdict(make: Callable[[], RangeProofClaims]) -> bool:
    """Verify one claim alone; a malformed proof (ProofError) is a reject."""
    try:
        claim = make()
    except CtpluginError:
        return False
    batch = BatchVerifier(claim.base)
    batch.add(claim)
    return batch.verify()


def _prover_bytes(case: Case) -> bool:
    openings = case["openings"]
    proof = prove(
        [int(o["value"]) for o in openings], [bytes.fromhex(o["blind"]) for o in openings],
        Generator.parse(bytes.fromhex(case["value_gen"])), bytes.fromhex(case["prover_nonce"]),
        extra_commit=_hex(case.get("extra_commit")), nbits=case["nbits"],
        gens=generator_set(case["gens_n"]), message=_hex(case.get("message")),
        min_value=case.get("min_value"))
    return proof.hex() == case["proof"]


def _rewind_matches(case: Case) -> bool:
    want = case["rewind"]
    got = rewind(
        bytes.fromhex(case["proof"]), bytes.fromhex(case["commitments"][0]),
        bytes.fromhex(case["value_gen"]), bytes.fromhex(case["prover_nonce"]),
        _hex(case.get("extra_commit")), case["nbits"], generator_set(case["gens_n"]),
        min_value=(case.get("min_value") or [0])[0])
    if not want.get("result"):
        return got is None
    return (got is not None and got.value == int(want["value"])
            and got.blind.hex() == want["blind"] and got.message.hex() == want["message"])


def _batch_verdict(case: Case, good: list[RangeProofClaims]) -> tuple[bool, bool]:
    """(verdict of the case batched with all valid cases, bisection named exactly this case)."""
    try:
        claim = _claim(case, label=("case", case["id"]))
    except CtpluginError:
        return False, True  # rejected at parse time: never reaches a batch
    if not good:
        return _verdict(lambda: claim), True
    batch = BatchVerifier(good[0].base)
    batch.extend(good)
    batch.add(claim)
    ok = batch.verify()
    named = ok or batch.failures() == [("case", case["id"])]
    return ok, named


def _check_generators(section: Case) -> list[tuple[str, bool]]:
    results = []
    want = section.get("rfc6979_stream_first3", [])
    stream = rfc6979_hmac_sha256(G.x.to_bytes(32, "big") + G.y.to_bytes(32, "big"), len(want))  # type: ignore[union-attr]
    first = [stream[32 * i: 32 * i + 32].hex() for i in range(len(want))]
    results.append(("rfc6979 stream", first == want))
    if "custom_value_gen_key32" in section:
        gen = generator_generate(bytes.fromhex(section["custom_value_gen_key32"]))
        results.append(("generator_generate",
                        gen.serialize().hex() == section["custom_value_gen_33"]))
    if "blinded_asset_gen_33" in section:
        from ctplugin.hashes import sha256

        gen = generator_generate_blinded(sha256(b"asset-tag" + bytes(4)),
                                         sha256(b"asset-blind" + bytes(4)))
        results.append(("generator_generate_blinded",
                        gen.serialize().hex() == section["blinded_asset_gen_33"]))
    for key, n_gens in (("gens256_sample_xy", 256), ("gens1024_sample_xy", 1024)):
        samples = section.get(key, {})
        if samples:
            gens = generator_set(n_gens)
            ok = all(gens.generator(int(name[5:-1])).packed.hex() == xy
                     for name, xy in samples.items())
            results.append((f"generator set {n_gens}", ok))
    return results


Check = tuple[bool, str]


def _collect(checks: Iterator[Check]) -> Check:
    """Run a case's checks in order; an error ends the case as a failure with its message."""
    ok, parts = True, []
    try:
        for passed, text in checks:
            ok &= passed
            parts.append(text)
    except (CtpluginError, KeyError, ValueError, TypeError) as exc:
        ok = False
        parts.append(f"error {type(exc).__name__}: {exc}")
    return ok, "; ".join(parts)


def _prover_check(case: Case) -> Iterator[Check]:
    if "openings" in case and "prover_nonce" in case:
        same = _prover_bytes(case)
        yield same, f"prover {'bytes match' if same else 'BYTES DIFFER'}"


def _case_checks(case: Case, good: list[RangeProofClaims]) -> Iterator[Check]:
    """Prover bytes, verdict alone, verdict in a batch (named by bisection), rewind."""
    yield from _prover_check(case)
    expected = bool(case["expected"])
    got = _verdict(lambda: _claim(case))
    yield got == expected, f"verify {got} (expected {expected})"
    got_b, named = _batch_verdict(case, good)
    want_b = bool(case.get("reference_verify_multi", expected))
    yield (got_b == want_b and named,
           f"batch {got_b} (expected {want_b}{'' if named else ', bisection did not name it'})")
    if case.get("rewind"):
        same = _rewind_matches(case)
        yield same, f"rewind {'matches' if same else 'DIFFERS'}"


def _quirk_checks(case: Case) -> Iterator[Check]:
    """Prover bytes and the reference's min_value verdicts (array given / NULL)."""
    yield from _prover_check(case)
    for key, mins in (("reference_verify_with_min_value", "case"),
                      ("reference_verify_with_min_value_NULL", None)):
        if key in case:
            got = _verdict(functools.partial(_claim, case, min_value=mins))
            name = key.removeprefix("reference_")
            yield got == bool(case[key]), f"{name} {got} (reference {case[key]})"


def check(data: dict[str, Any], say: Callable[[str], None]) -> bool:
    """Run every case of a vectors document, one ``PASS``/``FAIL`` verdict line per check to
    ``say``; True iff everything matches. Malformed documents raise KeyError / TypeError /
    ValueError / CtpluginError; a document without a single case (a ``valid``, ``invalid``
    or ``quirks`` list of them) is malformed too, never a pass."""
    if not isinstance(data, dict) or not any(
            isinstance(data.get(k), list) and data[k] for k in ("valid", "invalid", "quirks")):
        raise ValueError("no Bulletproof cases (a 'valid', 'invalid' or 'quirks' list)")
    all_ok = True

    def report(name: str, ok: bool, detail: str) -> None:
        nonlocal all_ok
        all_ok &= ok
        say(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")

    for name, ok in _check_generators(data.get("generators", {})):
        report(name, ok, "matches" if ok else "differs")

    valid = data.get("valid", [])
    by_id = {c["id"]: c for c in [*valid, *data.get("invalid", []), *data.get("quirks", [])]}
    good_by_gens: dict[int, list[RangeProofClaims]] = {}
    for case in valid:
        with contextlib.suppress(CtpluginError):  # reported as a verify failure below
            good_by_gens.setdefault(case["gens_n"], []).append(
                _claim(case, label=("good", case["id"])))

    for section in ("valid", "invalid"):
        for case in data.get(section, []):
            good = [c for c in good_by_gens.get(case["gens_n"], [])
                    if c.labels != (("good", case["id"]),)]
            report(case["id"], *_collect(_case_checks(case, good)))
    for case in data.get("quirks", []):
        report(case["id"], *_collect(_quirk_checks(case)))

    for i, entry in enumerate(data.get("batches", [])):
        try:
            claims = [_claim(by_id[cid], label=cid) for cid in entry["ids"]]
            batch = BatchVerifier(generator_set(entry["gens_n"]).fixed)
            batch.extend(claims)
            got = batch.verify()
            ok = got == bool(entry["expected"])
            detail = f"{len(claims)} proofs, verdict {got} (expected {entry['expected']})"
        except (CtpluginError, KeyError, ValueError, TypeError) as exc:
            ok, detail = False, f"error {type(exc).__name__}: {exc}"
        report(f"batch[{i}]", ok, detail)
    return all_ok
