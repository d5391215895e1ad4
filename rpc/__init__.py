"""JSON-RPC server in bitcoind/elementsd conventions over a ``validator.node.Node``.

``rpc.server.RpcServer`` serves JSON-RPC 1.0 (bitcoind's legacy HTTP status codes) and 2.0
(always HTTP 200, batches) on a loopback address; ``rpc.methods`` maps method names to the node.
"""
