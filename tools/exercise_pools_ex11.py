"""Exercise 11's pool of variants (`tools.exercise_pools` merges it into its `POOLS`;
`tools.exercise_variants` says what a pool holds).

How the state of linear attention forgets, in all three questions (the book's: it never
forgets, and question 3 writes the course's d_k x d_v state). The roster's tasks: a constant
decay gamma of the state and the normaliser before each write (its parallel form weights entry
(i, j) by gamma^(i - j)), with question 3's delta rule in the papers' orientation, a d_v x d_k
state (S' = S + beta (v - S k) k^T); or a gate alpha_t per token (the parallel form weights
entry (i, j) by alpha_{j+1} ... alpha_i), with question 3's gated delta rule (S' = alpha S +
beta k^T (v - alpha k S)). The parameters: the example's length T, its decay (``keep``, in
hundredths: gamma, or the lowest gate) and the seed of its data. The rewrites of the answers
insert lines after the loop's first line (question 1) and after the mask (question 2), so
that most mistakes read the same at every task; question 3's lines are rewritten.
"""

from __future__ import annotations

from typing import Any

_INTRO = """**the book's: the state never forgets (every
write keeps its full weight), and question 3 writes into the course's $d_k \\times d_v$ state**."""
_INTRO_DECAY = """**a constant decay: before each token writes, the state and the
normaliser are multiplied by the same number $\\gamma \\in (0, 1]$** (the chapter's constant decay,
$\\alpha = 0.9$ at every token, is one; RetNet's retention decays the same way), **and question 3
writes into a state stored the papers' way round, $d_v \\times d_k$**."""
_INTRO_GATE = """**a gate per token: before token $t$ writes, the state and the
normaliser are multiplied by its own gate $\\alpha_t \\in (0, 1]$** (as in Gated DeltaNet, the
chapter's section "The gate: forgetting on purpose"), **and question 3's delta-rule write is
gated too**."""
_DATA = "the feature map and the small number added to every\nnormaliser."
_DATA_DECAY = (
    "the feature map, the small number added to every\nnormaliser and your example's decay "
    "`gamma`."
)
_DATA_GATE = (
    "the feature map, the small number added to every\nnormaliser and a gate per token, "
    "`alpha`, of shape $(B, T)$."
)
_DRAWN = "v = torch.randn(B, T, d_v)\n"
_LONG = (
    "rec = linear_attention_recurrent(q_long, k_long, v_long)\n"
    "par = linear_attention_parallel(q_long, k_long, v_long)\n"
)

# question 1: the recurrence
_Q1 = """Write `linear_attention_recurrent(q, k, v)`. Walk through the tokens in order, keeping for
each sequence the state $S_t$ ($d_k \\times d_v$) and the normaliser $z_t$ ($d_k$):

$$S_t = S_{t-1} + \\phi(k_t)^\\top v_t, \\qquad z_t = z_{t-1} + \\phi(k_t), \\qquad
y_t = \\frac{\\phi(q_t)\\, S_t}{\\phi(q_t) \\cdot z_t + \\varepsilon},$$

starting from $S_0 = 0$, $z_0 = 0$, with $\\varepsilon$ = `EPS`. Token $t$ writes **before**
it reads, so it sees itself and every earlier token."""
_Q1_DECAY = """Write `linear_attention_recurrent(q, k, v, gamma)`, where `gamma`, a float in $(0, 1]$, is
the decay. Walk through the tokens in order, keeping for each sequence the state $S_t$
($d_k \\times d_v$) and the normaliser $z_t$ ($d_k$), both multiplied by $\\gamma$ before each write:

$$S_t = \\gamma\\, S_{t-1} + \\phi(k_t)^\\top v_t, \\qquad z_t = \\gamma\\, z_{t-1} + \\phi(k_t), \\qquad
y_t = \\frac{\\phi(q_t)\\, S_t}{\\phi(q_t) \\cdot z_t + \\varepsilon},$$

starting from $S_0 = 0$, $z_0 = 0$, with $\\varepsilon$ = `EPS`. Token $t$ writes **before**
it reads, so it sees itself and every earlier token; by token $t$ the write of token $s \\le t$
has been multiplied by $\\gamma^{\\,t-s}$, in the state and in the normaliser alike."""
_Q1_GATE = """Write `linear_attention_recurrent(q, k, v, alpha)`, where `alpha`, of shape $(B, T)$, holds
a gate $\\alpha_t \\in (0, 1]$ for every token of every sequence. Walk through the tokens in order,
keeping for each sequence the state $S_t$ ($d_k \\times d_v$) and the normaliser $z_t$ ($d_k$),
both multiplied by token $t$'s own gate before it writes:

$$S_t = \\alpha_t S_{t-1} + \\phi(k_t)^\\top v_t, \\qquad z_t = \\alpha_t z_{t-1} + \\phi(k_t), \\qquad
y_t = \\frac{\\phi(q_t)\\, S_t}{\\phi(q_t) \\cdot z_t + \\varepsilon},$$

starting from $S_0 = 0$, $z_0 = 0$, with $\\varepsilon$ = `EPS`. Token $t$ writes **before**
it reads, so it sees itself and every earlier token; by token $t$ the write of token $s \\le t$
has been multiplied by $\\alpha_{s+1} \\cdots \\alpha_t$ (token $s$'s own gate acts on the older
writes only)."""
_DEF1 = (
    "def linear_attention_recurrent(q, k, v):\n"
    '    """q, k (B, T, d_k), v (B, T, d_v) -> (B, T, d_v), one token at a time."""'
)
_LOOP = "    for t in range(T):\n"

