"""What a replay header records about the machine and the software that made it."""

from __future__ import annotations

import os
import platform
from datetime import datetime, timezone
from importlib import metadata

# What every run runs on. The packages of a backend or an engine are the kind's own
# declaration (`requires`, in its module), passed in by the run that used it, so a header
# records llguidance's version for engine=llguidance and no engine's for a server run.
PACKAGES = ("validbutwrong", "jsonschema", "hydra-core", "pydantic")


def versions(requires: tuple[str, ...] = ()) -> dict[str, str | None]:
    """Installed version per package (None if absent): vbw's core ones and those the
    run's backend and engine declare they need; our own distribution is keyed "vbw"."""
    out: dict[str, str | None] = {}
    for name in dict.fromkeys((*PACKAGES, *requires)):
        key = "vbw" if name == "validbutwrong" else name
        try:
            out[key] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[key] = None
    return out


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def hardware(n_threads: int) -> dict[str, object]:
    return {"cpu": cpu_name(), "machine": platform.machine(), "os": platform.platform(),
            "logical_cpus": os.cpu_count(), "n_threads": n_threads}


def now() -> str:
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")
