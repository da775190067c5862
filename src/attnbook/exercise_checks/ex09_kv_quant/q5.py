from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = [0]

@test_case(points=None, hidden=False)
def test_cache_bytes_small_example(cache_bytes_per_token):
    from attnbook.exercise_checks.grading import guarded
    cache_bytes_per_token = guarded(cache_bytes_per_token)
    got = cache_bytes_per_token(3, 4, 2, 8, 16, 4, 2)
    assert isinstance(got, dict) and set(got) == {'MHA', 'GQA', 'MLA'}, f'return a dict with the keys "MHA", "GQA", "MLA", got {got!r}'
    assert got['MHA'] == 384, f"MHA: 2 (a key and a value) x 4 heads x 8 numbers x 3 layers x 2 bytes = 384 bytes per token; got {got['MHA']}"
    assert got['GQA'] == 192, f"GQA: 2 x 2 key/value heads x 8 x 3 layers x 2 bytes = 192; got {got['GQA']}"
    assert got['MLA'] == 120, f"MLA: 3 layers x (16 + 4) numbers x 2 bytes = 120: one latent and one rotary key per token and layer, shared by all heads (not one per head), and the latent stands for both the keys and the values (it is not counted twice); got {got['MLA']}"

