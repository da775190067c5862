"""attnbook.serving (chapter 9): the prefix cache finds a block only after the same tokens
that came before it, finds a block as soon as it is full, survives two sequences caching the
same tokens at once; the scheduler fills the batch to max_batch and logs a prompt token as
reading, also when it is a prompt's only or last token."""

from __future__ import annotations

import pytest
import torch

from attnbook.blocks import BlockPool
from attnbook.gpt import GPT, GPTConfig
from attnbook.serving import Engine, Request

pytestmark = pytest.mark.usefixtures("one_thread")

VOCAB, CONTEXT, SIZE = 13, 40, 4


@pytest.fixture(scope="module")
def model() -> GPT:
    """Two layers, rotary positions, float64; every parameter scaled by 8, so that attention
    is sharp and a block's keys computed after other tokens change the greedy answer."""
    torch.manual_seed(0)
    config = GPTConfig(
        vocab_size=VOCAB,
        block_size=CONTEXT,
        n_layer=2,
        n_head=4,
        n_embd=16,
        n_kv_head=2,
        positions="rope",
    )
    gpt = GPT(config).double().eval()
    with torch.no_grad():
        for p in gpt.parameters():
            p.mul_(8)
    return gpt


def engine(model: GPT, blocks: int, **kwargs) -> Engine:
    pool = BlockPool(blocks, SIZE, 2, 4, n_layer=2, dtype=torch.float64)
    return Engine(model, pool, **kwargs)


def generate(model: GPT, request: Request) -> list[int]:
    """The one sample of `request` as GPT.generate writes it."""
    g = torch.Generator().manual_seed(request.seed)
    ids = model.generate(
        torch.tensor([request.prompt]),
        request.max_new_tokens,
        request.temperature,
        request.top_k,
        generator=g,
    )
    return ids[0, len(request.prompt) :].tolist()


def serve_in_turn(e: Engine, requests: list[Request]) -> list[list[int]]:
    """Each request served to the end before the next is added."""
    answers = []
    for request in requests:
        rid = e.add(request)
        e.run()
        answers.append(e.outputs[rid][0])
    return answers


def test_a_block_is_found_only_after_the_tokens_that_preceded_it(model: GPT) -> None:
    # x and y end in the same block [9 10 11 12] after different first blocks; z repeats
    # y's two blocks. z must reuse y's blocks, never x's (whose keys in layer 1 were
    # computed after [1 2 3 4]), and answer as generate does (greedy).
    middle = [9, 10, 11, 12]
    x = Request([1, 2, 3, 4, *middle, 3], max_new_tokens=6, top_k=1)
    y = Request([5, 6, 7, 8, *middle, 5], max_new_tokens=6, top_k=1)
    z = Request([5, 6, 7, 8, *middle, 7], max_new_tokens=6, top_k=1)
    e = engine(model, 32, max_batch=1, prefix_cache=True)
    answers = serve_in_turn(e, [x, y])
    # y's first block differs from x's: nothing after it
    assert e.stats.blocks_found == 0
    answers += serve_in_turn(e, [z])
    assert e.stats.blocks_found == 2  # both of y's blocks
    assert answers == [generate(model, r) for r in (x, y, z)]


def test_the_second_of_two_prompts_with_one_shared_block_reads_its_own(
    model: GPT,
) -> None:
    # w shares its first block with v and its second with u (after another first block):
    # only the first may be reused
    u = Request([1, 2, 3, 4, 9, 10, 11, 12, 3], max_new_tokens=5, top_k=1)
    v = Request([5, 6, 7, 8, 1, 1, 1, 1, 5], max_new_tokens=5, top_k=1)
    w = Request([5, 6, 7, 8, 9, 10, 11, 12, 7], max_new_tokens=5, top_k=1)
    e = engine(model, 32, max_batch=1, prefix_cache=True)
    answers = serve_in_turn(e, [u, v, w])
    assert e.stats.blocks_found == 1
    assert answers == [generate(model, r) for r in (u, v, w)]


@pytest.mark.parametrize("prompt, new", [(8, 1), (5, 4)], ids=["prefill", "decode"])
def test_a_block_is_cached_as_soon_as_it_is_full(
    model: GPT, prompt: int, new: int
) -> None:
    # the first request computes exactly 8 tokens (its prompt, then its answer but the
    # last token): both its blocks are full, and a request that repeats those 8 tokens
    # and adds one computes that one token only
    first = Request(list(range(1, prompt + 1)), max_new_tokens=new, seed=7)
    e = engine(model, 32, max_batch=1, prefix_cache=True)
    (answer,) = serve_in_turn(e, [first])
    assert len(first.prompt) + len(answer) - 1 == 2 * SIZE
    second = Request([*first.prompt, *answer[:-1], 2], max_new_tokens=3, seed=8)
    steps = len(e.stats.scheduled)
    (again,) = serve_in_turn(e, [second])
    assert e.stats.blocks_found == 2
    # its prefill: the one token past the two blocks
    assert e.stats.scheduled[steps] == 1
    assert again == generate(model, second)


def test_two_sequences_caching_the_same_blocks_then_evicted(model: GPT) -> None:
    # two equal 9-token prompts admitted together compute and cache the same two blocks;
    # more requests in a pool of 8 blocks evict both copies. Every answer as generate's.
    twin = [3, 1, 4, 1, 5, 9, 2, 6, 5]
    requests = [Request(twin, max_new_tokens=3, seed=s) for s in (10, 11)]
    g = torch.Generator().manual_seed(12)
    requests += [
        Request(
            torch.randint(1, VOCAB, (9,), generator=g).tolist(),
            max_new_tokens=4,
            seed=s,
        )
        for s in range(6)
    ]
    e = engine(model, 8, max_batch=2, prefix_cache=True)
    for request in requests:
        e.add(request)
    e.step()
    assert e.stats.history[0] == ([0, 1], [])  # the twins run together
    outputs = e.run()
    assert [outputs[i][0] for i in range(len(requests))] == [
        generate(model, r) for r in requests
    ]


def test_the_batch_fills_to_max_batch(model: GPT) -> None:
    e = engine(model, 32, max_batch=3)
    for i in range(4):
        e.add(Request([1 + i, 2, 3], max_new_tokens=2, seed=i))
    e.step()
    assert e.stats.trace[0][0] == 3 and e.stats.history[0] == ([0, 1, 2], [])
    e.step()  # request 3 waits for a place
    assert e.stats.history[1] == ([], [0, 1, 2])
    e.step()  # 0, 1 and 2 have finished: 3 is admitted
    assert e.stats.history[2] == ([3], [])


def test_a_prompt_s_only_or_last_token_is_logged_as_reading(model: GPT) -> None:
    e = engine(model, 32, max_batch=2, token_budget=4)
    short = e.add(Request([7], max_new_tokens=2))
    e.step()
    assert e.stats.history == [([short], [])]
    e.step()
    assert e.stats.history[1] == ([], [short])
    chunked = e.add(Request([1, 2, 3, 4, 5], max_new_tokens=2))
    e.run()
    # four prompt tokens, then the fifth alone: both steps read the prompt
    assert e.stats.history[2:] == [([chunked], []), ([chunked], []), ([], [chunked])]
