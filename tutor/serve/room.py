"""A room served to browsers: one token for the room, one data folder per browser, one app per tab.

textual-serve runs a Textual app as a subprocess per websocket and relays its screen; this module
puts a room's rules around it:
- **The token.** Every request needs the room's token: in the URL the facilitator hands out (which
  then becomes a cookie, and the address bar loses it) or in that cookie. Loopback included, since
  on a shared machine every user can reach loopback. The websocket must also come from our own page
  (its Origin is this host): another site open in the learner's browser cannot drive their app.
- **A learner is a browser, and only the room makes learners.** The first visit gets a learner
  cookie: a random id signed with the room's secret (HMAC-SHA256), so a cookie the room never issued
  gets 403 and no folder. The id's hash names the data folder (DATA/learners/HASH), so the folder's
  name, which the class report may show, does not give the cookie away. A reload or a second tab of
  the same browser is the same learner: the new tab takes over (the old tab's app saves and ends,
  so two apps never write one folder). Another browser is another learner, with nothing shared.
- **A seat is a learner with an open websocket**, counted once from the moment the websocket is
  taken to its close (a learner's second tab takes their own seat over); the check and the taking
  happen with nothing awaited between them, so learners joining together never count twice.
- **Links survive a restart.** The token and the secret are kept in DATA/room-keys.json (readable by
  the facilitator's user alone: room_keys.py); `serve --new-token` makes new ones, and then every old
  link and learner cookie stops working (the learners' folders stay).
- **Each app process** gets `GPU_TUTOR_DATA` (its folder) and `GPU_TUTOR_SERVED=1`: its checks are
  untrusted, so on the simulator the real compiler accepts a kernel before any of it runs, in the
  sandboxed child (engine.sandbox), which cannot read the other folders nor the server's environment.
  It also gets `GPU_TUTOR_ROOM_MESSAGE`, the path of DATA/room-message.json, where the facilitator's
  room view (`gpu-tutor room DATA`, or served at /facilitator) writes a message for everyone, which
  the app shows once.
- **The facilitator's room view** lives under /facilitator, behind a token of its own that learners
  never see (kept and rotated with the room's keys). Its link becomes a cookie sent to /facilitator
  alone; every path there needs that token, so the learners' token (link or cookie) gets 403 there,
  and the facilitator's token is no learner's: on the learners' paths it gets 403 and never a folder.
  Each of its websockets (same Origin check) runs the room view (facilitator_session.py) over DATA,
  with no learner folder and no seat; at most `Room.max_views` at once, since each reads every
  learner's folder.

The pages are ours (pages.py).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import re
import secrets
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tutor.workshop.folders import ROOM_FILE  # the room's title and puzzles, for the class report
from tutor.workshop.room_code import CODE_KEY  # whether the room view may show learners' code

from .pages import FACILITATOR_ONLY_PAGE, FACILITATOR_TOKEN_HERE_PAGE, REFUSED_PAGE, facilitator_page, learner_page

ROOM_COOKIE = "gpu_tutor_room"
LEARNER_COOKIE = "gpu_tutor_learner"
FACILITATOR_COOKIE = "gpu_tutor_facilitator"
FACILITATOR = "/facilitator"  # the room view's page; its websocket and static files are under it
MAX_VIEWS = 2  # the facilitator's room views open at once (say, their laptop and a second screen)
LEARNER_DAYS = 30  # a learner's browser keeps its folder across restarts for a month
LEARNER_QUOTA_MB = 50  # each learner's data folder, by default (serve --learner-quota-mb)
_SIGNED = re.compile(r"([A-Za-z0-9_-]{32})\.([A-Za-z0-9_-]{43})")
STOP_WAIT_S = 10.0  # an app told to quit (its tab closed or taken over) gets this long to save and end
log = logging.getLogger("gpu-tutor-serve")


@dataclass
class Room:
    root: Path            # DATA: learners/ holds one folder per learner
    token: str
    workshop: Path | None  # the facilitator's file, handed to every learner's app
    title: str
    puzzles: tuple[str, ...]
    max_sessions: int = 64
    secret: bytes = b""   # signs the learner cookies this room issues
    learner_quota_mb: int = LEARNER_QUOTA_MB
    seats_per_address: int = 0  # 0: no cap (a room behind one proxy or NAT is one address)
    max_folders: int = 0        # learner folders the room makes at most (0: four per seat)
    keys: str = "new"     # the keys: "kept" from the room folder, "new", "rotated" or "facilitator added"
    facilitator_token: str = ""  # opens the room view (/facilitator), and nothing else; "": none
    max_views: int = MAX_VIEWS
    facilitator_sees_code: bool = False  # the workshop's word: `gpu-tutor room` may show learners' code

    def __post_init__(self):
        self.max_folders = self.max_folders or max(16, 4 * self.max_sessions)

    def folder_count(self) -> int:
        try:
            return sum(1 for _ in (self.root / "learners").iterdir())
        except OSError:
            return 0

    def learner_folder(self, learner: str) -> Path:
        """The folder of a learner id (from a cookie the room signed: see `learner_of`)."""
        return self.root / "learners" / hashlib.sha256(learner.encode()).hexdigest()[:24]

    def allows(self, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(token.encode(), self.token.encode())

    def allows_facilitator(self, token: str | None) -> bool:
        return bool(token and self.facilitator_token) and \
            hmac.compare_digest(token.encode(), self.facilitator_token.encode())

    def new_learner_cookie(self) -> str:
        learner = secrets.token_urlsafe(24)
        return f"{learner}.{self._sign(learner)}"

    def learner_of(self, cookie: str | None) -> str | None:
        """The learner id of a cookie this room issued; None for any other (forged, unsigned, or
        signed by a room's earlier secret)."""
        found = _SIGNED.fullmatch(cookie or "")
        if found is None or not self.secret:
            return None
        learner, signature = found.groups()
        return learner if hmac.compare_digest(signature, self._sign(learner)) else None

    def _sign(self, learner: str) -> str:
        mac = hmac.new(self.secret, b"gpu-tutor learner " + learner.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).decode().rstrip("=")

    def write_description(self) -> None:
        from tutor.store import write_atomic

        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "learners").mkdir(exist_ok=True)
        data = {"format": "gpu-tutor-room", "title": self.title, "puzzles": list(self.puzzles),
                "workshop": str(self.workshop) if self.workshop else None,
                CODE_KEY: self.facilitator_sees_code}
        write_atomic(self.root / ROOM_FILE, (json.dumps(data, indent=2) + "\n").encode("utf-8"))


