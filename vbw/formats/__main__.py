"""`python -m vbw.formats`: regenerate the committed format files after a model changes."""

from __future__ import annotations

from vbw.formats import write_all


def main() -> None:
    for path in write_all():
        print(path)


if __name__ == "__main__":
    main()
