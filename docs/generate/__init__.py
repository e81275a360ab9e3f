"""The generators of the docs' marked blocks (figures, tables, references), kept out of
tests/: `python -m docs.generate` rewrites every block, `--check` exits 1 when one is stale
(tests/test_readme.py runs the same check). blocks.py maps each block name to its
generator; the others generate one kind of block each."""
