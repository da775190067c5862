"""Classic wrong answers to exercise 10, as text edits of the reference solution:
label -> [(old, new), ...]. `tools/exercises.py prove` proves each loses points (the
format and the rules are in tools/exercise_proof.py). Question 4 has a pool of variants
(tools/exercise_pools_ex10.py): the mean-ablation task's answer inserts one line before the
return, so the book's mistakes read the same there; the mistakes of that line are written at
both tasks (`AtEachTask`)."""

from tools.exercise_pools_ex10 import LINES
from tools.exercise_variants import AtEachTask

_DRAW = "    x = torch.randint(1, vocab_size, (batch_size, n), generator=generator)  # (B, n)\n"
_SCORE = "    return weights[:, :, q, q - n + 1].mean(dim=(0, 2))  # (B, H, n) -> (H,)"
_PREV = "    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(0, 2))  # (B, H, T-1)"
_ZERO = "    out[..., head * d_head : (head + 1) * d_head] = 0.0\n"
_RETURN = "    return out\n"  # the mean-ablation task inserts its line before it
_ADDED = "    a, b = head * d_head, (head + 1) * d_head\n    out[..., a:b] += {}\n"
_PREV_HEAD = "    prev_head = int(previous_token_score(weights[0]).argmax())\n"
_IND_HEAD = "    induction_head = int(induction_score(weights[1], n, True).argmax())\n"
_FIRST = "    first = 1 + n  # the position of x_1 in the second copy\n"
_PRED = "    predicted = logits[:, first : first + n - 1]  # (B, n - 1, V): predict x_2 .. x_n\n"
_TARGETS = "    targets = tokens[:, first + 1 : first + n]  # (B, n - 1)\n"
_CE = "    loss = torch.nn.functional.cross_entropy(predicted.transpose(1, 2), targets)\n"

