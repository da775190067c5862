from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q6"
points = [0.3, 0.3]

@test_case(points=None, hidden=False)
def test_find_heads_hand_patterns(find_heads):
    from attnbook.exercise_checks.grading import guarded
    import types
    import torch
    mine = getattr(find_heads, '__globals__', None) or {}

    def scores_right(weights):
        q = torch.arange(1 + n, 1 + 2 * n)
        checks = ((mine.get('previous_token_score'), (weights[0],), weights[0].diagonal(-1, -2, -1).mean((0, 2))), (mine.get('induction_score'), (weights[1], n, True), weights[1][:, :, q, q - n + 1].mean((0, 2))))
        try:
            return all((not isinstance(f, types.FunctionType) or torch.allclose(torch.as_tensor(f(*args)).double(), want.double(), atol=1e-06) for f, args, want in checks))
        except Exception:
            return False
    answer = guarded(find_heads)

    def heads_of(weights, n):
        try:
            return answer(weights, n)
        except (RuntimeError, TypeError, IndexError, ValueError) as error:
            msg = f'find_heads(weights, n = {n}) raised {type(error).__name__}: {str(error).splitlines()[0]}; check the calls inside it: previous_token_score(weights[0]) and induction_score(weights[1], n, True), their arguments in that order'
            raise AssertionError(msg) from None

    def pattern(T, key_of):
        w = torch.zeros(1, 1, T, T)
        for i in range(T):
            w[0, 0, i, max(0, min(i, key_of(i)))] = 1.0
        return w
    n = 4
    T = 1 + 2 * n
    kinds = {'previous token': pattern(T, lambda i: i - 1), 'BOS': pattern(T, lambda i: 0), 'induction': pattern(T, lambda i: i - n + 1)}
    calls, score = ([], mine.get('induction_score'))
    if isinstance(score, types.FunctionType):

        def spy(*args, **kwargs):
            calls.append(dict(zip(('weights', 'n', 'bos'), args), **kwargs))
            return score(*args, **kwargs)
        mine['induction_score'] = spy
        try:
            answer([kinds['previous token'], kinds['induction']], n)
        except Exception:
            pass
        finally:
            mine['induction_score'] = score
    for call in calls:
        got_n = call.get('n')
        msg = f"n = {n}: find_heads called induction_score(weights, n={got_n!r}, bos={call.get('bos')!r}): its arguments are (weights, n, bos), in that order, here (weights[1], {n}, True)"
        assert type(got_n) is int and got_n == n, msg
    for layer0, layer1, odd, want in ((('BOS', 'previous token'), ('induction', 'previous token'), 0, (1, 0)), (('previous token', 'BOS'), ('BOS', 'induction'), 2, (0, 1)), (('previous token', 'BOS'), ('induction', 'previous token'), 1, (0, 0))):
        weights = []
        for layer in (layer0, layer1):
            heads = torch.cat([kinds[k] for k in layer], dim=1)
            batch = [heads, heads, heads]
            batch[odd] = heads.flip(1)
            weights.append(torch.cat(batch))
        got = heads_of(weights, n)
        top = (int(weights[0].diagonal(-1, -2, -1).mean((0, 2)).max()), int(weights[1].diagonal(1 - n, -2, -1)[..., 1:].mean((0, 2)).max()))
        msg = f'return a tuple of two Python ints (int(tensor.argmax())), got {got!r}'
        assert isinstance(got, tuple) and len(got) == 2 and ({type(h) for h in got} == {int}), msg
        guess = scores_right(weights)
        moved = got != want and heads_of([w.roll(1, dims=0) for w in weights], n) == want
        msg = f"3 sequences per layer; in sequences {', '.join([str(s) for s in range(3) if s != odd])} layer 0's heads are ({', '.join(layer0)}) and layer 1's ({', '.join(layer1)}), in sequence {odd} each layer's two heads swap roles: expected {want}, got {got}; the previous-token head is sought in layer 0 (weights[0]) only, the induction head in layer 1 (weights[1]) only, each the head with the highest score over the whole batch (a score of one sequence gives {tuple([1 - h for h in want])} where that sequence is the odd one)" + (f'; with the odd sequence moved one place on (to sequence {(odd + 1) % 3}), yours gives {want}: it depends on where that sequence sits, so it reads one sequence (or some), not the whole batch; score weights[0] and weights[1] as they are, all their sequences' if moved else '') + ("; yours are the right two in the wrong order: return (prev_head, induction_head), layer 0's head first" if guess and got == want[::-1] and (not moved) else '') + (f'; {top} is also what the best scores truncated to ints give: if that is what yours returns, the head is the index of the best score, argmax, not the score itself' if guess and got == top and (got != want) and (not moved) else '')
        assert got == want, msg

    def per_sequence(weights):
        q = torch.arange(1 + n, 1 + 2 * n)
        return (weights[0].diagonal(-1, -2, -1).mean(-1), weights[1][:, :, q, q - n + 1].mean(-1))

    def mix(c, a, b):
        return c * a + (1 - c) * b
    bos_, prev_, ind_ = (kinds['BOS'], kinds['previous token'], kinds['induction'])
    near = [torch.cat([mix(0.55, a, bos_), mix(0.5, a, bos_)], dim=1) for a in (prev_, ind_)]
    far = [torch.cat([bos_, a], dim=1) for a in (prev_, ind_)]
    for weights, want, case in (([torch.cat([bos_, ind_, prev_], dim=1), torch.cat([prev_, bos_, ind_], dim=1)], (2, 2), "one sequence, 3 heads per layer: layer 0's (BOS, induction, previous token), layer 1's (previous token, BOS, induction)"), ([torch.cat([near[0], near[0], far[0]]), torch.cat([near[1], near[1], far[1]])], (1, 1), "3 sequences; in each layer head 0 beats head 1 in sequences 0 and 1 by a little (0.55 of each query's weight on its key, against 0.5, the rest on BOS) and loses sequence 2 by a lot (head 1 all on its key, head 0 all on BOS), so head 1 has the best mean score")):
        got = heads_of(weights, n)
        msg = f'return a tuple of two Python ints (int(tensor.argmax())), got {got!r}'
        assert isinstance(got, tuple) and len(got) == 2 and ({type(h) for h in got} == {int}), msg
        scores = per_sequence(weights)
        two = tuple([int(s.mean(0)[:2].argmax()) for s in scores])
        two_late = tuple([0 if float(s.mean(0)[0]) > float(s.mean(0)[1]) else 1 for s in scores])
        vote = tuple([int(torch.mode(s.argmax(-1)).values) for s in scores])
        q = torch.arange(1 + n, 1 + 2 * n)
        ind0, ind1 = (w[:, :, q, q - n + 1].mean((0, 2)) for w in weights)
        hits = tuple([int((x[:, :, qs].argmax(-1) == ks).double().mean((0, 2)).argmax()) for x, (qs, ks) in zip(weights, ((torch.arange(1, T), torch.arange(T - 1)), (q, q - n + 1)))])
        in_layer0 = {int(ind0.argmax()), int(torch.stack([ind0, ind1]).argmax()) % ind0.numel(), int(torch.maximum(ind0, ind1).argmax())}
        msg = f'{case}: expected {want} (in each layer the head with the highest score over the whole batch), got {got}' + ('; yours is what comparing heads 0 and 1 only gives: a layer may have any number of heads, so take the argmax over all of them' if got in (two, two_late) and got != want else '') + ("; yours is what a vote of the sequences' winners gives (a vote per sequence is not the best mean score), and also what counting the queries whose largest weight is on the key (argmax) gives: average each head's weight on the key over the batch and the queries (the scores of q2 and q3), then take the argmax" if got == vote == hits != want else "; yours is the head that wins the most sequences: a vote per sequence is not the best mean score, so average each head's score over the batch, then take the argmax" if got == vote != want else '; yours is what counting the queries whose largest weight is on the key (argmax) gives: the score is the mean weight on the key (the scores of q2 and q3)' if got == hits != want else '') + ("; yours names layer 0's best induction head as the induction head: it is sought in layer 1 (weights[1]) only, even when a head of layer 0 scores as high" if got[0] == want[0] and got[1] != want[1] and (got[1] in in_layer0) and (float(ind0.max()) >= float(ind1.max())) else '')
        assert got == want, msg
    uniform = torch.ones(T, T).tril()
    uniform = uniform / uniform.sum(-1, keepdim=True)
    decoy, weak = (uniform.clone(), uniform.clone())
    decoy[n] = 0.0
    decoy[n, 1] = 1.0
    for i in range(1 + n, T):
        weak[i, :i + 1] = 0.7 / i
        weak[i, i - n + 1] = 0.3
    first = torch.cat([kinds['previous token'], kinds['BOS']], dim=1)
    weights = [first, torch.stack([decoy, weak])[None]]
    got = heads_of(weights, n)
    msg = f"one sequence with BOS, n = {n}: layer 0's heads are (previous token, BOS); layer 1's head 1 puts 0.3 of each second-copy query's weight on the token after its earlier occurrence, and head 0 spreads every query evenly except query n = {n}, the last token of the first copy, which is sure of key 1: expected (0, 1), got {got}" + ('. The batch has BOS, so score it with bos=True: bos=False moves the window one query early, onto query n and off the last query of the second copy' if scores_right(weights) else '')
    assert got == (0, 1), msg
    inductive0 = torch.cat([kinds['induction'], kinds['previous token']], dim=1)
    weights = [inductive0, torch.stack([uniform, weak])[None]]
    got = heads_of(weights, n)
    msg = f"one sequence with BOS, n = {n}: layer 0's heads are (induction, previous token); layer 1's head 0 spreads every query evenly and its head 1 puts 0.3 of each second-copy query's weight on the token after its earlier occurrence: expected (1, 1), got {got}; the induction head is sought in layer 1 (weights[1]) only, even when a head of layer 0 has a higher induction score"
    assert got == (1, 1), msg

