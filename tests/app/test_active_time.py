"""The app tells the store what the learner does, so that time on a puzzle is time at it
(tutor.activity): keys count, an idle gap does not, opening another puzzle ends the span on the one
before, and closing the app is written down, so a closed app is on no puzzle."""

import asyncio

from tutor.app.app import TutorApp
from tutor.store import Store, iso_time
from warm_runners import app_runner


class FakeClock:
    def __init__(self, t: float = 1_700_000_000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_keys_count_idle_gaps_do_not_a_switch_ends_the_span_and_quitting_is_recorded(tmp_path):
    clock = FakeClock()
    store = Store(tmp_path, clock=clock)

    async def main():
        app = TutorApp(store=store, backend="sim", puzzle="map", seed=1, runner=app_runner())
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            for _ in range(10):  # a key every 30 s for 5 minutes
                clock.t += 30
                await pilot.press("right")
            clock.t += 10 * 60  # away for 10 minutes, the app left open
            await pilot.press("right")
            clock.t += 3
            app.load_puzzle("zip")  # 3 s more on map, then zip
            clock.t += 20
            await pilot.press("right")
            clock.t += 1
            await pilot.exit(None)

    asyncio.run(main())
    again = Store(tmp_path)
    assert again.progress("map").active_s == 303.0
    assert again.progress("zip").active_s == 21.0
    assert again.closed_at == iso_time(clock.t) == again.progress("zip").last_active_at
