"""Classic wrong answers to exercise 9, as text edits of the reference solution:
label -> [(old, new), ...]. `tools/exercises.py prove` proves each loses points (the
format and the rules are in tools/exercise_proof.py)."""

WRONG_ANSWERS = {
    "scales per token (reduced over the channels) instead of per channel": [
        ("    low = k.amin(dim=-2, keepdim=True)  # (B, H, 1, d): one minimum per channel\n"
         "    scale = (k.amax(dim=-2, keepdim=True) - low) / levels",
         "    low = k.amin(dim=-1, keepdim=True)\n"
         "    scale = (k.amax(dim=-1, keepdim=True) - low) / levels"),
    ],
    "2^b steps instead of 2^b - 1 (the maximum falls off the top)": [
        ("    levels = 2 ** bits - 1\n", "    levels = 2 ** bits\n"),
    ],
    "floor instead of round (errors up to a whole step)": [
        ("    codes = torch.round((k - low) / scale).clamp(0, levels)",
         "    codes = torch.floor((k - low) / scale).clamp(0, levels)"),
    ],
    "constant channels divide by zero": [
        ("    scale = torch.where(scale > 0, scale, torch.ones_like(scale))  # constant channels\n", ""),
    ],
    "dequantize forgets the minimum": [
        ("    return low + codes.to(scale.dtype) * scale", "    return codes.to(scale.dtype) * scale"),
    ],
    "shortcut: attnbook's own quantize": [
        ("    levels = 2 ** bits - 1\n",
         "    from attnbook.kvquant import quantize\n"
         "    return quantize(k, bits, -2)\n"
         "    levels = 2 ** bits - 1\n"),
    ],
    "tampering (q1, q2): comparison helpers replaced, and both functions wrong": [
        ("def quantize_keys(k, bits):", TAMPER + "def quantize_keys(k, bits):"),
        ("    codes = torch.round((k - low) / scale).clamp(0, levels)",
         "    codes = torch.floor((k - low) / scale).clamp(0, levels)"),
        ("    return low + codes.to(scale.dtype) * scale", "    return codes.to(scale.dtype) * scale"),
    ],
}

WRONG_ANSWERS.update({
    # q3: the conceptual question
    "why_keys_per_channel: (c), a tempting wrong statement": [
        ('    return "d"', '    return "c"'),
    ],
    "why_keys_per_channel: the right letter in upper case with its parenthesis": [
        ('    return "d"', '    return "(D)"'),
    ],
})

WRONG_ANSWERS.update({
    # edges (issue 20, item 7)
    "dequantize computes in float32, then casts back to the scale's dtype": [
        ("    return low + codes.to(scale.dtype) * scale",
         "    return (low.float() + codes.float() * scale.float()).to(scale.dtype)"),
    ],
    "quantize computes the codes in float32 whatever the keys' dtype": [
        ("    codes = torch.round((k - low) / scale).clamp(0, levels)",
         "    codes = torch.round((k.float() - low.float()) / scale.float()).clamp(0, levels)"),
    ],
})

WRONG_ANSWERS.update({  # correct answers written differently: they must score 100 %
    "correct: the codes as (x - min) times 1 / s, rounded": [
        ("    codes = torch.round((k - low) / scale).clamp(0, levels)",
         "    codes = torch.round((k - low) * (1.0 / scale)).clamp(0, levels)"),
    ],
    "correct: dequantize with torch.addcmul": [
        ("    return low + codes.to(scale.dtype) * scale",
         "    return torch.addcmul(low, codes.to(scale.dtype), scale)"),
    ],
})
