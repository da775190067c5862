from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q5"
points = [0.2]

@test_case(points=None, hidden=False)
def test_cache_bytes_small_example(cache_bytes_per_token):
    from attnbook.exercise_checks.grading import guarded
    cache_bytes_per_token = guarded(cache_bytes_per_token)
    got = cache_bytes_per_token(3, 4, 2, 8, 16, 4, 2)
    assert isinstance(got, dict) and set(got) == {'MHA', 'GQA', 'MLA'}, f'return a dict with the keys "MHA", "GQA", "MLA", got {got!r}'
    kinds = [type(v).__name__ for v in got.values()]
    assert kinds == ['int'] * 3, f'return Python ints, got {got!r}: a float such as 192.0 compares equal to 192 but is not a count of bytes; multiply and add ints (no /, no math.ceil of a float)'
    assert got['MHA'] == 384, f"MHA: 2 (a key and a value) x 4 heads x 8 numbers x 3 layers x 2 bytes = 384 bytes per token; got {got['MHA']}"
    assert got['GQA'] == 192, f"GQA: 2 x 2 key/value heads x 8 x 3 layers x 2 bytes = 192; got {got['GQA']}"
    assert got['MLA'] == 120, f"MLA: 3 layers x (16 + 4) numbers x 2 bytes = 120: one latent and one rotary key per token and layer, shared by all heads (not one per head), and the latent stands for both the keys and the values (it is not counted twice); got {got['MLA']}"
    one = cache_bytes_per_token(1, 4, 1, 8, 16, 4, 4)
    assert one == {'MHA': 256, 'GQA': 64, 'MLA': 80}, f'1 layer, 4 heads of 8, 1 kv head, latent 16 + 4, 4 bytes a number: MHA 2 x 4 x 8 x 4 = 256, GQA 2 x 1 x 8 x 4 = 64, MLA (16 + 4) x 4 = 80; got {one}: compute from the arguments, not from the example above'

