"""`misbehave-py`: a Python strategy that misbehaves on purpose, for the
abuse tests (tests/it/python_strategies.rs). The request's `top_n` picks
what it does at its first rebalance (the numbers of the Rust fixture,
components/misbehave-strategy; the server's self-test uses 2):

* 8 - a memory bomb: holds 16 MiB more and more, written, until something
  stops it (the instance's memory cap, or its fuel);
* 7 - an endless loop (its fuel, or the deadline, must stop it);
* anything else - holds nothing (all cash).
"""

from typing import List

from forecast_strategy import Asset, Context, RunParams, Strategy, Target, export


class Misbehave(Strategy):
    NAME = "misbehave-py"
    VERSION = "0.0.1"
    DESCRIPTION = "Misbehaves on purpose (abuse tests): top_n 8 memory bomb, 7 endless loop."

    def __init__(self, mode: int) -> None:
        self.mode = mode

    @classmethod
    def start(cls, universe: List[Asset], params: RunParams) -> "Misbehave":
        return cls(params.top_n)

    def rebalance(self, ctx: Context) -> List[Target]:
        if self.mode == 8:
            held = []
            while True:
                held.append(bytearray(b"x" * (16 << 20)))
        if self.mode == 7:
            n = 0
            while True:
                n += 1
        return []


Allocation, AllocationColumns = export(Misbehave)
