"""Names in the fleet: the stream, each session's subject and session-list key, the host token, nats:// references."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..journal.store import is_session_id
from . import FleetError

STREAM = "WREN"
SUBJECT_PREFIX = "wren.j"
# Other agents' sessions Wren kept (`wren keep`): wren.k.<host>.<agent>.<file>.<version> (fleet/kept.py).
KEPT_PREFIX = "wren.k"
BUCKET = "wren-sessions"
SCHEMES = ("nats", "tls")

# A subject token may not hold dots, wildcards or spaces; a KV key allows this set too.
_TOKEN_OK = re.compile(r"[a-z0-9_-]+")
_TOKEN_BAD = re.compile(r"[^a-z0-9_-]+")
_TOKEN_MAX = 64


def host_token(name: str | None = None) -> str:
    """A stable token for a machine: its name (or the host name), lowercase, anything else made a dash.

    `Build Box.local` becomes `build-box-local`; two names that differ only in those characters
    get the same token, so give `--host` explicitly where that matters.
    """
    if name is None:
        import socket  # only to ask the host's name: `sessions.opening` reads nats:// names through this module

        name = socket.gethostname()
    raw = name
    token = _TOKEN_BAD.sub("-", raw.strip().lower()).strip("-")[:_TOKEN_MAX].strip("-")
    return token or "host"


def check_host(token: str) -> str:
    """A host token exactly as given, or a FleetError that says which characters are allowed."""
    if not _TOKEN_OK.fullmatch(token) or len(token) > _TOKEN_MAX:
        raise FleetError(
            f"{token!r} is not a host token: use lowercase letters, digits, - and _ (at most {_TOKEN_MAX})"
        )
    return token


def subject_of(host: str, session: str) -> str:
    return f"{SUBJECT_PREFIX}.{host}.{session}"


def row_key(host: str, session: str) -> str:
    """The session list's key for one session."""
    return f"s.{host}.{session}"


def beat_key(host: str) -> str:
    """The session list's key where a host's mirror says it is alive."""
    return f"h.{host}"


@dataclass(frozen=True)
class RemoteRef:
    """`nats://SERVER[:PORT][/HOST[/SESSION]]`: a server, and optionally one host or one session on it."""

    server: str
    host: str | None = None
    session: str | None = None

    def __str__(self) -> str:
        return "/".join(part for part in (shown(self.server), self.host, self.session) if part)


def shown(server: str) -> str:
    """A server URL fit to print: a password in it is replaced with ***."""
    parts = urlsplit(server)
    if parts.password is None:
        return server
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


def is_remote(text: str) -> bool:
    return text.split("://", 1)[0].lower() in SCHEMES and "://" in text


def parse_ref(text: str) -> RemoteRef:
    """Split a reference into the server URL and the HOST and SESSION after it, checking each."""
    try:
        parts = urlsplit(text)
        hostname = parts.hostname  # an unclosed [ or a bracketed name that is no IPv6 address raises
    except ValueError as exc:
        masked = re.sub(r"(://[^/@:]*:)[^/@]*@", r"\1***@", text[:200])  # as shown() hides a password
        raise FleetError(
            f"{masked!r} is not a fleet reference ({exc}): expected nats://SERVER[:PORT][/HOST[/SESSION]], "
            "an IPv6 address in brackets ([::1])"
        ) from None
    if parts.scheme.lower() not in SCHEMES or not hostname:
        raise FleetError(f"{text!r} is not a fleet reference: expected nats://SERVER[:PORT][/HOST[/SESSION]]")
    if parts.query or parts.fragment:
        raise FleetError(f"{text!r}: a fleet reference has no ?query or #fragment")
    try:
        port = parts.port  # a port that is not a number, or out of range, raises here
    except ValueError:
        port = 0
    if port == 0:  # 0 is no port a server listens on (the system's "any free port")
        raise FleetError(f"{text!r}: the port must be a number from 1 to 65535") from None
    words = [w for w in parts.path.split("/") if w]
    if len(words) > 2:
        raise FleetError(f"{text!r}: expected at most /HOST/SESSION after the server")
    host = check_host(words[0]) if words else None
    session = words[1] if len(words) > 1 else None
    if session is not None and not is_session_id(session):
        raise FleetError(f"{text!r}: {session!r} is not a session id (expected s-YYYYMMDD-HHMMSS-xxxx)")
    return RemoteRef(f"{parts.scheme.lower()}://{parts.netloc}", host, session)
