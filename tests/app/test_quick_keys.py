"""Keys that answer at once (issue 37): a puzzle switch never paints the old lesson under the new
code, a zoom restyles no widget of the panes, a lesson's unlabelled code block is never handed to
Pygments' guesser, the help is one table, and quit leaves no child behind. bench/app.py measures
the times; these tests hold the causes."""


from textual.widgets.markdown import MarkdownFence

from test_app import run_app
from waiting import until
from engine_children import engine_children


def _frames(app) -> list[str]:
    """The text of every frame the app paints from now on (as the terminal would get it)."""
    painted: list[str] = []
    original = app._display

    def display(screen, renderable):
        original(screen, renderable)
        if renderable is not None and not app._batch_count:
            update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
            painted.append("\n".join("".join(s.text for strip in line for s in strip) for line in update.strips))

    app._display = display
    return painted


def test_a_puzzle_switch_never_paints_the_old_lesson_beside_the_new_code(tmp_path):
    async def check(app, pilot):
        await until(pilot, lambda: "Map: your first" in _screen(app), what="map's lesson")
        frames = _frames(app)
        await pilot.press("ctrl+n")
        await until(pilot, lambda: "Zip" in _screen(app) and "Map: your first" not in _screen(app),
                    what="zip's lesson")
        # a frame painted while the key waited its turn (the editor's queue first: app.caught_up)
        # is the screen before the switch; from the first frame with zip's code, no map lesson
        switched = [text for text in frames if "Zip" in text]
        assert switched
        assert not [n for n, text in enumerate(switched) if "Map: your first" in text], \
            "a frame after the switch to zip still showed map's lesson"

    run_app(check, tmp_path, puzzle="map")


def test_a_zoom_restyles_no_widget_of_the_lesson(tmp_path):
    async def check(app, pilot):
        await pilot.press("ctrl+e")
        await pilot.pause()
        lesson = app.query_one("#lesson-pane")
        restyled = []
        apply = app.stylesheet.apply

        def counted(node, *args, **kwargs):
            if node is lesson or lesson in node.ancestors:
                restyled.append(node)
            return apply(node, *args, **kwargs)

        app.stylesheet.apply = counted
        await pilot.press("ctrl+f")
        await until(pilot, lambda: app.query_one("#code-pane").region.width == app.size.width, what="the zoom")
        await pilot.press("ctrl+f")
        await until(pilot, lambda: lesson.region.width > 0, what="the panes back")
        # a class on the screen restyled every widget (the lesson's blocks re-highlighting their code):
        # a tenth of a second a zoom, seconds on a busy machine
        assert restyled == []

    run_app(check, tmp_path, puzzle="softmax_row")


def test_a_pane_key_restyles_only_the_widgets_it_focuses_and_the_accent_border_follows_it(tmp_path):
    async def check(app, pilot):
        await pilot.press("ctrl+e")
        await pilot.pause()
        lesson, code = app.query_one("#lesson-pane"), app.query_one("#code-pane")
        muted = lesson.styles.border_top[1]
        restyled = []
        apply = app.stylesheet.apply

        def counted(node, *args, **kwargs):
            if any(pane in node.ancestors for pane in (lesson, code)):
                restyled.append(node)
            return apply(node, *args, **kwargs)

        app.stylesheet.apply = counted
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert app.focused is app.query_one("#lesson-scroll")
        assert code.styles.border_top[1] == muted and lesson.styles.border_top[1] != muted
        # `.pane:focus-within` restyled the whole of both panes at each pane key (the hints, the verdict,
        # the lesson's every block twice); what is left is Textual's own :focus, of the two widgets
        own = (app.query_one("#lesson-scroll"), app.query_one("#editor"))
        assert [n for n in restyled if n not in own and not any(w in n.ancestors for w in own)] == []

    run_app(check, tmp_path, puzzle="softmax_row")


def test_the_footer_is_built_once_per_pane_key_and_not_when_its_keys_stay_the_same(tmp_path, monkeypatch):
    from textual.widgets import Footer

    built = []
    compose = Footer.compose
    monkeypatch.setattr(Footer, "compose", lambda self: (built.append(1), compose(self))[1])

    async def check(app, pilot):
        await pilot.press("ctrl+e")
        await pilot.pause()
        built.clear()
        await pilot.press("ctrl+l")
        await until(pilot, lambda: built, what="the footer's keys for the lesson")
        await pilot.pause()
        assert len(built) == 1  # Textual's footer rebuilt itself twice for one change of focus
        app.screen.refresh_bindings()  # a change of bindings that changes no key on show
        await pilot.pause()
        assert len(built) == 1

    run_app(check, tmp_path)


def test_an_unlabelled_code_block_in_a_lesson_is_plain_text_never_a_guessed_language(tmp_path):
    async def check(app, pilot):
        await until(pilot, lambda: any("mean_r" in f.code for f in app.query(MarkdownFence)), what="the lesson")
        (formula,) = [f for f in app.query(MarkdownFence) if "mean_r" in f.code]
        assert not formula.lexer  # an indented block: it names no language
        # Pygments' guess (half a second the first time, at every restyle after) coloured it as SQL
        assert {span.style for span in formula._highlighted_code.spans} <= {"$text"}  # no token coloured

    run_app(check, tmp_path, puzzle="layernorm")


def test_the_help_is_one_table_not_a_widget_per_cell(tmp_path):
    async def check(app, pilot):
        await pilot.press("f1")
        await until(pilot, lambda: type(app.screen).__name__ == "HelpScreen", what="the help")
        await pilot.pause()
        text = _screen(app)
        assert "ctrl+f" in text and "The pane you are in fills the screen" in text
        assert len(list(app.screen.walk_children())) < 10  # a Markdown table was 60 widgets to build

    run_app(check, tmp_path)


def test_quit_while_the_children_warm_up_leaves_none_running(tmp_path):
    before = set(engine_children())
    seen: set[int] = set()

    async def check(app, pilot):
        await until(pilot, lambda: app.runner is not None and app.runner.pid is not None, what="the child")
        seen.update(set(engine_children()) - before)
        await pilot.press("ctrl+q")  # numba's import is still under way in the compiler's child

    run_app(check, tmp_path, cold=True)
    assert seen
    assert set(engine_children()) - before == set()  # none left, none started behind the quit



def _screen(app) -> str:
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    return "\n".join("".join(s.text for strip in line for s in strip) for line in update.strips)

