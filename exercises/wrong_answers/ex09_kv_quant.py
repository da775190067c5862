"""Classic wrong answers to exercise 9, as text edits of the reference solution:
label -> [(old, new), ...]. `tools/exercises.py prove` proves each loses points (the
format and the rules are in tools/exercise_proof.py). Question 1 has a pool of tasks
(`tools.exercise_pools`): each of its mistakes on a line a task rewrites is written at every
roster task too (`AtEachTask`: the edits of that task's text), so the proof at every sampled
variant grades the same mistake. The "window" task rewrites only the line of n, so most
mistakes read the same there."""

from tools.exercise_variants import AtEachTask

# the lines of question 1's answer that the "token" task rewrites (the book's, then token's)
_LOW = ("    low = groups.amin(dim=3)  # (B, H, n, d): one minimum per group and channel\n"
        "    scale = (groups.amax(dim=3) - low) / levels\n")
_TOKEN_LOW = ("    low = groups.amin(dim=4)  # (B, H, m, d / G): one minimum per token and group\n"
              "    scale = (groups.amax(dim=4) - low) / levels\n")
_GROUPS = "    groups = k[:, :, : n * G].reshape(B, H, n, G, d)  # group j: tokens jG .. jG + G - 1"
_TOKEN_GROUPS = "    groups = k[:, :, :m].reshape(B, H, m, d // G, G)  # group j: channels jG .. jG + G - 1"
_RETURN = "    return codes.to(torch.uint8).reshape(B, H, n * G, d), scale, low, k[:, :, n * G :]"
_TOKEN_RETURN = "    return codes.to(torch.uint8).reshape(B, H, m, d), scale, low, k[:, :, m:]"
_REST = ("    scale = torch.where(scale > 0, scale, torch.ones_like(scale))  # constant channels\n"
         "    codes = torch.round((groups - low[:, :, :, None]) / scale[:, :, :, None])\n"
         "    codes = codes.clamp(0, levels)\n")
_TOKEN_CODES = "    codes = torch.round((groups - low[..., None]) / scale[..., None])"
_TOKEN_REST = _REST.replace("low[:, :, :, None]) / scale[:, :, :, None]", "low[..., None]) / scale[..., None]")


def _q1(book: list, token: list, window: list | None = None) -> AtEachTask:
    """One mistake of question 1 at each task; the window's text is the book's but for the
    line of n, so its form is the book's unless given."""
    return AtEachTask(book, window=book if window is None else window, token=token)