def session_command() -> str:
    """The shell command textual-serve runs for each tab: `exec`, so the shell becomes the app and a
    kill that ends an app that would not quit reaches the app itself, not only its shell."""
    return "exec " + shlex.join([sys.executable, "-m", "tutor.serve.session"])


def session_env(room: Room, folder: Path) -> dict[str, str]:
    """What a learner's app process gets on top of the server's environment."""
    from ..session import ROOM_MESSAGE_ENV, SERVED_ENV
    from tutor.store import DATA_ENV, QUOTA_ENV
    from tutor.workshop.config import WORKSHOP_ENV
    from tutor.workshop.room_message import MESSAGE_FILE

    env = {DATA_ENV: str(folder), SERVED_ENV: "1", "GPU_TUTOR_ROOM_TITLE": room.title,
           QUOTA_ENV: str(room.learner_quota_mb), ROOM_MESSAGE_ENV: str(room.root / MESSAGE_FILE)}
    if room.workshop is not None:
        env[WORKSHOP_ENV] = str(room.workshop)
    return env


def view_command() -> str:
    """The shell command of each facilitator's room view (`exec`, as `session_command`)."""
    return "exec " + shlex.join([sys.executable, "-m", "tutor.serve.facilitator_session"])


def view_env(room: Room) -> dict[str, str | None]:
    """What the facilitator's room view gets on top of the server's environment (None: taken out of
    it): the room's folder, and neither a data folder (the server's own may be set) nor a learner's
    flags, so that it never opens a store of a learner's."""
    from ..session import SERVED_ENV
    from tutor.store import DATA_ENV, QUOTA_ENV
    from .facilitator_session import ROOM_DATA_ENV

    return {ROOM_DATA_ENV: str(room.root), DATA_ENV: None, SERVED_ENV: None, QUOTA_ENV: None}


