"""`python -m rnnsearch.cli` runs the command-line interface, as `python -m rnnsearch` does."""

from rnnsearch.cli import main

raise SystemExit(main())
