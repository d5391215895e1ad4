#!/usr/bin/env python3
"""Elements' test framework driving our P2P layer with its own helpers (docs/p2p.md §8): two
nodes without a wallet, ``connect_nodes`` by setup_network, blocks made with getnewblockhex /
submitblock (OP_TRUE coinbases, no addresses needed), ``sync_blocks`` over a chain of 101
blocks, a transaction spending a coinbase relayed for ``sync_mempools``, then
``disconnect_nodes``, competing branches and convergence on the longer one after
``connect_nodes``. Written in the framework's style; run by tests/integration/test_p2p.py
inside a copy of the framework."""

from test_framework.test_framework import BitcoinTestFramework
from test_framework.util import assert_equal


class P2PFrameworkSyncTest(BitcoinTestFramework):
    def set_test_params(self):
        self.num_nodes = 2
        self.setup_clean_chain = True
        # -acceptnonstdtxn: the coinbases pay bare OP_TRUE, a non-standard script to spend
        self.extra_args = [["-disablewallet", "-acceptnonstdtxn=1"]] * 2

    def mine(self, node, count):
        hashes = []
        for _ in range(count):
            block = node.getnewblockhex()
            assert_equal(node.submitblock(block), None)
            hashes.append(node.getbestblockhash())
        return hashes

    def run_test(self):
        node0, node1 = self.nodes
        assert_equal(len(node0.getpeerinfo()), 1)  # setup_network's connect_nodes(1, 0)
        self.log.info("A chain of 101 blocks mined on node0 reaches node1")
        hashes = self.mine(node0, 101)
        self.sync_blocks()
        assert_equal(node1.getbestblockhash(), hashes[-1])

        self.log.info("A coinbase spend sent to node0 reaches node1's mempool")
        coinbase = node0.getblock(hashes[0])["tx"][0]
        value = node0.gettxout(coinbase, 0)["value"]
        # no wallet, no address: all of it goes to the fee beside an OP_RETURN output
        raw = node0.createrawtransaction([{"txid": coinbase, "vout": 0}],
                                         [{"data": "00"}, {"fee": value}])
        txid = node0.sendrawtransaction(raw, 0)  # maxfeerate 0: any fee
        self.sync_mempools()
        assert_equal(node1.getrawmempool(), [txid])
        self.sync_all()

        self.log.info("Split, competing branches, join: both follow the longer one")
        self.disconnect_nodes(0, 1)
        self.mine(node0, 2)
        longer = self.mine(node1, 3)
        assert node0.getbestblockhash() != node1.getbestblockhash()
        self.connect_nodes(0, 1)
        self.sync_blocks()
        assert_equal(node0.getbestblockhash(), longer[-1])
        assert_equal(node0.getblockcount(), 104)


if __name__ == '__main__':
    P2PFrameworkSyncTest(__file__).main()
