"""`python -m trinogen.cli`: the same entry point as the console script."""

from trinogen.cli import main

main()
