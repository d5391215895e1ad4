"""``python -m rpc``: the same as ``ctplugin node`` (``apps.node``)."""

import sys

from apps.node import main

if __name__ == "__main__":
    sys.exit(main())
