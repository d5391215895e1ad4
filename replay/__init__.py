"""Block replay at scale (docs/replay.md): ``ctplugin replay SOURCE --datadir DIR --mode MODE``.

A driver streams blocks from a source into a data directory's chainstate, in height order, and
verifies their proofs in one of several modes, with progress, a report and plots. Layer 4 (beside
``rpc``, independent of it): uses ``ctplugin``, ``regtest`` and ``validator``'s public surface.

- ``sources``: chain files, Core / Elements ``blocks/`` directories, a node over JSON-RPC.
- ``driver``: ``replay(source, datadir, ReplayConfig)`` → ``ReplayReport``; ``ReplayError``.
- ``engine``: the driver's one view of the validator (pending = committed, not yet verified).
- ``stopping``: Ctrl-C as a stop between blocks (a second one abandons the node as a kill would).
- ``modes``: single | block | window | workers | dask.
- ``tasks``: the stateless task workers and Dask run (packed proof work → verdict).
- ``workers``: a bounded pool of worker processes (back-pressure, replacement, retry).
- ``cluster``: the same over Dask distributed (LocalCluster or a scheduler address).
- ``progress``: rich progress bar, UpdateTip lines; ``report``: table + JSON; ``plot``: PNGs.
"""
