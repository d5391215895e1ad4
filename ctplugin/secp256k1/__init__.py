"""secp256k1 for ctplugin.

- ``Scalar``, ``Point``: immutable value types; ``G`` the base point, ``INFINITY``.
- ``msm_var``, ``FixedBase``, ``g_table``: variable-time multi-scalar multiplication (public data
  only), native; ``g_table()`` the one precomputed table of G.
- ``decode_points`` / ``encode_points``: batch encodings (compressed, Pedersen 08/09, generator
  0a/0b, x-only, QR-flagged x) with validation.
- ``ct``: constant-time operations on secrets through coincurve.
- ``kernel``: the packed-bytes API underneath (scalar vectors, subset sums, ...).
"""

from ctplugin.secp256k1 import ct, kernel
from ctplugin.secp256k1.kernel import (
    KIND_COMPRESSED,
    KIND_GENERATOR,
    KIND_PEDERSEN,
    KIND_XONLY,
    KIND_XQR,
)
from ctplugin.secp256k1.msm import FixedBase, g_table, msm_var, pack_points, pack_scalars
from ctplugin.secp256k1.params import GX, GY, LAMBDA, N, P
from ctplugin.secp256k1.point import INFINITY, G, Point, decode_points, encode_points
from ctplugin.secp256k1.scalar import Scalar

__all__ = [
    "GX",
    "GY",
    "INFINITY",
    "KIND_COMPRESSED",
    "KIND_GENERATOR",
    "KIND_PEDERSEN",
    "KIND_XONLY",
    "KIND_XQR",
    "LAMBDA",
    "FixedBase",
    "G",
    "N",
    "P",
    "Point",
    "Scalar",
    "ct",
    "decode_points",
    "encode_points",
    "g_table",
    "kernel",
    "msm_var",
    "pack_points",
    "pack_scalars",
]  # fmt: skip
