"""``python -m dpscale``: the command line."""

from dpscale.cli import main

main()
