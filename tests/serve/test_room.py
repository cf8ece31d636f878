"""`gpu-tutor serve` over loopback, without a browser: the token, the cookies, the websocket's
origin, a learner per browser, and the refusals said before the room opens. Each attack here works
on plain textual-serve (which serves anyone, from any page, one data folder for all)."""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest

from cli_run import run_cli
from room_server import ROOT, RoomProcess, cookies_of, get

pytest.importorskip("textual_serve", reason="pip install -e '.[test]' installs textual-serve")
aiohttp = pytest.importorskip("aiohttp")


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    server = RoomProcess(tmp_path_factory.mktemp("room"))
    yield server
    server.stop()


def test_every_path_without_the_token_is_refused_with_a_page_that_says_what_to_do(room):
    for path in ("/", "/ws", "/static/js/textual.js", "/static/css/xterm.css", "/?token=", "/?token=wrong"):
        status, _, body = get(room.base + path)
        assert status == 403, path
        assert "token" in body and "facilitator" in body
    status, _, _ = get(room.base + "/", cookie="gpu_tutor_room=" + room.token[:-1] + "x")
    assert status == 403


def test_the_link_becomes_cookies_and_leaves_the_address_bar(room):
    status, headers, _ = get(room.url)
    assert status == 303 and headers["Location"] == "/"
    raw = " ".join(headers.get_all("Set-Cookie"))
    assert "HttpOnly" in raw and "SameSite=Strict" in raw
    cookies = cookies_of(headers)
    assert cookies["gpu_tutor_room"] == room.token
    assert re.fullmatch(r"[A-Za-z0-9_-]{32}\.[A-Za-z0-9_-]{43}", cookies["gpu_tutor_learner"])  # an id, signed
    status, _, page = get(room.base + "/", cookie="; ".join(f"{k}={v}" for k, v in cookies.items()))
    assert status == 200
    assert f"ws://127.0.0.1:{room.port}/ws" in page
    # an offline room: the page fetches nothing from anywhere but this server
    assert not re.findall(r"(?:src|href)=\"(?!/)", page) and "googleapis" not in page
    assert room.token not in page


def test_two_visits_without_cookies_are_two_learners(room):
    first = cookies_of(get(room.url)[1])["gpu_tutor_learner"]
    second = cookies_of(get(room.url)[1])["gpu_tutor_learner"]
    assert first != second


async def _websocket(room, cookie: str, origin: str | None):
    headers = {"Cookie": cookie}
    if origin:
        headers["Origin"] = origin
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(f"ws://127.0.0.1:{room.port}/ws?width=100&height=30", headers=headers,
                                          timeout=aiohttp.ClientWSTimeout(ws_receive=30)) as ws:
                message = await ws.receive(timeout=60)
                await ws.send_str(json.dumps(["ping", "x"]))
                return "open", (message.type, len(message.data or b""))
        except aiohttp.WSServerHandshakeError as e:
            return "refused", e.status


def test_the_websocket_needs_our_own_page_and_a_learner_cookie(room):
    cookies = cookies_of(get(room.url)[1])
    both = f"gpu_tutor_room={room.token}; gpu_tutor_learner={cookies['gpu_tutor_learner']}"
    # another site open in the learner's browser (cross-site websocket hijacking)
    assert asyncio.run(_websocket(room, both, "http://evil.example")) == ("refused", 403)
    # the room's token but no learner: never a folder made up from nothing
    assert asyncio.run(_websocket(room, f"gpu_tutor_room={room.token}", f"http://127.0.0.1:{room.port}")) == \
        ("refused", 403)
    # a learner cookie that tries to name a path
    bad = f"gpu_tutor_room={room.token}; gpu_tutor_learner=../../../../etc/passwd0123456789ab"
    assert asyncio.run(_websocket(room, bad, f"http://127.0.0.1:{room.port}")) == ("refused", 403)
    before = room.learner_folders() if (room.data / "learners").exists() else []
    state, (kind, size) = asyncio.run(_websocket(room, both, f"http://127.0.0.1:{room.port}"))
    assert state == "open" and kind == aiohttp.WSMsgType.BINARY and size > 0  # the app's first screen bytes
    folders = room.learner_folders()
    assert len(folders) == len(before) + 1
    new = (set(folders) - set(before)).pop()
    assert cookies["gpu_tutor_learner"] not in str(new)  # the folder's name does not give the cookie away


