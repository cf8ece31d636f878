"""A run's random configs: unlike each other and unlike the fixed ones wherever the puzzle's launch
rule has room, and named in plain English ("1 element", not "1 elements")."""

import re

import numpy as np
import pytest

from tutor.engine.judge import _launch_key, configs_for
from tutor.puzzles import load_catalog

ALL = load_catalog().ids()


def shapes_the_rule_can_draw(puzzle, draws=3000):
    rng = np.random.default_rng(12345)
    return {_launch_key(puzzle.random_config(rng, 1)) for _ in range(draws)}


@pytest.mark.parametrize("pid", ALL)
def test_random_configs_differ_from_each_other_and_from_the_fixed_ones_while_the_rule_allows(catalog, pid):
    puzzle = catalog.get(pid)
    fixed = {_launch_key(c) for c in puzzle.configs}
    room = len(shapes_the_rule_can_draw(puzzle) - fixed)
    for seed in range(8):
        for n_random in (3, 6):
            drawn = [_launch_key(c) for c in configs_for(puzzle, seed, n_random)[len(puzzle.configs):]]
            new = set(drawn) - fixed
            assert len(new) == min(n_random, room), (pid, seed, n_random, drawn)
            names = [c.name for c in configs_for(puzzle, seed, n_random)]
            assert len(set(names)) == len(names), names


def test_a_run_that_drew_a_fixed_config_again_now_draws_another(catalog):
    """Seed 3 drew `shared`'s fixed launch (8 elements, 2 blocks) a second time, as "8 elements"."""
    puzzle = catalog.get("shared")
    names = [c.name for c in configs_for(puzzle, 3)]
    assert names[0] == "8 elements, 2 blocks of 4" and "8 elements" not in names
    keys = [_launch_key(c) for c in configs_for(puzzle, 3)]
    assert len(set(keys)) == len(keys)


def test_map_keeps_its_one_launch_shape_and_names_each_repeat_apart(catalog):
    configs = configs_for(catalog.get("map"), 1)
    assert len({_launch_key(c) for c in configs}) == 1  # values only: the puzzle's contract
    assert [c.name for c in configs] == ["4 elements, 4 threads", "random config 1", "random config 2",
                                         "random config 3"]


PLURAL_SLIPS = re.compile(r"(?<![\d.])1 (elements|rows|blocks|values|tokens|threads|columns)\b|\(s\)")


@pytest.mark.parametrize("pid", ALL)
def test_config_names_say_one_element_and_two_elements(catalog, pid):
    puzzle = catalog.get(pid)
    rng = np.random.default_rng(7)
    names = [c.name for c in puzzle.configs] + [puzzle.random_config(rng, n).name for n in range(400)]
    slips = sorted({n for n in names if PLURAL_SLIPS.search(n)})
    assert slips == [], slips