WRONG_ANSWERS = {
    # q1: the repeated batch
    "repeated_batch: tokens drawn from 0 .. V - 1 (the start token among them)": [
        (_DRAW, "    x = torch.randint(0, vocab_size, (batch_size, n), generator=generator)\n"),
    ],
    "repeated_batch: the second copy drawn afresh, not repeated": [
        ("    return torch.cat([*parts, x, x], dim=1)",
         "    y = torch.randint(1, vocab_size, (batch_size, n), generator=generator)\n"
         "    return torch.cat([*parts, x, y], dim=1)"),
    ],
    "repeated_batch: BOS whatever bos says": [
        ("    parts = [torch.zeros(batch_size, 1, dtype=torch.long)] if bos else []",
         "    parts = [torch.zeros(batch_size, 1, dtype=torch.long)]"),
    ],
    "repeated_batch: the copy interleaved token by token (x1 x1 x2 x2 ...)": [
        ("    return torch.cat([*parts, x, x], dim=1)",
         "    return torch.cat([*parts, x.repeat_interleave(2, dim=1)], dim=1)"),
    ],
    # q2: the induction score
    "induction_score: the diagonal at offset -n (the earlier occurrence itself)": [
        (_SCORE, "    return weights[:, :, q, q - n].mean(dim=(0, 2))"),
    ],
    "induction_score: the diagonal at offset 2 - n": [
        (_SCORE, "    return weights[:, :, q, q - n + 2].mean(dim=(0, 2))"),
    ],
    "warned (q2): induction_score starts the second copy at n whatever bos says (BOS forgotten)": [
        ("    first = int(bos) + n  # the first query of the second copy",
         "    first = n  # the first query of the second copy"),
    ],
    "induction_score: the whole diagonal, first-copy queries included": [
        (_SCORE, "    return weights.diagonal(offset=1 - n, dim1=-2, dim2=-1).mean(dim=(0, 2))"),
    ],
    "induction_score: the second copy placed as if there were always a BOS": [
        ("    first = int(bos) + n  # the first query of the second copy",
         "    first = 1 + n"),
    ],
    "induction_score: averaged over the heads, not the batch": [
        (_SCORE, "    return weights[:, :, q, q - n + 1].mean(dim=(1, 2))"),
    ],
    # q3: the previous-token score
    "previous_token_score: query 0 counted as a zero": [
        (_PREV, "    d = weights.diagonal(offset=-1, dim1=-2, dim2=-1)\n"
                "    return d.sum(dim=2).mean(dim=0) / weights.shape[-1]"),
    ],
    "previous_token_score: the diagonal above the main one (the next token)": [
        (_PREV, "    return weights.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=(0, 2))"),
    ],
    "previous_token_score: the main diagonal (the token itself)": [
        (_PREV, "    return weights.diagonal(dim1=-2, dim2=-1).mean(dim=(0, 2))"),
    ],
    # q4: the ablation hook's body
    "zero_head: zeroes z in place and returns it (no copy)": [
        ("    out = z.clone()  # the caller's tensor stays as it is\n", "    out = z\n"),
    ],
    "zero_head: columns head * d_head to head + d_head (the wrong width)": [
        (_ZERO, "    out[..., head * d_head : head + d_head] = 0.0\n"),
    ],
    "zero_head: head counted from 1": [
        (_ZERO, "    out[..., (head - 1) * d_head : head * d_head] = 0.0\n"),
    ],
    # q4 at each task of its pool (the book's zero ablation, the roster's mean ablation): the
    # mean over another axis, the mean detached, and a correct mean written out
    "zero_head: the mean over the batch and the positions together (at the book's task, added to the zeroed columns)":
        AtEachTask([(_RETURN, _ADDED.format("z[..., a:b].mean(dim=tuple(range(z.dim() - 1)))") + _RETURN)],
                   mean=[(LINES["mean"], _ADDED.format("z[..., a:b].mean(dim=tuple(range(z.dim() - 1)))"))]),
    "zero_head: the mean over the positions (dim -2), not the batch (at the book's task, added to the zeroed columns)":
        AtEachTask([(_RETURN, _ADDED.format("z[..., a:b].mean(-2, keepdim=True)") + _RETURN)],
                   mean=[(LINES["mean"], _ADDED.format("z[..., a:b].mean(-2, keepdim=True)"))]),
    "zero_head: the mean over the head's own columns (dim -1) (at the book's task, added to the zeroed columns)":
        AtEachTask([(_RETURN, _ADDED.format("z[..., a:b].mean(-1, keepdim=True)") + _RETURN)],
                   mean=[(LINES["mean"], _ADDED.format("z[..., a:b].mean(-1, keepdim=True)"))]),
    "zero_head: the mean detached, the values right, no gradient through it (at the book's task, the copy detached)":
        AtEachTask([(_RETURN, "    return out.detach()\n")],
                   mean=[(LINES["mean"], _ADDED.format("z[..., a:b].mean(0).detach()"))]),
    "correct: the mean written out as a sum over the batch divided by B (at the book's task, the zeros by *= 0)":
        AtEachTask([(_ZERO + _RETURN, "    out[..., head * d_head : (head + 1) * d_head] *= 0\n" + _RETURN)],
                   mean=[(LINES["mean"], "    a, b = head * d_head, (head + 1) * d_head\n"
                                         "    out[..., a:b] = z[..., a:b].sum(dim=0) / z.shape[0]  # the mean, written out\n")]),
    "zero_head: zeroes every head but `head`": [
        (_ZERO, "    out = torch.zeros_like(z)\n"
                "    out[..., head * d_head : (head + 1) * d_head] = z[..., head * d_head : (head + 1) * d_head]\n"),
    ],
    "zero_head: indexes z[:, :, a:b], so only a 3-D z works": [
        (_ZERO, "    out[:, :, head * d_head : (head + 1) * d_head] = 0.0\n"),
    ],
    "zero_head: multiplies z by a mask of ones made without dtype= (float32), so a bfloat16 z comes back float32": [
        ("    out = z.clone()  # the caller's tensor stays as it is\n", "    mask = torch.ones(z.shape[-1])\n"),
        (_ZERO, "    mask[head * d_head : (head + 1) * d_head] = 0.0\n    out = z * mask\n"),
    ],
    # q6: naming the heads and the loss on the repeat
    "find_heads: the induction head looked for in layer 0": [
        (_IND_HEAD, "    induction_head = int(induction_score(weights[0], n, True).argmax())\n"),
    ],
    # a head read from one sequence: the test worth half makes one sequence of the trained
    # model's batch the odd one (review 102, F2), so it costs what another head costs
    "find_heads: scores the first sequence of the batch only": [
        (_PREV_HEAD, "    prev_head = int(previous_token_score(weights[0][:1]).argmax())\n"),
        (_IND_HEAD, "    induction_head = int(induction_score(weights[1][:1], n, True).argmax())\n"),
    ],
    "find_heads: the previous-token head scored on the first sequence of the batch only": [
        (_PREV_HEAD, "    prev_head = int(previous_token_score(weights[0][:1]).argmax())\n"),
    ],
    "find_heads: the weakest heads (argmin)": [
        (_PREV_HEAD, "    prev_head = int(previous_token_score(weights[0]).argmin())\n"),
        (_IND_HEAD, "    induction_head = int(induction_score(weights[1], n, True).argmin())\n"),
    ],
    "warned (q6): find_heads picks the induction head by previous_token_score on layer 1 (a copy-paste slip)": [
        (_IND_HEAD, "    induction_head = int(previous_token_score(weights[1]).argmax())\n"),
    ],
    "warned (q6): find_heads returns the best scores truncated to ints, not their heads": [
        (_PREV_HEAD, "    prev_head = int(previous_token_score(weights[0]).max())\n"),
        (_IND_HEAD, "    induction_head = int(induction_score(weights[1], n, True).max())\n"),
    ],
    "warned (q6): repeat_loss takes the log-softmax over the positions (dim=1), not the vocabulary": [
        (_CE, "    logp = torch.log_softmax(logits, dim=1)[:, first : first + n - 1]\n"
              "    loss = torch.nn.functional.nll_loss(logp.transpose(1, 2), targets)\n"),
    ],
    "warned (q2): induction_score casts up to float64 (.double()), the values exact": [
        (_SCORE, "    return weights.double()[:, :, q, q - n + 1].mean(dim=(0, 2))"),
    ],
    "warned (q3): previous_token_score casts up to float64 (.double()), the values exact": [
        (_PREV, "    return weights.double().diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(0, 2))"),
    ],
    "find_heads: returns 0-d tensors, not ints": [
        (_PREV_HEAD, "    prev_head = previous_token_score(weights[0]).argmax()\n"),
        (_IND_HEAD, "    induction_head = induction_score(weights[1], n, True).argmax()\n"),
    ],
    "repeat_loss: x_1 of the second copy counted too (n tokens, one unpredictable)": [
        (_PRED, "    predicted = logits[:, first - 1 : first + n - 1]\n"),
        (_TARGETS, "    targets = tokens[:, first : first + n]\n"),
    ],
    "repeat_loss: logits[:, t] read as predicting the token at t (no shift)": [
        (_PRED, "    predicted = logits[:, first + 1 : first + n]\n"),
    ],
    "repeat_loss: the first copy instead of the second": [
        (_FIRST, "    first = 1\n"),
    ],
    "repeat_loss: probabilities (a softmax first) passed to cross_entropy, which wants logits": [
        (_CE, "    probs = torch.softmax(predicted, dim=-1)\n"
              "    loss = torch.nn.functional.cross_entropy(probs.transpose(1, 2), targets)\n"),
    ],
    "repeat_loss: summed over the tokens, not averaged": [
        (_CE, "    loss = torch.nn.functional.cross_entropy(predicted.transpose(1, 2), targets, "
              "reduction=\"sum\")\n"),
    ],
    # q5: the conceptual question
    "what_k_composition_measures: (a), the product in the wrong order": [
        ('    return "c"', '    return "a"')
    ],
    "what_k_composition_measures: (b), head j's output on the query side (Q-composition)": [
        ('    return "c"', '    return "b"')
    ],
    "what_k_composition_measures: (d), W_OV transposed (row vectors read as columns)": [
        ('    return "c"', '    return "d"')
    ],
    "what_k_composition_measures: the right letter in upper case": [
        ('    return "c"', '    return "C"')
    ],
    # the house rules
    "shortcut: induction_score hands the work to attnbook.induction.induction_score": [
        ("    first = int(bos) + n  # the first query of the second copy\n",
         "    from attnbook.induction import induction_score as score\n"
         "    return score(weights, n, bos)\n"),
    ],
    "shortcut: repeated_batch hands the work to attnbook.induction.repeated_tokens": [
        (_DRAW,
         "    from attnbook.induction import repeated_tokens\n"
         "    return repeated_tokens(batch_size, n, vocab_size, generator, bos)\n"),
    ],
    # the dtype rule: scores and copies come back in the dtype of their input (float32 or float64)
    "warned (q2, q3, q4): float32 results, built from Python numbers or with .float(), whatever the input": [
        (_SCORE, "    scores = [[float(weights[b, h, q, q - n + 1].mean()) for b in range(weights.shape[0])]\n"
                 "              for h in range(weights.shape[1])]\n"
                 "    return torch.tensor(scores).mean(dim=1)"),
        (_PREV, "    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(0, 2)).float()"),
        ("    out = z.clone()  # the caller's tensor stays as it is\n",
         "    out = torch.zeros(z.shape)\n"
         "    out[...] = z\n"),
    ],
    # batch slips: a score or a loss read from one sequence, or one query, of the batch
    "warned (q2): induction_score reads the first sequence of the batch only": [
        (_SCORE, "    return weights[0, :, q, q - n + 1].mean(-1)"),
    ],
    "warned (q2): induction_score takes the largest over the batch, not the mean": [
        (_SCORE, "    return weights[:, :, q, q - n + 1].mean(dim=2).amax(dim=0)"),
    ],
    "warned (q2): induction_score reads the last query of the second copy only": [
        (_SCORE, "    return weights[:, :, -1, -n].mean(0)"),
    ],
    "warned (q2): induction_score slices the diagonal at offset 1 - n from entry n on "
    "(diagonal(...)[..., n:]: the last queries of the second copy only)": [
        (_SCORE, "    return weights.diagonal(offset=1 - n, dim1=-2, dim2=-1)[..., n:].mean(dim=(0, 2))"),
    ],
    "warned (q3): previous_token_score reads the first sequence of the batch only": [
        (_PREV, "    return weights[0].diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)"),
    ],
    "warned (q6): repeat_loss indexes logp[:, positions, tokens[:, positions + 1]] (every sequence's logits against every sequence's targets)": [
        (_PRED + _TARGETS + _CE,
         "    q = torch.arange(first, first + n - 1)  # the positions that predict x_2 .. x_n\n"
         "    logp = torch.log_softmax(logits, dim=-1)\n"
         "    loss = -logp[:, q, tokens[:, q + 1]].mean()\n"),
    ],
    "warned (q6): repeat_loss reads the first sequence of the batch only": [
        (_CE, "    loss = torch.nn.functional.cross_entropy(predicted[0], targets[0])\n"),
    ],
    "warned (q6): find_heads looks for the previous-token head in layer 1": [
        (_PREV_HEAD, "    prev_head = int(previous_token_score(weights[1]).argmax())\n"),
    ],
    "refused: every kind of tampering at once (TAMPER, run in the isolated child; the allowlist only notes it), and both functions wrong": [
        ("def induction_score(weights, n, bos):", TAMPER + "def induction_score(weights, n, bos):"),  # noqa: F821
        (_SCORE, "    return weights[:, :, q, q - n].mean(dim=(0, 2))"),
        (_PREV, "    return weights.diagonal(dim1=-2, dim2=-1).mean(dim=(0, 2))"),
    ],
}