WRONG_ANSWERS = {
    # q1: keys per channel in groups of G tokens, with a residual
    "quantize_keys: the codes from PyTorch's own quantizer (torch.quantize_per_channel, one "
    "row per group and channel), right otherwise: ruled out, taken away in q1's child": _q1(
        [("    codes = torch.round((groups - low[:, :, :, None]) / scale[:, :, :, None])\n",
          "    rows = (groups - low[:, :, :, None]).transpose(3, 4).reshape(-1, G).float()\n"
          "    zero = torch.zeros(rows.shape[0], dtype=torch.long)\n"
          "    q = torch.quantize_per_channel(rows, scale.reshape(-1).double(), zero, 0, torch.quint8)\n"
          "    codes = q.int_repr().reshape(B, H, n, d, G).transpose(3, 4)\n")],
        [(_TOKEN_CODES,
          "    rows = (groups - low[..., None]).reshape(-1, G).float()\n"
          "    zero = torch.zeros(rows.shape[0], dtype=torch.long)\n"
          "    q = torch.quantize_per_channel(rows, scale.reshape(-1).double(), zero, 0, torch.quint8)\n"
          "    codes = q.int_repr().reshape(groups.shape)")],
    ),
    "quantize_keys: one scale per token (reduced over the channels), not per channel (token: "
    "one per token, over all its channels, not per group of G)": _q1(
        [(_LOW + _REST + _RETURN,
          "    low = groups.amin(dim=4, keepdim=True)\n"
          "    scale = (groups.amax(dim=4, keepdim=True) - low) / levels\n"
          "    scale = torch.where(scale > 0, scale, torch.ones_like(scale))\n"
          "    codes = torch.round((groups - low) / scale).clamp(0, levels)\n"
          "    return (codes.to(torch.uint8).reshape(B, H, n * G, d), scale.reshape(B, H, n * G, 1),\n"
          "            low.reshape(B, H, n * G, 1), k[:, :, n * G :])")],
        [(_TOKEN_LOW,
          "    low = groups.amin(dim=(3, 4))[..., None].expand(B, H, m, d // G)\n"
          "    scale = (groups.amax(dim=(3, 4))[..., None].expand(B, H, m, d // G) - low) / levels\n")],
    ),
    "quantize_keys: the residual taken from the start (groups aligned to the end)": _q1(
        [(_GROUPS, "    groups = k[:, :, T - n * G :].reshape(B, H, n, G, d)"),
         ("k[:, :, n * G :]\n", "k[:, :, : T - n * G]\n")],
        [(_TOKEN_GROUPS, "    groups = k[:, :, T - m :].reshape(B, H, m, d // G, G)"),
         ("k[:, :, m:]\n", "k[:, :, : T - m]\n")],
    ),
    "quantize_keys: groups strided over the tokens (token t in group t % n; token: channel c in "
    "group c % (d / G))": _q1(
        [(_GROUPS, "    groups = k[:, :, : n * G].reshape(B, H, G, n, d).transpose(2, 3)"),
         ("    return codes.to(torch.uint8).reshape(B, H, n * G, d), scale, low",
          "    return codes.transpose(2, 3).to(torch.uint8).reshape(B, H, n * G, d), scale, low")],
        [(_TOKEN_GROUPS, "    groups = k[:, :, :m].reshape(B, H, m, G, d // G).transpose(3, 4)"),
         (_TOKEN_RETURN,
          "    return codes.transpose(3, 4).to(torch.uint8).reshape(B, H, m, d), scale, low, k[:, :, m:]")],
    ),
    "quantize_keys: floor instead of round (errors up to a whole step)": _q1(
        [("    codes = torch.round((groups", "    codes = torch.floor((groups")],
        [("    codes = torch.round((groups", "    codes = torch.floor((groups")],
    ),
    "quantize_keys: a channel constant in its group divides by zero": [
        ("    scale = torch.where(scale > 0, scale, torch.ones_like(scale))  # constant channels\n", ""),
    ],
    "quantize_keys: the residual as k[:, :, -(T % G):], all of k when G divides T (window: "
    "-(T % R); token: k[:, :, -R:], all of k when R is 0)": _q1(
        [("k[:, :, n * G :]\n", "k[:, :, -(T % G) :]\n")],
        [("k[:, :, m:]\n", "k[:, :, -R:]\n")],
        [("k[:, :, n * G :]\n", "k[:, :, -(T % R) :]\n")],
    ),
    "quantize_keys: the keys converted to float32 first (k = k.float())": _q1(
        [("    B, H, T, d = k.shape\n    n = T // G", "    k = k.float()\n    B, H, T, d = k.shape\n    n = T // G")],
        [("    B, H, T, d = k.shape\n", "    k = k.float()\n    B, H, T, d = k.shape\n")],
        [("    B, H, T, d = k.shape\n", "    k = k.float()\n    B, H, T, d = k.shape\n")],
    ),
    "quantize_keys: minima and maxima over the batch too (right for a batch of one)": _q1(
        [(_LOW,
          "    low = groups.amin(dim=(0, 3)).expand(B, H, n, d)\n"
          "    scale = (groups.amax(dim=(0, 3)).expand(B, H, n, d) - low) / levels\n")],
        [(_TOKEN_LOW,
          "    low = groups.amin(dim=(0, 4)).expand(B, H, m, d // G)\n"
          "    scale = (groups.amax(dim=(0, 4)).expand(B, H, m, d // G) - low) / levels\n")],
    ),
    "non-solving (q1): only the shapes: codes 0, scale 1, low 0 and the right residual": _q1(
        [(_LOW, "    low = torch.zeros_like(groups[:, :, :, 0])\n    scale = torch.zeros_like(low)\n"),
         ("    codes = torch.round((groups - low[:, :, :, None]) / scale[:, :, :, None])",
          "    codes = torch.zeros_like(groups)")],
        [(_TOKEN_LOW, "    low = torch.zeros_like(groups[..., 0])\n    scale = torch.zeros_like(low)\n"),
         (_TOKEN_CODES, "    codes = torch.zeros_like(groups)")],
    ),
    # q2: packing
    "pack_codes: the first code in the highest bits": [
        ("    packed = runs[..., 0].clone()\n"
         "    for i in range(1, per_byte):\n"
         "        packed |= runs[..., i] << (i * bits)",
         "    packed = runs[..., 0] << (8 - bits)\n"
         "    for i in range(1, per_byte):\n"
         "        packed |= runs[..., i] << (8 - bits - i * bits)"),
    ],
    "unpack_codes: shifts without keeping the low bits (no & mask)": [
        ("    parts = [(packed >> (i * bits)) & mask for", "    parts = [packed >> (i * bits) for"),
    ],
    "pack_codes: no ValueError for a last axis that is not a multiple of 8 / bits": [
        ("    if codes.shape[-1] % per_byte:\n"
         "        raise ValueError(f\"{bits}-bit codes go {per_byte} to a byte: the last axis \"\n"
         "                         f\"must be a multiple of {per_byte}, got {codes.shape[-1]}\")\n", ""),
    ],
    # q3: bytes
    "stored_bytes: codes counted a byte each (not packed)": [
        ("    packed = codes.numel() * bits // 8", "    packed = codes.numel()"),
    ],
    "stored_bytes: scales and minima forgotten": [
        ("for t in (scale, low, residual))", "for t in (residual,))"),
    ],
    "stored_bytes: every number counted as 4 bytes (float32 assumed)": [
        ("t.numel() * t.element_size()", "t.numel() * 4"),
    ],
    # q4: the block table
    "locate: the block is t // block_size, not looked up in the table": [
        ("    return block_table[t // block_size], t % block_size", "    return t // block_size, t % block_size"),
    ],
    "gather_keys: blocks laid end to end without moving the heads first": [
        ("    slots = blocks.transpose(0, 1).reshape(H, len(block_table) * block_size, d)\n",
         "    slots = blocks.reshape(H, len(block_table) * block_size, d)\n"),
    ],
    "warned (q4): gather_keys as torch.cat of the blocks (raises on the empty table)": [
        ("    blocks = pool[block_table]  # (n, H, block_size, d): the sequence's blocks, in order\n"
         "    slots = blocks.transpose(0, 1).reshape(H, len(block_table) * block_size, d)\n",
         "    slots = torch.cat([pool[b] for b in block_table], dim=1)\n"),
    ],
    # q5: cache bytes
    "cache_bytes_per_token: MLA's latent and rotary key counted for every head": [
        ('        "MLA": d_latent + d_rope,', '        "MLA": n_head * (d_latent + d_rope),'),
    ],
    "warned (q5): GQA as MHA times n_kv_head / n_head (a float)": [
        ('        "GQA": 2 * n_kv_head * d_head,', '        "GQA": 2 * n_head * d_head * n_kv_head / n_head,'),
    ],
    "non-solving (q5): the example's numbers returned whatever the settings": [
        ("    return {kind: n_layer * count * bytes_per_number for kind, count in numbers.items()}",
         "    return {\"MHA\": 384, \"GQA\": 192, \"MLA\": 120}"),
    ],
    # q6: the conceptual question
    "what_paging_saves: (a), fewer bytes per token": [('    return "c"', '    return "a"')],
    "what_paging_saves: the right letter in upper case with its parenthesis": [('    return "c"', '    return "(C)"')],
    # the house rules
    "shortcut: gather_keys hands the work to attnbook.paged.gather_blocks": [
        ("    num_blocks, H, block_size, d = pool.shape\n",
         "    from attnbook.paged import gather_blocks\n"
         "    return gather_blocks(pool, torch.tensor(block_table, dtype=torch.long), length)\n"),
    ],
    "refused: every kind of tampering at once (TAMPER, run in the isolated child; the allowlist only notes it), and both functions wrong": [
        ("def quantize_keys(k, bits, G):", TAMPER + "def quantize_keys(k, bits, G):"),  # noqa: F821
        ("    codes = torch.round((groups", "    codes = torch.floor((groups"),
        ("    parts = [(packed >> (i * bits)) & mask for", "    parts = [packed >> (i * bits) for"),
    ],
}

