"""A fresh virtualenv for a test that installs vbw (the wheel, the example plugin) and runs
it apart from this checkout, seeing the packages of the interpreter that runs the suite.

`python -m venv --system-site-packages` is not that: it sees the *base* interpreter's
site-packages, so inside a virtualenv (as contributors run the suite) the child found no
hydra. Here the child gets a .pth file naming the running interpreter's site-packages
folders: they come after the child's own site-packages, so what is installed into the
child wins, and their own .pth files (an editable vbw of this or another checkout) are not
processed.
"""

from __future__ import annotations

import site
import subprocess
import sys
from pathlib import Path


def site_folders() -> list[str]:
    """The running interpreter's site-packages folders (a virtualenv's, and the base's
    when that virtualenv includes them; the user's when enabled)."""
    folders = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    return [f for f in dict.fromkeys(folders) if Path(f).is_dir()]


def child_venv(path: Path) -> Path:
    """Create a virtualenv at `path` that sees this interpreter's packages; its python."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=120)
    python = path / "bin" / "python"
    own = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                         check=True, capture_output=True, text=True, timeout=60).stdout.strip()
    Path(own, "vbw-test-parent.pth").write_text("\n".join(site_folders()) + "\n",
                                                encoding="utf-8")
    return python
