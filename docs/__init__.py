"""The documentation. Its one Python package, docs.generate, writes the pages' generated
blocks (`python -m docs.generate`); this file makes `docs` a regular package, so that no
installed distribution's top-level `docs` can take its place on sys.path."""
