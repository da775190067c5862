"""What chapter 9 measures of a serving run, kept beside the engine, not inside it.

`serving.Engine` tells its `EngineStats` what happened at each event of a run: a request
arrives, a waiting request is admitted (its prompt blocks looked up in the prefix cache), a
sequence is preempted, a step's tokens are scheduled, a token is sampled, a step ends. The
engine decides nothing from these numbers; chapter 9 and `benchmarks/serving_engine.py`
read them afterwards. Steps are counted from 0.

    arrivals[r]          the number of steps run before request r arrived
    token_steps[r][i]    the step that produced each token of sample i of request r
    history[s]           (requests that read prompt tokens, requests decoded) in step s
    scheduled[s]         tokens computed in step s (a count no machine changes)
    trace[s]             (sequences running, token slots held, tokens cached) at the end of
                         step s, before the finished ones free their blocks
    preemptions          sequences preempted (freed, to be recomputed)
    blocks_looked_up     prompt blocks looked up in the prefix cache at admission
    blocks_found         those found there
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["EngineStats"]


@dataclass
class EngineStats:
    """The instruments of one `serving.Engine` (chapter 9): see the module for each field."""

    arrivals: list[int] = field(default_factory=list)
    token_steps: dict[int, list[list[int]]] = field(default_factory=dict)
    history: list[tuple[list[int], list[int]]] = field(default_factory=list)
    scheduled: list[int] = field(default_factory=list)
    trace: list[tuple[int, int, int]] = field(default_factory=list)
    preemptions: int = 0
    blocks_looked_up: int = 0
    blocks_found: int = 0

    @property
    def steps(self) -> int:
        """Steps scheduled so far."""
        return len(self.history)

    def arrived(self, request_id: int, n: int) -> None:
        """Request `request_id`, of `n` samples, joined the queue."""
        self.arrivals.append(self.steps)
        self.token_steps[request_id] = [[] for _ in range(n)]

    def admitted(self, looked_up: int, found: int) -> None:
        """A waiting sequence was admitted; `found` of its `looked_up` leading prompt blocks
        were in the prefix cache."""
        self.blocks_looked_up += looked_up
        self.blocks_found += found

    def preempted(self) -> None:
        """A running sequence gave its blocks back, to be recomputed later."""
        self.preemptions += 1

    def planned(self, plan: list[tuple[int, int, bool]]) -> None:
        """A step begins with `plan`: per sequence (request id, tokens it computes, whether
        it decodes one token after its prompt)."""
        reading = [rid for rid, _, decoding in plan if not decoding]
        self.history.append((reading, [rid for rid, _, decoding in plan if decoding]))
        self.scheduled.append(sum(n for _, n, _ in plan))

    def sampled(self, request_id: int, sample: int) -> None:
        """Sample `sample` of request `request_id` got a token in the current step."""
        self.token_steps[request_id][sample].append(self.steps - 1)

    def ended(self, running: int, held: int, cached: int) -> None:
        """The current step computed its tokens: `running` sequences, `held` token slots in
        the pool's used blocks, `cached` tokens in their tables."""
        self.trace.append((running, held, cached))
