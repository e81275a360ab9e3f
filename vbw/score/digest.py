"""Text identity without the texts: a 16-byte digest per generation.

mode=compare counts the generations two replays share byte for byte. Holding every text
of every replay to compare them would put compare far outside scoring's memory; a digest
(vbw.score.stream keeps one per scored item and arm when asked) is 16 bytes a generation.
"""

from __future__ import annotations

import hashlib

NO_TEXT = b""  # the digest cell of an arm without a text


def text_digest(text: str | None) -> bytes:
    """16 bytes that are equal exactly when two texts are (a collision is 2**-128)."""
    if text is None:
        return NO_TEXT
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
