"""Replay files: the versioned contract between generation and scoring."""

from vbw.replay.format import FORMAT, ArmRecord, EndV1, ItemRecord, MetaV1, ModelInfo, Replay
from vbw.replay.io import (ReplayWriter, available_replays, bundled_key, locate_replay,
                           read_replay)

__all__ = ["FORMAT", "ArmRecord", "EndV1", "ItemRecord", "MetaV1", "ModelInfo", "Replay",
           "ReplayWriter", "available_replays", "bundled_key", "locate_replay", "read_replay"]
