"""Elements' genesis builder (ctplugin.elements.genesis) against the hashes Elements itself
asserts or prints: liquidv1's (kernel/chainparams.cpp asserts it at start-up), elementsregtest's
default genesis and pegged asset (the functional framework's BITCOIN_ASSET and its expected
genesis hash), and the genesis of each option set Elements' CT tests start nodes with."""

from __future__ import annotations

import pytest

from ctplugin.elements import parse_block
from ctplugin.elements.genesis import (
    BITCOIN_MAINNET_GENESIS,
    GENESIS_TIME,
    OP_TRUE,
    GenesisOptions,
    chain_commitment,
    genesis_block,
)
from ctplugin.errors import EncodingError

# liquidv1's federation peg script and block-signing script (Elements kernel/chainparams.cpp,
# CLiquidV1Params): 15-of-... multisig scripts, the genesis commits to both.
LIQUIDV1_FEDPEG = bytes.fromhex(
    "745c87635b21020e0338c96a8870479f2396c373cc7696ba124e8635d41b0ea581112b678172612102675333"
    "a4e4b8fb51d9d4e22fa5a8eaced3fdac8a8cbf9be8c030f75712e6af992102896807d54bc55c24981f24a453c6"
    "0ad3e8993d693732288068a23df3d9f50d4821029e51a5ef5db3137051de8323b001749932f2ff0d34c82e96a2"
    "c2461de96ae56c2102a4e1a9638d46923272c266631d94d36bdb03a64ee0e14c7518e49d2f29bc40102102f8a0"
    "0b269f8c5e59c67d36db3cdc11b11b21f64b4bffb2815e9100d9aa8daf072103079e252e85abffd3c401a69b08"
    "7e590a9b86f33f574f08129ccbd3521ecf516b2103111cf405b627e22135b3b3733a4a34aa5723fb0f58379a16"
    "d32861bf576b0ec2210318f331b3e5d38156da6633b31929c5b220349859cc9ca3d33fb4e68aa08401742103230d"
    "ae6b4ac93480aeab26d000841298e3b8f6157028e47b0897c1e025165de121035abff4281ff00660f99ab27bb5"
    "3e6b33689c2cd8dcd364bc3c90ca5aea0d71a62103bd45cddfacf2083b14310ae4a84e25de61e45163734632522"
    "2747b157446614c2103cc297026b06c71cbfa52089149157b5ff23de027ac5ab781800a578192d175462103d3bd"
    "e5d63bdb3a6379b461be64dad45eabff42f758543a9645afd42f6d4248282103ed1e8d5109c9ed66f7941bc53cc7"
    "1137baa76d50d274bda8d5e8ffbd6e61fe9a5f6702c00fb275522103aab896d53a8e7d6433137bbba940f9c521e0"
    "85dd07e60994579b64a6d992cf79210291b7d0b1b692f8f524516ed950872e5da10fb1b808b5a526dedc6fed1cf2"
    "9807210386aa9372fbab374593466bc5451dc59954e90787f08060964d95c87ef34ca5bb5368ae")
LIQUIDV1_SIGNBLOCK = bytes.fromhex(
    "5b21026a2a106ec32c8a1e8052e5d02a7b0a150423dbd9b116fc48d46630ff6e6a05b92102791646a8b49c2740"
    "352b4495c118d876347bf47d0551c01c4332fdc2df526f1a2102888bda53a424466b0451627df22090143bbf7c"
    "060e9eacb1e38426f6b07f2ae12102aee8967150dee220f613de3b239320355a498808084a93eaf39a34dcd620"
    "24852102d46e9259d0a0bb2bcbc461a3e68f34adca27b8d08fbe985853992b4b104e27412102e9944e35e5750a"
    "b621e098145b8e6cf373c273b7c04747d1aa020be0af40ccd62102f9a9d4b10a6d6c56d8c955c547330c589bb4"
    "5e774551d46d415e51cd9ad5116321033b421566c124dfde4db9defe4084b7aa4e7f36744758d92806b8f72c2e"
    "943309210353dcc6b4cf6ad28aceb7f7b2db92a4bf07ac42d357adf756f3eca790664314b621037f55980af045"
    "5e4fb55aad9b85a55068bb6dc4740ea87276dc693f4598db45fa210384001daa88dabd23db878dbb1ce5b4c2a5"
    "fa72c3113e3514bf602325d0c37b8e21039056d089f2fe72dbc0a14780b4635b0dc8a1b40b7a59106325dd1bc4"
    "5cc70493210397ab8ea7b0bf85bc7fc56bb27bf85e75502e94e76a6781c409f3f2ec3d1122192103b00e3b5b77"
    "884bf3cae204c4b4eac003601da75f96982ffcb3dcb29c5ee419b92103c1f3c0874cfe34b8131af34699589aac"
    "ec4093399739ae352e8a46f80a6f68375fae")