WRONG_ANSWERS.update({  # correct answers written differently: they must score 100 %
    # the package's signature (bos=True by default) and chapter 10's call with two
    # arguments: grading q6 swaps in the reference's induction_score, called as the
    # student's own is (the reference has no default)
    "correct: induction_score(weights, n, bos=True), find_heads calling it with two arguments": [
        ("def induction_score(weights, n, bos):", "def induction_score(weights, n, bos=True):"),
        (_IND_HEAD, "    induction_head = int(induction_score(weights[1], n).argmax())\n"),
    ],
    # both layers' scores in one tensor: right, since the layers have the same number of
    # heads (the hidden tests' extra heads come one per layer)
    "correct: find_heads stacks the two layers' scores and takes argmax along the heads": [
        (_PREV_HEAD + _IND_HEAD,
         "    scores = torch.stack([previous_token_score(weights[0]), induction_score(weights[1], n, True)])\n"
         "    prev_head, induction_head = (int(h) for h in scores.argmax(dim=1))\n"),
    ],
    "correct: a batch built with repeat, scores with loops and torch.diagonal": [
        ("    parts = [torch.zeros(batch_size, 1, dtype=torch.long)] if bos else []\n"
         "    return torch.cat([*parts, x, x], dim=1)",
         "    body = x.repeat(1, 2)\n"
         "    if bos:\n"
         "        body = torch.nn.functional.pad(body, (1, 0), value=0)\n"
         "    return body"),
        (_SCORE,
         "    stripe = torch.diagonal(weights, offset=1 - n, dim1=2, dim2=3)\n"
         "    return stripe[..., int(bos) + 1 :].mean(dim=2).mean(dim=0)"),
        (_PREV,
         "    T = weights.shape[-1]\n"
         "    total = sum(weights[:, :, i, i - 1] for i in range(1, T))\n"
         "    return (total / (T - 1)).mean(dim=0)"),
        ("    out = z.clone()  # the caller's tensor stays as it is\n" + _ZERO,
         "    mask = torch.ones(z.shape[-1], dtype=z.dtype)\n"
         "    mask[head * d_head : (head + 1) * d_head] = 0\n"
         "    out = z * mask\n"),
        (_PREV_HEAD + _IND_HEAD,
         "    prev_scores = previous_token_score(weights[0]).tolist()\n"
         "    ind_scores = induction_score(weights[1], n, True).tolist()\n"
         "    prev_head = max(range(len(prev_scores)), key=lambda h: prev_scores[h])\n"
         "    induction_head = max(range(len(ind_scores)), key=lambda h: ind_scores[h])\n"),
        (_PRED + _TARGETS + _CE,
         "    logp = torch.log_softmax(logits[:, n + 1 : 2 * n].double(), dim=-1)\n"
         "    picked = logp.gather(-1, tokens[:, n + 2 :, None])  # (B, n - 1, 1)\n"
         "    loss = -picked.mean()\n"),
    ],
})
WRONG_ANSWERS.update({  # layouts: answers that work only on freshly made, contiguous tensors
    "induction_score: batch and heads flattened with .view (fails on weights in another layout)": [
        (_SCORE,
         "    B, H, T, _ = weights.shape\n"
         "    flat = weights.view(B * H, T, T)\n"
         "    return flat[:, q, q - n + 1].reshape(B, H, n).mean(dim=(0, 2))"),
    ],
    "previous_token_score: batch and heads flattened with .view (fails on weights in another layout)": [
        (_PREV,
         "    B, H, T, _ = weights.shape\n"
         "    stripe = weights.view(B * H, T, T).diagonal(offset=-1, dim1=1, dim2=2)\n"
         "    return stripe.reshape(B, H, T - 1).mean(dim=(0, 2))"),
    ],
    "zero_head: the copy's rows flattened with .view (fails on a z in another layout)": [
        (_ZERO,
         "    rows = out.view(-1, out.shape[-1])  # one row per token\n"
         "    rows[:, head * d_head : (head + 1) * d_head] = 0.0\n"),
    ],
    "repeat_loss: the predictions flattened with .view (right for a batch of one only)": [
        (_CE,
         "    loss = torch.nn.functional.cross_entropy(predicted.view(-1, predicted.shape[-1]), targets.reshape(-1))\n"),
    ],
})
WRONG_ANSWERS.update({  # the same flattening made safe: correct on any layout
    # four functions changed in one notebook, find_heads calling the student's own scores
    # inside int(...) as the worked solution does: once 84 % (q2 read as calling the
    # package's induction_score, issue 44), so the four stay together here
    "correct: .view after .contiguous() (induction_score, previous_token_score, zero_head), "
    ".reshape in repeat_loss": [
        (_SCORE,
         "    B, H, T, _ = weights.shape\n"
         "    flat = weights.contiguous().view(B * H, T, T)\n"
         "    return flat[:, q, q - n + 1].reshape(B, H, n).mean(dim=(0, 2))"),
        (_PREV,
         "    B, H, T, _ = weights.shape\n"
         "    stripe = weights.contiguous().view(B * H, T, T).diagonal(offset=-1, dim1=1, dim2=2)\n"
         "    return stripe.reshape(B, H, T - 1).mean(dim=(0, 2))"),
        ("    out = z.clone()  # the caller's tensor stays as it is\n" + _ZERO,
         "    out = z.contiguous().clone()\n"
         "    rows = out.view(-1, out.shape[-1])\n"
         "    rows[:, head * d_head : (head + 1) * d_head] = 0.0\n"),
        (_CE,
         "    loss = torch.nn.functional.cross_entropy(predicted.reshape(-1, predicted.shape[-1]), targets.reshape(-1))\n"),
    ],
})

WRONG_ANSWERS.update({
    # review 57 (issue 45): a window one query early scores the trained model's heads the same
    # (n - 1 of its n queries still land on induction keys); a public hand pattern tells them apart,
    # and (review 86) the test worth half adds a third head to layer 1 that wins only that window
    "warned (q6): find_heads calls induction_score(weights[1], True, n) (n and bos swapped)": [
        (_IND_HEAD, "    induction_head = int(induction_score(weights[1], True, n).argmax())\n"),
    ],
    "warned (q6): find_heads calls induction_score with bos=False on a batch with BOS (the window one query early)": [
        (_IND_HEAD, "    induction_head = int(induction_score(weights[1], n, False).argmax())\n"),
    ],
    # the core test names the type expected and the type got before it compares values
    "warned (q6): repeat_loss returns the 0-d tensor, not float(loss)": [
        ("    return float(loss)\n", "    return loss\n"),
    ],
})

