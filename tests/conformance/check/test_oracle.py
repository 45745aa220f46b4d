"""The value oracle: units, skew, order and outside enums, each with the bug it names."""

from __future__ import annotations

from conformance.check.oracle import (
    Window,
    datetime_problems,
    epoch_problems,
    ordered_problems,
    parse_datetime,
    rpc_code_problems,
    zoned_problems,
)

NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z
EXCHANGE = Window(NOW, NOW + 0.5)


def test_a_date_time_near_the_exchange_holds_and_one_hours_off_does_not() -> None:
    assert datetime_problems("2026-01-01T00:00:00.250Z", EXCHANGE, "startedOn") == []
    assert datetime_problems("2026-01-01T01:00:00+01:00", EXCHANGE, "startedOn") == []
    [problem] = datetime_problems("2026-01-01T03:00:00Z", EXCHANGE, "startedOn")
    assert "10800 s after the exchange" in problem and "300 s skew" in problem


def test_a_local_time_may_be_in_any_zone_but_one_with_an_offset_names_its_instant() -> None:
    span = 14 * 3600 + 300
    for local in ("2026-01-01T03:00:00", "2025-12-31T14:00:00"):  # UTC+3, UTC-10, without an offset
        assert zoned_problems(local, EXCHANGE, "creation_time", local_span=span) == []
    for instant in ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00+00:00", "2026-01-01T03:00:00+03:00"):
        assert zoned_problems(instant, EXCHANGE, "creation_time", local_span=span) == []
    [problem] = zoned_problems("2026-01-01T03:00:00Z", EXCHANGE, "creation_time", local_span=span)
    assert "10800 s after the exchange" in problem and "a local time labelled as UTC?" in problem


def test_a_naive_date_time_names_no_instant_unless_the_document_allows_it() -> None:
    assert "no UTC offset" in datetime_problems("2026-01-01T00:00:00", EXCHANGE, "x")[0]
    assert datetime_problems("2026-01-01T00:00:00", EXCHANGE, "x", naive_is_utc=True) == []
    assert parse_datetime("yesterday")[0] is None


def test_epoch_numbers_in_the_other_unit_are_named_as_such() -> None:
    assert epoch_problems(int(NOW), "s", EXCHANGE, "created") == []
    assert epoch_problems(int(NOW * 1000), "ms", EXCHANGE, "timestamp") == []
    assert (
        "in milliseconds since the epoch; the document says seconds"
        in epoch_problems(int(NOW * 1000), "s", EXCHANGE, "created")[0]
    )
    assert (
        "in seconds since the epoch; the document says milliseconds"
        in epoch_problems(int(NOW), "ms", EXCHANGE, "timestamp")[0]
    )
    assert "not near the exchange" in epoch_problems(1234567890, "s", EXCHANGE, "created")[0]
    assert epoch_problems(True, "s", EXCHANGE, "created") and epoch_problems("1", "s", EXCHANGE, "created")


def test_ordered_pairs() -> None:
    assert ordered_problems(1.0, 2.0, "request", "response") == []
    assert ordered_problems(1.0, 1.0, "start", "end") == []
    assert "comes after" in ordered_problems(3.0, 2.0, "startedOn", "changedOn")[0]


def test_google_rpc_codes_are_0_to_16_and_an_http_status_is_named() -> None:
    assert all(rpc_code_problems(code, "code") == [] for code in range(17))
    assert "an HTTP status" in rpc_code_problems(404, "code")[0]
    assert "outside google.rpc.Code" in rpc_code_problems(17, "code")[0]
    assert rpc_code_problems(True, "code") and rpc_code_problems("5", "code")
