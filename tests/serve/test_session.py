"""What each browser learner's app process is given and opens with (tutor.serve.session), without
a browser: its own folder, untrusted checks, the room's workshop and its one GPU queue."""

from __future__ import annotations

from pathlib import Path

from tutor.engine.process.gpulock import QUEUE_ENV, TURNS_ENV
from tutor.engine.runner import Runner
from tutor.session import ROOM_MESSAGE_ENV, SERVED_ENV, Trust
from tutor.serve.room import Room, session_env
from tutor.store import QUOTA_ENV
from tutor.serve.session import open_app


def test_a_learners_app_gets_its_folder_the_served_flag_and_the_rooms_workshop(tmp_path):
    room = Room(root=tmp_path, token="t", workshop=tmp_path / "w.toml", title="Club", puzzles=("map",))
    folder = room.learner_folder("a" * 32)
    env = session_env(room, folder)
    assert env["GPU_TUTOR_DATA"] == str(folder) and folder.parent == tmp_path / "learners"
    assert env[SERVED_ENV] == "1" and env["GPU_TUTOR_WORKSHOP"] == str(tmp_path / "w.toml")
    assert room.learner_folder("b" * 32) != folder and "a" * 32 not in str(folder)
    assert env[QUOTA_ENV] == "50"  # the folder's cap, read once by the learner's app


def test_a_learners_app_is_told_where_the_facilitators_message_is_and_reads_it_once_at_its_start(tmp_path,
                                                                                                  monkeypatch):
    room = Room(root=tmp_path, token="t", workshop=None, title="Club", puzzles=("map",))
    env = session_env(room, room.learner_folder("a" * 32))
    assert env[ROOM_MESSAGE_ENV] == str(tmp_path / "room-message.json")
    monkeypatch.delenv("GPU_TUTOR_WORKSHOP", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    app = open_app()
    monkeypatch.setenv(ROOM_MESSAGE_ENV, "elsewhere")  # read once, at the start
    assert app.session.room_message == str(tmp_path / "room-message.json")


def test_the_learners_app_holds_its_folder_to_the_rooms_quota(tmp_path, monkeypatch):
    monkeypatch.delenv("GPU_TUTOR_WORKSHOP", raising=False)
    monkeypatch.setenv("GPU_TUTOR_DATA", str(tmp_path / "data"))
    monkeypatch.setenv(QUOTA_ENV, "7")
    assert open_app().store.quota == 7 << 20
    monkeypatch.setenv(QUOTA_ENV, "lots")  # not a number: the room's default, never no cap
    assert open_app().store.quota == 50 << 20


def test_the_app_joins_the_workshops_gpu_queue_and_asks_the_name(tmp_path, monkeypatch):
    (tmp_path / "w.toml").write_text(f'title = "Club"\npuzzles = ["map", "zip"]\ngpu_queue = "{tmp_path / "q"}"\n'
                                     'gpu_turns = 2\n')
    for key in (QUEUE_ENV, TURNS_ENV):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("GPU_TUTOR_WORKSHOP", str(tmp_path / "w.toml"))
    monkeypatch.setenv("GPU_TUTOR_DATA", str(tmp_path / "data"))
    monkeypatch.setenv(SERVED_ENV, "1")
    app = open_app()
    import os

    assert os.environ[QUEUE_ENV] == str(tmp_path / "q") and os.environ[TURNS_ENV] == "2"
    assert app.workshop.title == "Club" and app._ask_name and app.catalog.ids() == ["map", "zip"]
    assert Path(app.store.root) == tmp_path / "data" and (tmp_path / "data" / "learner.json").exists()
    assert app.session.trust == Trust.SERVED and Runner("sim", session=app.session).untrusted == "served"
    assert Runner("sim").untrusted is None  # nothing below the entry point reads the environment


def test_without_a_workshop_every_puzzle_authored_hints_and_the_name_asked(tmp_path, monkeypatch):
    monkeypatch.delenv("GPU_TUTOR_WORKSHOP", raising=False)
    monkeypatch.setenv("GPU_TUTOR_DATA", str(tmp_path / "data"))
    app = open_app()
    assert app.workshop is None and app._ask_name and len(app.catalog.ids()) >= 30
    assert app.ai_settings.model is None and app.ai_settings.offline
