"""Random `tensor` programs through every path of minifx (tests/generators.py).

For each program drawn by the one generator: eager, the traced code, the
Interpreter, a no-op Transformer, deepcopy and pickle, a retrace, both
`minifx.compile` backends and ShapeProp all agree, and every graph lints.
"""

from hypothesis import HealthCheck, given, settings

import tensor
from tests.generators import build, check_all_paths, plans


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(plan=plans())
def test_random_tensor_programs_agree_on_every_path(plan):
    model, args, concrete = build(plan, tensor)
    check_all_paths(model, args, concrete)
