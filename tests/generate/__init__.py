"""Tests of the live stack (vbw.generate): a package like every folder of tests/, so its
modules are `tests.generate.*` and tests/conftest.py follows their helpers when it sorts
tests into the fast tier."""