def test_the_room_file_says_what_the_class_report_needs(room):
    described = json.loads((room.data / "room.json").read_text())
    assert described["title"] == "gpu-tutor" and "map" in described["puzzles"]


def test_the_room_file_carries_the_workshops_word_on_whether_the_facilitator_sees_code(tmp_path):
    import socket

    from tutor.cli import build_parser
    from tutor.serve.command import prepare

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for line, seen in (("", False), ("facilitator_sees_code = true\n", True),
                       ("facilitator_sees_code = false\n", False)):
        (tmp_path / "w.toml").write_text('title = "Club"\npuzzles = ["map", "dot"]\n' + line)
        args = build_parser().parse_args(["serve", "--data", str(tmp_path / "room"), "--port", str(port),
                                          "--workshop", str(tmp_path / "w.toml")])
        prepare(args)
        described = json.loads((tmp_path / "room" / "room.json").read_text())
        assert described["facilitator_sees_code"] is seen and described["puzzles"] == ["map", "dot"]


def test_a_room_folder_that_kernels_could_read_is_refused_before_the_room_opens(tmp_path):
    inside = ROOT / "room-that-must-not-be-made"
    result = run_cli("serve", "--data", str(inside), "--port", "1")
    assert result.returncode == 2
    assert "every learner's sandboxed kernel may read" in result.stderr and "--data" in result.stderr
    assert not inside.exists()


