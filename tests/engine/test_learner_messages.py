"""The messages a new learner met in issue 37, each written for a learner in every mode: at their
own terminal (the CLI and the app load their file as Python), in a served room (the file is built
from its syntax tree) and after the real compiler. Code a model wrote keeps the model's words.

Each test starts from what main said: `SyntaxError: invalid syntax (line 7). Fix the Python syntax
on that line.`; "`cuda.threadidx` is not something the simulator models ... or run on a GPU with
--backend gpu."; Numba's raw `getitem(Literal[int](3), Tuple(int32, Literal[int](0)))`; and
`NameError while loading the file: name 'i' is not defined (line 7).`"""

from __future__ import annotations

import numpy as np
import pytest

from tutor.engine.judge import simulate
from tutor.engine.loading.compile import compile_check, nvvm_missing
from tutor.engine.loading.loader import LoadError
from tutor.engine.loading.sim_loader import load_module_for_sim
from tutor.engine.loading.static_rules import check_puzzle_module
from tutor.engine.runner import Runner
from tutor.session import Session, Trust

HEAD = "from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n"
UNFINISHED = HEAD + "    out[i] = a[i] + 10 +\n"                                  # line 7 ends in an operator
WRONG_CASE = HEAD + "    t = cuda.threadidx.x\n    out[i] = a[i] + t\n"            # line 7
INDEXED_INT = HEAD + "    j = 3\n    out[i] = a[i] + j[i, 0]\n"                    # line 8
OUTDENTED = ("from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a, size):\n    i = cuda.threadIdx.x\n"
             "if i < size:\n    out[i] = a[i] + 10\n")                                # line 7 at column 0
BOTH = pytest.mark.parametrize("untrusted", [False, True], ids=["own terminal", "served room"])


def _load_error(source: str, untrusted: bool) -> LoadError:
    with pytest.raises(LoadError) as error:
        load_module_for_sim(source, "map.py", untrusted=untrusted)
    return error.value


@BOTH
def test_a_syntax_error_says_line_column_what_python_saw_and_what_to_type(untrusted):
    error = _load_error(UNFINISHED, untrusted)
    assert error.line == 7 and error.kind == "compile_error"
    assert error.message == ("SyntaxError on line 7, column 25: invalid syntax. Look for a missing or extra bracket, "
                             "colon, comma, operator or quote on this line or at the end of the line above.")
    assert "complete, valid Python module" not in error.message  # the words written for a model


@BOTH
@pytest.mark.parametrize("tail, said", [
    ("    out[i] = (a[i] + 10\n", "SyntaxError on line 7, column 14: '(' was never closed. Add the `)` that "
                                  "closes it."),
    ("    if i < 3\n        out[i] = a[i]\n", "SyntaxError on line 7, column 13: expected ':'. End the line with "
                                             "a colon: `if`, `for`, `while` and `def` lines end in `:`."),
    ("    if i < 3:\n    out[i] = a[i]\n", "SyntaxError on line 8, column 5: expected an indented block after 'if' "
                                          "statement on line 7. Indent the lines under line 7 by 4 more spaces: "
                                          "they are its block."),
])
def test_common_syntax_errors_say_what_to_type(untrusted, tail, said):
    assert _load_error(HEAD + tail, untrusted).message == said


def test_a_models_syntax_error_keeps_the_words_written_for_a_model():
    (finding,) = check_puzzle_module(UNFINISHED, "candidate.py")
    assert finding.rule == "syntax" and finding.fix == "return a complete, valid Python module."


@BOTH
def test_a_kernel_line_at_column_0_is_called_an_indentation_mistake(untrusted):
    error = _load_error(OUTDENTED, untrusted)
    assert error.line == 7
    assert error.message == (
        "line 7 starts at column 0, so Python reads it as module code outside `kernel` (whose body ends on "
        "line 6): it runs once, when the file loads, where `i` does not exist. Indent it, and the lines of its "
        "block, by 4 more spaces to put it back inside `kernel`.")


@BOTH
def test_a_constant_after_the_kernel_is_not_called_an_indentation_mistake(untrusted):
    """Module code that reads nothing of the kernel's is the file's own: its error is its own."""
    error = _load_error(HEAD + "    out[i] = a[i]\nN = M + 1\n", untrusted)
    assert "column 0" not in error.message and "Indent" not in error.message
    assert "`M`" in error.message or "'M'" in error.message, error.message


