"""The task vocabularies' registry: vbw.registry's, under its old address (task modules
and tests import it from here). Each vocabulary names the entry-point group through which
an installed package adds kinds to it: vbw.extractors, vbw.coercions, vbw.checkers,
vbw.schemas."""

from __future__ import annotations

from vbw.registry import TAG, PluginError, Registry, kind_tags

__all__ = ["TAG", "PluginError", "Registry", "kind_tags"]