@test_case(points=None, hidden=False)
def test_repeat_loss_hand_logits(repeat_loss):
    from attnbook.exercise_checks.grading import guarded
    repeat_loss = guarded(repeat_loss, names=('copy_losses', 'loss_per_position'))
    import math
    import torch
    n, V = (3, 5)
    tokens = torch.tensor([[0, 2, 4, 1, 2, 4, 1]])
    logits = torch.zeros(1, 7, V)
    try:
        got = repeat_loss(logits, tokens, n)
    except (RuntimeError, ValueError) as err:
        layout = '; cross_entropy wants the classes on axis 1: (N, V) logits with (N,) targets (reshape(-1, V) and reshape(-1)), or (B, V, L) logits with (B, L) targets (transpose(1, 2))'
        count = f'; the logits and the targets you pass differ in number: the n - 1 = {n - 1} predictions are the logits at positions 1 + n .. 2n - 1 = {1 + n} .. {2 * n - 1}, their targets the tokens at 2 + n .. 2n = {2 + n} .. {2 * n}'
        msg = f'logits (1, 7, {V}), tokens (1, 7), n = {n}: your function raised {type(err).__name__}: {str(err).splitlines()[0]}' + (count if 'batch_size' in str(err) else layout if 'target' in str(err) else '')
        raise AssertionError(msg) from None
    msg = f'return a Python float (float(loss)), got {type(got).__name__}'
    assert isinstance(got, float), msg
    twos = torch.tensor([[0, 2, 2, 2, 2, 2, 2]])
    confident = torch.zeros(1, 7, V)
    confident[..., 2] = 20.0
    raw = False
    if abs(got) < 0.0001:
        try:
            raw = abs(float(repeat_loss(confident, twos, n)) + 20.0) < 0.001
        except Exception:
            raw = False
    msg = f'uniform logits give ln V = {math.log(V):.4f} nats on every token, got {got:.4f} ' + ('(minus ln V: the sign is wrong): the cross-entropy is minus the mean log-probability of the targets' if abs(got + math.log(V)) < 0.0001 else '(minus the mean logit of the targets, as nll_loss gives on raw logits): nll_loss takes log-probabilities; use cross_entropy on the logits, or log_softmax before nll_loss' if abs(got) < 0.0001 and raw else '(a loss of exactly 0 on uniform logits: no token was counted, or an error was caught and 0 returned; without a try/except you would see it)' if abs(got) < 0.0001 else '= V = e^(ln V): you returned the perplexity, exp(loss); return the loss itself' if abs(got - V) < 0.0001 else f'= ln {logits.shape[1]}, the number of positions: you normalised over the positions (dim=1); the log-softmax runs over the vocabulary, the last dimension (dim=-1)' if abs(got - math.log(logits.shape[1])) < 0.0001 else f'({got / math.log(V):.3f} ln V): a mean of equal terms is that term, so divide the sum by the number of tokens it adds up' if got / math.log(V) > 1.5 and abs(got / math.log(V) - round(got / math.log(V))) < 0.001 else f"= ln V x (n - 1) / n: the n - 1 = {n - 1} predictable tokens' losses divided by n = {n}; divide by the number of tokens you add up (x_1 of the second copy is not predicted, so it is not counted)" if abs(got - math.log(V) * (n - 1) / n) < 0.0001 else '(ln V whichever tokens you count): check that you take a log-softmax over the vocabulary (the last dimension) and a mean over the tokens, not a sum')
    assert abs(got - math.log(V)) < 0.0001, msg
    got = repeat_loss(confident, twos, n)
    msg = f'logits of 20 for token 2 and 0 for the others at every position, on a batch whose every token after BOS is 2, so any positions you read are predicted right: expected about 0, got {got:.4f}. cross_entropy takes logits and applies log_softmax itself: probabilities (a softmax first) passed to it give ln(1 + 4/e) = {math.log(1 + (V - 1) / math.e):.4f} here'
    assert got < 0.0001, msg
    sure = torch.full((1, 7, V), -20.0)
    sure[0, torch.arange(6), tokens[0, 1:]] = 20.0
    sure[0, 3] = 0.0
    got = repeat_loss(sure, tokens, n)
    early = float(torch.nn.functional.cross_entropy(sure[0, n:2 * n - 1], tokens[0, n + 1:2 * n]))
    counted = math.log(V) / n
    msg = f'tokens {tokens.tolist()}, n = {n}: logits sure of the token at t + 1 at every position t = 0 .. 5 except t = 3, where they are uniform: expected about 0, got {got:.4f}' + ('; yours matches the window one token early: with BOS at position 0 the second copy starts at 1 + n' if abs(got - early) < 0.0001 else f' = ln {V} / {n}: you counted the logits at t = n = {n}, which predict x_1 of the second copy; nothing before it predicts that token, so the loss counts only x_2 .. x_n' if abs(got - counted) < 0.0001 else f' = ln {V} / {2 * n}: you averaged the next-token loss over every position of the sequence, all {2 * n} predictions; count only the tokens of the second copy that the first copy predicts' if abs(got - math.log(V) / (2 * n)) < 0.0001 else ' (logits[:, t] predict the token at t + 1)')
    assert got < 0.0001, msg
    four = torch.tensor([[0, 3, 1, 4, 2, 3, 1, 4, 2]])
    sure4 = torch.full((1, 9, V), -20.0)
    sure4[0, torch.arange(8), four[0, 1:]] = 20.0
    sure4[0, 4] = 0.0
    got4 = repeat_loss(sure4, four, 4)
    msg = f'n = 4, tokens {four.tolist()}: logits sure of the token at t + 1 at every position but t = n = 4, where they are uniform: expected about 0, got {got4:.4f}' + ("; yours reads the example's positions, as if n were 3: the second copy starts at 1 + n and its predictable tokens are x_2 .. x_n, for whatever n" if abs(got4 - math.log(V) / 2) < 0.0001 else '')
    assert got4 < 0.0001, msg
    wrong = sure.clone()
    wrong[0, 5] = 0.0
    got = repeat_loss(wrong, tokens, n)
    msg = f'the same logits, uniform at t = 5 too: expected {math.log(V) / 2:.4f} (ln 5 / 2), got {got:.4f}'
    assert abs(got - math.log(V) / 2) < 0.0001, msg
    both = torch.cat([wrong, torch.zeros(1, 7, V)])
    pair = torch.cat([tokens, torch.tensor([[0, 3, 1, 4, 3, 1, 4]])])
    want = (math.log(V) / 2 + math.log(V)) / 2
    pos = torch.arange(2 + n, 1 + 2 * n)
    crossed = float(-torch.log_softmax(both, -1)[:, pos - 1, pair[:, pos]].mean())
    try:
        got = repeat_loss(both, pair, n)
    except RuntimeError as error:
        msg = f'a batch of two sequences raised RuntimeError: {error}; a slice logits[:, a:b] of a batch is not contiguous in memory: flatten it with .reshape (or use .transpose(1, 2)), not .view'
        raise AssertionError(msg) from None
    msg = f'a batch of 2 different sequences (tokens {pair.tolist()}), the one above ({math.log(V) / 2:.4f}) and one with uniform logits (ln 5 = {math.log(V):.4f} on both tokens): expected the mean over the batch (dim 0) and the tokens, {want:.4f}, got {got:.4f}; the first sequence alone gives {math.log(V) / 2:.4f}' + ("; yours pairs every sequence's logits with every sequence's targets (indexing logp[:, positions, tokens[:, positions + 1]] broadcasts to (B, B, n - 1)): pick each sequence's own targets, with gather on the last axis or cross_entropy" if abs(got - crossed) < 0.0001 else '; that is twice the mean: you summed over the 2 sequences; average over the batch' if abs(got - 2 * want) < 0.0001 else '')
    assert abs(got - want) < 0.0001, msg

