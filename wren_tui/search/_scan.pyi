# Search's raw pass in C (see _scan.c); present when the install could compile it.

def scan(
    buf: bytes | bytearray | memoryview,
    base: int,
    prev_seq: int,
    needle: bytes | None,
    fold: bool,
    escapes: bool,
    extras: tuple[bytes, ...],
    /,
) -> tuple[int, int, bytes, bytes, bytes]: ...
def find(
    buf: bytes | bytearray | memoryview, needle: bytes, fold: bool, escapes: bool, extras: tuple[bytes, ...], /
) -> int: ...
def plain(buf: bytes | bytearray | memoryview, /) -> tuple[int, int]: ...
def crc32(buf: bytes | bytearray | memoryview, /) -> int: ...
def folding() -> bool: ...