WRONG_ANSWERS.update({  # review 60 (issue 45)
    "warned (q6): find_heads returns a list of the right ints, not a tuple": [
        ("    return prev_head, induction_head", "    return [prev_head, induction_head]"),
    ],
    "warned (q6): repeat_loss: cross_entropy on (B, n - 1, V) logits, the classes not moved to axis 1": [
        ("cross_entropy(predicted.transpose(1, 2), targets)", "cross_entropy(predicted, targets)"),
    ],
})

WRONG_ANSWERS.update({
    # review 64 (F8, F9, F10): each is told what it got wrong, not another slip's fix
    "warned (q6): repeat_loss runs nll_loss on the raw logits (not log-probabilities)": [
        ("    loss = torch.nn.functional.cross_entropy(predicted.transpose(1, 2), targets)\n",
         "    loss = torch.nn.functional.nll_loss(predicted.transpose(1, 2), targets)\n"),
    ],
    "warned (q4): zero_head zeroes the columns head .. head + d_head": [
        (_ZERO, "    out[..., head : head + d_head] = 0.0\n"),
    ],
    "warned (q4): zero_head indexes out[:, a:b] (the second axis, whatever the rank)": [
        (_ZERO, "    out[:, head * d_head : (head + 1) * d_head] = 0.0\n"),
    ],
    "warned (q3): previous_token_score takes the diagonal with its dims swapped (keys, then queries)": [
        (_PREV, "    return weights.diagonal(offset=-1, dim1=-1, dim2=-2).mean(dim=(0, 2))"),
    ],
})

WRONG_ANSWERS.update({
    # review 64 (F12): NumPy ints of the right heads cost what a list costs: the public and window checks
    "warned (q6): find_heads returns NumPy ints (np.argmax), not Python ints": [
        (_PREV_HEAD, "    import numpy as np\n    prev_head = np.argmax(previous_token_score(weights[0]).numpy())\n"),
        (_IND_HEAD, "    induction_head = np.argmax(induction_score(weights[1], n, True).numpy())\n"),
    ],
})

WRONG_ANSWERS.update({
    # review 64 (F13): the right letter in parentheses keeps 0.8 (the format costs its two 0.1 tests)
    "what_k_composition_measures: the right letter written \"(c)\"": [
        ('    return "c"', '    return "(c)"'),
    ],
})

WRONG_ANSWERS.update({
    # review 64 (F11, F15, F16, F23): told the bound, the dtype, the generator, the shape, the order
    "warned (q1): repeated_batch draws randint(1, vocab_size + 1) (a token may equal vocab_size)": [
        (_DRAW, "    x = torch.randint(1, vocab_size + 1, (batch_size, n), generator=generator)  # (B, n)\n"),
    ],
    "warned (q1): repeated_batch: the start column made without dtype= (float), so the batch is float": [
        ("    parts = [torch.zeros(batch_size, 1, dtype=torch.long)] if bos else []\n",
         "    parts = [torch.zeros(batch_size, 1)] if bos else []\n"),
    ],
    "warned (q1): repeated_batch draws from PyTorch's global generator (no generator=)": [
        (_DRAW, "    x = torch.randint(1, vocab_size, (batch_size, n))  # (B, n)\n"),
    ],
    # review 86 (F4): torch.diagonal's default dims, 0 and 1, are the batch and the heads
    "warned (q3): previous_token_score: torch.diagonal(weights, offset=-1) with its default dims 0 and 1": [
        (_PREV, "    return torch.diagonal(weights, offset=-1).mean(dim=(0, 2))"),
    ],
    "warned (q3): previous_token_score averaged over the heads, not the batch (one score per sequence)": [
        (_PREV, "    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(1, 2))"),
    ],
    "warned (q6): find_heads returns (induction_head, prev_head), the order swapped": [
        ("    return prev_head, induction_head", "    return induction_head, prev_head"),
    ],
})

WRONG_ANSWERS.update({
    # review 88 (F3): the induction head sought over both layers names a head of layer 0 when one of
    # them has the higher induction score (a public hand pattern, and the core test's third head)
    "warned (q6): find_heads seeks the induction head in both layers (torch.maximum of the two layers' scores)": [
        (_IND_HEAD,
         "    both = torch.maximum(induction_score(weights[0], n, True), induction_score(weights[1], n, True))\n"
         "    induction_head = int(both.argmax())\n"),
    ],
    "warned (q6): find_heads seeks the induction head in both layers (their scores stacked, argmax % H)": [
        (_IND_HEAD,
         "    both = torch.stack([induction_score(weights[0], n, True), induction_score(weights[1], n, True)])\n"
         "    induction_head = int(both.argmax()) % both.shape[1]\n"),
    ],
})

WRONG_ANSWERS.update({
    # review 93 (F1): a float32 copy of a float64 z rounds its values by less than the stated 1e-6,
    # so it costs the dtype only; (F3) a loss without its minus sign is told so
    "warned (q4): zero_head copies z into torch.zeros(z.shape) (float32 whatever z's dtype)": [
        ("    out = z.clone()  # the caller's tensor stays as it is\n",
         "    out = torch.zeros(z.shape)\n"
         "    out[...] = z\n"),
    ],
    "warned (q6): repeat_loss returns the mean log-probability of the targets (the minus sign dropped)": [
        (_CE, "    loss = torch.log_softmax(predicted, -1).gather(-1, targets[..., None]).mean()\n"),
    ],
    # review 98 (F3): the classic stabilisation written in place: the right value, but the
    # caller's logits changed (every repeat_loss test checks its inputs)
    "warned (q6): repeat_loss subtracts the row maxima from logits in place (the value right)": [
        ("    first = 1 + n  # the position of x_1 in the second copy\n",
         "    logits -= logits.max(-1, keepdim=True).values\n"
         "    first = 1 + n  # the position of x_1 in the second copy\n"),
    ],
})

WRONG_ANSWERS.update({
    # review 102 (F3): a detached copy has the right values, but no gradient reaches z through it
    "warned (q4): zero_head zeroes a detached copy (z.detach().clone()): the values right, no gradient": [
        ("    out = z.clone()  # the caller's tensor stays as it is\n", "    out = z.detach().clone()\n"),
    ],
    # review 98 (F6, F4): the high of randint one too low; the next-token loss over every position
    "warned (q1): repeated_batch draws randint(1, vocab_size - 1) (no token equals vocab_size - 1)": [
        (_DRAW, "    x = torch.randint(1, vocab_size - 1, (batch_size, n), generator=generator)  # (B, n)\n"),
    ],
    "warned (q6): repeat_loss: the next-token loss over every position of the sequence": [
        (_PRED + _TARGETS, "    predicted = logits[:, :-1]  # (B, 2n, V)\n    targets = tokens[:, 1:]  # (B, 2n)\n"),
    ],
})

