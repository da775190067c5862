from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = [0]

@test_case(points=None, hidden=False)
def test_wide_vectors_saturate_without_scaling(mean_max_weight):
    raw = mean_max_weight(512, 200, 16, 0, scaled=False)
    fair = mean_max_weight(512, 200, 16, 0, scaled=True)
    assert isinstance(raw, float) and isinstance(fair, float), 'return Python floats'
    assert raw > 0.9, f'd_k = 512 without scaling: each query should put almost all its weight on one key, got a mean largest weight of {raw:.3f}: are the raw scores left undivided?'
    assert fair < 0.6, f'd_k = 512 with scaling: the weights should stay spread out, got {fair:.3f}: divide the scores by sqrt(d_k) when scaled is true'