WRONG_ANSWERS.update({  # correct answers written differently: they must score 100 %
    "correct: a loop over the groups, multiplying by 1 / s, and a copied residual": _q1([
        (_GROUPS + "\n" + _LOW + _REST + _RETURN,
         "    codes, scales, lows = [], [], []\n"
         "    for j in range(n):\n"
         "        lo, hi = torch.aminmax(k[:, :, j * G : (j + 1) * G], dim=2, keepdim=True)\n"
         "        s = (hi - lo) / levels\n"
         "        s[s == 0] = 1.0\n"
         "        c = torch.round((k[:, :, j * G : (j + 1) * G] - lo) * (1.0 / s)).clamp(0, levels)\n"
         "        codes.append(c.to(torch.uint8))\n"
         "        scales.append(s)\n"
         "        lows.append(lo)\n"
         "    empty = k.new_zeros(B, H, 0, d)\n"
         "    return (torch.cat(codes, dim=2) if codes else empty.to(torch.uint8),\n"
         "            torch.cat(scales, dim=2) if scales else empty.clone(),\n"
         "            torch.cat(lows, dim=2) if lows else empty.clone(), k[:, :, n * G :].clone())"),
    ], [
        (_TOKEN_GROUPS + "\n" + _TOKEN_LOW + _TOKEN_REST + _TOKEN_RETURN,
         "    codes, scales, lows = [], [], []\n"
         "    for j in range(d // G):  # channel group j of every older token\n"
         "        lo, hi = torch.aminmax(k[:, :, :m, j * G : (j + 1) * G], dim=3, keepdim=True)\n"
         "        s = (hi - lo) / levels\n"
         "        s[s == 0] = 1.0\n"
         "        c = torch.round((k[:, :, :m, j * G : (j + 1) * G] - lo) * (1.0 / s)).clamp(0, levels)\n"
         "        codes.append(c.to(torch.uint8))\n"
         "        scales.append(s)\n"
         "        lows.append(lo)\n"
         "    return (torch.cat(codes, dim=3), torch.cat(scales, dim=3), torch.cat(lows, dim=3),\n"
         "            k[:, :, m:].clone())"),
    ]),
    "correct: arithmetic packing (8 bits returned as they are), unpacking with // and %, bytes from pack_codes": [
        ("    runs = codes.reshape(*codes.shape[:-1], codes.shape[-1] // per_byte, per_byte)\n"
         "    packed = runs[..., 0].clone()\n"
         "    for i in range(1, per_byte):\n"
         "        packed |= runs[..., i] << (i * bits)  # code i: bits i*b .. i*b + b - 1\n"
         "    return packed",
         "    if bits == 8:\n"
         "        return codes\n"
         "    weights = torch.tensor([2 ** (i * bits) for i in range(per_byte)])\n"
         "    runs = codes.unflatten(-1, (-1, per_byte)).long()\n"
         "    return (runs * weights).sum(dim=-1).to(torch.uint8)"),
        ("    parts = [(packed >> (i * bits)) & mask for i in range(per_byte)]  # code i of each\n"
         "    codes = torch.stack(parts, dim=-1)  # (..., m', per_byte)\n"
         "    return codes.reshape(*packed.shape[:-1], packed.shape[-1] * per_byte)",
         "    parts = [(packed.long() // 2 ** (i * bits)) % 2 ** bits for i in range(per_byte)]\n"
         "    return torch.stack(parts, dim=-1).flatten(-2).to(torch.uint8)"),
        ("    packed = codes.numel() * bits // 8  # 8 / bits codes to a byte\n",
         "    packed = pack_codes(codes.reshape(-1), bits).nbytes\n"),
    ],
    "correct: a tiny epsilon added to every scale instead of the constant-channel rule": [
        ("    scale = torch.where(scale > 0, scale, torch.ones_like(scale))  # constant channels\n",
         "    scale = scale + 1e-8  # never zero\n"),
    ],
    "correct: gather token by token through locate, sizes written another way": [
        ("    num_blocks, H, block_size, d = pool.shape\n"
         "    blocks = pool[block_table]  # (n, H, block_size, d): the sequence's blocks, in order\n"
         "    slots = blocks.transpose(0, 1).reshape(H, len(block_table) * block_size, d)\n"
         "    return slots[:, :length]",
         "    num_blocks, H, block_size, d = pool.shape\n"
         "    out = pool.new_empty(H, length, d)\n"
         "    for t in range(length):\n"
         "        block, slot = locate(t, block_table, block_size)\n"
         "        out[:, t] = pool[block, :, slot]\n"
         "    return out"),
        ("    return block_table[t // block_size], t % block_size",
         "    block, slot = divmod(t, block_size)\n"
         "    return int(block_table[block]), slot"),
        ("    return {kind: n_layer * count * bytes_per_number for kind, count in numbers.items()}",
         "    per_layer = {kind: count * bytes_per_number for kind, count in numbers.items()}\n"
         "    return dict(MHA=per_layer['MHA'] * n_layer, GQA=per_layer['GQA'] * n_layer, MLA=per_layer['MLA'] * n_layer)"),
    ],
})

