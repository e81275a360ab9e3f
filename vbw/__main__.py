"""`python -m vbw` and the `vbw` console script (vbw.cli.console)."""

from vbw.cli.console import main

if __name__ == "__main__":
    main()
