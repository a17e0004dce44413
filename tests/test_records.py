"""State records in proposal metas (hdbo_engine/records.py): the fingerprint, the record's
form, finding the latest usable record for a history, and recording a state once."""

from __future__ import annotations

import hashlib

import numpy as np

from hdbo_engine.records import (
    has_record,
    history_fingerprint,
    latest_record,
    make_record,
    meta_records,
)

KEY = "algo_state"


def test_the_fingerprint_hashes_the_settings_and_the_prefix_bytes() -> None:
    X = np.arange(6, dtype=float).reshape(3, 2) / 10
    y = np.array([1.0, np.nan, -2.5])
    expected = hashlib.sha1(b"(3, 0.1)" + X.tobytes() + y.tobytes()).hexdigest()[:20]
    assert history_fingerprint("(3, 0.1)", X, y) == expected
    # lists hash as the float64 arrays they make
    assert history_fingerprint("(3, 0.1)", X, y) == history_fingerprint(
        "(3, 0.1)", X.tolist(), y.tolist())
    assert history_fingerprint("(3, 0.2)", X, y) != expected
    assert history_fingerprint("(3, 0.1)", X[:2], y[:2]) != expected


def test_a_record_holds_n_first_and_fp_last_around_the_algorithms_fields() -> None:
    record = make_record(7, "ab12", w=[0.5, -1.0], loss=0.25)
    assert record == {"n": 7, "w": [0.5, -1.0], "loss": 0.25, "fp": "ab12"}
    assert list(record) == ["n", "w", "loss", "fp"]


def test_meta_records_are_the_dicts_under_the_key_in_order() -> None:
    metas = [{KEY: {"n": 1}}, {}, {KEY: "a user's value"}, {"other": {"n": 2}},
             {KEY: {"n": 3}}, {KEY: None}]
    assert meta_records(metas, KEY) == [{"n": 1}, {"n": 3}]


def test_a_state_is_present_once_a_meta_holds_its_fingerprint() -> None:
    metas: list[dict] = [{"t": 1}, {KEY: "fp-9"}]  # a user's value that looks like one
    assert not has_record(meta_records(metas, KEY), "fp-9")
    metas.append({KEY: make_record(9, "fp-9", v=1)})
    assert has_record(meta_records(metas, KEY), "fp-9")
    assert not has_record(meta_records(metas, KEY), "fp-10")
    assert not has_record(meta_records(metas, "another_key"), "fp-9")


def _fingerprints(calls: list[int]):
    def fingerprint(n: int) -> str:  # a stand-in: this history's prefix of n points
        calls.append(n)
        return f"h{n}"
    return fingerprint


def _read(record: dict) -> str | None:
    value = record["v"]  # KeyError: malformed
    return None if value == "unusable" else value


RECORDS: list[object] = [
    {"n": 3, "v": "at 3", "fp": "h3"},
    {"n": 5, "v": "first at 5", "fp": "h5"},
    "not a dict",
    {"n": 6, "v": "foreign", "fp": "other history"},
    {"n": 7, "fp": "h7"},                                # malformed: no "v"
    {"n": 8, "v": "unusable", "fp": "h8"},               # read() refuses it
    {"n": 5, "v": "second at 5", "fp": "h5"},
    {"n": 4, "v": "no fingerprint"},
    {"n": 9, "v": "beyond the history", "fp": "h9"},
    {"n": "10", "v": "n not an int", "fp": "h10"},
]


def test_the_latest_usable_record_skips_foreign_and_malformed_ones() -> None:
    calls: list[int] = []
    hit = latest_record(RECORDS, 0, 8, _fingerprints(calls), _read)
    # 8: refused, 7: malformed, 6: another fingerprint; at 5 the first one told wins
    assert hit == (5, "h5", "first at 5")
    assert calls == [8, 7, 6, 5]  # each n's fingerprint once, the latest n first
    assert latest_record(RECORDS, 0, 9, _fingerprints([]), _read) == (
        9, "h9", "beyond the history")


def test_the_latest_record_lies_after_the_state_and_within_the_history() -> None:
    fp = _fingerprints([])
    assert latest_record(RECORDS, 3, 5, fp, _read) == (5, "h5", "first at 5")
    assert latest_record(RECORDS, 0, 4, fp, _read) == (3, "h3", "at 3")
    assert latest_record(RECORDS, 5, 8, fp, _read) is None  # only unusable ones after 5
    assert latest_record(RECORDS, 3, 3, fp, _read) is None
    assert latest_record(RECORDS, 0, 5, fp, _read, at=lambda n: n % 3 == 0) == (3, "h3", "at 3")
    assert latest_record([], 0, 10, fp, _read) is None


def test_a_bool_is_not_a_record_position() -> None:
    records = [{"n": True, "v": "bool", "fp": "h1"}, {"n": np.int64(2), "v": "numpy", "fp": "h2"}]
    assert latest_record(records, 0, 1, _fingerprints([]), _read) is None
    assert latest_record(records, 0, 2, _fingerprints([]), _read) == (2, "h2", "numpy")
