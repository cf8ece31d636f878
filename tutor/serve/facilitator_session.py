"""The facilitator's room view in their browser: what `gpu-tutor serve` runs for each websocket of
/facilitator/ws, under textual-serve's web driver, over the served room's folder (ROOM_DATA_ENV).

It is the screen `gpu-tutor room DIR` shows in a terminal, served: it reads the learners' folders
and never writes into them, and it has no learner folder (GPU_TUTOR_DATA is not set for it), so a
facilitator watching the room is never one of its learners. A problem that keeps it from opening is
written where the browser shows it (the screen), not as a traceback.
"""

from __future__ import annotations

import sys

ROOM_DATA_ENV = "GPU_TUTOR_ROOM_DATA"  # the served room's DATA folder: room.json, learners/


def main() -> int:
    import os
    from pathlib import Path

    folder = os.environ.get(ROOM_DATA_ENV)
    if not folder:
        print(f"gpu-tutor: the room view needs {ROOM_DATA_ENV} (gpu-tutor serve sets it)", file=sys.stderr)
        return 2
    from tutor.app.room_app import RoomViewApp  # the screen loads only here: this module imports without it

    RoomViewApp(Path(folder), served=True).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
