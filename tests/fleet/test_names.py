"""Names in the fleet: a machine's host token, and nats:// references with the host and session after them."""

from __future__ import annotations

import pytest

from wren_tui.fleet import FleetError
from wren_tui.fleet.names import RemoteRef, host_token, is_remote, parse_ref, shown, subject_of


@pytest.mark.parametrize(
    ("name", "token"),
    [
        ("laptop", "laptop"),
        ("Build Box.local", "build-box-local"),
        ("ci-runner_7", "ci-runner_7"),
        ("  wéird*host>name  ", "w-ird-host-name"),
        ("...", "host"),
        ("x" * 100, "x" * 64),
    ],
)
def test_a_host_name_becomes_a_token_a_subject_can_hold(name: str, token: str) -> None:
    assert host_token(name) == token
    assert subject_of(host_token(name), "s-20260101-000000-abcd").count(".") == 3


def test_the_default_host_token_is_stable() -> None:
    assert host_token() == host_token()


def test_a_reference_names_a_server_and_optionally_a_host_and_a_session() -> None:
    assert parse_ref("nats://127.0.0.1:4222") == RemoteRef("nats://127.0.0.1:4222")
    assert parse_ref("nats://h:1/ci") == RemoteRef("nats://h:1", "ci")
    assert parse_ref("tls://h/ci/s-20260101-000000-abcd/") == RemoteRef("tls://h", "ci", "s-20260101-000000-abcd")
    assert is_remote("nats://x") and not is_remote("s-20260101-000000-abcd") and not is_remote("journals/a.jsonl")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("http://h/ci", "not a fleet reference"),
        ("nats://", "not a fleet reference"),
        ("nats://h:port", "the port must be a number from 1 to 65535"),
        ("nats://h:0", "the port must be a number from 1 to 65535"),
        ("nats://h:00/ci", "the port must be a number from 1 to 65535"),
        ("nats://h/ci/s-20260101-000000-abcd/more", "at most /HOST/SESSION"),
        ("nats://h/CI", "not a host token"),
        ("nats://h/ci/nope", "not a session id"),
        ("nats://h/ci?x=1", "no ?query"),
    ],
)
def test_a_bad_reference_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(FleetError) as refused:
        parse_ref(text)
    assert says in str(refused.value)


def test_a_password_in_a_server_url_is_never_printed() -> None:
    assert shown("nats://me:s3cret@h:4222") == "nats://me:***@h:4222"
    assert "s3cret" not in str(parse_ref("nats://me:s3cret@h:4222/ci"))
    assert shown("nats://h:4222") == "nats://h:4222"