WRONG_ANSWERS.update({
    # review 106 (F1): the chapter's model has two heads per layer, the question H; and the
    # winners per sequence counted instead of the scores averaged over the batch
    "find_heads: compares heads 0 and 1 only (the chapter's two heads per layer)": [
        (_PREV_HEAD + _IND_HEAD,
         "    p, s = previous_token_score(weights[0]), induction_score(weights[1], n, True)\n"
         "    prev_head = 0 if p[0] >= p[1] else 1\n"
         "    induction_head = 0 if s[0] >= s[1] else 1\n"),
    ],
    "find_heads: a vote of each sequence's best head, not the best mean score": [
        (_PREV_HEAD + _IND_HEAD,
         "    B = weights[0].shape[0]\n"
         "    prev = [previous_token_score(weights[0][b : b + 1]).argmax() for b in range(B)]\n"
         "    ind = [induction_score(weights[1][b : b + 1], n, True).argmax() for b in range(B)]\n"
         "    prev_head = int(torch.stack(prev).mode().values)\n"
         "    induction_head = int(torch.stack(ind).mode().values)\n"),
    ],
    # review 106 (F3): a wrong letter in another form fails the format check too
    "what_k_composition_measures: a wrong letter in upper case (\"B\")": [
        ('    return "c"', '    return "B"')
    ],
    "what_k_composition_measures: a wrong letter written \"(b)\"": [
        ('    return "c"', '    return "(b)"')
    ],
})

WRONG_ANSWERS.update({
    # review 109 (F4): two slips the page's prose names, measured so its tables can hold them
    "warned (q2): induction_score averages every query of the second copy but the last": [
        ("    q = torch.arange(first, first + n)  # (n,)\n",
         "    q = torch.arange(first, first + n - 1)  # (n - 1,)\n"),
    ],
    "zero_head: the slice ends one short (head * d_head : (head + 1) * d_head - 1)": [
        (_ZERO, "    out[..., head * d_head : (head + 1) * d_head - 1] = 0.0\n"),
    ],
    "warned (q4): zero_head unpacks B, T, D = z.shape (a 3-D z only, a ValueError for others)": [
        (_ZERO, "    B, T, D = z.shape\n    out[:, :, head * d_head : (head + 1) * d_head] = 0.0\n"),
    ],
})

WRONG_ANSWERS.update({
    # review 122: weights renormalised in place (the value right, the caller's weights changed),
    # and torch.diagonal's default dims reduced to another shape (an empty diagonal, a NaN mean)
    "warned (q2): induction_score renormalises the weights in place (weights /= their row sums), the value right": [
        ("    first = int(bos) + n  # the first query of the second copy\n",
         "    weights /= weights.sum(-1, keepdim=True)  # rows that sum to 1\n"
         "    first = int(bos) + n\n"),
    ],
    "warned (q3): previous_token_score renormalises the weights in place (weights /= their row sums), the value right": [
        (_PREV, "    weights /= weights.sum(-1, keepdim=True)  # rows that sum to 1\n" + _PREV),
    ],
    "warned (q3): previous_token_score: torch.diagonal(weights, offset=-1).mean(dim=(0, 1)), the default dims": [
        (_PREV, "    return torch.diagonal(weights, offset=-1).mean(dim=(0, 1))"),
    ],
})

WRONG_ANSWERS.update({
    # review 124: the right loss as a 0-d NumPy array (a type slip, F1); the loss's slices off by
    # one, so cross_entropy raises ValueError (F2); a catch-all that returns 0.0 (F3); how peaked
    # each query is, not its weight on one key (F4); the diagonal's offset written for BOS (F6);
    # the perplexity (F5)
    "warned (q6): repeat_loss returns the right loss as a 0-d NumPy array (loss.detach().numpy())": [
        ("    return float(loss)\n", "    return loss.detach().numpy()\n"),
    ],
    "warned (q6): repeat_loss reads the logits at n + 1 .. 2n against the tokens from n + 2 (a ValueError)": [
        (_PRED, "    predicted = logits[:, n + 1 : 2 * n + 1]\n"),
        (_TARGETS, "    targets = tokens[:, n + 2 :]\n"),
        (_CE, "    V = logits.shape[-1]\n"
              "    loss = torch.nn.functional.cross_entropy(predicted.reshape(-1, V), targets.reshape(-1))\n"),
    ],
    "warned (q6): repeat_loss without the transpose, inside a try that returns 0.0 on any error": [
        (_CE, "    try:\n"
              "        loss = torch.nn.functional.cross_entropy(predicted, targets)\n"
              "    except Exception:\n"
              "        return 0.0\n"),
    ],
    "warned (q6): repeat_loss returns the perplexity, exp(loss)": [
        ("    return float(loss)\n", "    return float(torch.exp(loss))\n"),
    ],
    "warned (q2): induction_score averages each second-copy query's largest weight, whatever its key": [
        (_SCORE, "    return weights[:, :, first:].max(dim=-1).values.mean(dim=(0, 2))"),
    ],
    "warned (q2): induction_score takes the last n rows' diagonal at offset 2 (right only with BOS)": [
        (_SCORE, "    return weights[..., -n:, :].diagonal(offset=2, dim1=-2, dim2=-1).mean(dim=(0, -1))"),
    ],
})

WRONG_ANSWERS.update({
    # review 125: queries counted by where their largest weight lands (F1); heads reshaped to the
    # public example's number, 4 (F5)
    "warned (q2): induction_score counts the queries whose argmax is key i - n + 1, not their weight": [
        (_SCORE, "    hit = weights[:, :, q, :].argmax(-1) == (q - n + 1)\n"
                 "    return hit.to(weights.dtype).mean(dim=(0, 2))"),
    ],
    "warned (q3): previous_token_score counts the queries whose argmax is key i - 1, not their weight": [
        (_PREV, "    hit = weights[:, :, 1:, :].argmax(-1) == torch.arange(weights.shape[-1] - 1)\n"
                "    return hit.to(weights.dtype).mean(dim=(0, 2))"),
    ],
    "warned (q4): zero_head reshapes z into 4 heads, the public example's number": [
        (_ZERO, "    out = out.reshape(*z.shape[:-1], 4, d_head)\n"
                "    out[..., head, :] = 0.0\n"
                "    out = out.reshape(z.shape)\n"),
    ],
})

WRONG_ANSWERS.update({
    # review 126: answers right only at the public example's size (T = 6 in q3, n = 3 in q6)
    "warned (q3): previous_token_score reads the queries 1..5 only (the public example's T = 6)": [
        (_PREV, "    i = torch.arange(1, 6)\n    return weights[:, :, i, i - 1].mean(dim=(0, 2))"),
    ],
    "warned (q6): repeat_loss reads the positions of the public example (n = 3) whatever n is": [
        (_PRED, "    predicted = logits[:, 4:6]\n"),
        (_TARGETS, "    targets = tokens[:, 5:7]\n"),
    ],
})

WRONG_ANSWERS.update({
    # review 127: the right weights summed and divided by T, not averaged over the n queries
    "warned (q2): induction_score divides the second copy's summed weights by T, not n": [
        (_SCORE, "    return weights[:, :, q, q - n + 1].sum(2).mean(0) / weights.shape[-1]"),
    ],
})

