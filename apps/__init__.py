"""Applications on top of every layer: the ``ctplugin`` command (``apps.main``) and the demo
(``apps.demo``, ``make demo``). Nothing imports this package."""