def display(h: bytes) -> str:
    return h[::-1].hex()


def test_liquidv1_genesis_is_the_hash_elements_asserts() -> None:
    options = GenesisOptions("liquidv1", LIQUIDV1_FEDPEG, LIQUIDV1_SIGNBLOCK,
                             BITCOIN_MAINNET_GENESIS)
    block = genesis_block(options)
    assert display(block.hash) == (
        "1466275836220db2944ca059a3a10ef6fd2ea684b0688d2c379296888a206003")
    # L-BTC, Liquid's policy asset, is the pegged asset derived from the same commitment
    assert display(options.pegged_asset) == (
        "6f0279e9ed041c3d710a9f57d0c02928416460c4b722ae3457a11eec381c526d")


def test_elementsregtest_defaults() -> None:
    options = GenesisOptions("elementsregtest")
    assert chain_commitment("elementsregtest", OP_TRUE, OP_TRUE).hex() == (
        "78fdfddeafc3bac34abe63efee0d64f7d817cee508ded08746ba4ae6df5349cb")
    assert display(options.pegged_asset) == (
        "b2e15d0d7a0c94e4e2ce0fe6e8691b9e451377f6e46e8045a86f7c4b5d4f0f23")
    block = genesis_block(options)
    assert display(block.hash) == (
        "cd179c84c35f51825f20a3b91a18d45f0c53b5ceb744a5b6ef8f0babe809396f")
    assert display(block.transactions[0].txid) == (
        "9672e19f7c6c4bfb26319513dec6896602748d29f056361a2032ab53f05e11a1")
    assert len(block.header.serialize()) == 79  # the framework's BLOCK_HEADER_SIZE
    assert block.header.time == GENESIS_TIME
    assert parse_block(block.serialize()) == block


@pytest.mark.parametrize(("coins", "tokens", "expected"), [
    (2_100_000_000_000_000, 0,
     "209577bda6bf4b5804bd46f8621580dd6d4e8bfa2d190e1c50e932492baca07d"),
    (2_000_000_000_000_000, 200_000_000,
     "71aabfc5812b3f24f1d306c0f2bc49b5f3e4481de00539c97cbd44eba1fdfa0d"),
    (5_000_000_000, 0,
     "53ed6fd3e654b04554d038f128d21e6bb58c9d818584181b98c500986c90db5a"),
])
def test_the_options_the_functional_tests_pass(coins: int, tokens: int, expected: str) -> None:
    options = GenesisOptions("elementsregtest", initial_free_coins=coins,
                             initial_reissuance_tokens=tokens)
    block = genesis_block(options)
    assert display(block.hash) == expected
    issuance_tx = block.transactions[1]
    issuance = issuance_tx.inputs[0].issuance
    assert issuance is not None and issuance.amount == coins and issuance.inflation_keys == tokens
    assert issuance_tx.inputs[0].prevout_hash == options.commitment
    assert [o.script_pubkey for o in issuance_tx.outputs] == [OP_TRUE] * (1 + (tokens > 0))
    assert issuance_tx.outputs[0].asset == options.pegged_asset
    if tokens:
        assert issuance_tx.outputs[1].asset == options.pegged_asset_token


def test_the_name_and_scripts_change_the_pegged_asset() -> None:
    base = GenesisOptions("elementsregtest").pegged_asset
    assert GenesisOptions("foo").pegged_asset != base
    assert GenesisOptions("elementsregtest", signblock_script=b"\x52").pegged_asset != base
    assert GenesisOptions("elementsregtest", initial_free_coins=5).pegged_asset == base


@pytest.mark.parametrize("kwargs", [{"parent_genesis": b"\x00" * 31},
                                    {"initial_free_coins": -1},
                                    {"initial_reissuance_tokens": 1 << 63}])
def test_bad_options_are_typed_errors(kwargs: dict[str, object]) -> None:
    with pytest.raises(EncodingError):
        GenesisOptions("elementsregtest", **kwargs)  # type: ignore[arg-type]