WRONG_ANSWERS.update({
    # review 127's leftovers: a sum without the mean; the BOS column zeroed in place (the value
    # right); positions fixed at the public example's n = 4; a catch-all around a 3-D-only slice
    "warned (q2): induction_score sums the second copy's weights over the queries, no mean": [
        (_SCORE, "    return weights[:, :, q, q - n + 1].sum(2).mean(0)"),
    ],
    "warned (q2): induction_score zeroes the BOS column of the weights in place (weights[..., 0] = 0), the value right": [
        ("    first = int(bos) + n  # the first query of the second copy\n",
         "    weights[..., 0] = 0.0  # BOS is never the key of an induction head\n"
         "    first = int(bos) + n\n"),
    ],
    "warned (q2): induction_score reads the positions of the first public example (n = 4) whatever n is": [
        ("    first = int(bos) + n  # the first query of the second copy\n"
         "    q = torch.arange(first, first + n)  # (n,)\n",
         "    first = int(bos) + 4\n"
         "    q = torch.arange(first, first + 4)\n"),
        (_SCORE, "    return weights[:, :, q, q - 3].mean(dim=(0, 2))"),
    ],
    "warned (q4): zero_head slices z[:, :, a:b] inside a try that returns z unchanged on any error": [
        (_ZERO, "    try:\n"
                "        out[:, :, head * d_head : (head + 1) * d_head] = 0.0\n"
                "    except Exception:\n"
                "        return out\n"),
    ],
})

WRONG_ANSWERS.update({
    # review 128: the loss's sum divided by n, not by the n - 1 tokens it adds up (F2); the heads
    # hard-coded (F3); the number of heads fixed at the chapter's 2 (F4); a slice one column too wide (F6)
    "warned (q6): repeat_loss divides the summed loss of the n - 1 predicted tokens by n": [
        (_CE, "    total = torch.nn.functional.cross_entropy(predicted.transpose(1, 2), targets, reduction='sum')\n"
              "    loss = total / (tokens.shape[0] * n)\n"),
    ],
    "find_heads: returns the chapter's heads, (1, 1), whatever the weights": [
        (_PREV_HEAD, "    prev_head = 1  # the chapter's previous-token head, 0.1\n"),
        (_IND_HEAD, "    induction_head = 1  # and its induction head, 1.1\n"),
    ],
    "warned (q3): previous_token_score loops over 2 heads, the chapter's number": [
        (_PREV, "    scores = torch.zeros(2, dtype=weights.dtype)\n"
                "    for h in range(2):\n"
                "        scores[h] = weights[:, h].diagonal(offset=-1, dim1=-2, dim2=-1).mean()\n"
                "    return scores"),
    ],
    "warned (q4): zero_head's slice one column too wide (head * d_head : (head + 1) * d_head + 1)": [
        (_ZERO, "    out[..., head * d_head : (head + 1) * d_head + 1] = 0.0\n"),
    ],
})

WRONG_ANSWERS.update({
    # review 129: heads 0 and 1 compared with ties to head 1 (F1); two heads hard-coded in q2 (F2);
    # query 0 counted through a clipped key (F3); the width fixed at the public example's 2 (F4);
    # the draw made (n, B) and transposed (F6)
    "warned (q6): find_heads compares heads 0 and 1 only, ties to head 1 (0 if s[0] > s[1] else 1)": [
        (_PREV_HEAD, "    p = previous_token_score(weights[0])\n"
                     "    prev_head = 0 if p[0] > p[1] else 1\n"),
        (_IND_HEAD, "    s = induction_score(weights[1], n, True)\n"
                    "    induction_head = 0 if s[0] > s[1] else 1\n"),
    ],
    "warned (q2): induction_score loops over 2 heads, the chapter's number": [
        (_SCORE, "    scores = torch.zeros(2, dtype=weights.dtype)\n"
                 "    for h in range(2):\n"
                 "        scores[h] = weights[:, h, q, q - n + 1].mean()\n"
                 "    return scores"),
    ],
    "warned (q3): previous_token_score counts query 0 on its own key (max(i - 1, 0))": [
        (_PREV, "    T = weights.shape[-1]\n"
                "    return torch.stack([weights[:, :, i, max(i - 1, 0)] for i in range(T)], -1).mean(dim=(0, 2))"),
    ],
    "warned (q4): zero_head's width fixed at 2, the public example's d_head": [
        (_ZERO, "    out[..., head * 2 : (head + 1) * 2] = 0.0\n"),
    ],
    "warned (q1): repeated_batch draws (n, B) and transposes it": [
        (_DRAW, "    x = torch.randint(1, vocab_size, (n, batch_size), generator=generator).T  # (B, n)\n"),
    ],
})

WRONG_ANSWERS.update({
    # review 130: heads found by counting argmax hits, not by the mean score (F1); q3's positions fixed
    # at T = 4 and at T = 5, the size of the notebook's printed pattern (F2, F3)
    "warned (q6): find_heads counts the queries whose largest weight is on the key (argmax hits), not the mean score": [
        (_PREV_HEAD, "    T = weights[0].shape[-1]\n"
                     "    hits = weights[0][:, :, 1:].argmax(-1) == torch.arange(T - 1)\n"
                     "    prev_head = int(hits.float().mean((0, 2)).argmax())\n"),
        (_IND_HEAD, "    q = torch.arange(1 + n, 1 + 2 * n)\n"
                    "    hits = weights[1][:, :, q].argmax(-1) == q - n + 1\n"
                    "    induction_head = int(hits.float().mean((0, 2)).argmax())\n"),
    ],
    "warned (q3): previous_token_score reads the queries 1..3 only (T = 4 fixed)": [
        (_PREV, "    return weights[:, :, [1, 2, 3], [0, 1, 2]].mean(dim=(0, 2))"),
    ],
    "warned (q3): previous_token_score reads the queries 1..4 only (T = 5 fixed, the printed pattern's size)": [
        (_PREV, "    return weights[:, :, [1, 2, 3, 4], [0, 1, 2, 3]].mean(dim=(0, 2))"),
    ],
})

