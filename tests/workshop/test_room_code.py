"""Whether the facilitator may read a learner's kernel (tutor.workshop.room_code), each way a room
can say it, and the message to the room's refusals (tutor.workshop.room_message), each in its words."""

from __future__ import annotations

import json
import os

import pytest

from tutor.store import Store
from tutor.workshop.export import build_export, write_export
from tutor.workshop.learner import Learner
from tutor.workshop.room_code import code_policy, kernel_of
from tutor.workshop.room_message import MESSAGE_FILE, MessageRefused, read_message, send_message

KERNEL = "from numba import cuda\n\n@cuda.jit\ndef kernel(out, a):\n    out[0] = a[0]\n"


def served_room(tmp_path, allowed=None):
    room = tmp_path / "DATA"
    store = Store(room / "learners" / "s01")
    store.save_code("map", KERNEL)
    store.record_open("map")
    described = {"format": "gpu-tutor-room", "title": "T", "puzzles": ["map"], "workshop": None}
    if allowed is not None:
        described["facilitator_sees_code"] = allowed
    (room / "room.json").write_text(json.dumps(described))
    return room


def test_a_served_room_shows_code_only_where_its_workshop_file_says_so(tmp_path):
    for allowed, shown in ((True, True), (False, False), (None, False), ("true", False)):
        room = served_room(tmp_path / str(allowed), allowed)
        policy = code_policy(room)
        kernel = kernel_of(room / "learners" / "s01", "map", policy)
        assert policy.allowed is shown and (kernel.text == KERNEL) is shown, allowed
        if not shown:
            assert kernel.why == ("code is hidden: the room's workshop file does not set facilitator_sees_code = true "
                                  "(a learner's code is their own unless the room says so)")
    room = served_room(tmp_path / "unreadable", True)
    (room / "room.json").write_text("{")
    assert code_policy(room).why == ("code is hidden: room.json cannot be read, so the room's choice is not known "
                                     "(gpu-tutor serve writes it)")


def test_a_learner_with_nothing_saved_or_a_linked_code_folder_shows_why_not_their_code(tmp_path):
    room = served_room(tmp_path, True)
    policy = code_policy(room)
    assert kernel_of(room / "learners" / "s01", "dot", policy).why == "no code saved for this puzzle"
    assert kernel_of(room / "learners" / "s01", "../s01/code/map", policy).why == "not a puzzle id this room knows"
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "code").mkdir(parents=True)
    (elsewhere / "code" / "map.py").write_text("secret\n")
    os.mkdir(room / "learners" / "s02")
    os.symlink(elsewhere / "code", room / "learners" / "s02" / "code")
    assert kernel_of(room / "learners" / "s02", "map", policy).why == "code is a link: not followed"
    (room / "learners" / "s01" / "code" / "map.py").write_bytes(b"\xff\xfe")
    assert kernel_of(room / "learners" / "s01", "map", policy).why == "their code file is not UTF-8 text"


def test_exports_show_the_code_they_carry_and_a_learners_folder_none(tmp_path):
    room = served_room(tmp_path, True)
    store = Store(room / "learners" / "s01", read_only=True)
    exports = tmp_path / "exports"
    write_export(exports / "with.json", build_export(store, Learner("learner-a"), ["map"], with_code=True))
    write_export(exports / "without.json", build_export(store, Learner("learner-b"), ["map"]))
    policy = code_policy(exports)
    assert policy.allowed
    assert policy.why == "code shows where a learner's export carries it (`gpu-tutor export --with-code`)"
    assert kernel_of(exports / "with.json", "map", policy).text == KERNEL
    assert kernel_of(exports / "without.json", "map", policy).why == \
        "their export carries no code (`gpu-tutor export --with-code` adds it)"
    one = code_policy(room / "learners" / "s01")
    assert not one.allowed and one.why.startswith("code is hidden: one learner's data folder is not a room;")
    assert kernel_of(room / "learners" / "s01", "map", one).text is None


def test_a_message_goes_only_to_a_served_room_and_only_when_it_says_something(tmp_path):
    room = served_room(tmp_path)
    for text, why in (("   ", "type a message first"), ("x" * 501, "a message is at most 500 characters (501 typed)")):
        with pytest.raises(MessageRefused) as refused:
            send_message(room, text, 0.0)
        assert str(refused.value) == why
    with pytest.raises(MessageRefused, match="^messages go to a served room's learners; .* is not one"):
        send_message(tmp_path / "exports", "Break", 0.0)
    assert not (room / MESSAGE_FILE).exists()
    sent = send_message(room, " Break\x1b[2J ", 1_796_558_400.0)
    assert sent.text == "Break\\x1b[2J"  # as the learners' apps show it
    kept = read_message(room / MESSAGE_FILE)
    assert (kept.id, kept.text, kept.at) == (sent.id, sent.text, 1_796_558_400.0)
    assert send_message(room, "Break", 0.0).id != sent.id
