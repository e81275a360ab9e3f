"""vbw-canned: an example of extending vbw from an installed package (see README.md)."""
