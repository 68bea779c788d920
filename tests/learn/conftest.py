"""tests/learn: the exercises (``python -m minifx learn``) and their honesty checks."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "learn: python -m minifx learn, the exercise table and the honesty of every exercise",
    )
