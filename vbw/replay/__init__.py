"""Replay files: the versioned contract between generation and scoring."""

from vbw.replay.format import ArmRecord, EndV1, Intervention, ItemRecord, Replay, ToolCall
from vbw.replay.header import (FORMAT, SAMPLED_FORMAT, CompleteHeader, ModelInfo, RecordedModel, ReplayHeader,
                               ServerInfo, ShardInfo)
from vbw.replay.io import (ReplayWriter, available_replays, bundled_key, locate_replay,
                           read_replay)

__all__ = ["FORMAT", "SAMPLED_FORMAT", "ArmRecord", "CompleteHeader", "EndV1", "Intervention", "ItemRecord", "ModelInfo",
           "RecordedModel", "Replay", "ReplayHeader", "ReplayWriter", "ServerInfo", "ShardInfo",
           "ToolCall", "available_replays",
           "bundled_key", "locate_replay", "read_replay"]
