"""``help CALL`` for every call (hidden ones included) is generated from its one declaration
(rpc/registry.py) and has what bitcoind's RPCHelpMan always prints: a description of every
argument, a Result section and an Examples section (docs/node-rpc.md §1.8)."""

from __future__ import annotations

import pytest

import rpc.methods  # noqa: F401  (registers every call)
from rpc.registry import REGISTRY, Kind, Method, optional, required

CALLS = sorted(REGISTRY.methods)


@pytest.mark.parametrize("name", CALLS)
def test_every_call_has_described_arguments_a_result_and_examples(name: str) -> None:
    method = REGISTRY.methods[name]
    text = method.help_text()
    assert text.startswith(method.signature() + "\n")
    undescribed = [arg.name for arg in method.args if not arg.description.strip()]
    assert not undescribed, f"{name}: arguments without a description: {undescribed}"
    assert "\nResult:\n" in text, f"{name} has no Result section"
    examples = text.split("\nExamples:\n", 1)
    assert len(examples) == 2 and examples[1].startswith(f"> ctplugin cli {name}"), name
    if method.args:
        assert "\nArguments:\n" in text
        for i, arg in enumerate(method.args, 1):
            assert f"\n{i}. {arg.name} " in text, (name, arg.name)


def test_examples_come_from_the_declaration() -> None:
    declared = Method("demo", "util", lambda call: None,
                      (required("address", Kind.STR, "The address"),
                       required("n", Kind.INT, "A count"),
                       optional("flag", Kind.BOOL, False, "A flag")),
                      result="null    (json null)")
    assert declared.help_text().endswith('Examples:\n> ctplugin cli demo "address" n')
    chosen = Method("demo", "util", lambda call: None, result="n", examples=("1", '"x" 2'))
    assert chosen.help_text().endswith(
        "Examples:\n> ctplugin cli demo 1\n> ctplugin cli demo \"x\" 2")
