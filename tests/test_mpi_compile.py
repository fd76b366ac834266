"""Cold MPI runs compile once: rank 0 compiles into numba's disk cache while the other ranks wait (without
spinning), then they load it (:func:`hpcrail.integrators.mpi.compile_on_first_rank`).  The bitwise agreement of
MPI runs with serial and threaded runs is tests/test_partition.py's; here the ordering and the error path, with
a stand-in communicator."""
from __future__ import annotations

import pytest

pytest.importorskip("mpi4py")


class FakeComm:
    def __init__(self, size, rank, log):
        self.size, self.rank, self.log = size, rank, log

    def Ibarrier(self):
        log = self.log

        class Req:
            polls = 0

            def Test(self):
                Req.polls += 1
                log.append("poll")
                return Req.polls >= 3   # the barrier completes at the third poll

        self.log.append("barrier")
        return Req()


@pytest.mark.parametrize("rank", [0, 1])
def test_rank_0_compiles_before_the_barrier_the_others_after_it(rank):
    from hpcrail.integrators.mpi import compile_on_first_rank

    log = []
    compile_on_first_rank(FakeComm(2, rank, log), lambda: log.append("compile"), poll_s=0.0)
    first_poll_done = log.index("poll") + 2   # the barrier's three polls
    if rank == 0:
        assert log[0] == "compile" and log.count("compile") == 1 and log[1] == "barrier"
    else:
        assert log.index("compile") > first_poll_done and log.count("compile") == 1


def test_an_error_of_rank_0s_compilation_is_raised_after_releasing_the_others():
    from hpcrail.integrators.mpi import compile_on_first_rank

    log = []

    def broken():
        log.append("compile")
        raise ValueError("no kernel")

    with pytest.raises(ValueError, match="no kernel"):
        compile_on_first_rank(FakeComm(2, 0, log), broken, poll_s=0.0)
    assert log[:2] == ["compile", "barrier"] and log.count("poll") == 3   # the others were released first
