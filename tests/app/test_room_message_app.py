"""The facilitator's message in a learner's app, never lost: two sent within one look of the app both
reach it (the file held the newest only), the app's own notices never push it off the screen (two
"Saved" notices did, in a second), and a dialog opened over it, or open when it came, gives it back
when it closes (opening one cleared it for good, and notices held with it pushed it out)."""

from __future__ import annotations

import asyncio
import json
import time

from tutor.app.app import FROM_FACILITATOR, make_app
from tutor.session import ROOM_MESSAGE_ENV, Session
from tutor.workshop.room_message import MESSAGE_FILE, MESSAGE_LIMIT, MessageWatch, read_message, send_message
from waiting import until
from warm_runners import app_runner


def served_room(tmp_path):
    (tmp_path / "room" / "learners").mkdir(parents=True)
    return tmp_path / "room"


def test_two_messages_sent_within_one_look_of_the_app_both_reach_it_oldest_first(tmp_path):
    room = served_room(tmp_path)
    watch = MessageWatch(room / MESSAGE_FILE, clock=time.time)
    assert watch.check() == []
    send_message(room, "Break until 10:30", time.time())
    send_message(room, "dot: a barrier before the sum", time.time())
    assert [m.text for m in watch.check()] == ["Break until 10:30", "dot: a barrier before the sum"]
    assert watch.check() == []
    send_message(room, "Back in 5", time.time())
    assert [m.text for m in watch.check()] == ["Back in 5"]  # the earlier two are not said again
    assert read_message(room / MESSAGE_FILE).text == "Back in 5"  # what the room view shows as the last one


def test_the_file_keeps_the_last_few_messages_and_stays_under_what_an_app_reads(tmp_path):
    room = served_room(tmp_path)
    for n in range(12):
        send_message(room, f"{n} " + "核" * 490, time.time())  # 3 bytes a character in UTF-8
    data = (room / MESSAGE_FILE).read_bytes()
    assert len(data) <= MESSAGE_LIMIT
    kept = [m.text.split()[0] for m in MessageWatch(room / MESSAGE_FILE, clock=time.time).check()]
    assert kept == ["7", "8", "9", "10", "11"]
    earlier = json.loads(data)["earlier"]
    assert [m["text"].split()[0] for m in earlier] == ["7", "8", "9", "10"]


def test_a_message_file_someone_edited_gives_each_message_once_and_nothing_it_cannot_read(tmp_path):
    from tutor.store import iso_time

    path = served_room(tmp_path) / MESSAGE_FILE
    at = iso_time(time.time())
    path.write_text(json.dumps({"id": "c", "text": "Back in 5", "at": at, "earlier": [
        {"id": "a", "text": "Break", "at": at}, {"id": "a", "text": "Break, again", "at": at},
        {"id": "c", "text": "Back in 5", "at": at}, {"id": "x" * 65, "text": "?", "at": at}]}))
    assert [m.text for m in MessageWatch(path, clock=time.time).check()] == ["Break, again", "Back in 5"]
    path.write_text(json.dumps({"id": "c", "text": "Back in 5", "at": at, "earlier": ["junk", None, {"id": "a"}]}))
    assert [m.text for m in MessageWatch(path, clock=time.time).check()] == ["Back in 5"]


def learner_app(tmp_path, room):
    session = Session.from_environment({ROOM_MESSAGE_ENV: str(room / MESSAGE_FILE)})
    return make_app(data_dir=tmp_path / "learner", backend="sim", seed=1, puzzle="map", repeatable=True,
                    runner=app_runner(), session=session)


def standing(app) -> list[str]:
    return [str(n.message) for n in app._notifications if n.title == FROM_FACILITATOR]


def test_the_apps_own_notices_never_push_the_facilitators_message_off_the_screen(tmp_path):
    room = served_room(tmp_path)
    app = learner_app(tmp_path, room)

    async def main():
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            send_message(room, "Break until 10:30", time.time())
            await until(pilot, lambda: standing(app), what="the facilitator's notice")
            for words in ("Saved.", "Saved again.", "Watch mode on."):
                app.notify(words)
                await pilot.pause()
            assert standing(app) == ["Break until 10:30"]
            assert [str(n.message) for n in app._notifications][-1] == "Watch mode on."  # the newest shows too

    asyncio.run(main())


def test_a_dialog_opened_over_the_message_gives_it_back_when_it_closes(tmp_path):
    room = served_room(tmp_path)
    app = learner_app(tmp_path, room)

    async def main():
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            send_message(room, "Break until 10:30", time.time())
            await until(pilot, lambda: standing(app), what="the facilitator's notice")
            await pilot.press("f1")
            await until(pilot, lambda: app.screen is not app._main, what="the help dialog")
            assert standing(app) == []  # nothing draws over the dialog
            await pilot.press("escape")
            await until(pilot, lambda: standing(app) == ["Break until 10:30"], what="the message back")
            [notice] = [n for n in app._notifications if n.title == FROM_FACILITATOR]
            assert notice.time_left > 9  # a while to read it, not the second it had left

    asyncio.run(main())


def test_a_message_that_came_while_a_dialog_was_open_outlasts_the_notices_held_with_it(tmp_path):
    room = served_room(tmp_path)
    app = learner_app(tmp_path, room)

    async def main():
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            await pilot.press("f1")
            await until(pilot, lambda: app.screen is not app._main, what="the help dialog")
            send_message(room, "Break until 10:30", time.time())
            await until(pilot, lambda: app._room_message._signature is not None, what="the app's look at the file")
            for words in ("Saved.", "Saved again.", "Watch mode on."):
                app.notify(words)
            assert standing(app) == []
            await pilot.press("escape")
            await until(pilot, lambda: not app._deferred, what="the held notices shown")
            await pilot.pause()
            assert standing(app) == ["Break until 10:30"]

    asyncio.run(main())
