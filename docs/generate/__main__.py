"""`python -m docs.generate [--check]`: see docs/generate/blocks.py."""

from docs.generate.blocks import main

raise SystemExit(main())
