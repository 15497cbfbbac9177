# The line diff of two versions of a file in C (see _linediff.c); present when the install could compile it.

def hunks(
    old: bytes | bytearray | memoryview, new: bytes | bytearray | memoryview, /
) -> list[tuple[int, int, int, int]] | None: ...
