#!/usr/bin/env python3
"""The tiny serving engine measured as the vLLM paper and serving engineers measure a server
(chapter 9).

    OMP_NUM_THREADS=1 python benchmarks/serving_engine.py \
        --save src/attnbook/data/benchmark_serving_engine.json   # the record chapter 9 quotes

One request mix: 64 requests, each a prompt of 4 to 24 characters of Tiny Shakespeare's
validation text and an answer sampled at temperature 1 (seeded) that ends at the first
newline or at the request's own max_new_tokens, drawn between 16 and what the 64-character
context allows. The model is chapter 9's shipped RoPE GPT in float32, blocks of 4 tokens.

(a) Memory: the engine serves the mix under each policy, with a pool large enough that
    memory never limits it (at most 16 sequences at a time): "max" reserves the model's
    context (64 tokens) per request at admission, "request" the request's own prompt +
    max_new_tokens, "none" takes blocks as tokens arrive (paging), with blocks of 4 and of
    16 (vLLM's default). Every step the record counts the token slots held and the tokens
    they hold; the share is the sum of the second over the sum of the first. Orca's other two
    reservations are counted on the paged run's schedule as the vLLM paper defines them: the
    final length exactly ("oracle") and the prompt plus the output rounded up to a power of
    two ("pow2"). All reservations here are carved from one block pool, so none of them
    has the external fragmentation of a contiguous allocator.
(b) Prefix caching: 32 requests that share a 24-token system prompt, each arriving 12 steps
    after the one before (most earlier ones have finished by then): the share of prompt
    blocks looked up that the cache held, how many of those no running sequence held (kept
    by the free queue after their holders finished), and the peak blocks with and without it.
(c) Latency: the mix arriving at a rate (a Poisson process in steps), the pool fixed at 96
    blocks (six full contexts), at most 16 sequences at a time, each rate on several draws
    of the arrival times (arrival seeds seed, seed + 1, ...; the request mix stays the
    same). Per request: time to first token (TTFT: from the step it arrived in to the step
    that sampled its first token, inclusive), time per output token after the first (TPOT),
    and the vLLM paper's normalised latency (end-to-end latency over output tokens, averaged
    over requests), in steps (which do not depend on the model or the machine) and in CPU
    seconds of the steps in between (one thread; the machine runs other jobs, so CPU times
    are noisy: one configuration is repeated to measure how noisy). Per run, the median and
    the slowest of the 64 requests (with 64 requests a "99th percentile" would be the
    slowest one), and the tokens the longest step computed. Pages vs reserving the context;
    and, with pages, chunked prefill under a budget of 32 tokens per step (above the 16
    decodes a step can hold, as Sarathi-Serve sizes it) and of 16 (equal to them) vs whole
    prompts.

Not a test. The shipped record's run took 6 minutes of wall time with one thread, on a
2-core machine shared with other jobs (load 4-5).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from attnbook.blocks import BlockPool
from attnbook.data import write_benchmark_record
from attnbook.serving import RESERVE, Engine, Request
from attnbook.streaming import load_ch9_model
from attnbook.text import load_tiny_shakespeare, split_train_val

BLOCK, N_REQUESTS, BUDGET_BLOCKS = 4, 64, 96
RATES = (0.1, 0.2, 0.3, 0.45, 0.6)  # requests per step
LATENCY = {  # name: (reserve, token_budget)
    "pages": ("none", None),
    "reserve": ("max", None),
    "pages, chunks of 32": ("none", 32),
    "pages, chunks of 16": ("none", 16),
}


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


def make_engine(blocks: int, max_batch: int, reserve: str, **options) -> Engine:
    model, _ = load_ch9_model()
    cfg = model.config
    size = options.pop("block", BLOCK)
    pool = BlockPool(blocks, size, cfg.n_head, cfg.n_embd // cfg.n_head, cfg.n_layer)
    return Engine(model, pool, max_batch, reserve=reserve, **options)


def serve(
    requests: list[Request], engine: Engine, arrivals: list[int] | None = None
) -> dict:
    """Run the engine, adding request i at step arrivals[i] (all at once if None); the CPU
    seconds of every step."""
    arrivals = arrivals or [0] * len(requests)
    order = sorted(range(len(requests)), key=lambda i: arrivals[i])
    ids, step_cpu, nxt = {}, [], 0
    while nxt < len(order) or engine.waiting or engine.running:
        while nxt < len(order) and arrivals[order[nxt]] <= len(engine.stats.history):
            ids[order[nxt]] = engine.add(requests[order[nxt]])
            nxt += 1
        cpu = time.process_time()
        engine.step()
        step_cpu.append(time.process_time() - cpu)
    return {"ids": ids, "step_cpu": step_cpu}


def memory_shares(requests: list[Request]) -> dict:
    memory = {}
    for reserve, block in [(r, BLOCK) for r in RESERVE] + [("none", 16)]:
        engine = make_engine(N_REQUESTS * 16 * BLOCK // block, 16, reserve, block=block)
        serve(requests, engine)
        held = sum(h for _, h, _ in engine.stats.trace)
        used = sum(u for _, _, u in engine.stats.trace)
        name = reserve if block == BLOCK else f"none, blocks of {block}"
        memory[name] = {
            "held_slot_steps": held,
            "token_slot_steps": used,
            "token_share": used / held,
            "steps": len(engine.stats.trace),
        }
        print(f"memory, {name}: {100 * used / held:.1f} % real tokens", flush=True)
        if reserve == "none" and block == BLOCK:
            final = {
                i: len(r.prompt) + len(engine.outputs[i][0]) - 1
                for i, r in enumerate(requests)
            }
            outputs = {i: len(engine.outputs[i][0]) for i in final}
            paper = {"oracle": 0, "pow2": 0}
            for reading, decoded in engine.stats.history:
                for i in set(reading) | set(decoded):
                    paper["oracle"] += final[i]
                    pow2 = 1 << (outputs[i] - 1).bit_length()
                    paper["pow2"] += len(requests[i].prompt) + pow2 - 1
            for key, h in paper.items():
                memory[key] = {"held_slot_steps": h, "token_share": used / h}
                print(f"memory, {key} (paper's rule): {100 * used / h:.1f} %")
            lengths = list(final.values())
            memory["mean_sequence_tokens"] = sum(lengths) / len(lengths)
            memory["answer_lengths"] = list(outputs.values())
    return memory


def count_revived(pool: BlockPool) -> list[int]:
    """Make the pool count its prefix-cache hits on blocks no table held: [count]."""
    revived, take = [0], pool.take_cached

    def counting(key: bytes) -> int:
        revived[0] += pool.refs[pool.cached[key]] == 0
        return take(key)

    pool.take_cached = counting  # type: ignore[method-assign]
    return revived


def prefix_stream(seed: int) -> dict:
    """32 requests with one 24-token system prompt, one every 12 steps."""
    model, tok = load_ch9_model()
    _, val = split_train_val(tok.encode(load_tiny_shakespeare()), 0.1)
    system = tok.encode("KING LEAR:\nTell me, my d").tolist()
    g = torch.Generator().manual_seed(seed)
    requests = []
    for i in range(32):
        start = int(torch.randint(0, len(val) - 8, (1,), generator=g))
        question = val[start : start + int(torch.randint(4, 9, (1,), generator=g))]
        requests.append(Request(system + question.tolist(), 12, seed=i))
    out = {}
    for cached in (False, True):
        engine = make_engine(64, 8, "none", prefix_cache=cached)
        revived = count_revived(engine.pool)
        serve(requests, engine, [12 * i for i in range(32)])
        out["cache" if cached else "no cache"] = {
            "peak_blocks": max(h for _, h, _ in engine.stats.trace) // BLOCK,
            "blocks_looked_up": engine.stats.blocks_looked_up,
            "blocks_found": engine.stats.blocks_found,
            "found_after_their_holders_finished": revived[0],
            "outputs": engine.outputs,
        }
    same = out["cache"].pop("outputs") == out["no cache"].pop("outputs")
    out["same_answers"] = same
    print(f"prefix: {out}", flush=True)
    return out


def latencies(requests: list[Request], engine: Engine, run: dict, arrivals) -> dict:
    """TTFT and TPOT (median and slowest request) and normalised latency, in steps and CPU
    seconds; the tokens of the longest step."""
    clock = [0.0]
    for s in run["step_cpu"]:
        clock.append(clock[-1] + s)  # clock[k]: CPU seconds before step k
    ttft, tpot, normal = {"steps": [], "cpu": []}, {"steps": [], "cpu": []}, []
    normal_cpu = []
    for i, rid in run["ids"].items():
        steps = engine.stats.token_steps[rid][0]
        a, first, last = arrivals[i], steps[0], steps[-1]
        ttft["steps"].append(first - a + 1)
        ttft["cpu"].append(clock[first + 1] - clock[a])
        if len(steps) > 1:
            tpot["steps"].append((last - first) / (len(steps) - 1))
            tpot["cpu"].append((clock[last + 1] - clock[first + 1]) / (len(steps) - 1))
        normal.append((last - a + 1) / len(steps))
        normal_cpu.append((clock[last + 1] - clock[a]) / len(steps))
    out = {}
    for unit in ("steps", "cpu"):
        for name, xs in (("ttft", ttft[unit]), ("tpot", tpot[unit])):
            out[f"{name}_p50_{unit}"] = statistics.median(xs)
            out[f"{name}_max_{unit}"] = max(xs)
    out["normalised_latency_steps"] = statistics.mean(normal)
    out["normalised_latency_cpu"] = statistics.mean(normal_cpu)
    out["steps"] = len(engine.stats.history)
    out["preemptions"] = engine.stats.preemptions
    out["max_step_tokens"] = max(engine.stats.scheduled)
    out["max_step_cpu"] = max(run["step_cpu"])
    return out


def poisson_steps(rate: float, n: int, seed: int) -> list[int]:
    g = torch.Generator().manual_seed(seed)
    gaps = torch.empty(n).exponential_(generator=g) / rate
    return [int(t) for t in gaps.cumsum(0).tolist()]


def latency_sweep(requests: list[Request], repeats: int, seed: int, draws: int) -> dict:
    """Every configuration at every rate on `draws` arrival draws: {name: {rate: [run]}}."""
    results: dict = {"arrival_seeds": [seed + d for d in range(draws)]}
    for name, (reserve, budget) in LATENCY.items():
        results[name] = {}
        for rate in RATES:
            results[name][str(rate)] = []
            for arrival_seed in results["arrival_seeds"]:
                arrivals = poisson_steps(rate, len(requests), arrival_seed)
                engine = make_engine(BUDGET_BLOCKS, 16, reserve, token_budget=budget)
                run = serve(requests, engine, arrivals)
                r = latencies(requests, engine, run, arrivals)
                results[name][str(rate)].append(r)
                print(
                    f"{name:>20} rate {rate} draw {arrival_seed}: TTFT p50/max "
                    f"{r['ttft_p50_steps']:.0f}/{r['ttft_max_steps']:.0f} steps, "
                    f"normalised {r['normalised_latency_steps']:.2f} steps/token, "
                    f"longest step {r['max_step_tokens']} tokens, "
                    f"{1e3 * r['max_step_cpu']:.0f} ms, "
                    f"{r['preemptions']} preemptions",
                    flush=True,
                )
    rate = RATES[2]  # the noise: one configuration repeated
    arrivals = poisson_steps(rate, len(requests), seed)
    results["repeats"] = {"configuration": "pages", "rate": rate, "runs": []}
    for _ in range(repeats):
        engine = make_engine(BUDGET_BLOCKS, 16, "none")
        run = serve(requests, engine, arrivals)
        results["repeats"]["runs"].append(latencies(requests, engine, run, arrivals))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--draws", type=int, default=5, help="arrival draws per configuration and rate"
    )
    parser.add_argument(
        "--save", default=None, help="write the results as a JSON record"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    requests = request_mix(args.seed)
    memory = memory_shares(requests)
    answers = memory.pop("answer_lengths")
    prefix = prefix_stream(args.seed)
    latency = latency_sweep(requests, args.repeats, args.seed, args.draws)
    if args.save:
        write_benchmark_record(
            args.save,
            "OMP_NUM_THREADS=1 python " + " ".join(sys.argv),
            [args.seed],
            {"memory": memory, "prefix": prefix, "latency": latency},
            block_size=BLOCK,
            requests=N_REQUESTS,
            prompt_lengths=[len(r.prompt) for r in requests],
            answer_lengths=answers,
            budget_blocks=BUDGET_BLOCKS,
            rates=list(RATES),
            threads=1,
        )
        print(f"record written to {args.save}")


if __name__ == "__main__":
    main()
