"""Sweeps over Hydra launchers: per-job status files, the sweep summary, shard merges.

A launcher may run each job in another process or on another machine (joblib, submitit,
Ray), so nothing here lives in process memory across jobs: every job writes its
`status.json` into its own folder, and the end of the multirun (a Hydra callback, in the
process that launched the sweep) reads those files to merge shards, write the summary and
compute the sweep's exit code.
"""
