#!/usr/bin/env python3
"""The tiny serving engine measured as the vLLM paper measures a server (chapter 9).

    OMP_NUM_THREADS=1 python benchmarks/serving_engine.py \
        --save src/attnbook/data/benchmark_serving_engine.json   # the record chapter 9 quotes

One request mix: 64 requests, each a prompt of 4 to 24 characters of Tiny Shakespeare's
validation text and an answer sampled at temperature 1 (seeded) that ends at the first
newline or at the request's own max_new_tokens, drawn between 16 and what the 64-character
context allows. The model is chapter 9's shipped RoPE GPT in float32, blocks of 4 tokens.

(a) Memory: the engine serves the mix under each policy, with a pool large enough that
    memory never limits it (at most 16 sequences at a time): "max" reserves the model's
    context (64 tokens) per request at admission, "request" the request's own prompt +
    max_new_tokens, "none" takes blocks as tokens arrive (paging). Every step the record
    counts the token slots the pool holds and the tokens they hold; the share is the sum of
    the second over the sum of the first. Orca's other two reservations, the final length
    ("oracle") and the next power of two above it ("pow2"), are counted on the paged run's
    schedule (the engine cannot know a final length in advance).
(b) Throughput: the same mix with the memory fixed at 96 blocks (384 token slots, six
    full contexts) and at most 1, 2, ..., 32 sequences at a time, preallocated ("max") vs
    paged ("none"): generated tokens per CPU-second of the one thread (the fastest of
    --repeats runs; wall-clock seconds are recorded too) and the mean number of sequences in
    flight per step. The machine named in the record runs other jobs at the same time, which
    makes its wall-clock times meaningless and its CPU times noisy: read the ratios.

Not a test. About a minute of CPU time (more wall-clock on a loaded machine).
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from attnbook.data import write_benchmark_record
from attnbook.paged import BlockPool
from attnbook.serving import RESERVE, Engine, Request
from attnbook.streaming import load_ch9_model
from attnbook.text import load_tiny_shakespeare, split_train_val

BLOCK, N_REQUESTS, BUDGET_BLOCKS = 4, 64, 96
BATCHES = (1, 2, 4, 8, 16, 32)


def request_mix(seed: int) -> list[Request]:
    """64 requests: prompts from the validation text, answers ending at a newline."""
    model, tok = load_ch9_model()
    _, val = split_train_val(tok.encode(load_tiny_shakespeare()), 0.1)
    g = torch.Generator().manual_seed(seed)
    newline = int(tok.encode("\n")[0])
    context = model.config.block_size
    requests = []
    for i in range(N_REQUESTS):
        n_prompt = int(torch.randint(4, 25, (1,), generator=g))
        start = int(torch.randint(0, len(val) - n_prompt, (1,), generator=g))
        most = context + 1 - n_prompt
        max_new = int(torch.randint(16, most + 1, (1,), generator=g))
        prompt = val[start : start + n_prompt].tolist()
        requests.append(Request(prompt, max_new, stop=newline, seed=seed * 1000 + i))
    return requests


def serve(requests: list[Request], blocks: int, max_batch: int, reserve: str) -> dict:
    """One run of the engine over the mix -> its counts and wall-clock seconds."""
    model, _ = load_ch9_model()
    cfg = model.config
    pool = BlockPool(blocks, BLOCK, cfg.n_head, cfg.n_embd // cfg.n_head, cfg.n_layer)
    engine = Engine(model, pool, max_batch, reserve=reserve)
    for request in requests:
        engine.add(request)
    start, cpu = time.perf_counter(), time.process_time()
    outputs = engine.run()
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    generated = sum(len(o) for samples in outputs.values() for o in samples)
    held = sum(h for _, h, _ in engine.trace)
    used = sum(u for _, _, u in engine.trace)
    return {
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "generated_tokens": generated,
        "steps": len(engine.trace),
        "mean_in_flight": sum(r for r, _, _ in engine.trace) / len(engine.trace),
        "held_slot_steps": held,
        "token_slot_steps": used,
        "token_share": used / held,
        "preemptions": engine.preemptions,
        "outputs": outputs,
        "history": engine.history,
        "trace": engine.trace,
    }


def oracle_and_pow2(requests: list[Request], run: dict) -> dict:
    """Orca's other two reservations, counted on the schedule of a paged run (which memory
    never limited): each request holds from admission its final length (oracle), or the
    next power of two above it, in blocks of BLOCK; the tokens are the run's."""
    final = {
        i: len(r.prompt) + len(run["outputs"][i][0]) - 1 for i, r in enumerate(requests)
    }
    held = {"oracle": 0, "pow2": 0}
    for prefilled, decoded in run["history"]:
        for i in set(prefilled) | set(decoded):
            held["oracle"] += -(-final[i] // BLOCK) * BLOCK
            held["pow2"] += max(BLOCK, 1 << (final[i] - 1).bit_length())
    used = sum(u for _, _, u in run["trace"])
    return {
        name: {"held_slot_steps": h, "token_slot_steps": used, "token_share": used / h}
        for name, h in held.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--save", default=None, help="write the results as a JSON record"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    requests = request_mix(args.seed)
    lengths = [len(r.prompt) for r in requests]
    memory = {}
    for reserve in RESERVE:
        run = serve(requests, N_REQUESTS * 16, 16, reserve)
        memory[reserve] = {
            k: v
            for k, v in run.items()
            if k not in ("outputs", "seconds", "cpu_seconds", "history", "trace")
        }
        print(
            f"memory, reserve={reserve}: {100 * run['token_share']:.1f} % real tokens"
        )
        if reserve == "none":
            answers = [len(o[0]) for o in run["outputs"].values()]
            memory.update(oracle_and_pow2(requests, run))
            for name in ("oracle", "pow2"):
                share = 100 * memory[name]["token_share"]
                print(f"memory, {name} (counted on the paged schedule): {share:.1f} %")
    throughput: dict[str, dict[str, dict]] = {"max": {}, "none": {}}
    reference = None
    for max_batch in BATCHES:
        for reserve in throughput:
            runs = [
                serve(requests, BUDGET_BLOCKS, max_batch, reserve)
                for _ in range(args.repeats)
            ]
            best = min(runs, key=lambda r: r["cpu_seconds"])
            if reference is None:
                reference = best["outputs"]
            throughput[reserve][str(max_batch)] = {
                "tokens_per_cpu_second": best["generated_tokens"] / best["cpu_seconds"],
                "tokens_per_second": best["generated_tokens"] / best["seconds"],
                "cpu_seconds": [r["cpu_seconds"] for r in runs],
                "seconds": [r["seconds"] for r in runs],
                "generated_tokens": best["generated_tokens"],
                "mean_in_flight": best["mean_in_flight"],
                "steps": best["steps"],
                "preemptions": best["preemptions"],
                # float32 rounding differs with the batch's shape: a sampled token may flip
                "answers_as_at_batch_1": sum(
                    best["outputs"][i] == reference[i] for i in reference
                ),
            }
            print(
                f"batch <= {max_batch:2d}, reserve={reserve:4s}: "
                f"{throughput[reserve][str(max_batch)]['tokens_per_cpu_second']:7.0f} tokens/CPU-s, "
                f"{best['mean_in_flight']:5.2f} in flight, "
                f"{best['preemptions']} preemptions",
                flush=True,
            )
    if args.save:
        write_benchmark_record(
            args.save,
            "OMP_NUM_THREADS=1 python " + " ".join(sys.argv),
            [args.seed],
            {"memory": memory, "throughput": throughput},
            block_size=BLOCK,
            requests=N_REQUESTS,
            prompt_lengths=lengths,
            answer_lengths=answers,
            budget_blocks=BUDGET_BLOCKS,
            threads=1,
        )
        print(f"record written to {args.save}")


if __name__ == "__main__":
    main()