def test_a_port_in_use_and_a_bad_workshop_are_said_before_listening(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("serve", "--data", str(tmp_path / "room"), "--port", str(port))
    assert result.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in result.stderr
    (tmp_path / "w.toml").write_text('title = "x"\npuzzles = ["no_such_puzzle"]\n')
    result = run_cli("serve", "--data", str(tmp_path / "room"), "--workshop", str(tmp_path / "w.toml"))
    assert result.returncode == 2 and "no_such_puzzle" in result.stderr


def test_a_full_room_says_so_and_a_learners_second_tab_takes_over_from_the_first(tmp_path):
    room = RoomProcess(tmp_path / "room", "--max-learners", "1")

    async def scenario():
        first = cookies_of(get(room.url)[1])["gpu_tutor_learner"]
        second = cookies_of(get(room.url)[1])["gpu_tutor_learner"]
        origin = {"Origin": f"http://127.0.0.1:{room.port}"}
        url = f"ws://127.0.0.1:{room.port}/ws"
        async with aiohttp.ClientSession() as session:
            one = await session.ws_connect(url, headers={**origin, "Cookie": f"gpu_tutor_room={room.token}; "
                                                                           f"gpu_tutor_learner={first}"})
            await one.receive(timeout=60)
            try:
                await session.ws_connect(url, headers={**origin, "Cookie": f"gpu_tutor_room={room.token}; "
                                                                         f"gpu_tutor_learner={second}"})
                full = None
            except aiohttp.WSServerHandshakeError as e:
                full = e.status
            again = await session.ws_connect(url, headers={**origin, "Cookie": f"gpu_tutor_room={room.token}; "
                                                                             f"gpu_tutor_learner={first}"})
            while (message := await one.receive(timeout=60)).type not in (aiohttp.WSMsgType.CLOSE,
                                                                            aiohttp.WSMsgType.CLOSED):
                pass
            closed = message.extra
            await again.receive(timeout=60)
            await again.close()
            return full, closed

    try:
        full, closed = asyncio.run(scenario())
    finally:
        room.stop()
    assert full == 503
    assert closed == "this learner opened the room in another tab"
    assert len(room.learner_folders()) == 1


# -- only seats the room issued are seats ------------------------------------------------------------
def ws_headers(room, learner: str | None) -> dict:
    cookie = f"gpu_tutor_room={room.token}" + (f"; gpu_tutor_learner={learner}" if learner else "")
    return {"Origin": f"http://127.0.0.1:{room.port}", "Cookie": cookie}


async def _open(room, learner: str, together=None):
    """Open a learner's websocket: its handshake status, and once open its first screen bytes.
    `together`: Tabs this one is opened with; an open tab stays open until they let it close."""
    async with aiohttp.ClientSession() as session:
        try:
            ws = await session.ws_connect(f"ws://127.0.0.1:{room.port}/ws", headers=ws_headers(room, learner))
        except aiohttp.WSServerHandshakeError as e:
            if together is not None:
                together.answered()
            return e.status
        message = await ws.receive(timeout=60)
        if together is not None:
            together.answered()
            await together.closing.wait()
        await ws.close()
        return 101 if message.type == aiohttp.WSMsgType.BINARY else message.type


class Tabs:
    """Tabs opened at once that stay open together: `all_answered` once each has its answer (a seat
    and its first screen, or a refusal), and each open one closes when `closing` is set."""

    def __init__(self, count: int):
        self.count, self.all_answered, self.closing = count, asyncio.Event(), asyncio.Event()

    def answered(self) -> None:
        self.count -= 1
        if self.count == 0:
            self.all_answered.set()


@pytest.mark.parametrize("forged", ["A" * 32, "A" * 32 + "." + "B" * 43, "signed by another room", "a real id, unsigned"])
def test_a_cookie_the_room_never_issued_gets_403_and_no_folder(room, forged):
    """On main any 32-character cookie opened a websocket and got a folder: one client with forged
    cookies filled a room, and the next honest learner got 503."""
    issued = cookies_of(get(room.url)[1])["gpu_tutor_learner"]
    cookie = {"signed by another room": issued[:33] + ("A" if issued[33] != "A" else "B") + issued[34:],
              "a real id, unsigned": issued.split(".")[0]}.get(forged, forged)
    before = room.learner_folders() if (room.data / "learners").exists() else []
    assert asyncio.run(_open(room, cookie)) == 403
    assert (room.learner_folders() if (room.data / "learners").exists() else []) == before
    status, headers, _ = get(room.base + "/", cookie=f"gpu_tutor_room={room.token}; gpu_tutor_learner={cookie}")
    assert status == 303 and cookies_of(headers)["gpu_tutor_learner"] != cookie  # the page issues a real one


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_three_learners_joining_a_three_seat_room_together_all_get_seats_and_a_fourth_does_not(tmp_path):
    """On main a learner whose app was still starting counted twice: three learners joining a
    4-seat room together got 101, 101, 503."""
    room = RoomProcess(tmp_path / "room", "--max-learners", "3")
    try:
        learners = [cookies_of(get(room.url)[1])["gpu_tutor_learner"] for _ in range(4)]

        async def together():
            tabs = Tabs(3)
            seated = asyncio.gather(*(_open(room, c, tabs) for c in learners[:3]))
            await asyncio.wait_for(tabs.all_answered.wait(), 120)  # all three open at once
            tabs.closing.set()
            return await seated

        async def with_a_fourth():
            tabs = Tabs(3)
            first = asyncio.gather(*(_open(room, c, tabs) for c in learners[:3]))
            await asyncio.wait_for(tabs.all_answered.wait(), 120)
            fourth = await _open(room, learners[3])  # while the three are still open
            tabs.closing.set()
            return await first, fourth

        assert asyncio.run(together()) == [101, 101, 101]
        seated, fourth = asyncio.run(with_a_fourth())
        assert seated == [101, 101, 101] and fourth == 503
        # a seat is free again once its tab has closed and its app has ended (saved, stopped)
        deadline = time.monotonic() + 40
        while (status := asyncio.run(_open(room, learners[3]))) == 503 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert status == 101
    finally:
        room.stop()


def test_a_restart_keeps_the_link_and_every_learners_cookie_and_new_token_rotates_them(tmp_path):
    """On main every start printed a new token: learners' links and cookies got 403 after a restart."""
    room = RoomProcess(tmp_path / "room")
    try:
        cookie = cookies_of(get(room.url)[1])["gpu_tutor_learner"]
        assert asyncio.run(_open(room, cookie)) == 101
        folders = room.learner_folders()
    finally:
        room.stop()
    keys = tmp_path / "room" / "room-keys.json"
    assert oct(keys.stat().st_mode & 0o777) == "0o600"
    again = RoomProcess(tmp_path / "room")
    try:
        assert again.token == room.token and "the same link as before" in "".join(again.output)
        status, _, page = get(again.base + "/", cookie=f"gpu_tutor_room={room.token}; gpu_tutor_learner={cookie}")
        assert status == 200 and "reconnects when it is back" in page
        assert asyncio.run(_open(again, cookie)) == 101
        assert again.learner_folders() == folders  # the same learner, the same folder
    finally:
        again.stop()
    rotated = RoomProcess(tmp_path / "room", "--new-token")
    try:
        assert rotated.token != room.token and "no longer works" in "".join(rotated.output)
        assert get(rotated.base + "/", cookie=f"gpu_tutor_room={room.token}")[0] == 403
        old = {"Origin": f"http://127.0.0.1:{rotated.port}",
               "Cookie": f"gpu_tutor_room={rotated.token}; gpu_tutor_learner={cookie}"}

        async def old_cookie():
            async with aiohttp.ClientSession() as session:
                try:
                    await session.ws_connect(f"ws://127.0.0.1:{rotated.port}/ws", headers=old)
                except aiohttp.WSServerHandshakeError as e:
                    return e.status

        assert asyncio.run(old_cookie()) == 403
    finally:
        rotated.stop()


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_tabs_of_one_learner_opened_together_leave_one_app_on_their_folder(tmp_path):
    """Found by a reviewer on the last commit: eight tabs of one learner opened at once left five apps
    running on one folder (each took the app out of the room before the one before it had started),
    and opening and closing tabs fast ran 41 apps in a 3-seat room."""
    room = RoomProcess(tmp_path / "room", "--max-learners", "2")
    try:
        learner = cookies_of(get(room.url)[1])["gpu_tutor_learner"]
        other = cookies_of(get(room.url)[1])["gpu_tutor_learner"]

        async def many_tabs():
            async with aiohttp.ClientSession() as session:
                tabs = await asyncio.gather(*(session.ws_connect(f"ws://127.0.0.1:{room.port}/ws",
                                                                 headers=ws_headers(room, learner))
                                              for _ in range(6)), return_exceptions=True)
                apps = 0
                for _ in range(40):  # while the takeovers happen, one after another
                    apps = max(apps, len(sessions(room)))
                    await asyncio.sleep(0.25)  # kept: it samples the apps over a window; no event ends it
                for tab in tabs:
                    if not isinstance(tab, BaseException):
                        await tab.close()
                return apps

        async def churn():
            async with aiohttp.ClientSession() as session:
                for n in range(12):
                    try:
                        ws = await session.ws_connect(f"ws://127.0.0.1:{room.port}/ws",
                                                      headers=ws_headers(room, (learner, other)[n % 2]))
                        await ws.close()
                    except aiohttp.WSServerHandshakeError:
                        pass
                    await asyncio.sleep(0.05)  # kept: the pace of the churn, what the test is about
                most = 0
                for _ in range(40):
                    most = max(most, len(sessions(room)))
                    await asyncio.sleep(0.1)  # kept: it samples the apps over a window; no event ends it
                return most

        assert asyncio.run(many_tabs()) == 1
        assert asyncio.run(churn()) <= 2  # never more apps than seats
    finally:
        room.stop()


def sessions(room) -> list[int]:
    """The learners' app processes of the room now."""
    return room.app_processes("tutor.serve.session")


def reopen(room, learner: str, timeout: float = 40) -> int:
    """Open a learner's tab until the room seats them (a seat is free once an app has ended)."""
    deadline = time.monotonic() + timeout
    while (status := asyncio.run(_open(room, learner))) == 503 and time.monotonic() < deadline:
        time.sleep(0.5)
    return status


def test_a_learners_app_that_cannot_open_closes_its_tab_and_frees_the_seat(tmp_path):
    """textual-serve closes a tab only when its app says it exits: on main an app that could not
    open (here the room's workshop file is gone) left its tab waiting on a dead process for good,
    the websocket's heartbeats keeping it alive, and its seat taken."""
    (tmp_path / "w.toml").write_text('title = "Club"\npuzzles = ["map"]\n')
    room = RoomProcess(tmp_path / "room", "--workshop", str(tmp_path / "w.toml"), "--max-learners", "1")
    try:
        (tmp_path / "w.toml").unlink()  # every app opened from now on fails before its first screen
        learner = cookies_of(get(room.url)[1])["gpu_tutor_learner"]

        async def open_tab():
            async with aiohttp.ClientSession() as session:
                ws = await session.ws_connect(f"ws://127.0.0.1:{room.port}/ws", headers=ws_headers(room, learner))
                message = await asyncio.wait_for(ws.receive(), 60)
                return message.type, message.extra

        assert asyncio.run(open_tab()) == (aiohttp.WSMsgType.CLOSE, "your app ended (your code is saved)")
        other = cookies_of(get(room.url)[1])["gpu_tutor_learner"]
        assert reopen(room, other) != 503  # the one seat is free again
    finally:
        log = room.stop()
    assert "no such workshop file" in log


def test_seats_per_address_keep_one_participant_from_taking_every_seat(tmp_path):
    """One participant with the link can mint a cookie per visit: a cap per address stops them."""
    room = RoomProcess(tmp_path / "room", "--seats-per-address", "1")
    try:
        first, second = (cookies_of(get(room.url)[1])["gpu_tutor_learner"] for _ in range(2))

        async def both():
            async with aiohttp.ClientSession() as session:
                url = f"ws://127.0.0.1:{room.port}/ws"
                one = await session.ws_connect(url, headers=ws_headers(room, first))
                await one.receive(timeout=60)
                try:
                    await session.ws_connect(url, headers=ws_headers(room, second))
                    return 101
                except aiohttp.WSServerHandshakeError as e:
                    return e.status
                finally:
                    await one.close()

        assert asyncio.run(both()) == 503
        assert reopen(room, second) == 101  # once the first tab's app has ended
        assert "at most 1 learner(s) from one network address" in "".join(room.output)
    finally:
        room.stop()


def test_the_rooms_folder_cap_gives_a_browser_it_never_saw_no_folder(tmp_path):
    """Minted cookies each made a folder (42 in a room of 3): each could fill its quota."""
    room = RoomProcess(tmp_path / "room", "--max-folders", "1")
    try:
        first, second = (cookies_of(get(room.url)[1])["gpu_tutor_learner"] for _ in range(2))
        assert asyncio.run(_open(room, first)) == 101
        assert reopen(room, first) == 101  # a learner the room knows keeps their folder, once their app ended
        assert asyncio.run(_open(room, second)) == 503 and len(room.learner_folders()) == 1
        assert "the room keeps at most 1 learner folders" in "".join(room.output)
    finally:
        room.stop()


def test_a_websocket_from_a_page_of_another_scheme_is_refused(room):
    cookies = cookies_of(get(room.url)[1])
    both = f"gpu_tutor_room={room.token}; gpu_tutor_learner={cookies['gpu_tutor_learner']}"
    assert asyncio.run(_websocket(room, both, f"evil://127.0.0.1:{room.port}")) == ("refused", 403)


def test_a_learner_whose_tab_closed_is_not_still_on_their_puzzle_in_the_class_report(tmp_path):
    """On main the class report counted a learner as "still on it" for as long as the puzzle was the
    one they opened last, tab closed or not: closing the tab quits the app, which now says so."""
    room = RoomProcess(tmp_path / "room")
    try:
        learner = cookies_of(get(room.url)[1])["gpu_tutor_learner"]

        def still_on_it() -> int:
            done = run_cli("report", str(room.data), "--csv", str(tmp_path / "class.csv"))
            assert done.returncode == 0, done.stderr
            lines = done.stdout.splitlines()
            start = next(n for n, line in enumerate(lines) if line.startswith("Puzzles, the longest hold-up"))
            header = lines[start + 1]
            column = header.index("still on it")
            rows = lines[start + 2:lines.index("", start)]
            return sum(int(row[column:].split()[0]) for row in rows if not row.startswith("  active time:")
                       and not row.startswith("  still on it:"))

        def state() -> dict:
            [folder] = room.learner_folders()
            try:
                return json.loads((folder / "state.json").read_text())
            except (FileNotFoundError, ValueError):  # not written yet
                return {}

        async def open_then_close():
            async with aiohttp.ClientSession() as session:
                ws = await session.ws_connect(f"ws://127.0.0.1:{room.port}/ws", headers=ws_headers(room, learner))
                await ws.receive(timeout=60)
                deadline = time.monotonic() + 60
                while not state().get("last_puzzle") and time.monotonic() < deadline:  # the app has opened its puzzle
                    await asyncio.sleep(0.2)
                open_now = still_on_it()
                await ws.close()
                return open_now

        assert asyncio.run(open_then_close()) == 1
        deadline = time.monotonic() + 40
        while not state().get("closed_at") and time.monotonic() < deadline:  # the app saves and ends
            time.sleep(0.2)
        assert state().get("closed_at"), "the app never wrote its close:\n" + "".join(room.output)
        assert still_on_it() == 0
    finally:
        room.stop()