def build_server(room: Room, host: str, port: int):
    """The aiohttp server of a room (textual_serve underneath); `.serve()` runs it until ctrl+c."""
    from aiohttp import WSMsgType, web
    from aiohttp.web_runner import GracefulExit
    from textual_serve.app_service import AppService
    from textual_serve.server import Server

    class AppProcess(AppService):
        """One tab's app process (a learner's app, or the facilitator's room view): the server's
        environment with `env` on top of it (None: taken out), never devtools."""

        def __init__(self, command: str, env: dict[str, str | None], websocket, farewell: bytes, **kwargs):
            super().__init__(command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                             close=self.close_tab, **kwargs)
            self.env, self.websocket = env, websocket
            self.farewell = farewell  # why the tab closes, as its close reason
            self._stopping: asyncio.Future | None = None

        async def close_tab(self) -> None:
            await self.websocket.close(message=self.farewell)

        async def run(self) -> None:
            """Relay the app's output until its process ends, then close its tab however it ended:
            textual-serve closes a tab only when the app says it exits, and an app that could not
            start (a room's file gone, a view that cannot open) says nothing, so the tab would wait
            forever on a dead process."""
            try:
                await super().run()
            finally:
                try:
                    await self.close_tab()
                except (ConnectionError, RuntimeError):
                    pass  # the tab has gone already

        def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
            env = super()._build_environment(width, height)
            env.pop("TEXTUAL", None)  # never devtools in a served app
            for key, value in self.env.items():
                if value is None:
                    env.pop(key, None)
                else:
                    env[key] = value
            return env

        async def stop(self) -> None:
            """Ask the app to quit (a learner's saves the code first); kill it when it does not.
            Stopping twice (its tab's close and a takeover) waits for the one stop."""
            if self._stopping is None:
                self._stopping = asyncio.ensure_future(self._stop())
            await asyncio.shield(self._stopping)

        async def _stop(self) -> None:
            process = self._process
            try:
                await asyncio.wait_for(super().stop(), STOP_WAIT_S)
                if process is not None:
                    await asyncio.wait_for(process.wait(), STOP_WAIT_S)  # reaped here, not by a closed loop
            except (asyncio.TimeoutError, OSError, RuntimeError):
                if process is not None and process.returncode is None:
                    process.kill()
                    await process.wait()

    class RoomServer(Server):
        def __init__(self):
            super().__init__(session_command(), host=host, port=port, title=f"gpu-tutor · {room.title}")
            self.live: dict[str, tuple[AppProcess, web.WebSocketResponse]] = {}  # by learner id
            # learner id -> how many of their tabs' handlers are alive: a seat is a learner with a
            # handler, from the websocket's accepting to the end of the app it started
            self.seats: dict[str, int] = {}
            self.addresses: dict[str, str] = {}  # learner id -> the address of their newest tab
            self.locks: dict[str, asyncio.Lock] = {}  # one takeover at a time per learner
            # the facilitator's room views: a view is counted from its websocket's accepting to the end
            # of its app, as a seat is; `views` holds those whose app has started (ctrl+c stops them)
            self.view_count = 0
            self.views: set[AppProcess] = set()
            self.exiting = False

        def initialize_logging(self) -> None:
            logging.basicConfig(level=logging.INFO, format="%(message)s")
            logging.getLogger("aiohttp.access").setLevel(logging.WARNING)  # its lines carry the room's token

        async def on_startup(self, app) -> None:
            pass  # cmd_serve has printed the room's address and token

        def request_exit(self) -> None:
            """ctrl+c: every app saves and ends, every tab hears that the room stopped, then the server
            stops (aiohttp alone would first wait out its shutdown timeout on those open websockets).
            A second ctrl+c stops at once."""
            if self.exiting:
                raise GracefulExit()
            self.exiting = True
            print("gpu-tutor serve: stopping the room (saving every learner's code)...", flush=True)
            asyncio.get_running_loop().create_task(self._end_every_session())

        async def _end_every_session(self) -> None:
            live = [service for service, _ in self.live.values()]
            for service in live:
                service.farewell = b"the room stopped (your code is saved)"
            for view in self.views:
                view.farewell = b"the room stopped"
            live += self.views
            await asyncio.gather(*(service.stop() for service in live), return_exceptions=True)
            await asyncio.gather(*(service.close_tab() for service in live), return_exceptions=True)
            asyncio.get_running_loop().call_soon(self._exit_now)

        @staticmethod
        def _exit_now() -> None:
            raise GracefulExit()

        async def _make_app(self) -> web.Application:
            app = web.Application(middlewares=[self.require_token])
            app.add_routes([web.get("/", self.handle_index), web.get("/ws", self.handle_websocket),
                            web.static("/static", self.statics_path),
                            web.get(FACILITATOR, self.handle_facilitator),
                            web.get(FACILITATOR + "/ws", self.handle_view_websocket),
                            web.static(FACILITATOR + "/static", self.statics_path)])
            return app

        @web.middleware
        async def require_token(self, request, handler):
            """Every path needs its token: the facilitator's under /facilitator, the learners' elsewhere.
            What is refused is logged by path alone: a token is in the query, which is never logged."""
            query = request.query.get("token")
            if request.path == FACILITATOR or request.path.startswith(FACILITATOR + "/"):
                if room.allows_facilitator(query) or room.allows_facilitator(request.cookies.get(FACILITATOR_COOKIE)):
                    return await handler(request)
                learners = room.allows(query) or room.allows(request.cookies.get(ROOM_COOKIE))
                log.info("refused %s %s: %s", request.remote, request.path,
                         "the learners' token, not the facilitator's" if learners else "no facilitator's token")
                return web.Response(status=403, content_type="text/html", text=FACILITATOR_ONLY_PAGE)
            if room.allows(query) or room.allows(request.cookies.get(ROOM_COOKIE)):
                return await handler(request)
            if room.allows_facilitator(query):  # never a learner: no cookie, no folder
                log.info("refused %s %s: the facilitator's token, not the learners'", request.remote, request.path)
                return web.Response(status=403, content_type="text/html", text=FACILITATOR_TOKEN_HERE_PAGE)
            log.info("refused %s %s: no room token", request.remote, request.path)
            return web.Response(status=403, content_type="text/html", text=REFUSED_PAGE)

        async def handle_index(self, request):
            learner = room.learner_of(request.cookies.get(LEARNER_COOKIE))
            if room.allows(request.query.get("token")) or learner is None:
                # the link's token becomes a cookie and leaves the address bar (and the browser's history)
                response = web.Response(status=303, headers={"Location": "/"})
                response.set_cookie(ROOM_COOKIE, room.token, httponly=True, samesite="Strict", path="/")
                if learner is None:
                    response.set_cookie(LEARNER_COOKIE, room.new_learner_cookie(), httponly=True, samesite="Strict",
                                        path="/", max_age=LEARNER_DAYS * 86400)
                return response
            scheme = "wss" if request.secure else "ws"
            page = learner_page(self.title, f"{scheme}://{request.host}/ws", _font_size(request.query.get("fontsize")))
            return web.Response(content_type="text/html", text=page, headers={"Cache-Control": "no-store"})

        async def handle_facilitator(self, request):
            """The room view's page (the middleware has checked the facilitator's token)."""
            if room.allows_facilitator(request.query.get("token")):
                # the link's token becomes a cookie sent to /facilitator alone, and leaves the address bar
                response = web.Response(status=303, headers={"Location": FACILITATOR})
                response.set_cookie(FACILITATOR_COOKIE, room.facilitator_token, httponly=True, samesite="Strict",
                                    path=FACILITATOR)
                return response
            scheme = "wss" if request.secure else "ws"
            page = facilitator_page(f"{self.title} · room view", f"{scheme}://{request.host}{FACILITATOR}/ws",
                                    _font_size(request.query.get("fontsize")))
            return web.Response(content_type="text/html", text=page, headers={"Cache-Control": "no-store"})

        async def handle_view_websocket(self, request):
            """A facilitator's room view: no seat, no learner folder, at most `room.max_views` at once."""
            origin = request.headers.get("Origin")
            if origin is not None and not _same_origin(origin, request):
                log.info("refused a room view's websocket from %s (page of another site: %s)", request.remote, origin)
                return web.Response(status=403, text="the room view opens only from its own page")
            if self.view_count >= room.max_views:
                return web.Response(status=503, text=f"the room view is open in {room.max_views} tabs already, all the "
                                                     "room runs at once (each reads every learner's folder); close one")
            self.view_count += 1  # taken before anything is awaited, held until its app has ended
            service = websocket = None
            try:
                websocket = web.WebSocketResponse(heartbeat=15)
                try:
                    await websocket.prepare(request)
                except (ConnectionError, OSError, RuntimeError) as error:
                    log.info("room view: the tab left before it connected (%s)", error)
                    return websocket
                service = AppProcess(view_command(), view_env(room), websocket, b"the room view ended",
                                     download_manager=self.download_manager)
                self.views.add(service)
                await service.start(_size(request.query.get("width"), 80), _size(request.query.get("height"), 24))
                log.info("room view: started (%d open)", self.view_count)
                try:
                    await _relay(websocket, service, WSMsgType.TEXT)
                except Exception as error:  # a bad message ends that tab, never the room
                    log.info("room view: connection ended (%s)", error)
            finally:
                if service is not None:
                    await service.stop()
                    self.views.discard(service)
                if websocket is not None:
                    await websocket.close()
                self.view_count -= 1
            return websocket

        async def handle_websocket(self, request):
            origin = request.headers.get("Origin")
            if origin is not None and not _same_origin(origin, request):
                log.info("refused a websocket from %s (page of another site: %s)", request.remote, origin)
                return web.Response(status=403, text="this room's app opens only from its own page")
            learner = room.learner_of(request.cookies.get(LEARNER_COOKIE))
            if learner is None:  # never a folder for a cookie the room did not issue
                log.info("refused a websocket from %s: no learner cookie of this room's", request.remote)
                return web.Response(status=403, text="open the room's link first")
            refused = self.refusal(learner, request.remote)
            if refused:
                return web.Response(status=503, text=refused)
            # the seat is taken here, before anything is awaited (so learners arriving together are
            # counted once each), and held until the app this tab starts has ended
            self.seats[learner] = self.seats.get(learner, 0) + 1
            self.addresses[learner] = request.remote or ""
            folder = room.learner_folder(learner)
            service = websocket = None
            try:
                width = _size(request.query.get("width"), 80)
                height = _size(request.query.get("height"), 24)
                websocket = web.WebSocketResponse(heartbeat=15)
                try:
                    await websocket.prepare(request)
                except (ConnectionError, OSError, RuntimeError) as error:
                    log.info("learner %s: the tab left before it connected (%s)", folder.name, error)
                    return websocket
                folder.mkdir(parents=True, exist_ok=True)
                async with self.locks.setdefault(learner, asyncio.Lock()):
                    # the same browser's new tab or reload takes over: the old app saves and ends first,
                    # so that two apps never write one folder
                    earlier = self.live.pop(learner, None)
                    if earlier is not None:
                        earlier[0].farewell = b"this learner opened the room in another tab"
                        await earlier[0].stop()
                        await earlier[0].close_tab()
                    if websocket.closed:  # this tab left while it waited its turn
                        return websocket
                    service = AppProcess(session_command(), session_env(room, folder), websocket,
                                         b"your app ended (your code is saved)",
                                         download_manager=self.download_manager)
                    self.live[learner] = (service, websocket)
                    await service.start(width, height)
                log.info("learner %s: app started (%d in the room)", folder.name, len(self.seats))
                try:
                    await _relay(websocket, service, WSMsgType.TEXT)
                except Exception as error:  # a bad message ends that tab, never the room
                    log.info("learner %s: connection ended (%s)", folder.name, error)
            finally:
                if service is not None:  # ended under the learner's lock: their next tab starts after it
                    async with self.locks.setdefault(learner, asyncio.Lock()):
                        if self.live.get(learner, (None,))[0] is service:
                            del self.live[learner]
                        ending = time.monotonic()
                        await service.stop()
                    log.info("learner %s: app ended in %.1f s", folder.name, time.monotonic() - ending)
                if websocket is not None:
                    await websocket.close()
                self.seats[learner] -= 1
                if not self.seats[learner]:
                    del self.seats[learner]
                    self.locks.pop(learner, None)
            return websocket

        def refusal(self, learner: str, address: str | None) -> str | None:
            """Why this tab gets no seat, or None. A learner already seated takes their own seat over."""
            if learner in self.seats:
                return None
            if len(self.seats) >= room.max_sessions:
                return f"the room is full ({room.max_sessions} learners); ask your facilitator"
            if room.seats_per_address and sum(1 for other in self.seats if self.addresses.get(other) == address) \
                    >= room.seats_per_address:
                return (f"this machine already has {room.seats_per_address} learner(s) in the room; close a tab, "
                        "or ask your facilitator")
            if not room.learner_folder(learner).exists() and room.folder_count() >= room.max_folders:
                return (f"the room has made {room.max_folders} learner folders, all it keeps; ask your facilitator "
                        "(gpu-tutor serve --max-folders)")
            return None

    return RoomServer()


def _same_origin(origin: str, request) -> bool:
    """A browser's page of this room: http(s), this host and port."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and parts.netloc == request.host


async def _relay(websocket, service, text_type) -> None:
    """The browser's keys and sizes to the app; everything else is ignored."""
    async for message in websocket:
        if message.type != text_type:
            continue
        try:
            kind, data = json.loads(message.data)
        except (ValueError, TypeError):
            continue
        if kind == "stdin" and isinstance(data, str):
            await service.send_bytes(data.encode("utf-8"))
        elif kind == "resize" and isinstance(data, dict):
            await service.set_terminal_size(_size(data.get("width"), 80), _size(data.get("height"), 24))
        elif kind == "ping":
            await websocket.send_json(["pong", data])
        elif kind == "blur":
            await service.blur()
        elif kind == "focus":
            await service.focus()


def _size(value, default: int) -> int:
    try:
        return max(10, min(int(value), 1000))
    except (TypeError, ValueError):
        return default


def _font_size(value) -> int:
    try:
        return max(8, min(int(value), 40))
    except (TypeError, ValueError):
        return 16
