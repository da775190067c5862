"""Mutation check of the unit tests: every one-line change below must make a test fail.

Each mutation edits one line of a temporary copy of `src/attnbook` and of the grading engine
`grader/src/attnbook_grader` (the text must occur exactly once); the unit tests then run
against that copy (it comes first on PYTHONPATH, so it shadows the installed packages) and stop at the first failure. The table names the test that
caught each mutation; a mutation no test catches is a gap in the tests, and the exit status is
1. Run from the repository root (a few minutes on 2 cores):

    python -m tools.mutations            # all of them
    python -m tools.mutations --only alibi-drops-padding-mask --only sqrt-c-scaling-removed
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "attnbook"
GRADER = ROOT / "grader" / "src" / "attnbook_grader"
# The unit tests of the package, the fast and most telling first (pytest stops at a failure).
TESTS = [
    "tests/test_golden.py",
    "tests/test_attend.py",
    "tests/test_masks.py",
    "tests/test_multihead.py",
    "tests/test_attention.py",
    "tests/test_gqa.py",
    "tests/test_gpt.py",
    "tests/test_positional.py",
    "tests/test_train.py",
    "tests/test_ngram.py",
    "tests/test_cars.py",
    "tests/test_lookup.py",
    "tests/test_cross.py",
    "tests/test_bad_inputs_ch1.py",
    "tests/test_memory.py",
    "tests/test_blockwise.py",
    "tests/test_bad_inputs.py",
    "tests/test_properties_attention.py",
    "tests/test_properties_multihead.py",
    "tests/test_properties_positional.py",
    "tests/test_paged.py",
    "tests/test_serving.py",
    "tests/test_bad_inputs_ch9.py",
    "tests/test_bad_inputs_serving.py",
    "tests/test_import_graph.py",
    # chapter 9's caches, streaming and latent attention
    "tests/test_caches.py",
    "tests/test_kvquant.py",
    "tests/test_streaming.py",
    "tests/test_latent.py",
    # chapter 8's block around attention
    "tests/test_layers.py",
    "tests/test_bad_inputs_layers.py",
]


@dataclass(frozen=True)
class Mutation:
    name: str
    path: str  # inside src/attnbook, or attnbook_grader/NAME: the engine's
    old: str  # must occur exactly once in the file
    new: str
    first: tuple[
        str, ...
    ] = ()  # test files to run before the rest of TESTS (the telling ones)


MUTATIONS = [
    # the four the code review found surviving the whole unit suite
    Mutation(
        "alibi-drops-padding-mask",
        "multihead.py",
        "            mask,\n            is_causal=is_causal,",
        "            None if self.alibi else mask,\n            is_causal=is_causal,",
    ),
    Mutation(
        "sqrt-c-scaling-removed",
        "gpt.py",
        "return math.sqrt(self.n_embd) if scale else None",
        "return None",
    ),
    Mutation(
        "residual-projection-init-removed",
        "gpt.py",
        "nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))",
        "pass",
    ),
    Mutation(
        "weight-decay-on-layernorm-and-biases",
        "train.py",
        '"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}',
        '"params": [p for p in params if p.dim() < 2], "weight_decay": cfg.weight_decay}',
    ),
    # the four the review's tests already caught
    Mutation("causal-band-top-left", "masks.py", ".tril(T_k - T)", ".tril()"),
    Mutation(
        "warm-up-off-by-one",
        "train.py",
        "cfg.learning_rate * (it + 1) / cfg.warmup_iters",
        "cfg.learning_rate * it / cfg.warmup_iters",
    ),
    Mutation(
        "classifier-ignores-padding",
        "cars/models.py",
        "block(x, key_mask=key_mask,",
        "block(x, key_mask=None,",
    ),
    Mutation(
        "ngram-backoff-weight-dropped",
        "ngram.py",
        "discount * u_h * p) / safe",
        "discount * p) / safe",
    ),
    # the attention view: its defaults (the code review's E1, E2) and its own picture
    Mutation(
        "view-opens-on-the-first-query",
        "explore.py",
        "query = n_q - 1 if query is None else query",
        "query = 0 if query is None else query",
        ("tests/test_explore_picture.py",),
    ),
    Mutation(
        "view-breaks-lines-between-words",
        "explore.py",
        'if token == "\\n" and not self._spaced(tokens):',
        'if token == "\\n":',
        ("tests/test_explore_picture.py",),
    ),
    Mutation(
        "view-live-part-not-hidden",
        "explore.py",
        '<div class="attnx-live" hidden="hidden">',
        '<div class="attnx-live">',
        ("tests/test_explore_picture.py",),
    ),
    Mutation(
        "view-without-its-picture",
        "explore.py",
        'f\'<img class="attnx-picture" src="{uri}" alt="{alt}" \'',
        'f\'<img class="attnx-picture" alt="{alt}" \'',
        ("tests/test_explore_picture.py",),
    ),
    Mutation(
        "view-script-keeps-the-picture",
        "data/explore.js",
        "if (picture) { picture.remove(); }",
        "",
        ("tests/test_explore_picture.py",),
    ),
    Mutation(
        "view-keeps-per-layer-lines-everywhere",
        "explore.py",
        'js = _PER_LAYER.sub("", js)',
        "js = js",
        ("tests/test_explore.py",),
    ),
    Mutation(
        "view-opens-on-the-first-sequence",
        "explore.py",
        "self.tokens = self.layer_tokens[layer]",
        "self.tokens = self.layer_tokens[0]",
        ("tests/test_explore.py",),
    ),
    Mutation(
        "view-map-labels-the-first-sequence",
        "explore_labels.py",
        "f\"{labels('q', n_q, query_lists[opening])}</div>\"",
        "f\"{labels('q', n_q, query_lists[0])}</div>\"",
        ("tests/test_explore.py",),
    ),
    Mutation(
        "view-map-labels-too-dense",
        "explore_labels.py",
        "return next(k for k in STEPS if k * pitch >= LINE)",
        "return next(k for k in STEPS if k * pitch >= FONT)",
        ("tests/test_explore.py",),
    ),
    # more
    Mutation(
        "scores-not-scaled",
        "attention.py",
        "q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])",
        "q @ k.transpose(-2, -1)",
    ),
    Mutation(
        "all-masked-row-guard-removed",
        "attention.py",
        "scores = scores.masked_fill(~has_key, 0.0)",
        "scores = scores",
    ),
    Mutation(
        "kv-heads-interleaved",
        "attention.py",
        "expanded = x[:, :, None].expand(B, H_kv, n_rep, T, d)",
        "expanded = x[:, None].expand(B, n_rep, H_kv, T, d)",
    ),
    Mutation(
        "rope-ignores-cache-offset",
        "multihead.py",
        "seen = 0 if kv_cache is None else len(kv_cache)",
        "seen = 0",
    ),
    Mutation(
        "cache-appends-in-front",
        "caches.py",
        "torch.cat([self.k, k], dim=-2)",
        "torch.cat([k, self.k], dim=-2)",
    ),
    Mutation(
        "attention-dropout-in-eval",
        "multihead.py",
        "dropout_p=self.dropout if self.training else 0.0",
        "dropout_p=self.dropout",
    ),
    Mutation(
        "weights-not-tied", "gpt.py", "self.head.weight = self.tok_emb.weight", "pass"
    ),
    Mutation(
        "mlp-skips-its-layernorm",
        "gpt.py",
        "x = x + self.mlp(self.ln_2(x))",
        "x = x + self.mlp(x)",
    ),
    Mutation("no-gradient-clipping", "train.py", "if cfg.grad_clip:", "if False:"),
    Mutation(
        "masked-mean-divides-by-T",
        "cars/models.py",
        "real.sum(dim=1).clamp(min=1).to(x.dtype)",
        "x.shape[1]",
    ),
    Mutation(
        "sinusoidal-ignores-offset",
        "positional.py",
        "self.pe[offset : offset + T]",
        "self.pe[:T]",
    ),
    Mutation(
        "alibi-slopes-of-the-wrong-half",
        "positional.py",
        "powers(2 * P)[0::2]",
        "powers(2 * P)[1::2]",
    ),
    Mutation(
        "lookup-head-blind-to-letters",
        "lookup.py",
        "x = self.letter(letter) + self.slot(slot)",
        "x = self.slot(slot)",
    ),
    Mutation(
        "reversal-target-not-reversed",
        "cross.py",
        "target = source.flip(-1)  # target[:, t]",
        "target = source  # target[:, t]",
        ("tests/test_cross.py",),
    ),
    Mutation(
        "additive-score-without-tanh",
        "cross.py",
        "hidden = torch.tanh(self.W_a(q).unsqueeze(-2) + self.U_a(k).unsqueeze(-3))",
        "hidden = self.W_a(q).unsqueeze(-2) + self.U_a(k).unsqueeze(-3)",
        ("tests/test_cross.py",),
    ),
    Mutation(
        "scores-hook-ignores-the-mask",
        "attention.py",
        "return _weigh(scores, v, mask, 0.0, guard=True)",
        "return _weigh(scores, v, None, 0.0, guard=True)",
        ("tests/test_cross.py",),
    ),
    # chapter 8: RMSNorm and SwiGLU
    Mutation(
        "rmsnorm-divides-by-the-mean-not-the-rms",
        "layers.py",
        "inv_rms = torch.rsqrt(x32.pow(2).mean(dim=-1, keepdim=True) + self.eps)",
        "inv_rms = torch.rsqrt(x32.mean(dim=-1, keepdim=True).abs() + self.eps)",
        ("tests/test_layers.py",),
    ),
    Mutation(
        "swiglu-gates-the-wrong-branch",
        "layers.py",
        "hidden = F.silu(self.gate(x)) * self.up(x)  # (..., h)",
        "hidden = self.gate(x) * F.silu(self.up(x))  # (..., h)",
        ("tests/test_layers.py",),
    ),
    # chapter 9: the block manager, the paged caches, the serving engine, blockwise
    # attention's window
    Mutation(
        "freed-table-keeps-its-blocks",
        "blocks.py",
        "self.blocks, self.length = [], 0",
        "self.length = 0",
        ("tests/test_paged.py",),
    ),
    Mutation(
        "release-frees-a-block-twice",
        "blocks.py",
        'if self.refs[b] < (n if action == "release" else 1):',
        "if self.refs[b] < 1:",
        ("tests/test_paged.py",),
    ),
    Mutation(
        "shared-block-written-without-a-copy",
        "blocks.py",
        "elif pool.refs[self.blocks[i]] > 1:",
        "elif False:",
        ("tests/test_paged.py", "tests/test_serving.py"),
    ),
    Mutation(
        "share-counts-a-duplicate-once",
        "blocks.py",
        "self.refs[b] += n",
        "self.refs[b] += 1",
        ("tests/test_serving.py", "tests/test_paged.py"),
    ),
    Mutation(
        "freed-blocks-reused-most-recent-first",
        "blocks.py",
        "block = next(iter(self.free_queue))",
        "block = next(reversed(self.free_queue))",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "evicted-block-keeps-its-prefix",
        "blocks.py",
        "del self.cached[self.hash_of.pop(block)]",
        "pass",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "paged-cache-counts-every-layer",
        "paged.py",
        "return self.table.nbytes // self.pool.n_layer",
        "return self.table.nbytes",
        ("tests/test_caches.py", "tests/test_paged.py"),
    ),
    Mutation(
        "ragged-batch-masked-by-the-longest",
        "paged.py",
        "return position_mask(positions.long(), torch.arange(len(self)))[:, None]",
        "return position_mask(positions.long().amax(0).expand_as(positions), "
        "torch.arange(len(self)))[:, None]",
        ("tests/test_paged.py", "tests/test_serving.py"),
    ),
    Mutation(
        "window-edge-block-left-unmasked",
        "blockwise.py",
        "ks > last - window)",
        "ks >= last - window)",
        ("tests/test_blockwise.py",),
    ),
    Mutation(
        "batch-rotated-at-the-first-row-position",
        "serving.py",
        "positions = torch.tensor([s.cached for s in seqs])[:, None] + torch.arange(T)",
        "positions = seqs[0].cached + torch.arange(T).expand(len(seqs), T)",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "finished-sequence-keeps-its-blocks",
        "serving.py",
        "self.token_steps[seq.request_id][seq.sample] = seq.steps\n            seq.table.free()",
        "self.token_steps[seq.request_id][seq.sample] = seq.steps",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "shared-prefix-not-referenced",
        "blocks.py",
        "        self.refs[block] += 1\n        return block",
        "        return block",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "prefix-hit-writes-from-position-0",
        "serving.py",
        "seq.table.length = seq.cached = start",
        "seq.cached = start",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "prefix-hit-covers-the-whole-prompt",
        "serving.py",
        "for i in range((len(seq.tokens) - 1) // size):",
        "for i in range(len(seq.tokens) // size):",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "preempted-sequence-queued-last",
        "serving.py",
        "self.waiting.appendleft(seq)",
        "self.waiting.append(seq)",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "oldest-sequence-preempted",
        "serving.py",
        "self._preempt(self.running[-1])",
        "self._preempt(self.running[0])",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "twins-admitted-without-room-for-their-copies",
        "serving.py",
        "need = -(-(start + chunk) // size) - len(found) + (n - 1)",
        "need = -(-(start + chunk) // size) - len(found)",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "budget-ignored-by-newcomers",
        "serving.py",
        "chunk = min(len(seq.tokens) - start, budget)",
        "chunk = len(seq.tokens) - start",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "values-quantised-inside-their-window",
        "caches.py",
        "old = values.shape[-2] - R  # values leaving the window: quantised per token",
        "old = values.shape[-2]  # values leaving the window: quantised per token",
        ("tests/test_kvquant.py",),
    ),
    Mutation(
        "keys-quantised-a-group-at-a-time-not-the-residual",
        "caches.py",
        "while recent.shape[-2] >= R:  # R keys gathered: quantise them, group by group",
        "while recent.shape[-2] >= G:  # R keys gathered: quantise them, group by group",
        ("tests/test_kvquant.py",),
    ),
    Mutation(
        "mla-gpt-loses-the-scaled-residual-init",
        "latent.py",
        'std = 0.02 / math.sqrt(2 * config.n_layer) if name == "W_o.weight" else 0.02',
        "std = 0.02",
        ("tests/test_latent.py",),
    ),
    Mutation(
        "swiglu-ignores-its-dropout",
        "layers.py",
        "        self.proj = nn.Linear(hidden, n_embd, bias=bias)  # W_down (h, C)\n"
        "        self.dropout = nn.Dropout(dropout)",
        "        self.proj = nn.Linear(hidden, n_embd, bias=bias)  # W_down (h, C)\n"
        "        self.dropout = nn.Dropout(0.0)",
        ("tests/test_layers.py",),
    ),
    Mutation(
        "revived-blocks-not-counted-at-admission",
        "serving.py",
        "if need + revived > self.pool.num_free:",
        "if need > self.pool.num_free:",
        ("tests/test_serving.py",),
    ),
    # chapter 9: the three the code review found surviving, then the key lines of the
    # quantised, streaming and latent caches
    Mutation(
        "rolling-keeps-the-sinks",
        "streaming.py",
        "StreamingCache(capacity, kept)",
        "StreamingCache(capacity, sinks)",
    ),
    Mutation(
        "latent-scale-ignores-rope",
        "latent.py",
        "math.sqrt(query.shape[-1] / (self.d_head + self.d_rope))",
        "math.sqrt(query.shape[-1] / self.d_head)",
    ),
    Mutation(
        "mask-with-cache-ignores-cache-length",
        "multihead.py",
        "key.shape[1] + (0 if kv_cache is None else len(kv_cache)),",
        "key.shape[1],",
    ),
    Mutation(
        "codes-packed-last-first",
        "kvquant.py",
        "packed |= codes[..., j::per_byte] << (j * bits)",
        "packed |= codes[..., j::per_byte] << ((per_byte - 1 - j) * bits)",
    ),
    Mutation(
        "keys-per-token-in-the-channel-layout",
        "caches.py",
        "quantize_packed(group[:, :, None], self.bits, -2)",
        "quantize_packed(group[:, :, None], self.bits, -1)",
    ),
    Mutation(
        "values-per-channel",
        "caches.py",
        "new = quantize_packed(values[:, :, :old], self.bits, -1)",
        "new = quantize_packed(values[:, :, :old], self.bits, -2)",
    ),
    Mutation(
        "full-group-kept-in-the-residual",
        "caches.py",
        "while recent.shape[-2] >= R:  # R keys gathered: quantise them, group by group",
        "while recent.shape[-2] > R:  # R keys gathered: quantise them, group by group",
    ),
    Mutation(
        "fp8-cache-stores-float32",
        "caches.py",
        "k.to(torch.float8_e4m3fn), v.to(torch.float8_e4m3fn)",
        "k, v",
    ),
    Mutation(
        "streaming-evicts-the-newest",
        "caches.py",
        "torch.arange(self.sinks + excess, len(self))",
        "torch.arange(self.sinks, len(self) - excess)",
    ),
    Mutation(
        "streaming-query-one-slot-late",
        "multihead.py",
        "q = self.rotate(q, torch.arange(n - T, n, device=q.device))",
        "q = self.rotate(q, torch.arange(n - T + 1, n + 1, device=q.device))",
    ),
    Mutation(
        "reencode-sinks-drops-the-sinks",
        "streaming.py",
        "[streams[:, : min(kept, t + 1)], streams[:, recent : t + 1]], dim=1",
        "[streams[:, recent : t + 1]], dim=1",
    ),
    Mutation(
        "partial-rope-rotates-the-rest",
        "multihead.py",
        "torch.cat([apply_rope(x[..., :r], positions), x[..., r:]], dim=-1)",
        "torch.cat([x[..., :r], apply_rope(x[..., r:], positions)], dim=-1)",
    ),
    Mutation(
        "absorbed-flops-at-head-width",
        "latent.py",
        "pairs = 2 * H * T_q * T_k * (d_latent + d_rope + d_latent)",
        "pairs = 2 * H * T_q * T_k * (d_head + d_rope + d_head)",
    ),
    Mutation(
        "start-token-model-loses-its-token",
        "streaming.py",
        "vocab_size = tok.vocab_size + (start_id is not None)",
        "vocab_size = tok.vocab_size",
    ),
    # the training loop's bookkeeping and device code (the code review's survivors)
    Mutation(
        "fp16-clips-scaled-gradients",
        "device.py",
        "self.scaler.unscale_(optimizer)",
        "pass",
        ("tests/test_device.py",),
    ),
    Mutation(
        "training-time-keeps-the-last-segment",
        "train.py",
        "self.result.train_seconds += time.perf_counter() - self.since",
        "self.result.train_seconds = time.perf_counter() - self.since",
        ("tests/test_train.py",),
    ),
    Mutation(
        "time-budget-forgets-earlier-segments",
        "train.py",
        "elapsed = result.train_seconds + time.perf_counter()",
        "elapsed = time.perf_counter()",
        ("tests/test_train.py",),
    ),
    Mutation(
        "tokens-per-second-counts-windows",
        "train.py",
        "result.iters * cfg.batch_size * block_size /",
        "result.iters * cfg.batch_size /",
        ("tests/test_train.py",),
    ),
    Mutation(
        "steps-in-the-mode-the-model-came-in",
        "train.py",
        "    model.train()\n",
        "",
        ("tests/test_train.py",),
    ),
    Mutation(
        "evaluations-in-training-mode",
        "train.py",
        "with evaluating(self.model):",
        "if True:",
        ("tests/test_train.py",),
    ),
    Mutation(
        "attend-copies-shared-heads",
        "attention.py",
        "    gqa = n_rep > 1\n",
        "    k, v, gqa = repeat_kv(k, n_rep), repeat_kv(v, n_rep), False\n",
        ("tests/test_attend.py",),
    ),
    # the grading engine's isolation, limits and wire (issue 36): each caught by
    # tests/test_grading_isolation.py
    Mutation(
        "wire-frame-out-of-turn-accepted",
        "attnbook_grader/wire.py",
        '_require(frame.get("seq") == seq and type(frame.get("seq")) is int, "out of turn")',
        '_require(True, "out of turn")',
        (
            "tests/test_grading_isolation.py::test_frames_out_of_turn_or_malformed_are_refused",
        ),
    ),
    Mutation(
        "wire-cell-index-unchecked",
        "attnbook_grader/wire.py",
        '_require(type(value) is int and 0 <= value < n, f"cell index {value!r}")',
        '_require(type(value) is int, f"cell index {value!r}")',
        (
            "tests/test_grading_isolation.py::test_frames_out_of_turn_or_malformed_are_refused",
        ),
    ),
    Mutation(
        "wire-tensor-subclass-crosses",
        "attnbook_grader/wire.py",
        "type(value) in (torch.Tensor, torch.nn.Parameter)  # a subclass: opaque",
        "isinstance(value, torch.Tensor)",
        (
            "tests/test_grading_isolation.py::test_subclasses_cross_opaque_and_their_facts_name_them",
        ),
    ),
    Mutation(
        "facts-subclass-overrides-on",
        "attnbook_grader/facts.py",
        "with torch._C.DisableTorchFunctionSubclass():  # a subclass's overrides: off",
        "if True:",
        (
            "tests/test_grading_isolation.py::test_subclasses_cross_opaque_and_their_facts_name_them",
        ),
    ),
    Mutation(
        "verdicts-subclass-result-allowed",
        "attnbook_grader/verdicts.py",
        '        if item.get("subclass"):',
        "        if False:",
        (
            "tests/test_grading_isolation.py::test_subclasses_cross_opaque_and_their_facts_name_them",
        ),
    ),
    Mutation(
        "child-call-limit-ignored",
        "attnbook_grader/child.py",
        "deadline = min(now + CALL_SECONDS, self.question_deadline)",
        "deadline = self.question_deadline",
        (
            "tests/test_grading_isolation.py::test_an_endless_loop_costs_its_question_only",
        ),
    ),
    Mutation(
        "child-lost-call-forgotten",
        "attnbook_grader/child.py",
        "self.lost.setdefault(name, why)",
        "pass",
        (
            "tests/test_grading_isolation.py::test_an_endless_loop_costs_its_question_only",
        ),
    ),
    Mutation(
        "child-looping-cell-not-skipped",
        "attnbook_grader/child.py",
        "if cell < 0 or cell in self.skipped:",
        "if True:",
        ("tests/test_grading_isolation.py::test_a_looping_or_forging_cell_is_skipped",),
    ),
    Mutation(
        "sandbox-fds-kept",
        "attnbook_grader/sandbox.py",
        "_close_fds(conn.fileno())",
        "pass",
        (
            "tests/test_grading_isolation.py::test_the_submission_sees_and_keeps_nothing_of_the_graders[namespaces]",
        ),
    ),
    Mutation(
        "processes-no-file-size-limit",
        "attnbook_grader/processes.py",
        "(resource.RLIMIT_FSIZE, FILE_BYTES),",
        "",
        (
            "tests/test_grading_isolation.py::test_the_submission_sees_and_keeps_nothing_of_the_graders[namespaces]",
        ),
    ),
    Mutation(
        "engine-reference-not-restarted",
        "attnbook_grader/engine.py",
        "reference.refresh()",
        "pass",
        (
            "tests/test_grading_isolation.py::test_a_reference_that_died_is_started_again",
        ),
    ),
    Mutation(
        "engine-maxima-lost",
        "attnbook_grader/engine.py",
        "maxima = {q: float(f.possible) for q, f in files.items()}",
        "maxima = {q: 0.0 for q in files}",
        (
            "tests/test_grading_isolation.py::test_an_endless_loop_costs_its_question_only",
        ),
    ),
    # the wire's layouts (issue 36, item 7): tests/test_grading_wire_layout.py
    Mutation(
        "layout-bounds-unchecked",
        "attnbook_grader/layout.py",
        "    if low < 0 or high + itemsize > nbytes:",
        "    if False:",
        ("tests/test_grading_wire_layout.py::test_the_error_names_the_bound_broken",),
    ),
    Mutation(
        "layout-views-get-storages-of-their-own",
        "attnbook_grader/layout.py",
        '    key = ("torch", storage.data_ptr(), storage.nbytes())',
        '    key = ("torch", id(t))',
        (
            "tests/test_grading_wire_layout.py::test_views_of_one_tensor_in_one_frame_arrive_as_views_of_one_storage",
        ),
    ),
    Mutation(
        "session-in-place-rule-compares-the-frame",
        "attnbook_grader/session.py",
        "if _values(old) != _values(new) and not _is_generator(now)",
        "if not _is_generator(now)",
        (
            "tests/test_grading_wire_layout.py::test_a_child_gets_the_layout_and_the_in_place_rule_names_the_input_written",
        ),
    ),
]


def target(mutation: Mutation, package: Path = PACKAGE) -> Path:
    """The file `mutation` edits, in `package` (a copy of attnbook; the engine's copy lies
    beside it, as in the checkout's default: grader/src/attnbook_grader)."""
    if mutation.path.startswith(f"{GRADER.name}/"):
        engine = package.parent / GRADER.name if package != PACKAGE else GRADER
        return engine / mutation.path.removeprefix(f"{GRADER.name}/")
    return package / mutation.path


def apply(mutation: Mutation, package: Path) -> None:
    """Edit the copy of the package in `package` (the engine's: beside it); a clear error if
    the line is not there once."""
    path = target(mutation, package)
    text = path.read_text()
    if text.count(mutation.old) != 1:
        raise ValueError(
            f"{mutation.name}: {mutation.old!r} occurs {text.count(mutation.old)} times "
            f"in {mutation.path}, not once: update the mutation list"
        )
    path.write_text(text.replace(mutation.old, mutation.new))


def run(mutation: Mutation, timeout: float) -> tuple[str, float]:
    """Run the unit tests against a mutated copy -> (the first failing test or a verdict, seconds)."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        package = Path(tmp) / "attnbook"
        for source, copy in ((PACKAGE, package), (GRADER, Path(tmp) / GRADER.name)):
            shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
        apply(mutation, package)
        env = {**os.environ, "PYTHONPATH": tmp, "PYTHONDONTWRITEBYTECODE": "1"}
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-x",
            "-q",
            "-rf",
            "-p",
            "no:cacheprovider",
            *mutation.first,
            *(t for t in TESTS if t not in mutation.first),
        ]
        try:
            done = subprocess.run(
                command,
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return "TIMEOUT (not caught)", time.perf_counter() - start
    failed = re.search(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", done.stdout, re.MULTILINE)
    if done.returncode == 0:
        return "NOT CAUGHT", time.perf_counter() - start
    return (
        failed.group(1) if failed else f"pytest exit {done.returncode}"
    ), time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        help="run only this mutation (repeatable)",
    )
    parser.add_argument(
        "--timeout", type=float, default=600, help="seconds per mutation (default 600)"
    )
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    unknown = set(args.only or ()) - {m.name for m in MUTATIONS}
    if unknown:
        parser.error(
            f"unknown mutation(s) {sorted(unknown)}; have {[m.name for m in MUTATIONS]}"
        )
    width = max(len(m.name) for m in chosen)
    print(f"{'mutation':{width}s}  {'seconds':>7s}  caught by")
    missed = 0
    for mutation in chosen:
        verdict, seconds = run(mutation, args.timeout)
        missed += verdict.startswith(("NOT CAUGHT", "TIMEOUT"))
        print(f"{mutation.name:{width}s}  {seconds:7.1f}  {verdict}", flush=True)
    print(f"{len(chosen) - missed} of {len(chosen)} mutations caught")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
