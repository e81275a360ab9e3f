"""Hydra finds installed config through `hydra_plugins`: this adds vbw_canned's conf/ to
the search path, so `backend=canned` composes like vbw's own backends."""

from hydra.core.config_search_path import ConfigSearchPath
from hydra.plugins.search_path_plugin import SearchPathPlugin


class VbwCannedSearchPath(SearchPathPlugin):
    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        search_path.append(provider="vbw-canned", path="pkg://vbw_canned.conf")