def test_the_simulator_names_the_right_spelling_of_a_miscased_name_and_no_command_line_flag():
    out, a = np.zeros(4, np.float32), np.ones(4, np.float32)
    _, failures = simulate(WRONG_CASE, 1, 4, [("out", out), ("a", a)], filename="map.py")
    (failure,) = failures
    assert failure.kind == "runtime_error" and failure.line == 7  # a slip, not a feature the simulator lacks
    assert failure.message == ("There is no `cuda.threadidx` (line 7, thread (0,) of block (0,)): did you mean "
                               "`cuda.threadIdx`? Python names are case-sensitive.")


def test_the_simulator_says_an_integer_was_indexed_as_an_array():
    out, a = np.zeros(4, np.float32), np.ones(4, np.float32)
    _, failures = simulate(INDEXED_INT, 1, 4, [("out", out), ("a", a)], filename="map.py")
    (failure,) = failures
    assert failure.line == 8 and "getitem" not in failure.message
    assert failure.message == ("line 8 (thread (0,) of block (0,)): `j[i, 0]` indexes `j`, which is an integer, "
                               "not an array: only arrays can be indexed. Index the array you meant, or use `j` "
                               "without brackets.")


needs_compiler = pytest.mark.skipif(bool(nvvm_missing()), reason="the real compiler (NVVM) is not installed here")
MAP_TYPES = [("array", "float32", 1), ("array", "float32", 1)]


@needs_compiler
@BOTH
def test_the_compiler_says_an_integer_was_indexed_as_an_array(untrusted):
    failure = compile_check(INDEXED_INT, "map.py", ["out", "a"], MAP_TYPES, untrusted=untrusted)
    assert failure.line == 8 and "getitem" not in failure.message and "Tuple(" not in failure.message
    assert failure.message == ("Numba cannot compile this kernel for a GPU (line 8): `j[i, 0]` indexes `j`, which "
                               "is an integer, not an array: only arrays can be indexed. Index the array you meant, "
                               "or use `j` without brackets.")


@needs_compiler
def test_the_compiler_says_how_many_indexes_an_array_takes():
    source = HEAD + "    out[i] = a[i, 0]\n"
    failure = compile_check(source, "map.py", ["out", "a"], MAP_TYPES)
    assert failure.message.endswith("`a[i, 0]` gives `a` 2 indexes, but `a` is a 1-d array: give it 1 index, "
                                    "one per dimension.")


@needs_compiler
def test_the_compiler_names_the_right_spelling_of_a_miscased_name():
    failure = compile_check(WRONG_CASE, "map.py", ["out", "a"], MAP_TYPES)
    assert failure.line == 7 and failure.message == (
        "Numba cannot compile this kernel for a GPU (line 7): there is no `cuda.threadidx` in numba.cuda: did you "
        "mean `cuda.threadIdx`? Python names are case-sensitive.")


@needs_compiler
@pytest.mark.parametrize("trust", [Trust.LEARNER_LOCAL, Trust.SERVED])
def test_every_learner_reads_the_same_words_for_the_four_mistakes(trust):
    """The CLI's check, the app's and a served room's are one Runner.check: one failure each, no raw
    Numba, no command-line flag, no words written for a model."""
    with Runner("sim", session=Session(trust=trust)) as runner:
        for puzzle, source, line, words in [
            ("map", UNFINISHED, 7, "SyntaxError on line 7, column 25: invalid syntax."),
            ("map", WRONG_CASE, 7, "did you mean `cuda.threadIdx`?"),
            ("map", INDEXED_INT, 8, "`j[i, 0]` indexes `j`, which is an integer, not an array"),
            ("guard", OUTDENTED, 7, "line 7 starts at column 0, so Python reads it as module code outside `kernel`"),
        ]:
            verdict = runner.check(puzzle, source, f"{puzzle}.py", seed=1).verdict
            (failure,) = verdict.failures
            assert failure.line == line and words in failure.message, failure
            for never in ("--backend", "getitem", "complete, valid Python module", "NameError"):
                assert never not in failure.message, failure


def test_a_name_numba_has_and_the_simulator_lacks_is_not_called_a_slip():
    """numba-cuda's `cuda.uint8x4` is spelt near the simulator's `cuda.uint8`: a question, not "there is no"."""
    source = HEAD + "    v = cuda.uint8x4\n    out[i] = a[i]\n"
    out, a = np.zeros(4, np.float32), np.ones(4, np.float32)
    _, failures = simulate(source, 1, 4, [("out", out), ("a", a)], filename="map.py")
    (failure,) = failures
    assert failure.kind == "unsupported" and "There is no" not in failure.message
    assert failure.message == ("`cuda.uint8x4` is not something the simulator models (line 7, thread (0,) of block "
                               "(0,)). Did you mean `cuda.uint8`? Use the features the lessons introduce, or check "
                               "the file on a GPU, where the real numba-cuda runs it.")