# question 2: the parallel form
_Q2 = """Write `linear_attention_parallel(q, k, v)`: the outputs of question 1 without a loop. Form the
$(T, T)$ matrix $A = \\phi(Q)\\,\\phi(K)^\\top$ of every sequence, set every entry above the
diagonal to 0 (query $i$ may not read key $j > i$), divide each row of $A V$ by that row's
sum plus $\\varepsilon$:

$$Y = \\frac{(A \\odot M)\\, V}{(A \\odot M)\\,\\mathbf{1} + \\varepsilon}, \\qquad M_{ij} = [\\,j \\le i\\,].$$"""
_Q2_DECAY = """Write `linear_attention_parallel(q, k, v, gamma)`: the outputs of question 1 without a loop.
Form the $(T, T)$ matrix $A = \\phi(Q)\\,\\phi(K)^\\top$ of every sequence, set every entry above
the diagonal to 0 (query $i$ may not read key $j > i$), multiply entry $(i, j)$ below it by
$\\gamma^{\\,i-j}$ (what token $j$'s write keeps at token $i$), and divide each row of the product
with $V$ by that row's sum plus $\\varepsilon$:

$$Y = \\frac{(A \\odot M \\odot \\Gamma)\\, V}{(A \\odot M \\odot \\Gamma)\\,\\mathbf{1} + \\varepsilon},
\\qquad M_{ij} = [\\,j \\le i\\,], \\quad \\Gamma_{ij} = \\gamma^{\\,i - j}.$$"""
_Q2_GATE = """Write `linear_attention_parallel(q, k, v, alpha)`: the outputs of question 1 without a loop.
Form the $(T, T)$ matrix $A = \\phi(Q)\\,\\phi(K)^\\top$ of every sequence, set every entry above
the diagonal to 0 (query $i$ may not read key $j > i$), multiply entry $(i, j)$ below it by the
gates of the tokens after $j$ up to $i$, $\\alpha_{j+1} \\cdots \\alpha_i$ (1 on the diagonal: what
token $j$'s write keeps at token $i$), and divide each row of the product with $V$ by that
row's sum plus $\\varepsilon$:

$$Y = \\frac{(A \\odot M \\odot G)\\, V}{(A \\odot M \\odot G)\\,\\mathbf{1} + \\varepsilon},
\\qquad M_{ij} = [\\,j \\le i\\,], \\quad G_{ij} = \\prod_{s = j+1}^{i} \\alpha_s .$$

Each sequence has its own $G$. A product of gates is the exponential of a difference of two
cumulative sums of $\\log \\alpha$ (`torch.cumsum`), as the chapter's `delta_rule_parallel`
computes its decay; above the diagonal, where $M$ hides it, that difference is positive."""
_DEF2 = (
    "def linear_attention_parallel(q, k, v):\n"
    '    """q, k (B, T, d_k), v (B, T, d_v) -> (B, T, d_v), every token at once."""'
)
_MASKED = "    scores = scores * keep\n"

