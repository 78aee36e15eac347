"""The cycle collector is paused for a bulk import and back as it was afterwards, come what may."""

import gc
import threading

import pytest

from core.importing import gc_paused


@pytest.fixture(autouse=True)
def collector_restored():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_inside_nested_and_back_after_an_error():
    gc.enable()
    with pytest.raises(RuntimeError), gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer import still runs
        raise RuntimeError("a bad line")
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled():
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_two_threads_importing_at_once_resume_it_only_when_both_are_done():
    gc.enable()
    first_in, second_done = threading.Event(), threading.Event()
    seen = []

    def first():
        with gc_paused():
            first_in.set()
            second_done.wait(5)
            seen.append(gc.isenabled())  # the second finished: still paused for this one

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait(5)
    with gc_paused():
        pass
    second_done.set()
    thread.join(5)
    assert seen == [False]
    assert gc.isenabled()
