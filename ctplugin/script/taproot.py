"""Elements taproot commitments: leaf, branch and tweak hashes, control blocks, script trees.

Elements uses BIP341's construction with its own tags (``docs/sighash.md`` §2.1, §2.3):

    leaf hash   = TaggedHash("TapLeaf/elements",   leaf_version ‖ compact_size(len) ‖ script)
    branch hash = TaggedHash("TapBranch/elements", min(a, b) ‖ max(a, b))  (bytewise order)
    tweak t     = TaggedHash("TapTweak/elements",  P ‖ merkle_root)   (or of P alone: key only)
    output key  Q = P + t·G,  P = lift_x(internal key)

and tapscript is leaf version ``0xC4`` (0xC0 is an unknown version in Elements). A control block
is ``(leaf_version | parity(Q)) ‖ P ‖ path`` with 0..128 path nodes of 32 bytes.

Single tweaks go through libsecp256k1 (``ctplugin.secp256k1.libsecp``); the validator checks
the tweaks of a block's script-path spends in its batch instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctplugin.errors import EncodingError
from ctplugin.hashes import tagged_hash
from ctplugin.secp256k1 import libsecp
from ctplugin.serialize import compact_size

TAG_TAPLEAF = "TapLeaf/elements"
TAG_TAPBRANCH = "TapBranch/elements"
TAG_TAPTWEAK = "TapTweak/elements"

LEAF_VERSION_TAPSCRIPT = 0xC4
LEAF_MASK = 0xFE
CONTROL_BASE_SIZE = 33
CONTROL_NODE_SIZE = 32
CONTROL_MAX_NODES = 128
CONTROL_MAX_SIZE = CONTROL_BASE_SIZE + CONTROL_NODE_SIZE * CONTROL_MAX_NODES
ANNEX_TAG = 0x50


def leaf_hash(script: bytes, leaf_version: int = LEAF_VERSION_TAPSCRIPT) -> bytes:
    """TaggedHash("TapLeaf/elements", leaf_version ‖ compact_size(len(script)) ‖ script)."""
    return tagged_hash(TAG_TAPLEAF, bytes((leaf_version,)) + compact_size(len(script)) + script)


def branch_hash(a: bytes, b: bytes) -> bytes:
    """TaggedHash("TapBranch/elements", smaller ‖ larger), comparing the 32-byte strings."""
    return tagged_hash(TAG_TAPBRANCH, a + b if a < b else b + a)


def tweak_hash(internal_key: bytes, merkle_root: bytes | None) -> bytes:
    """t = TaggedHash("TapTweak/elements", P ‖ merkle_root), or of P alone without scripts."""
    return tagged_hash(TAG_TAPTWEAK, internal_key + (merkle_root or b""))


@dataclass(frozen=True, slots=True)
class ControlBlock:
    """A parsed control block: leaf version, output-key parity, internal key, Merkle path."""

    leaf_version: int
    parity: int
    internal_key: bytes
    path: tuple[bytes, ...]

    @classmethod
    def parse(cls, data: bytes) -> ControlBlock:
        """``EncodingError`` for a size that is not 33 + 32·m with m ≤ 128."""
        size = len(data)
        if (size < CONTROL_BASE_SIZE or size > CONTROL_MAX_SIZE
                or (size - CONTROL_BASE_SIZE) % CONTROL_NODE_SIZE):
            raise EncodingError("control block size is not 33 + 32*m (m <= 128)", reason="length")
        path = tuple(data[i:i + 32] for i in range(CONTROL_BASE_SIZE, size, CONTROL_NODE_SIZE))
        return cls(data[0] & LEAF_MASK, data[0] & 1, bytes(data[1:33]), path)

    def serialize(self) -> bytes:
        return bytes((self.leaf_version | self.parity,)) + self.internal_key + b"".join(self.path)

    def merkle_root(self, leaf: bytes) -> bytes:
        """The root reached from ``leaf`` (a leaf hash) along the path."""
        k = leaf
        for node in self.path:
            k = branch_hash(k, node)
        return k


def output_key(internal_key: bytes, merkle_root: bytes | None) -> tuple[bytes, int]:
    """(Q's x coordinate, parity of Q's y) for Q = P + t·G (BIP341 taproot_tweak_pubkey with
    the Elements tag). ``EncodingError`` if P is not on the curve or t ≥ n (negligible)."""
    result = libsecp.xonly_tweak_add(internal_key, tweak_hash(internal_key, merkle_root))
    if result is None:
        raise EncodingError("internal key does not lift, or the tweak is out of range",
                            reason="off-curve")
    return result


def check_tweak(output_xonly: bytes, parity: int, internal_key: bytes,
                merkle_root: bytes | None) -> bool:
    """Does Q (x-only, with this y parity) equal P + t·G? (Elements CheckTapTweak.) False also
    when a key is not a curve point's x coordinate or t ≥ n."""
    return libsecp.xonly_tweak_add_check(output_xonly, parity, internal_key,
                                         tweak_hash(internal_key, merkle_root))


# --- script trees (wallet side) ------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Leaf:
    script: bytes
    leaf_version: int = LEAF_VERSION_TAPSCRIPT

    @property
    def hash(self) -> bytes:
        return leaf_hash(self.script, self.leaf_version)


ScriptTree = Leaf | tuple["ScriptTree", "ScriptTree"]
"""A leaf, or a pair of subtrees (BIP341's binary tree; the pair order does not matter)."""


def tree_root(tree: ScriptTree) -> bytes:
    """The Merkle root of a script tree."""
    if isinstance(tree, Leaf):
        return tree.hash
    return branch_hash(tree_root(tree[0]), tree_root(tree[1]))


def tree_paths(tree: ScriptTree) -> list[tuple[Leaf, tuple[bytes, ...]]]:
    """Every leaf with its Merkle path (sibling hashes from the leaf up), left to right."""
    if isinstance(tree, Leaf):
        return [(tree, ())]
    left, right = tree
    left_root, right_root = tree_root(left), tree_root(right)
    return ([(leaf, (*path, right_root)) for leaf, path in tree_paths(left)]
            + [(leaf, (*path, left_root)) for leaf, path in tree_paths(right)])


@dataclass(frozen=True, slots=True)
class TaprootOutput:
    """A taproot output built from an internal key and an optional script tree."""

    internal_key: bytes
    tree: ScriptTree | None = None

    @property
    def merkle_root(self) -> bytes | None:
        return None if self.tree is None else tree_root(self.tree)

    def output_key(self) -> tuple[bytes, int]:
        return output_key(self.internal_key, self.merkle_root)

    @property
    def script_pubkey(self) -> bytes:
        """OP_1 PUSH32 Q."""
        return b"\x51\x20" + self.output_key()[0]

    def control_blocks(self) -> list[tuple[Leaf, ControlBlock]]:
        """Each leaf of the tree with the control block that spends it."""
        if self.tree is None:
            return []
        parity = self.output_key()[1]
        return [(leaf, ControlBlock(leaf.leaf_version, parity, self.internal_key, path))
                for leaf, path in tree_paths(self.tree)]

    def control_block(self, script: bytes) -> ControlBlock:
        for leaf, block in self.control_blocks():
            if leaf.script == script:
                return block
        raise EncodingError("script is not a leaf of this output's tree", reason="not-in-tree")
