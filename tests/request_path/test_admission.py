"""The admission gate of a FastSession: turns in order, a turn given to a cancelled
waiter handed on, cancelled waiters never blocking later callers, all released on close."""

from __future__ import annotations

import asyncio

from cqlcodec.requests.admission import Admission


def test_turns_go_to_the_oldest_waiter_and_the_room_comes_back() -> None:
    async def main() -> None:
        gate = Admission(asyncio.get_running_loop(), 2)
        assert gate.enter(1) and gate.enter(1) and not gate.enter(1)
        order: list[int] = []

        async def waiter(i: int) -> None:
            await gate.wait()
            order.append(i)
        tasks = [asyncio.ensure_future(waiter(i)) for i in range(3)]
        await asyncio.sleep(0)
        assert gate.waiting() == 3
        gate.leave()
        gate.leave()
        await asyncio.sleep(0)
        assert order == [0, 1] and gate.inside == 2
        assert not gate.enter(2)  # room with two connections, but nobody jumps the queue
        gate.leave()
        await asyncio.sleep(0)
        assert order == [0, 1, 2]
        await asyncio.gather(*tasks)
        assert gate.enter(2)  # two connections: room for four
        for _ in range(3):
            gate.leave()
        assert gate.inside == 0 and gate.waiting() == 0
    asyncio.run(main())


def test_cancelled_waiters_hand_their_turn_on_and_never_block_later_callers() -> None:
    async def main() -> None:
        gate = Admission(asyncio.get_running_loop(), 1)
        assert gate.enter(1)
        first = asyncio.ensure_future(gate.wait())
        second = asyncio.ensure_future(gate.wait())
        await asyncio.sleep(0)
        gate.leave()  # the turn goes to first, which is cancelled before it runs
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        await second  # first handed its turn on
        gate.leave()
        assert gate.inside == 0
        assert gate.enter(1)
        late = asyncio.ensure_future(gate.wait())
        await asyncio.sleep(0)
        late.cancel()
        await asyncio.gather(late, return_exceptions=True)
        gate.leave()
        assert gate.inside == 0 and gate.enter(1)  # the cancelled waiter is not in the way
        gate.leave()
        assert gate.enter(1)
        stuck = [asyncio.ensure_future(gate.wait()) for _ in range(3)]
        await asyncio.sleep(0)
        gate.release_all()
        await asyncio.gather(*stuck)
        assert gate.waiting() == 0 and gate.inside == 4
    asyncio.run(main())