# question 3: one delta-rule write
_Q3 = """The delta rule first reads what key $k$ holds now, $k S$, and writes only the
difference, scaled by a strength $\\beta \\in [0, 1]$:

$$S' = S + \\beta\\, k^\\top \\big(v - k S\\big).$$

Write `delta_update(S, k, v, beta)` for a batch: `S` of shape $(B, d_k, d_v)$, `k` $(B, d_k)$
(already normalised to length 1), `v` $(B, d_v)$, `beta` $(B,)$; return the new state, of
shape $(B, d_k, d_v)$, a new tensor ($S$ itself must not change). With $\\beta = 1$ key $k$
reads back exactly $v$ afterwards."""
_Q3_PAPERS = """The delta rule first reads what key $k$ holds now and writes only the difference, scaled
by a strength $\\beta \\in [0, 1]$. In yours the state is stored **the papers' way round**
(DeltaNet, Gated DeltaNet; the chapter's section "The delta rule overwrites instead of piling
on"): $S \\in \\mathbb{R}^{d_v \\times d_k}$, a column per key direction, with keys and values
taken as column vectors, so that key $k$ reads $S k$ and

$$S' = S + \\beta\\, \\big(v - S k\\big)\\, k^\\top = S\\,\\big(I - \\beta\\, k k^\\top\\big) + \\beta\\, v k^\\top.$$

Write `delta_update(S, k, v, beta)` for a batch: `S` of shape $(B, d_v, d_k)$, `k` $(B, d_k)$
(already normalised to length 1; one row per sequence, as the batch stores it), `v`
$(B, d_v)$, `beta` $(B,)$; return the new state, of shape $(B, d_v, d_k)$, a new tensor ($S$
itself must not change). With $\\beta = 1$ key $k$ reads back exactly $v$ afterwards, $S' k = v$."""
_Q3_GATED = """The delta rule first reads what key $k$ holds now, $k S$, and writes only the
difference, scaled by a strength $\\beta \\in [0, 1]$. In yours the write is **gated**, as in
Gated DeltaNet (the chapter's section "The gate: forgetting on purpose"): the old state is
first multiplied by a gate $\\alpha \\in (0, 1]$, and the delta rule then reads and writes the
decayed state:

$$S' = \\alpha S + \\beta\\, k^\\top \\big(v - \\alpha\\, k S\\big).$$

Write `delta_update(S, k, v, beta, alpha)` for a batch: `S` of shape $(B, d_k, d_v)$, `k`
$(B, d_k)$ (already normalised to length 1), `v` $(B, d_v)$, `beta` and `alpha` $(B,)$; return
the new state, of shape $(B, d_k, d_v)$, a new tensor ($S$ itself must not change). With
$\\beta = 1$ key $k$ reads back exactly $v$ afterwards, whatever the gate."""
_DOC3 = '    """S (B, d_k, d_v), k (B, d_k), v (B, d_v), beta (B,) -> new S (B, d_k, d_v)."""'
_READ = "    old = (k[:, None, :] @ S)[:, 0]  # what k reads now, k S: (B, d_v)\n"
_WRITE = "    return S + beta[:, None, None] * k[:, :, None] * (v - old)[:, None, :]"
# question 3's answer lines at each task (the wrong-answers file writes its mistakes on them)
Q3_LINES = {
    "plain": _READ + _WRITE,
    "decay": "    old = (S @ k[:, :, None])[..., 0]  # what k reads now, S k: (B, d_v)\n"
    "    return S + beta[:, None, None] * (v - old)[:, :, None] * k[:, None, :]",
    "gate": "    S = alpha[:, None, None] * S  # the gate decays the old state first\n"
    + _READ
    + _WRITE,
}
_PARAMS = {"T": [5, 9], "keep": [50, 95], "seed": [1, 999_999]}