# issue 36, item 7: inputs laid out as the course passes them (transposed keys, a residual
# that is a slice of all the keys) reach the hidden tests so too
WRONG_ANSWERS.update({
    "warned (q1): flattens batch and heads with view (fails on the course's transposed keys)": _q1(
        [("    groups = k[:, :, : n * G].reshape(B, H, n, G, d)",
          "    groups = k.view(B * H, T, d)[:, : n * G].view(B, H, n, G, d)")],
        [("    groups = k[:, :, :m].reshape(B, H, m, d // G, G)",
          "    groups = k.view(B * H, T, d)[:, :m].view(B, H, m, d // G, G)")],
    ),
    "warned (q3): bytes counted from each tensor's storage (a slice's storage is all the keys)": [
        ("    return packed + sum(t.numel() * t.element_size() for t in (scale, low, residual))",
         "    return packed + sum(t.untyped_storage().nbytes() for t in (scale, low, residual))"),
    ],
})
WRONG_ANSWERS.update({  # layouts: an answer that works only on freshly made, contiguous codes
    "pack_codes: every axis but the runs flattened with .view (fails on codes in another layout)": [
        ("    runs = codes.reshape(*codes.shape[:-1], codes.shape[-1] // per_byte, per_byte)\n"
         "    packed = runs[..., 0].clone()\n"
         "    for i in range(1, per_byte):\n"
         "        packed |= runs[..., i] << (i * bits)  # code i: bits i*b .. i*b + b - 1\n"
         "    return packed",
         "    runs = codes.view(-1, per_byte)  # one row per byte\n"
         "    packed = runs[:, 0].clone()\n"
         "    for i in range(1, per_byte):\n"
         "        packed |= runs[:, i] << (i * bits)\n"
         "    return packed.view(*codes.shape[:-1], codes.shape[-1] // per_byte)"),
    ],
})
WRONG_ANSWERS.update({
    "correct: pack_codes flattening a .contiguous() copy with .view": [
        ("    runs = codes.reshape(*codes.shape[:-1], codes.shape[-1] // per_byte, per_byte)\n",
         "    runs = codes.contiguous().view(*codes.shape[:-1], codes.shape[-1] // per_byte, per_byte)\n"),
    ],
    "pack_codes: runs[..., 0] without .clone(), so |= writes into the caller's codes": [
        ("    packed = runs[..., 0].clone()\n", "    packed = runs[..., 0]\n"),
    ],
})