PAGE_ROWS = {  # each row of the worked-solutions page -> its wrong answers (tools/exercise_tables.py)
    # q1
    'tokens drawn from 0 (the start token among them)': 'repeated_batch: tokens drawn from 0 .. V - 1 (the start token among them)',
    "the course package's `repeated_tokens` called": 'shortcut: repeated_batch hands the work to attnbook.induction.repeated_tokens',
    '`torch.randint(1, vocab_size + 1, ...)`: a token may equal `vocab_size`': 'warned (q1): repeated_batch draws randint(1, vocab_size + 1) (a token may equal vocab_size)',
    '`torch.randint(1, vocab_size - 1, ...)`: no token equals `vocab_size - 1`': 'warned (q1): repeated_batch draws randint(1, vocab_size - 1) (no token equals vocab_size - 1)',
    "PyTorch's global generator (no `generator=`)": "warned (q1): repeated_batch draws from PyTorch's global generator (no generator=)",
    'the second copy drawn afresh': 'repeated_batch: the second copy drawn afresh, not repeated',
    'the copy interleaved token by token (`x1 x1 x2 x2 ...`)': 'repeated_batch: the copy interleaved token by token (x1 x1 x2 x2 ...)',
    'a draw of shape `(n, B)`, transposed (the generator fills rows first: other tokens)': 'warned (q1): repeated_batch draws (n, B) and transposes it',
    'a start token whatever `bos` says': 'repeated_batch: BOS whatever bos says',
    'the start column made without `dtype=` (so the whole batch is float)': 'warned (q1): repeated_batch: the start column made without dtype= (float), so the batch is float',
    # q2
    'the diagonal at offset `-n` (the earlier occurrence itself)': 'induction_score: the diagonal at offset -n (the earlier occurrence itself)',
    'the diagonal at offset `2 - n`': 'induction_score: the diagonal at offset 2 - n',
    'the whole diagonal, first-copy queries included': 'induction_score: the whole diagonal, first-copy queries included',
    'the summed weights divided by `T` (the sequence length), not by the `n` queries read': "warned (q2): induction_score divides the second copy's summed weights by T, not n",
    'a sum over the queries, not their mean': "warned (q2): induction_score sums the second copy's weights over the queries, no mean",
    'the second copy placed at `1 + n` whatever `bos` says': 'induction_score: the second copy placed as if there were always a BOS',
    "positions fixed at the first public example's `n = 4` (`torch.arange(first, first + 4)`, key `q - 3`)": 'warned (q2): induction_score reads the positions of the first public example (n = 4) whatever n is',
    "the heads looped as the chapter's 2 (`for h in range(2)`), whatever `weights.shape[1]`": "warned (q2): induction_score loops over 2 heads, the chapter's number",
    'the second copy placed at `n` whatever `bos` says (BOS forgotten)': 'warned (q2): induction_score starts the second copy at n whatever bos says (BOS forgotten)',
    'the last query of the second copy only': 'warned (q2): induction_score reads the last query of the second copy only',
    'averaged over the heads, not the batch': 'induction_score: averaged over the heads, not the batch',
    'the first sequence of the batch only, or the largest over the batch': ('warned (q2): induction_score reads the first sequence of the batch only', 'warned (q2): induction_score takes the largest over the batch, not the mean'),
    'a loop of Python floats (float32 for float64 weights)': 'warned (q2, q3, q4): float32 results, built from Python numbers or with .float(), whatever the input',
    '`.view` to flatten batch and heads (weights in another layout fail)': 'induction_score: batch and heads flattened with .view (fails on weights in another layout)',
    '`.double()` on the weights before indexing: float64 scores for float32 weights, the values right': 'warned (q2): induction_score casts up to float64 (.double()), the values exact',
    'every query of the second copy but the last': 'warned (q2): induction_score averages every query of the second copy but the last',
    '`weights /= weights.sum(-1, keepdim=True)` before indexing (the caller\'s weights changed), the value right': 'warned (q2): induction_score renormalises the weights in place (weights /= their row sums), the value right',
    '`weights[..., 0] = 0` before indexing, BOS "ignored" in the caller\'s weights (the value right)': 'warned (q2): induction_score zeroes the BOS column of the weights in place (weights[..., 0] = 0), the value right',
    'the queries counted whose largest weight (`argmax`) is on key `i - n + 1`, not that weight averaged': 'warned (q2): induction_score counts the queries whose argmax is key i - n + 1, not their weight',
    # q3
    'query 0 counted as a zero (divided by `T`)': 'previous_token_score: query 0 counted as a zero',
    'query 0 counted on its own key (`max(i - 1, 0)`)': 'warned (q3): previous_token_score counts query 0 on its own key (max(i - 1, 0))',
    'the diagonal above the main one (offset `+1`, the next token)': 'previous_token_score: the diagonal above the main one (the next token)',
    "the number of heads fixed at the chapter's 2 (`torch.zeros(2)`, `for h in range(2)`)": "warned (q3): previous_token_score loops over 2 heads, the chapter's number",
    "the queries `1..5` only (`torch.arange(1, 6)`, right only at the public example's `T = 6`)": "warned (q3): previous_token_score reads the queries 1..5 only (the public example's T = 6)",
    'the queries `1..3` or `1..4` only (positions written out for `T = 4` or `T = 5`)': ('warned (q3): previous_token_score reads the queries 1..3 only (T = 4 fixed)', "warned (q3): previous_token_score reads the queries 1..4 only (T = 5 fixed, the printed pattern's size)"),
    'the main diagonal (the token itself)': 'previous_token_score: the main diagonal (the token itself)',
    'averaged over the heads, not the batch (one score per sequence, shape `(B,)`)': 'warned (q3): previous_token_score averaged over the heads, not the batch (one score per sequence)',
    '`diagonal(offset=-1, dim1=-1, dim2=-2)`, the dims swapped (the next token)': 'warned (q3): previous_token_score takes the diagonal with its dims swapped (keys, then queries)',
    'the first sequence of the batch only': 'warned (q3): previous_token_score reads the first sequence of the batch only',
    'a final `.float()` (float32 for float64 weights)': 'warned (q2, q3, q4): float32 results, built from Python numbers or with .float(), whatever the input',
    'batch and heads flattened with `.view` (weights in another layout fail)': 'previous_token_score: batch and heads flattened with .view (fails on weights in another layout)',
    '`.double()` before the diagonal: float64 scores for float32 weights, the values right': 'warned (q3): previous_token_score casts up to float64 (.double()), the values exact',
    '`torch.diagonal(weights, offset=-1)`: its default dims, 0 and 1, are the batch and the heads': ('warned (q3): previous_token_score: torch.diagonal(weights, offset=-1) with its default dims 0 and 1', 'warned (q3): previous_token_score: torch.diagonal(weights, offset=-1).mean(dim=(0, 1)), the default dims'),
    '`weights /= weights.sum(-1, keepdim=True)` before the diagonal (the caller\'s weights changed), the value right': 'warned (q3): previous_token_score renormalises the weights in place (weights /= their row sums), the value right',
    'the queries counted whose largest weight (`argmax`) is on key `i - 1`, not that weight averaged': 'warned (q3): previous_token_score counts the queries whose argmax is key i - 1, not their weight',
    # q4
    'heads counted from 1': 'zero_head: head counted from 1',
    'every head but `head` zeroed': 'zero_head: zeroes every head but `head`',
    '`out[:, a:b]`, the second axis whatever the rank': 'warned (q4): zero_head indexes out[:, a:b] (the second axis, whatever the rank)',
    '`head * d_head : head + d_head` (the wrong width)': 'zero_head: columns head * d_head to head + d_head (the wrong width)',
    "`head : head + d_head` (the columns counted from the head's number)": 'warned (q4): zero_head zeroes the columns head .. head + d_head',
    '`z` zeroed in place and returned': 'zero_head: zeroes z in place and returns it (no copy)',
    "`z[:, :, a:b]` or `B, T, D = z.shape` (a 3-D `z` only), or `.view` on the copy's rows": ('zero_head: indexes z[:, :, a:b], so only a 3-D z works', 'warned (q4): zero_head unpacks B, T, D = z.shape (a 3-D z only, a ValueError for others)', "zero_head: the copy's rows flattened with .view (fails on a z in another layout)"),
    '`out[:, :, a:b]` inside a `try` that returns the copy unchanged on any error': 'warned (q4): zero_head slices z[:, :, a:b] inside a try that returns z unchanged on any error',
    'a detached copy (`z.detach().clone()`), or at a mean-ablation variant a detached mean (`.mean(0).detach()`): the values right, no gradient reaches `z`': ('warned (q4): zero_head zeroes a detached copy (z.detach().clone()): the values right, no gradient', "zero_head: the mean detached, the values right, no gradient through it (at the book's task, the copy detached)"),
    "a float32 copy whatever `z`'s dtype (`torch.zeros(z.shape)` filled from `z`)": 'warned (q4): zero_head copies z into torch.zeros(z.shape) (float32 whatever z\'s dtype)',
    '`z` multiplied by a mask of ones made without `dtype=` (float32: a bfloat16 `z` comes back float32)': 'zero_head: multiplies z by a mask of ones made without dtype= (float32), so a bfloat16 z comes back float32',
    'the slice ended one short (`head * d_head : (head + 1) * d_head - 1`)': 'zero_head: the slice ends one short (head * d_head : (head + 1) * d_head - 1)',
    'the slice one column too wide (`head * d_head : (head + 1) * d_head + 1`)': "warned (q4): zero_head's slice one column too wide (head * d_head : (head + 1) * d_head + 1)",
    '`z` reshaped into 4 heads, the public example\'s number (`z.shape[-1] // d_head` is the number)': 'warned (q4): zero_head reshapes z into 4 heads, the public example\'s number',
    "the width fixed at the public example's 2 (`head * 2 : (head + 1) * 2`)": "warned (q4): zero_head's width fixed at 2, the public example's d_head",
    # q5
    '(a), (b) or (d)': ("what_k_composition_measures: (a), the product in the wrong order", "what_k_composition_measures: (b), head j's output on the query side (Q-composition)", 'what_k_composition_measures: (d), W_OV transposed (row vectors read as columns)'),
    'a wrong letter in another form, `"B"` or `"(b)"`': ('what_k_composition_measures: a wrong letter in upper case ("B")', 'what_k_composition_measures: a wrong letter written "(b)"'),
    'the right letter in upper case, `"C"`, or `"(c)"`': ('what_k_composition_measures: the right letter in upper case', 'what_k_composition_measures: the right letter written "(c)"'),
    # q6
    "`repeat_loss`: the second copy's first token counted too": 'repeat_loss: x_1 of the second copy counted too (n tokens, one unpredictable)',
    '`repeat_loss`: no shift (`logits[:, t]` read as predicting the token at `t`)': 'repeat_loss: logits[:, t] read as predicting the token at t (no shift)',
    '`repeat_loss`: the next-token loss over every position of the sequence': 'warned (q6): repeat_loss: the next-token loss over every position of the sequence',
    '`repeat_loss`: the first copy instead of the second': 'repeat_loss: the first copy instead of the second',
    '`repeat_loss`: probabilities (a softmax first) passed to `cross_entropy`': 'repeat_loss: probabilities (a softmax first) passed to cross_entropy, which wants logits',
    '`repeat_loss`: a sum instead of a mean': 'repeat_loss: summed over the tokens, not averaged',
    '`repeat_loss`: the sum divided by `n`, not by the `n - 1` tokens it adds up': 'warned (q6): repeat_loss divides the summed loss of the n - 1 predicted tokens by n',
    '`repeat_loss`: the minus sign dropped (the mean log-probability)': 'warned (q6): repeat_loss returns the mean log-probability of the targets (the minus sign dropped)',
    '`repeat_loss`: `logits` changed in place (`logits -= logits.max(...)`), the value right': 'warned (q6): repeat_loss subtracts the row maxima from logits in place (the value right)',
    '`repeat_loss`: `nll_loss` on the raw logits': 'warned (q6): repeat_loss runs nll_loss on the raw logits (not log-probabilities)',
    '`repeat_loss`: `cross_entropy` on (B, n - 1, V) logits, no transpose': 'warned (q6): repeat_loss: cross_entropy on (B, n - 1, V) logits, the classes not moved to axis 1',
    '`repeat_loss`: the log-softmax over the positions (`dim=1`), not the vocabulary': 'warned (q6): repeat_loss takes the log-softmax over the positions (dim=1), not the vocabulary',
    '`repeat_loss`: the right loss returned as a 0-d tensor, not `float(loss)`': 'warned (q6): repeat_loss returns the 0-d tensor, not float(loss)',
    '`repeat_loss`: the right loss returned as a 0-d NumPy array (`loss.detach().numpy()`)': 'warned (q6): repeat_loss returns the right loss as a 0-d NumPy array (loss.detach().numpy())',
    '`repeat_loss`: the perplexity, `exp(loss)`': 'warned (q6): repeat_loss returns the perplexity, exp(loss)',
    '`repeat_loss`: the positions of the public example (`n = 3`), whatever `n` is': 'warned (q6): repeat_loss reads the positions of the public example (n = 3) whatever n is',
    '`repeat_loss`: a `try` that returns `0.0` on any error (here around `cross_entropy` without the transpose)': 'warned (q6): repeat_loss without the transpose, inside a try that returns 0.0 on any error',
    '`find_heads`: the induction head sought in layer 0': 'find_heads: the induction head looked for in layer 0',
    '`find_heads`: both heads scored on the first sequence of the batch only': 'find_heads: scores the first sequence of the batch only',
    '`find_heads`: the previous-token head scored on the first sequence only': 'find_heads: the previous-token head scored on the first sequence of the batch only',
    '`find_heads`: the weakest heads (`argmin`)': 'find_heads: the weakest heads (argmin)',
    "`find_heads`: the chapter's heads hard-coded, `(1, 1)`": "find_heads: returns the chapter's heads, (1, 1), whatever the weights",
    '`find_heads`: the induction head sought in both layers (`torch.maximum` of their scores, or both stacked, `argmax % H`)': (
        "warned (q6): find_heads seeks the induction head in both layers (torch.maximum of the two layers' scores)",
        'warned (q6): find_heads seeks the induction head in both layers (their scores stacked, argmax % H)'),
    '`find_heads`: the induction head picked by `previous_token_score` on layer 1 (a copy-paste slip)': 'warned (q6): find_heads picks the induction head by previous_token_score on layer 1 (a copy-paste slip)',
    '`find_heads`: the best scores truncated to ints (`max`, not `argmax`)': 'warned (q6): find_heads returns the best scores truncated to ints, not their heads',
    '`find_heads`: 0-d tensors of the right heads, not ints': 'find_heads: returns 0-d tensors, not ints',
    '`find_heads`: the previous-token head sought in layer 1': 'warned (q6): find_heads looks for the previous-token head in layer 1',
    '`find_heads`: `(induction_head, prev_head)`, the order swapped': 'warned (q6): find_heads returns (induction_head, prev_head), the order swapped',
    '`find_heads`: `bos=False` on a batch with BOS': 'warned (q6): find_heads calls induction_score with bos=False on a batch with BOS (the window one query early)',
    '`find_heads`: a list of the right ints, not a tuple': 'warned (q6): find_heads returns a list of the right ints, not a tuple',
    '`find_heads`: heads 0 and 1 compared only (the chapter has two per layer)': ("find_heads: compares heads 0 and 1 only (the chapter's two heads per layer)", 'warned (q6): find_heads compares heads 0 and 1 only, ties to head 1 (0 if s[0] > s[1] else 1)'),
    '`find_heads`: a vote of the sequences\' best heads, not the best mean score': "find_heads: a vote of each sequence's best head, not the best mean score",
    '`find_heads`: the queries counted whose largest weight is on the key (`argmax` hits), not the mean score': 'warned (q6): find_heads counts the queries whose largest weight is on the key (argmax hits), not the mean score',
    '`find_heads`: NumPy ints (`np.argmax`), not Python ints': 'warned (q6): find_heads returns NumPy ints (np.argmax), not Python ints',
}
