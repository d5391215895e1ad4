"""The regtest node: JSON-RPC over HTTP in bitcoind/elementsd conventions, mining, wallets, ZMQ.

- ``daemon``: the node's lifetime (``serve``: start-up, warm-up, shutdown; the command line
  is ``apps.node``);
  ``config``: its options; ``startup``: opening and closing what it serves.
- ``server``: HTTP (aiohttp low-level server): access control, auth, limits, the bounded work
  queue; ``auth``: cookie, rpcuser/rpcpassword, rpcauth; ``jsonrpc``: JSON-RPC 1.x/2.0 bodies.
- ``context``: the running node as methods see it (locks, warm-up, dispatch);
  ``registry``: the method table (arguments, checks, help); ``methods``: the calls by category;
  ``params``: bitcoind's parameter parsers; ``errors``: the error codes.
- ``events``: the node's own chain listener (mempool sequence, tip-change condition);
  ``mining``: block templates; ``convert``: bitcoin-cli's argument conversion and
  result printing (``ctplugin cli`` is ``apps.cli``, over ``rpcclient``).
"""