POOL_EX11: dict[str, Any] = {
    "exercise": "ex11_linear_attention",
    # the book's notebook and worked solutions: a state that never forgets, T = 5, seed 0
    "reserved": {"task": "plain", "T": 5, "seed": 0},
    "roster": ["decay", "gate"],
    "questions": ["q1", "q2", "q3"],
    "tasks": {
        "plain": {"edits": [], "params": {"T": [5, 5], "seed": [0, 0]}},
        "decay": {
            "edits": [
                [_INTRO, _INTRO_DECAY],
                [_DATA, _DATA_DECAY],
                [
                    _DRAWN,
                    _DRAWN + 'gamma = VARIANT["keep"] / 100  # your decay, in (0, 1]\n',
                ],
                [_Q1, _Q1_DECAY],
                [
                    _DEF1,
                    "def linear_attention_recurrent(q, k, v, gamma):\n"
                    '    """q, k (B, T, d_k), v (B, T, d_v), decay gamma -> (B, T, d_v), in turn."""',
                ],
                [
                    _LOOP,
                    _LOOP
                    + "        S, z = gamma * S, gamma * z  # the past decays first\n",
                ],
                [_Q2, _Q2_DECAY],
                [
                    _DEF2,
                    "def linear_attention_parallel(q, k, v, gamma):\n"
                    '    """q, k (B, T, d_k), v (B, T, d_v), decay gamma -> (B, T, d_v), at once."""',
                ],
                [
                    _MASKED,
                    _MASKED
                    + "    i = torch.arange(T, device=q.device, dtype=q.dtype)\n"
                    "    scores = scores * gamma ** (i[:, None] - i).clamp(min=0)  # j <= i\n",
                ],
                [_Q3, _Q3_PAPERS],
                [_DOC3, _DOC3.replace("(B, d_k, d_v)", "(B, d_v, d_k)")],
                [Q3_LINES["plain"], Q3_LINES["decay"]],
                [_LONG, _LONG.replace("v_long)", "v_long, gamma)")],
            ],
            "params": _PARAMS,
        },
        "gate": {
            "edits": [
                [_INTRO, _INTRO_GATE],
                [_DATA, _DATA_GATE],
                [
                    _DRAWN,
                    _DRAWN + 'low = VARIANT["keep"] / 100  # the lowest gate\n'
                    "alpha = low + (1 - low) * torch.rand(B, T)  # a gate per token\n",
                ],
                [_Q1, _Q1_GATE],
                [
                    _DEF1,
                    "def linear_attention_recurrent(q, k, v, alpha):\n"
                    '    """q, k (B, T, d_k), v (B, T, d_v), gates alpha (B, T) -> (B, T, d_v)."""',
                ],
                [
                    _LOOP,
                    _LOOP
                    + "        S, z = alpha[:, t, None, None] * S, alpha[:, t, None] * z  # gate t\n",
                ],
                [_Q2, _Q2_GATE],
                [
                    _DEF2,
                    "def linear_attention_parallel(q, k, v, alpha):\n"
                    '    """q, k (B, T, d_k), v (B, T, d_v), gates alpha (B, T) -> (B, T, d_v)."""',
                ],
                [
                    _MASKED,
                    _MASKED
                    + "    c = torch.log(alpha).cumsum(-1)  # (B, T): sums of log alpha\n"
                    "    scores = scores * torch.exp((c[:, :, None] - c[:, None, :]).clamp(max=0))\n",
                ],
                [_Q3, _Q3_GATED],
                [
                    "def delta_update(S, k, v, beta):\n" + _DOC3,
                    "def delta_update(S, k, v, beta, alpha):\n"
                    '    """S (B, d_k, d_v), k (B, d_k), v (B, d_v), beta, alpha (B,) -> new S."""',
                ],
                [Q3_LINES["plain"], Q3_LINES["gate"]],
                [
                    _LONG,
                    "alpha_long = low + (1 - low) * torch.rand(1, 40, generator=g)\n"
                    + _LONG.replace("v_long)", "v_long, alpha_long)"),
                ],
            ],
            "params": _PARAMS,
        },
    },
}
