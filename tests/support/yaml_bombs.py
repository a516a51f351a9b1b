"""A YAML alias bomb for the tests of files a user names."""

from __future__ import annotations

BILLION_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(ord('a') + i)}: &{chr(ord('a') + i)} [{', '.join(['*' + chr(ord('a') + i - 1)] * 9)}]\n"
    for i in range(1, 9)
)  # nine levels of nine aliases: 9**9 values once walked, 300 bytes as text
