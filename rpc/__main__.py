"""``python -m rpc``: the same as ``ctplugin node`` (``rpc.daemon``)."""

import sys

from rpc.daemon import main

if __name__ == "__main__":
    sys.exit(main())
