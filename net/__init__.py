"""The P2P layer (docs/p2p.md): Bitcoin's v1 wire protocol as Elements speaks it, on asyncio.

- ``net.messages``: framing and payloads, pure functions over bytes (``ProtocolError``).
- ``net.connman``: peers and the ``ConnectionManager`` (handshake, ping, headers-first sync,
  block and transaction relay, misbehaviour, timeouts), calling the validator through its
  public surface only (``Node.submit_block``, ``Node.accept_transaction``).
- ``net.banman``: bans (banlist.json) and discouraged addresses; ``net.permissions``: the
  ``-whitelist`` permissions (noban, mempool, ...).

It sits above ``validator`` and ``regtest`` and below ``rpc``, which starts it and serves the
network RPCs.
"""

from net.connman import ConnectionManager, NetSettings, Peer, split_address
from net.messages import PROTOCOL_VERSION, ProtocolError

__all__ = ["PROTOCOL_VERSION", "ConnectionManager", "NetSettings", "Peer", "ProtocolError",
           "split_address"]
