"""Red-team disguises of the answer that the leak guard showed, and honest hints beside them.

Fixed here: a loop rewritten (a `while` as a `for` over the halvings, shifts for halvings) that a
learner pastes in place of their own loop (splices: in place of the statements it lines up with);
the same tree in CUDA C, translated line by line (_from_c); `s >>= 1` read as `s //= 2`.
Open (strict xfail): the textbook CUDA C reduction with its own names and `blockDim.x` for TPB
covers one of the two statements left, and pseudo-code with arrows and `div` is not read as code.
"""

import pytest

from tutor.ai.hints import SimChecker
from tutor.ai.leakguard import LeakGuard, _from_c
from tutor.engine.runner import Runner

P = "perf_reduce_sequential"


@pytest.fixture(scope="module")
def runner():
    with Runner("sim") as r:
        yield r


def judge(catalog, runner, pid, text):
    puzzle = catalog.get(pid)
    return LeakGuard(puzzle.reference, puzzle.starter, puzzle.starter, SimChecker(pid, runner=runner)).judge(text)


GIVE_AWAYS = {
    "a for loop over the halvings": """Replace the loop with:

```python
for s in (128, 64, 32, 16, 8, 4, 2, 1):
    if t < s:
        cache[t] += cache[t + s]
    cuda.syncthreads()
```""",
    "shifts for halvings, operands swapped": """Replace the loop with:

```python
s = TPB >> 1
while s:
    if t < s:
        cache[t] = cache[t] + cache[s + t]
    cuda.syncthreads()
    s >>= 1
```""",
    "the tree in CUDA C": """In CUDA C it reads:

```c
int s = TPB / 2;
while (s > 0) {
    if (t < s) { cache[t] += cache[t + s]; }
    __syncthreads();
    s /= 2;
}
```
Translate that to Numba.""",
    "shifts, names of its own": """Like this (names are yours to pick):

```python
half = TPB >> 1
while half > 0:
    if tid < half:
        sdata[tid] += sdata[tid + half]
    cuda.syncthreads()
    half >>= 1
```""",
}

OPEN = {
    "the textbook CUDA C": """The CUDA C classic:

```cpp
for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
        sdata[tid] += sdata[tid + s];
    __syncthreads();
}
```""",
    "pseudo-code with arrows": """Pseudo-code:

```
s <- TPB div 2
repeat while s > 0
    when t < s: cache[t] <- cache[t] + cache[t + s]
    barrier
    s <- s div 2
```""",
}

HONEST = {
    "CUDA C names of fragments": "In CUDA C you would write the barrier as `__syncthreads();` and the test as "
                                 "`if (t < s)`. Which threads should work at each step?",
    "one CUDA C declaration": "CUDA C programmers write `int half = blockDim.x / 2;` for the first step. "
                              "Which threads add at that step, and which cells do they read?",
}


@pytest.mark.parametrize("name", list(GIVE_AWAYS))
def test_a_disguised_tree_is_withheld(catalog, runner, name):
    assert judge(catalog, runner, P, GIVE_AWAYS[name]) is not None


@pytest.mark.xfail(strict=True, reason="not read as the answer yet: foreign names and blockDim.x, or arrow pseudo-code")
@pytest.mark.parametrize("name", list(OPEN))
def test_an_open_disguise_is_withheld(catalog, runner, name):
    assert judge(catalog, runner, P, OPEN[name]) is not None


@pytest.mark.parametrize("name", list(HONEST))
def test_an_honest_hint_in_cuda_c_words_is_shown(catalog, runner, name):
    assert judge(catalog, runner, P, HONEST[name]) is None


def test_cuda_c_translates_line_by_line():
    assert _from_c("for (int s = TPB / 2; s > 0; s >>= 1) {\n  if (t < s)\n    c[t] += c[t + s];\n"
                   "  __syncthreads();\n}") == ("s = TPB // 2\nwhile s > 0:\n    if t < s:\n        c[t] += c[t + s]\n"
                                                "    cuda.syncthreads()\n    s >>= 1")
    assert _from_c("for (int k = i; k < n; k += step) { out[k] = a[k]; }") == \
        "for k in range(i, n, step):\n    out[k] = a[k]"
    assert _from_c("out[i] = a[i] + 10") is None  # not brace code
