"""`python -m rnnsearch` runs the command-line interface."""

from rnnsearch.cli import main

raise SystemExit(main())
