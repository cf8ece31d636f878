"""The answer channel carries data, never code: what a hostile child might send instead of an answer."""

import io
import json
import os
import pickle
import struct
import tempfile

import numpy as np
import pytest

from tutor.engine.process import wire
from tutor.engine.trace import ArrayInfo, Trace
from tutor.engine.verdict import Failure, Verdict


def roundtrip(header, arrays=None):
    r, w = os.pipe()
    try:
        wire.send(w, header, arrays)
        return wire.receive(r, deadline=None)
    finally:
        os.close(r)
        os.close(w)


def raw(body: bytes, arrays: list[bytes] = ()) -> tuple:
    """What a child could write on its channel, byte for byte (a file: larger than a pipe holds)."""
    data = struct.pack("!Q", len(body)) + body + struct.pack("!Q", len(arrays))
    for a in arrays:
        data += struct.pack("!Q", len(a)) + a
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.seek(0)
        return wire.receive(f.fileno(), deadline=None)


def test_a_verdict_with_a_trace_and_arrays_comes_back_whole():
    trace = Trace(grid=(1, 1, 1), block=(4, 1, 1), arrays=[ArrayInfo(0, "out", "global", (4,), "float32")],
                  events=[(0, 1, 0, 0, 1.5, 7, 0, 0), (1, 4, 0, (9,), None, 8, 0, 0)], stopped={3: "ended"})
    verdict = Verdict(puzzle="map", backend="sim", seed=3,
                      failures=[Failure(kind="race", message="m", block=(0,), thread=(1,))])
    (header, _) = roundtrip({"v": verdict, "t": trace, "a": np.arange(6, dtype=np.float32).reshape(2, 3)})
    assert header["v"] == verdict and header["t"] == trace
    assert header["t"].events[1][3] == (9,) and header["t"].stopped == {3: "ended"}
    assert header["a"].dtype == np.float32 and header["a"].shape == (2, 3)


def _lanes_events(values):
    from tutor.engine.trace import LazyEvents

    n = len(values)
    return LazyEvents({"tid": np.arange(n, dtype=np.int64), "op": np.zeros(n, dtype=np.int64),
                       "aid": np.zeros(n, dtype=np.int64), "flat": np.arange(n, dtype=np.int64),
                       "value": values, "line": np.full(n, 7, dtype=np.int64),
                       "phase": np.zeros(n, dtype=np.int64), "wphase": np.zeros(n, dtype=np.int64)})


def test_a_trace_run_as_lanes_crosses_as_columns_and_reads_as_its_events():
    """The JSON encoder reads a list's items in C: a LazyEvents sent as a list would arrive
    empty (it did, before the wire knew the columns)."""
    from tutor.engine.trace import LazyEvents

    for values in (np.array([1.5, float("nan"), -2.0]), [1, 2.5, 3]):
        trace = Trace(grid=(1, 1, 1), block=(3, 1, 1), arrays=[ArrayInfo(0, "out", "global", (3,), "float32")],
                      events=_lanes_events(values))
        (header, _) = roundtrip({"t": trace})
        got = header["t"].events
        assert type(got) is LazyEvents and len(got) == 3
        assert repr(got) == repr(list(_lanes_events(values)))
        assert repr(got[1]) in ("(1, 0, 0, 1, nan, 7, 0, 0)", "(1, 0, 0, 1, 2.5, 7, 0, 0)")


def test_event_columns_that_are_not_rows_of_integers_are_refused():
    trace = Trace(grid=(1, 1, 1), block=(3, 1, 1), events=_lanes_events(np.zeros(3)))
    r, w = os.pipe()
    try:
        buffers = []
        body = wire._encode({"t": trace}, buffers, 0)
        body["~d"][0][1]["f"]["events"]["~ev"]["~d"][0][1] = [0, 1, "x"]  # tid as a list with text
        with pytest.raises(wire.WireError):
            wire._decode(body, buffers, 0)
    finally:
        os.close(r)
        os.close(w)


def test_a_pickle_instead_of_json_is_not_a_message():
    with pytest.raises(wire.WireError):
        raw(pickle.dumps(("ok", 1)))


def test_an_array_carrying_python_objects_is_refused_unloaded():
    buf = io.BytesIO()
    np.save(buf, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(wire.WireError, match="not a plain .npy"):
        raw(json.dumps({"ok": 1}).encode(), [buf.getvalue()])


def test_only_the_engines_own_classes_can_be_named():
    body = json.dumps({"~c": "Popen", "f": {"args": ["sh"]}}).encode()
    with pytest.raises(wire.WireError, match="not allowed"):
        raw(body)


def test_an_unknown_field_of_an_allowed_class_is_refused():
    body = json.dumps({"~c": "Failure", "f": {"kind": "race", "message": "m", "__class__": 1}}).encode()
    with pytest.raises(wire.WireError):
        raw(body)


def test_a_bad_failure_kind_is_refused_not_trusted():
    body = json.dumps({"~c": "Failure", "f": {"kind": "passed", "message": "m"}}).encode()
    with pytest.raises(wire.WireError):
        raw(body)


def test_deep_nesting_is_refused_without_exhausting_the_stack():
    with pytest.raises(wire.WireError):
        raw(b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(wire.WireError):
        raw(json.dumps(nested(200)).encode())


def nested(n):
    value = 1
    for _ in range(n):
        value = {"~t": [value]}
    return value


def test_an_absurd_length_is_refused_before_reading():
    r, w = os.pipe()
    os.write(w, struct.pack("!Q", 1 << 62))
    os.close(w)
    with pytest.raises(wire.WireError, match="too large"):
        wire.receive(r)
    os.close(r)


def test_a_trace_event_that_is_not_numbers_is_refused():
    bad = {"~c": "Trace", "f": {"grid": {"~t": [1, 1, 1]}, "block": {"~t": [1, 1, 1]},
                                "events": [["0", 1, 0, 0, 1.0, 7, 0, 0]]}}
    with pytest.raises(wire.WireError, match="trace event"):
        raw(json.dumps(bad).encode())
    bad["f"]["events"] = [[0, 1, 0, {"x": 1}, 1.0, 7, 0, 0]]
    with pytest.raises(wire.WireError, match="index"):
        raw(json.dumps(bad).encode())


def test_a_reader_that_stops_reading_is_a_timeout_not_a_hang():
    import time

    r, w = os.pipe()
    with pytest.raises(wire.WireTimeout):
        wire.send(w, {"big": np.zeros(1 << 20, dtype=np.float32)}, deadline=time.monotonic() + 0.5)
    os.close(r)
    os.close(w)
